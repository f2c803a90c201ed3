"""The setting the simulation experiments share (backup_workers.py, slow_peer.py): 16 peers,
logistic regression on Fashion-MNIST (2,000 test images), lr 0.05, batch 32, 1 virtual s per
gradient, links 0.1 s. Each experiment adds its own [run], [data], [consensus] and
[stragglers] keys."""


def config_text(name, seed, out, topology, consensus, run="", data="", stragglers="",
                per_peer_eval=False):
    """The TOML of one `fastk sim` run; the extra arguments are lines of their tables."""
    return f"""
[run]
name = "{name}"
seed = {seed}
output = "{out}"
{run}

[topology]
kind = "{topology}"
peers = 16

[data]
kind = "fashion_mnist"
test_limit = 2000
{data}

[model]
kind = "logistic_regression"

[optimizer]
lr = 0.05
batch_size = 32

[consensus]
{consensus}

[stragglers]
compute_s = 1.0
link_s = 0.1
{stragglers}

[sim]
threads = 2
per_peer_eval = {"true" if per_peer_eval else "false"}
"""
