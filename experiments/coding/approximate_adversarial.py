#!/usr/bin/python3
"""Approximate gradient codes under random and adversarial stragglers (docs/reproduction.md §5.3).

Usage: experiments/coding/approximate_adversarial.py [--code-errors build/experiments/code_errors]
                                                     --out FOLDER

Runs code_errors (every set of s late members decoded with each code's optimal decoder, s = 0
to 6), keeps its CSV as FOLDER/code_errors.csv, prints a Markdown table of err(S)/k at s = 2,
4 and 6 (uniformly random stragglers: the mean over all sets; adversarial: the worst set; the
Bernoulli and stochastic block codes' mean and range over seeds 1-3) and draws
FOLDER/code_errors.png.
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

LABELS = {"bibd": "BIBD (13 points, w = 4)", "frc": "FRC (12, groups of 4)",
          "bernoulli": "Bernoulli (13, d = 4)",
          "sbc": "stochastic block (13, 3 communities)", "graph": "graph code (13-cycle)"}


def read_rows(binary, out):
    # stdout only: code_errors' own error message reaches the terminal.
    done = subprocess.run([binary], stdout=subprocess.PIPE, text=True)
    if done.returncode != 0:
        sys.exit(f"approximate_adversarial.py: {binary} failed (exit {done.returncode})")
    text = done.stdout
    path = os.path.join(out, "code_errors.csv")
    with open(path, "w") as f:
        f.write(text)
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def by_code(rows):
    """kind -> s -> ([mean errors over seeds], [worst errors over seeds], load)"""
    table = defaultdict(lambda: defaultdict(lambda: ([], [], [])))
    for r in rows:
        means, worsts, loads = table[r["code"]][int(r["stragglers"])]
        means.append(float(r["mean_error"]))
        worsts.append(float(r["worst_error"]))
        loads.append(float(r["load"]))
    return table


def cell(values):
    mean = sum(values) / len(values)
    if len(values) == 1:
        return f"{mean:.4f}"
    return f"{mean:.4f} ({min(values):.4f}-{max(values):.4f})"


def print_table(table, wanted=(2, 4, 6)):
    counts = [s for s in wanted if all(s in per_s for per_s in table.values())]
    header = ["code", "load"] + [f"s = {s}: random / adversarial" for s in counts]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    for kind, per_s in table.items():
        loads = per_s[0][2]
        load = f"{sum(loads) / len(loads):.2f}"
        if len(set(loads)) > 1:
            load += f" ({min(loads):.2f}-{max(loads):.2f})"
        row = [LABELS[kind], load]
        for s in counts:
            means, worsts, _ = per_s[s]
            ratio = f"x{sum(worsts) / sum(means):.2f}" if sum(means) > 0 else "exact"
            row.append(f"{cell(means)} / {cell(worsts)} ({ratio})")
        print("| " + " | ".join(row) + " |")


def plot(table, path):
    fig, ax = plt.subplots(figsize=(7.5, 4.6))
    for kind, per_s in table.items():
        counts = sorted(per_s)
        mean = [sum(per_s[s][0]) / len(per_s[s][0]) for s in counts]
        worst = [sum(per_s[s][1]) / len(per_s[s][1]) for s in counts]
        line, = ax.plot(counts, mean, marker="o", label=f"{LABELS[kind]}: random")
        # Open, larger squares: where the two coincide (the block design) both stay visible.
        ax.plot(counts, worst, marker="s", markersize=9, markerfacecolor="none", linestyle="--",
                color=line.get_color(), label=f"{LABELS[kind]}: adversarial")
        if len(per_s[counts[0]][0]) > 1:
            ax.fill_between(counts, [min(per_s[s][0]) for s in counts],
                            [max(per_s[s][1]) for s in counts], color=line.get_color(),
                            alpha=0.1)
    ax.set_xlabel("stragglers s (of 12 or 13 members)")
    ax.set_ylabel("decoding error err(S) / k")
    ax.set_title("random (mean over all sets) against adversarial (worst set)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--code-errors", default="build/experiments/code_errors")
    p.add_argument("--out", required=True)
    args = p.parse_args()
    os.makedirs(args.out, exist_ok=True)
    table = by_code(read_rows(args.code_errors, args.out))
    print_table(table)
    path = os.path.join(args.out, "code_errors.png")
    plot(table, path)
    print(f"\nwrote {os.path.join(args.out, 'code_errors.csv')} and {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
