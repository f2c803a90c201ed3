#!/usr/bin/python3
"""One peer 10x slower for the whole run: does waiting for only the fastest neighbours cut it
off, and what does keeping the graph connected cost? (docs/protocol.md §5.8, §2.6)

16 peers, logistic regression on Fashion-MNIST, compute 1 virtual s per gradient, links
0.1 s, peer 5 ten times slower; every run lasts 300 virtual s. Three setups:
  torus                 4x4 torus, iid data: full, adaptive, adaptive with keep_connected;
  torus, Dirichlet(0.1) the same with non-iid data (each peer's labels drawn from a
                        Dirichlet(0.1)), where the slow peer's data matter more;
  one_peer_exponential  one in-neighbour per round: full, adaptive (m_min = 1, the default,
                        which awaits the round's in-neighbour: the connected choice there,
                        as keep_connected is for static graphs only) and adaptive with
                        m_min = 0 (free to skip it).
For each, over virtual time (mean and spread over seeds): the test accuracy of the slow
peer's own model, the consensus distance, and at the end the mean model's accuracy and the
iterations done.

Usage: experiments/sim/slow_peer.py [--fastk build/fastk] [--seeds 1 2 3] [--out runs/slow_peer]
Writes OUT/slow_peer.png and OUT/slow_peer.md (the README table). About half a minute on 2 cores.
"""
import argparse
import csv
import json
import statistics
import shutil
import subprocess
import sys
from pathlib import Path

from fashion16 import config_text

SLOW_PEER = 5
DURATION_S = 300

TORUS_POLICIES = [
    ("full", 'policy = "full"'),
    ("adaptive", 'policy = "adaptive"'),
    ("adaptive + keep_connected", 'policy = "adaptive"\nkeep_connected = true'),
]
# (setup, topology, [data] lines, policies)
SETUPS = [
    ("torus", "torus", 'partition = "iid"', TORUS_POLICIES),
    ("torus, Dirichlet(0.1)", "torus", 'partition = "dirichlet"\nalpha = 0.1', TORUS_POLICIES),
    ("one_peer_exponential", "one_peer_exponential", 'partition = "iid"', [
        ("full", 'policy = "full"'),
        ("adaptive (m_min = 1)", 'policy = "adaptive"'),
        ("adaptive (m_min = 0)", 'policy = "adaptive"\nm_min = 0'),
    ]),
]


def simulate(fastk, out, setup, label, consensus, seed):
    _, topology, partition, _ = setup
    name = "".join(c if c.isalnum() else "_" for c in f"{setup[0]} {label} s{seed}")
    configs = Path(out) / "configs"
    configs.mkdir(parents=True, exist_ok=True)
    config = configs / f"{name}.toml"
    config.write_text(config_text(
        name, seed, out, topology, consensus,
        run=f"iterations = 100000\nduration_s = {DURATION_S}\neval_interval_s = 10",
        data=partition, stragglers=f"slow_peers = [{SLOW_PEER}]\nslow_factors = [10]",
        per_peer_eval=True))
    folder = Path(out) / name
    shutil.rmtree(folder, ignore_errors=True)  # a rerun's: fastk never writes over a run
    subprocess.run([fastk, "sim", "--quiet", "--no-plots", str(config), "--output", str(folder)],
                   check=True, stdout=subprocess.DEVNULL)
    return folder


def read_run(folder):
    slow = {}
    with open(folder / "peer_accuracy.csv") as f:
        for row in csv.DictReader(f):
            if int(row["peer"]) == SLOW_PEER:
                slow[float(row["time_s"])] = float(row["accuracy"])
    distance, mean_accuracy = {}, {}
    with open(folder / "evaluation.csv") as f:
        for row in csv.DictReader(f):
            distance[float(row["time_s"])] = float(row["consensus_distance"])
            mean_accuracy[float(row["time_s"])] = float(row["test_accuracy"])
    iterations = {}
    for peer in range(16):
        summary = json.loads((folder / "peers" / f"peer-{peer}" / "summary.json").read_text())
        iterations[peer] = summary["iterations"]
    return {"slow": slow, "distance": distance, "mean": mean_accuracy, "iterations": iterations}


