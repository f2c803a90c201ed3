#!/usr/bin/python3
"""The communication-efficient code on real peers with bandwidth-bound links
(docs/reproduction.md §5.1; documented, not run in CI: it needs root).

8 peers on 8 hosts of a LAN in a box (scripts/lan.sh: network namespaces on a bridge, each
host's link shaped by tbf to RATE in both directions, an sshd per host), started by
`fastk run` over real ssh: hypercube (3 neighbours, so one block of 3 per neighbourhood),
MLP 784-128-10, batch 32, Fashion-MNIST, Markov stragglers (10x slow, p_NS = 0.05,
p_SN = 0.3). The codes of --codes, interleaved in every repeat. --codes links (§5.1):

  uncoded   coding.scheme = "none": a model to each neighbour, wait for all of them
  frc       scheme "frc", stragglers = 2: a model and a whole gradient sum; any 1 of 3 covers
  mds       scheme "mds", stragglers = 1, sub_blocks = 2: a model and half a gradient; any 2

--codes ce_codes (§5.4, Ye and Abbe's comparison; every code set for s = 1):

  uncoded     as above
  frc         scheme "frc", stragglers = 1: blocks of 2 and 1 neighbours, any 1 covers each
              (the lone member's block tolerates no straggler)
  crc         scheme "crc", stragglers = 1: each neighbour holds 2 of the 3 partitions and
              sends a whole-gradient combination; any 2 of 3 cover the block
  cyclic_mds  scheme "cyclic_mds", sub_blocks = 1: the same, from an MDS generator
  ce_m2       scheme "cyclic_mds", sub_blocks = 2: each holds all 3 and sends half a
              gradient; any 2 of 3 cover the block

Each is then simulated (`fastk sim` with a calibration of this machine and
sim.link_rate_mbit = RATE; one host, since the LAN's hosts share this machine's cores), so
the table shows what the simulator predicts next to what the real peers took.

  scripts/build.sh build
  /usr/bin/python3 experiments/coding/ce_lan.py [--build build | --fastk FILE] [--rate 100mbit]
                                                [--codes links|ce_codes]
                                                [--iterations 150] [--repeats 3]
                                                [--json FILE] [--plot FILE]
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bench_lan  # noqa: E402  (lan_up, run_checked, summary_of, rate_bits, median)

CONFIG = """[run]
name = "{name}"
seed = {seed}
iterations = {iterations}
output = "{output}"
eval_interval_s = 1000000
[topology]
kind = "hypercube"
peers = 8
[data]
kind = "fashion_mnist"
[model]
kind = "mlp"
hidden = [128]
[optimizer]
lr = 0.05
batch_size = 32
[coding]
{coding}
[stragglers]
markov_good_to_bad = 0.05
markov_bad_to_good = 0.3
markov_factor = 10
[sim]
threads = 2
per_peer_eval = false
link_rate_mbit = {rate_mbit}
calibration = "{calibration}"
[cluster]
base_port = 47100
peer_timeout_ms = 30000
startup_timeout_ms = 60000
{hosts}
"""

CODE_SETS = {
    "links": {
        "uncoded": 'scheme = "none"',
        "frc": 'scheme = "frc"\nstragglers = 2',
        "mds": 'scheme = "mds"\nstragglers = 1\nsub_blocks = 2',
    },
    "ce_codes": {
        "uncoded": 'scheme = "none"',
        "frc": 'scheme = "frc"\nstragglers = 1',
        "crc": 'scheme = "crc"\nstragglers = 1',
        "cyclic_mds": 'scheme = "cyclic_mds"\nstragglers = 1\nsub_blocks = 1',
        "ce_m2": 'scheme = "cyclic_mds"\nstragglers = 1\nsub_blocks = 2',
    },
}


def write_config(workdir, name, coding, args, hosts):
    path = os.path.join(workdir, f"{name}.toml")
    with open(path, "w") as f:
        f.write(CONFIG.format(name=name, seed=args.seed, iterations=args.iterations,
                              output=os.path.join(workdir, "runs"), coding=coding,
                              rate_mbit=bench_lan.rate_bits(args.rate) / 1e6,
                              calibration=os.path.join(workdir, "calibration.json"),
                              hosts=hosts))
    return path


def figures(summary, iterations):
    return {
        "iteration_ms": 1000 * summary["training_phase_s"] / iterations,
        "bytes_per_iteration": summary["bytes_per_iteration"],
        "accuracy": summary["final_test_accuracy"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(bench_lan.ROOT, "build"))
    parser.add_argument("--fastk", help="the binary to run (default: BUILD/fastk)")
    parser.add_argument("--rate", default="100mbit", help="link rate, tc syntax")
    parser.add_argument("--iterations", type=int, default=150)
    parser.add_argument("--repeats", type=int, default=3, help="runs per code; medians")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--codes", choices=sorted(CODE_SETS), default="links",
                        help="which comparison (see above)")
    parser.add_argument("--json", help="also write every run's figures to this file")
    parser.add_argument("--plot", help="also draw real and simulated iteration times here")
    args = parser.parse_args()
    codes = CODE_SETS[args.codes]
    fastk = bench_lan.root_and_fastk(args.build, args.fastk)
    results = []
    with tempfile.TemporaryDirectory(prefix="fastk_ce_lan_") as workdir:
        bench_lan.calibrate(fastk, write_config(workdir, "calibrate", codes["uncoded"], args, ""),
                            workdir)
        try:
            hosts = bench_lan.lan_up(args.rate)
            for repeat in range(args.repeats):
                for code, coding in codes.items():
                    name = f"{code}_r{repeat}"
                    real = write_config(workdir, name, coding, args, hosts)
                    bench_lan.run_checked([fastk, "run", real, "--no-plots", "--output",
                                           bench_lan.fresh_output(workdir, name)],
                                          f"fastk run ({code})")
                    result = {"code": code, "repeat": repeat,
                              "real": figures(bench_lan.summary_of(workdir, name),
                                              args.iterations)}
                    sim = write_config(workdir, name + "_sim", coding, args, "")
                    bench_lan.run_checked([fastk, "sim", sim, "--no-plots", "--output",
                                           bench_lan.fresh_output(workdir, name + "_sim")],
                                          f"fastk sim ({code})")
                    result["sim"] = figures(bench_lan.summary_of(workdir, name + "_sim"),
                                            args.iterations)
                    results.append(result)
                    print("  " + json.dumps(result), flush=True)
        finally:
            bench_lan.lan("down", "--name", bench_lan.LAN)
    report(results, codes, args)
    if args.plot:
        plot(results, codes, args)


def report(results, codes, args):
    median = bench_lan.median
    print(f"\n8 peers on 8 hosts at {args.rate}, hypercube, MLP, Fashion-MNIST, Markov "
          f"stragglers x10, {args.iterations} iterations, medians of {args.repeats}\n")
    print("| code | real: iteration | sim: iteration | bytes/peer-iteration | real accuracy |")
    print("|---|---|---|---|---|")
    for code in codes:
        mine = [r for r in results if r["code"] == code]
        print(f"| {code} | {median([r['real']['iteration_ms'] for r in mine]):.1f} ms | "
              f"{median([r['sim']['iteration_ms'] for r in mine]):.1f} ms | "
              f"{median([r['real']['bytes_per_iteration'] for r in mine]):.0f} | "
              f"{100 * median([r['real']['accuracy'] for r in mine]):.2f}% |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


def plot(results, codes, args):
    """Real and simulated time per iteration of each code: medians, real runs' range."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    median = bench_lan.median
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    x = range(len(codes))
    real = [[r["real"]["iteration_ms"] for r in results if r["code"] == c] for c in codes]
    sim = [median([r["sim"]["iteration_ms"] for r in results if r["code"] == c]) for c in codes]
    mid = [median(times) for times in real]
    errors = [[m - min(t) for m, t in zip(mid, real)], [max(t) - m for m, t in zip(mid, real)]]
    ax.bar([i - 0.2 for i in x], mid, 0.4, yerr=errors, capsize=3, label="real peers (median, range)")
    ax.bar([i + 0.2 for i in x], sim, 0.4, label="simulator, calibrated")
    ax.set_xticks(list(x), list(codes))
    ax.set_ylabel("time per iteration (ms)")
    ax.set_title(f"8 hosts at {args.rate}, hypercube, MLP, Markov stragglers x10")
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
