#!/usr/bin/python3
"""Puts fastk runs side by side: the mean model's accuracy against time in one plot, and one
line per run with its time to the target accuracy.

Usage: /usr/bin/python3 experiments/compare_runs.py RUN_DIR [RUN_DIR...] [--target 0.80]
                                           [--output comparison.png] [--labels a,b]

Each RUN_DIR is a `fastk run` or `fastk sim` folder (evaluation.csv, summary.json). The
target defaults to the runs' run.target_accuracy (from their summary.json). Prints, e.g.:

  time to 80.0% accuracy: adaptive 0.78 s, full 1.24 s (adaptive takes 0.63x the time of full)
"""
import argparse
import csv
import json
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load(run_dir):
    path = os.path.join(run_dir, "evaluation.csv")
    if not os.path.exists(path):
        sys.exit(f"compare_runs: {path} is missing (not a finished fastk run or sim folder?)")
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    summary_path = os.path.join(run_dir, "summary.json")
    summary = json.load(open(summary_path)) if os.path.exists(summary_path) else {}
    return ([float(r["time_s"]) for r in rows], [float(r["test_accuracy"]) for r in rows],
            summary)


def time_to(times, accuracies, target):
    for t, a in zip(times, accuracies):
        if a >= target:
            return t
    return None


def seconds(t):
    return f"{t:.2f} s" if t < 10 else f"{t:.1f} s"


def label_of(run_dir, summary):
    return summary.get("policy") or os.path.basename(os.path.normpath(run_dir))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("runs", nargs="+")
    parser.add_argument("--target", type=float, default=None)
    parser.add_argument("--output", default=None)
    parser.add_argument("--labels", default=None, help="comma-separated, one per run")
    args = parser.parse_args()
    runs = [(run, *load(run)) for run in args.runs]
    labels = (args.labels.split(",") if args.labels
              else [label_of(run, summary) for run, _, _, summary in runs])
    if len(labels) != len(runs):
        sys.exit("compare_runs: --labels needs one label per run")
    target = args.target
    if target is None:
        targets = {summary.get("target_accuracy", 0) for _, _, _, summary in runs}
        target = max(targets) if targets else 0
    fig, ax = plt.subplots(figsize=(9, 5))
    reached = []
    for (run, times, accuracies, _), label in zip(runs, labels):
        ax.plot(times, [100 * a for a in accuracies], marker="o", markersize=3, label=label)
        reached.append((label, time_to(times, accuracies, target) if target > 0 else None))
    if target > 0:
        ax.axhline(100 * target, color="grey", linestyle="--", linewidth=1,
                   label=f"target {100 * target:.1f}%")
    ax.set_xlabel("time since the training started (s)")
    ax.set_ylabel("test accuracy of the mean model (%)")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    output = args.output or os.path.join(args.runs[0], "comparison.png")
    fig.savefig(output, dpi=110)
    if target > 0:
        parts = [f"{label} {seconds(t)}" if t is not None else f"{label} not reached"
                 for label, t in reached]
        line = f"time to {100 * target:.1f}% accuracy: " + ", ".join(parts)
        if len(reached) == 2 and all(t is not None for _, t in reached) and reached[1][1] > 0:
            line += (f" ({reached[0][0]} takes {reached[0][1] / reached[1][1]:.2f}x the time"
                     f" of {reached[1][0]})")
        print(line)
    print(f"plot: {output}")


if __name__ == "__main__":
    main()
