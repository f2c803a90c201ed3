#!/usr/bin/python3
"""The peers benchmark (docs/benchmarks.md §3; documented, not run in CI).

8 real peers (`fastk run`, one process each, ZeroMQ over the default transport of local runs:
Unix-domain sockets carrying references to models in shared memory, [cluster]
local_transport = "shm") on a ring, MLP 784-128-10, batch 32,
600 iterations, policy `full`, no injected delays, Fashion-MNIST; compared with
the time one process needs to compute the same 8 x 600 = 4,800 gradients on 2 threads
(build/benchmarks/gradient_throughput, the peers' own gradient code, no communication): two
trainers, each thread training half the data with its own model, and, as a second
reference, the run's own gradients (one trainer per peer, its shard and its model, the two
threads taking four each in turns).

  scripts/build.sh build -DFASTK_BUILD_BENCHMARKS=ON
  /usr/bin/python3 experiments/bench_peers.py [--repeats 3] [--build build]
  /usr/bin/python3 experiments/bench_peers.py --repeats 9 --curve-cost

--curve-cost measures what encrypted, authenticated links cost (docs/security.md): each
repeat runs the peers with [security] curve = "on" (fastk run makes fresh keys) and then
with curve = "off", and the medians of both training phases are compared. Each run's
summary must say which links it had, so a mode that silently fell back is caught.

Training phase = max over peers of their elapsed_s (first iteration to last update, start-up
handshake and final evaluation excluded); also shown on the peers' shared monotonic clock:
from the first peer's first iteration to the last peer's last update, and the part of it
in which every peer had started (peers that start first wait for neighbours still
loading). Wall = the whole `fastk run` (process start, data loading, handshake, training,
mean-model evaluation; plots off). The mean model is evaluated only at the end
(run.eval_interval_s far beyond the run): no snapshots are written while peers train.
Target: training phase <= 2x the 2-thread gradient time (aim 1.5x). On a shared machine
both times grow with the load, so the script also prints the load average and the CPU
time (user + system) of `fastk run` with its peers and of the baseline program.
"""
import argparse
import json
import os
import re
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
PEERS, ITERATIONS = 8, 600

CONFIG = """[run]
name = "bench"
seed = 1
iterations = {iterations}
output = "{output}"
eval_interval_s = 1000000
[topology]
kind = "ring"
peers = {peers}
[data]
kind = "fashion_mnist"
[model]
kind = "mlp"
hidden = [128]
[optimizer]
lr = 0.05
batch_size = 32
[consensus]
policy = "full"
[cluster]
base_port = {base_port}
local_transport = "{transport}"
[security]
curve = "{curve}"
"""


def free_base_port(count):
    """A base port below the ephemeral range with `count` free ports after it."""
    for base in range(21000, 32000, 97):
        try:
            for port in range(base, base + count):
                with socket.socket() as s:
                    s.bind(("127.0.0.1", port))
            return base
        except OSError:
            continue
    sys.exit("no free port range found")


