#!/usr/bin/python3
"""Speed-up against the number of peers, with the learning rate scaled as the papers scale it.

Usage: experiments/policies/speedup.py [--fastk build/fastk] [--runtime sim|real]
           [--config experiments/configs/speedup.toml] [--peers 1,2,4,8,16,32,64]
           [--policies full,adaptive] [--seeds 1,2,3] [--lr-per-peer 0.005]
           [--iteration-budget 16000] [--set KEY=VALUE ...] [--report-only] --out FOLDER

For each peer count n it runs one `fastk sweep` of CONFIG (FOLDER/peers-<n>/) with
topology.peers = n and optimizer.lr = n * LR_PER_PEER (the linear scaling rule: n peers
average n gradients per iteration, so each step may be n times as long), over the policies and
seeds. Each run stops at the target, or after BUDGET / n + 400 iterations (about five times
what a linear speed-up from one peer's 3,000-odd iterations would need), so that a peer count where the
training stalls or diverges costs minutes, not hours. One peer has no neighbour to wait for, so it runs once per seed (policy full: plain
SGD) and is every policy's baseline. Then, per policy and peer count, over the seeds:
  iterations: the mean iteration of the peers when the mean model first reached the target,
  time: the time to target (virtual seconds in the simulator, wall seconds on real peers),
  speed-up: the one-peer run's iterations (time) over these, for the same seed,
printed as a Markdown table (mean and min-max over seeds) and written to FOLDER/speedup.csv,
with FOLDER/speedup.png (speed-up against n, the ideal n and the 0.7n line).
With --report-only it runs nothing and makes the table and the plot again from FOLDER's sweeps.
Settings are fixed before the seeds run: nothing is tuned per seed or per peer count.
"""
import argparse
import csv
import os
import subprocess
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fastk", default="build/fastk")
    p.add_argument("--runtime", choices=("sim", "real"), default="sim")
    p.add_argument("--config", default="experiments/configs/speedup.toml")
    p.add_argument("--peers", default="1,2,4,8,16,32,64")
    p.add_argument("--policies", default="full,adaptive")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--lr-per-peer", type=float, default=0.005)
    p.add_argument("--iteration-budget", type=int, default=16000)
    p.add_argument("--set", action="append", default=[], dest="sets", metavar="KEY=VALUE")
    p.add_argument("--report-only", action="store_true")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    try:
        args.peers = [int(n) for n in args.peers.split(",")]
    except ValueError:
        p.error(f"--peers: expected peer counts separated by commas, got {args.peers!r}")
    args.policies = args.policies.split(",")
    if args.lr_per_peer <= 0 or args.iteration_budget < 1:
        p.error("--lr-per-peer and --iteration-budget must be positive")
    if 1 not in args.peers:
        p.error("--peers must include 1: it is the baseline of every speed-up")
    if any(n < 1 for n in args.peers):
        p.error("--peers: every count must be at least 1")
    return args


def run_sweep(args, peers):
    folder = os.path.join(args.out, f"peers-{peers}")
    policies = ["full"] if peers == 1 else args.policies
    cmd = [args.fastk, "sweep", args.config, "--runtime", args.runtime, "--no-plots",
           "--set", f"topology.peers={peers}",
           "--set", f"optimizer.lr={peers * args.lr_per_peer:.10g}",
           "--set", f"run.iterations={args.iteration_budget // peers + 400}",
           "--vary", "consensus.policy=" + ",".join(policies),
           "--vary", f"run.seed={args.seeds}", "--output", folder]
    for s in args.sets:
        cmd += ["--set", s]
    print(f"== {peers} peer(s): lr {peers * args.lr_per_peer:g}", flush=True)
    if subprocess.run(cmd).returncode != 0:
        sys.exit(f"speedup.py: the sweep of {peers} peer(s) failed (its runs and logs: {folder})")
    return folder


def first_reach(folder, target):
    """(policy, seed) -> (time, mean iteration) when the mean model first reached target."""
    reached, seen = {}, set()
    with open(os.path.join(folder, "sweep.csv"), newline="") as f:
        for row in csv.DictReader(f):
            key = (row["consensus.policy"], row["run.seed"])
            seen.add(key)
            if key not in reached and float(row["test_accuracy"]) >= target:
                reached[key] = (float(row["time_s"]), float(row["mean_iteration"]))
    return {key: reached.get(key) for key in seen}


def target_of(folder):
    with open(os.path.join(folder, "time_to_target.csv"), newline="") as f:
        return float(next(csv.DictReader(f))["target_accuracy"])


def number(value):
    return f"{value:,.0f}" if value >= 100 else f"{value:.3g}"


def spread(values):
    if not values:
        return "-"
    mean = sum(values) / len(values)
    return f"{number(mean)} ({number(min(values))}-{number(max(values))})"