def spread(values):
    return statistics.mean(values), min(values), max(values)


def table(results, seeds):
    lines = [f"| setup | policy | slow peer's accuracy at {DURATION_S} s | mean model's accuracy | "
             "consensus distance | iterations: fast peers / slow peer |",
             "|---|---|---|---|---|---|"]
    for topology, runs in results.items():
        for label, per_seed in runs.items():
            end = lambda key: [r[key][max(r[key])] for r in per_seed]
            fast = [statistics.mean(v for p, v in r["iterations"].items() if p != SLOW_PEER)
                    for r in per_seed]
            slow = [r["iterations"][SLOW_PEER] for r in per_seed]
            cells = []
            for values, fmt in ((end("slow"), "{:.1%}"), (end("mean"), "{:.1%}"),
                                (end("distance"), "{:.3g}")):
                mean, lo, hi = spread(values)
                cells.append(f"{fmt.format(mean)} ({fmt.format(lo)}-{fmt.format(hi)})")
            cells.append(f"{statistics.mean(fast):.0f} / {statistics.mean(slow):.0f}")
            lines.append(f"| {topology} | {label} | " + " | ".join(cells) + " |")
    lines.append("")
    lines.append(f"Mean (min-max) over seeds {', '.join(map(str, seeds))}; "
                 f"peer {SLOW_PEER} is 10x slower; {DURATION_S} virtual s per run.")
    return "\n".join(lines)


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(len(results), 2, figsize=(11, 3.6 * len(results)), sharex=True)
    for row, (topology, runs) in enumerate(results.items()):
        for label, per_seed in runs.items():
            for col, (key, title) in enumerate((("slow", "slow peer's own model: test accuracy"),
                                                ("distance", "consensus distance"))):
                times = sorted(set.intersection(*(set(r[key]) for r in per_seed)))
                mean = [statistics.mean(r[key][t] for r in per_seed) for t in times]
                lo = [min(r[key][t] for r in per_seed) for t in times]
                hi = [max(r[key][t] for r in per_seed) for t in times]
                ax = axes[row][col]
                line, = ax.plot(times, mean, label=label)
                ax.fill_between(times, lo, hi, alpha=0.2, color=line.get_color())
                ax.set_title(f"{topology}: {title}", fontsize=10)
                if key == "distance":
                    ax.set_yscale("log")
                else:
                    ax.set_ylim(0.5, 0.85)
        axes[row][0].legend(fontsize=8)
    for ax in axes[-1]:
        ax.set_xlabel("virtual time (s)")
    fig.suptitle(f"16 peers, peer {SLOW_PEER} 10x slower (fastk sim; mean and min-max of seeds)")
    fig.tight_layout()
    fig.savefig(path, dpi=75)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--fastk", default="build/fastk")
    parser.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    parser.add_argument("--out", default="runs/slow_peer")
    args = parser.parse_args()
    out = str(Path(args.out).resolve())
    results = {}
    total = sum(len(setup[3]) for setup in SETUPS) * len(args.seeds)
    done = 0
    for setup in SETUPS:
        results[setup[0]] = {}
        for label, consensus in setup[3]:
            per_seed = []
            for seed in args.seeds:
                folder = simulate(args.fastk, out, setup, label, consensus, seed)
                per_seed.append(read_run(folder))
                done += 1
                print(f"[{done}/{total}] {setup[0]}, {label}, seed {seed}", file=sys.stderr)
            results[setup[0]][label] = per_seed
    text = table(results, args.seeds)
    Path(out, "slow_peer.md").write_text(text + "\n")
    plot(results, Path(out) / "slow_peer.png")
    print(text)
    print(f"plot: {Path(out) / 'slow_peer.png'}")


if __name__ == "__main__":
    main()
