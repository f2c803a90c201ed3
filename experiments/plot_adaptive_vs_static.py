#!/usr/bin/python3
"""Does the adaptive policy track the best static number of backup workers without tuning?

Usage: /usr/bin/python3 experiments/plot_adaptive_vs_static.py FOLDER

FOLDER holds two `fastk sweep` folders (experiments/reproduce.sh adaptive_vs_static):
static/ (consensus.policy = static, varying stragglers.transient_factor and
consensus.backups) and adaptive/ (varying stragglers.transient_factor). Reads their
time_to_target.csv, prints one Markdown table (time to target per straggler level: each static
b, the best of them, adaptive) and writes FOLDER/adaptive_vs_static.png.
"""
import csv
import os
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

FACTOR = "stragglers.transient_factor"


def read(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def number(text):
    return float(text) if text not in ("", None) else float("nan")


def main(folder):
    static = read(os.path.join(folder, "static", "time_to_target.csv"))
    adaptive = read(os.path.join(folder, "adaptive", "time_to_target.csv"))
    factors = sorted({float(r[FACTOR]) for r in static})
    backups = sorted({int(r["consensus.backups"]) for r in static})
    fmt = lambda v: f"{v:g}"  # noqa: E731
    cell = {(float(r[FACTOR]), int(r["consensus.backups"])): r for r in static}
    ada = {float(r[FACTOR]): r for r in adaptive}
    header = ["transient factor"] + [f"static b={b}" for b in backups] + ["best static", "adaptive"]
    print("| " + " | ".join(header) + " |")
    print("|" + "---|" * len(header))
    fig, ax = plt.subplots(figsize=(8, 4.8))
    for b in backups:
        ys = [number(cell[(f, b)]["time_to_target_mean_s"]) for f in factors]
        ax.plot(factors, ys, marker="o", linestyle="--", label=f"static b={b}")
    ys, lo, hi = [], [], []
    for f in factors:
        r = ada[f]
        ys.append(number(r["time_to_target_mean_s"]))
        lo.append(ys[-1] - number(r["time_to_target_min_s"]))
        hi.append(number(r["time_to_target_max_s"]) - ys[-1])
    ax.errorbar(factors, ys, yerr=[lo, hi], marker="s", linewidth=2.5, capsize=4,
                color="black", label="adaptive (min-max over seeds)")
    for f in factors:
        times = {b: number(cell[(f, b)]["time_to_target_mean_s"]) for b in backups}
        reached = {b: t for b, t in times.items() if t == t}
        best = min(reached, key=reached.get) if reached else None
        row = [fmt(f)]
        for b in backups:
            r = cell[(f, b)]
            row.append(f"{times[b]:.0f} ({r['reached']}/{r['runs']})" if times[b] == times[b]
                       else f"- (0/{r['runs']})")
        row.append(f"b={best}: {reached[best]:.0f}" if best is not None else "-")
        a = ada[f]
        t = number(a["time_to_target_mean_s"])
        row.append(f"{t:.0f} ({a['reached']}/{a['runs']})" if t == t else "-")
        print("| " + " | ".join(row) + " |")
    ax.set_xscale("log")
    ax.set_xticks(factors, [fmt(f) for f in factors])
    ax.set_xlabel("straggler slowdown factor (10% of gradients)")
    ax.set_ylabel(f"time to {100 * number(static[0]['target_accuracy']):g}% (virtual s)")
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    out = os.path.join(folder, "adaptive_vs_static.png")
    fig.savefig(out, dpi=110)
    print(f"plot: {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