def summarise(args, results):
    """One row per policy and peer count: means and per-seed speed-ups against one peer."""
    base = {seed: r for (_, seed), r in results[1].items()}
    rows = []
    for policy in args.policies:
        for n in args.peers:
            per_seed = {seed: r for (p, seed), r in results[n].items()
                        if p == (policy if n > 1 else "full")}
            row = {"policy": policy, "peers": n, "runs": len(per_seed),
                   "reached": sum(r is not None for r in per_seed.values()),
                   "time": [], "iterations": [], "speedup_time": [], "speedup_iterations": []}
            for seed, r in per_seed.items():
                if r is None:
                    continue
                row["time"].append(r[0])
                row["iterations"].append(r[1])
                if base.get(seed):
                    row["speedup_time"].append(base[seed][0] / r[0])
                    row["speedup_iterations"].append(base[seed][1] / r[1])
            rows.append(row)
    return rows


def write_outputs(args, rows, target):
    unit = "virtual s" if args.runtime == "sim" else "wall s"
    print(f"\n| policy | peers | lr | iterations to {target:.0%} | speed-up (iterations) | "
          f"time to {target:.0%} ({unit}) | speed-up (time) | reached |")
    print("|---|---|---|---|---|---|---|---|")
    with open(os.path.join(args.out, "speedup.csv"), "w", newline="") as f:
        out = csv.writer(f)
        out.writerow(["policy", "peers", "lr", "runs", "reached", "iterations_mean",
                      "time_mean_s", "speedup_iterations_mean", "speedup_iterations_min",
                      "speedup_iterations_max", "speedup_time_mean", "speedup_time_min",
                      "speedup_time_max"])
        for r in rows:
            lr = r["peers"] * args.lr_per_peer
            mean = lambda v: sum(v) / len(v) if v else ""  # noqa: E731
            out.writerow([r["policy"], r["peers"], f"{lr:g}", r["runs"], r["reached"],
                          mean(r["iterations"]), mean(r["time"]),
                          mean(r["speedup_iterations"]), min(r["speedup_iterations"], default=""),
                          max(r["speedup_iterations"], default=""), mean(r["speedup_time"]),
                          min(r["speedup_time"], default=""), max(r["speedup_time"], default="")])
            if r["peers"] == 1 and r["policy"] != args.policies[0]:
                continue  # one peer's row is every policy's, printed once
            print(f"| {r['policy'] if r['peers'] > 1 else 'one peer (SGD)'} | {r['peers']} | "
                  f"{lr:g} | {spread(r['iterations'])} | {spread(r['speedup_iterations'])} | "
                  f"{spread(r['time'])} | {spread(r['speedup_time'])} | "
                  f"{r['reached']}/{r['runs']} |")
    plot(args, rows, unit)


def plot(args, rows, unit):
    fig, axes = plt.subplots(1, 2, figsize=(11, 4.5), sharey=True)
    ns = sorted(args.peers)
    for ax, key, title in ((axes[0], "speedup_iterations", "iterations to target"),
                           (axes[1], "speedup_time", f"time to target ({unit})")):
        ax.plot(ns, ns, color="grey", label="linear (n)")
        ax.plot(ns, [0.7 * n for n in ns], color="grey", linestyle=":", label="0.7 n")
        by_policy = defaultdict(list)
        for r in rows:
            if r[key]:
                by_policy[r["policy"]].append(r)
        for policy, rs in by_policy.items():
            xs = [r["peers"] for r in rs]
            ys = [sum(r[key]) / len(r[key]) for r in rs]
            lo = [y - min(r[key]) for y, r in zip(ys, rs)]
            hi = [max(r[key]) - y for y, r in zip(ys, rs)]
            ax.errorbar(xs, ys, yerr=[lo, hi], marker="o", capsize=3, label=policy)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log", base=2)
        ax.set_xlabel("peers n (lr = n x %g)" % args.lr_per_peer)
        ax.set_title("speed-up in " + title)
        ax.grid(True, which="both", alpha=0.3)
    axes[0].set_ylabel("one peer / n peers (min-max over seeds)")
    axes[0].legend()
    fig.tight_layout()
    path = os.path.join(args.out, "speedup.png")
    fig.savefig(path, dpi=110)
    print(f"\nwrote {os.path.join(args.out, 'speedup.csv')} and {path}")


def main():
    args = parse_args()
    os.makedirs(args.out, exist_ok=True)
    results, target = {}, None
    for n in args.peers:
        folder = (os.path.join(args.out, f"peers-{n}") if args.report_only
                  else run_sweep(args, n))
        if not os.path.exists(os.path.join(folder, "sweep.csv")):
            sys.exit(f"speedup.py: {folder} holds no finished sweep (sweep.csv)")
        target = target_of(folder)
        results[n] = first_reach(folder, target)
    write_outputs(args, summarise(args, results), target)
    return 0


if __name__ == "__main__":
    sys.exit(main())