def children_cpu_s():
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def run_peers(fastk, config, run_dir):
    cpu_before = children_cpu_s()
    began = time.monotonic()
    shutil.rmtree(run_dir, ignore_errors=True)  # a repetition's: fastk never writes over a run
    done = subprocess.run([fastk, "run", config, "--no-plots", "--output", run_dir],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall_s = time.monotonic() - began
    cpu_s = children_cpu_s() - cpu_before
    if done.returncode != 0:
        sys.exit(f"fastk run failed:\n{done.stdout}")
    with open(os.path.join(run_dir, "summary.json")) as f:
        summary = json.load(f)
    peers = summary["per_peer"]
    elapsed = [p["elapsed_s"] for p in peers]
    began = [p["first_iteration_monotonic_s"] for p in peers]
    ended = [p["last_update_monotonic_s"] for p in peers]
    return {
        "train_s": max(elapsed),
        # On the shared monotonic clock: the first peer's first iteration to the last
        # peer's last update, and the part of it in which every peer had started.
        "span_s": max(ended) - min(began),
        "all_s": max(ended) - max(began),
        "wall_s": wall_s,
        "cpu_s": cpu_s,
        "startup_s": max(p["startup_s"] for p in peers),
        "wait_share": sum(p["waiting_s"] for p in peers) / sum(elapsed),
        "compute_share": sum(p["compute_s"] for p in peers) / sum(elapsed),
        "bytes_per_iteration": summary["bytes_per_iteration"],
        # Models left in shared memory (local_transport "shm"): what neighbours read in place.
        "shared_per_iteration": sum(p.get("shared_bytes", 0) for p in peers) /
                                max(1, sum(p["iterations"] for p in peers)),
        "rss_mib": [p["peak_rss_mib"] for p in peers],
        "accuracy": summary.get("final_test_accuracy", float("nan")),
        "links": {p.get("links") for p in peers},
    }


def gradient_baseline(binary, config, trainers=2):
    """Seconds for the 4,800 gradients on 2 threads, and the CPU time of the whole program.

    trainers=2: each thread trains one half of the data set with its own model (the
    baseline of the target). trainers=8: the run's own gradients, one shard and one model
    per peer, the two threads taking their four trainers in turns."""
    cpu_before = children_cpu_s()
    out = subprocess.run([binary, config, str(PEERS * ITERATIONS), "2", str(trainers)],
                         check=True, stdout=subprocess.PIPE, text=True).stdout
    seconds = float(re.search(r"seconds=([0-9.eE+-]+)", out).group(1))
    return seconds, children_cpu_s() - cpu_before


def compare_curve(fastk, curve_config, plain_config, run_dir, repeats):
    """Training phases with CURVE links and plain ones, interleaved, and their medians."""
    phases = {"curve": [], "plain": []}
    for r in range(repeats):
        for name, config in (("curve", curve_config), ("plain", plain_config)):
            p = run_peers(fastk, config, run_dir)
            if p["links"] != {name}:  # each peer's summary says what its links were
                sys.exit(f"bench_peers: the {name} run had {p['links']} links")
            phases[name].append(p["train_s"])
            print(f"run {r + 1} {name}: training phase {p['train_s']:.3f} s, wall "
                  f"{p['wall_s']:.2f} s, mean-model accuracy {100 * p['accuracy']:.2f}% | "
                  f"load average {os.getloadavg()[0]:.1f}", flush=True)
    median = {k: sorted(v)[len(v) // 2] for k, v in phases.items()}
    print(f"median training phase over {repeats} runs: curve {median['curve']:.3f} s, plain "
          f"{median['plain']:.3f} s: CURVE costs {100 * (median['curve'] / median['plain'] - 1):+.1f}%")


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--transport", choices=["shm", "ipc", "tcp"], default="shm",
                        help="[cluster] local_transport of the peers (default: shm, fastk's); "
                             "tcp links are CURVE-encrypted, as fastk's default for TCP is")
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--base-port", type=int,
                        help="first of the 8 ports the peers use (default: the first free range "
                             "from 21000 on, checked on 127.0.0.1)")
    parser.add_argument("--curve-cost", action="store_true",
                        help="compare runs with CURVE links and plain ones, interleaved")
    args = parser.parse_args()
    fastk = os.path.join(args.build, "fastk")
    baseline = os.path.join(args.build, "benchmarks", "gradient_throughput")
    for path in (fastk, baseline):
        if not os.access(path, os.X_OK):
            sys.exit(f"{path} not found: build with -DFASTK_BUILD_BENCHMARKS=ON")

    work = tempfile.mkdtemp(prefix="fastk_bench_")
    base_port = args.base_port or free_base_port(PEERS)

    def write_config(curve):
        path = os.path.join(work, f"bench-{curve}.toml")
        with open(path, "w") as f:
            f.write(CONFIG.format(iterations=ITERATIONS, peers=PEERS, output=work,
                                  base_port=base_port, transport=args.transport, curve=curve))
        return path

    run_dir = os.path.join(work, "bench")
    if args.curve_cost:
        compare_curve(fastk, write_config("on"), write_config("off"), run_dir, args.repeats)
        return
    config = write_config("auto")
    print(f"config: {config}" + (" (tcp: CURVE links, [security] curve = \"auto\")"
                                  if args.transport == "tcp" else ""))
    ratios, ratios8 = [], []
    for r in range(args.repeats):
        p = run_peers(fastk, config, run_dir)
        g, g_cpu = gradient_baseline(baseline, config)
        g8, _ = gradient_baseline(baseline, config, trainers=PEERS)
        ratios.append(p["train_s"] / g)
        ratios8.append(p["train_s"] / g8)
        rss = p["rss_mib"]
        load = os.getloadavg()[0]
        print(f"run {r + 1}: training phase {p['train_s']:.2f} s (first to last peer "
              f"{p['span_s']:.2f} s, all peers {p['all_s']:.2f} s; wall {p['wall_s']:.2f} s, "
              f"start-up {p['startup_s']:.2f} s) | 4800 gradients on 2 threads {g:.2f} s | "
              f"ratio {p['train_s'] / g:.2f}x (wall {p['wall_s'] / g:.2f}x) | the run's own "
              f"gradients (8 shards and models) on 2 threads {g8:.2f} s, ratio "
              f"{p['train_s'] / g8:.2f}x | "
              f"{p['bytes_per_iteration'] / 1e3:.1f} kB sent on sockets and "
              f"{p['shared_per_iteration'] / 1e3:.0f} kB shared in memory per peer-iteration | "
              f"waiting {100 * p['wait_share']:.0f}%, computing {100 * p['compute_share']:.0f}% "
              f"of peer time | peak RSS per peer {min(rss):.0f}-{max(rss):.0f} MiB "
              f"(total {sum(rss):.0f}) | mean-model accuracy {100 * p['accuracy']:.2f}% | "
              f"CPU time: fastk run {p['cpu_s']:.1f} s, baseline program {g_cpu:.1f} s "
              f"(both with data loading) | load average {load:.1f}",
              flush=True)
    if len(ratios) > 1:
        for name, values in (("2 trainers", ratios), ("8 trainers", ratios8)):
            values.sort()
            print(f"ratio to the {name} baseline over {len(values)} runs: median "
                  f"{values[len(values) // 2]:.2f}x, range {values[0]:.2f}-{values[-1]:.2f}x")


if __name__ == "__main__":
    main()
