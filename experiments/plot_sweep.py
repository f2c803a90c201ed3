#!/usr/bin/python3
"""Plot of a `fastk sweep` folder: each setting's mean-model accuracy against time, the mean
over the runs that differ only in the averaged key (run.seed by default) with their min-max
band, and its time to the target accuracy with the min-max range.

Usage: /usr/bin/python3 experiments/plot_sweep.py SWEEP_DIR

Reads SWEEP_DIR/sweep.json (the plan: varied keys, the averaged key, runtime, target) and
SWEEP_DIR/sweep.csv (every run's evaluation rows), writes SWEEP_DIR/sweep_accuracy.png.
Times are virtual seconds for `--runtime sim`, wall seconds for `--runtime real`.
"""
import csv
import json
import math
import os
import sys
from collections import OrderedDict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def setting_label(row, keys):
    return ", ".join(f"{k.split('.')[-1]}={row[k]}" for k in keys) or "all runs"


def runs_by_setting(rows, keys):
    """{setting label: {run folder: [(time, accuracy)]}} in the sweep's order."""
    settings = OrderedDict()
    for row in rows:
        runs = settings.setdefault(setting_label(row, keys), OrderedDict())
        runs.setdefault(row["run"], []).append(
            (float(row["time_s"]), float(row["test_accuracy"])))
    return settings


def value_at(series, t):
    """The last evaluation at or before t (NaN before the first and after the run ended)."""
    if t > series[-1][0] or t < series[0][0]:
        return math.nan
    value = series[0][1]
    for time_s, accuracy in series:
        if time_s > t:
            break
        value = accuracy
    return value


def band(runs, grid):
    mean, low, high = [], [], []
    for t in grid:
        values = [v for v in (value_at(s, t) for s in runs.values()) if not math.isnan(v)]
        mean.append(sum(values) / len(values) if values else math.nan)
        low.append(min(values) if values else math.nan)
        high.append(max(values) if values else math.nan)
    return mean, low, high


def time_to_target(series, target):
    for time_s, accuracy in series:
        if accuracy >= target:
            return time_s
    return None


def main(folder):
    with open(os.path.join(folder, "sweep.json")) as f:
        plan = json.load(f)
    with open(os.path.join(folder, "sweep.csv"), newline="") as f:
        rows = list(csv.DictReader(f))
    if not rows:
        sys.exit(f"{folder}/sweep.csv has no evaluations")
    keys = [v["key"] for v in plan.get("vary", []) if v["key"] != plan.get("over")]
    settings = runs_by_setting(rows, keys)
    target = plan.get("target_accuracy", 0) or 0
    unit = "virtual s" if plan.get("runtime") == "sim" else "s"
    end = max(s[-1][0] for runs in settings.values() for s in runs.values())
    grid = [end * i / 300 for i in range(301)]

    fig, (ax, bars) = plt.subplots(1, 2, figsize=(13, 4.8),
                                   gridspec_kw={"width_ratios": [3, 2]})
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    labels, means, lows, highs, reached = [], [], [], [], []
    for i, (label, runs) in enumerate(settings.items()):
        colour = colours[i % len(colours)]
        mean, low, high = band(runs, grid)
        ax.plot(grid, mean, color=colour, label=f"{label} ({len(runs)} runs)")
        if len(runs) > 1:
            ax.fill_between(grid, low, high, color=colour, alpha=0.2, linewidth=0)
        times = [time_to_target(s, target) for s in runs.values()] if target > 0 else []
        hit = [t for t in times if t is not None]
        labels.append(label)
        reached.append(f"{len(hit)}/{len(runs)}")
        means.append(sum(hit) / len(hit) if hit else math.nan)
        lows.append(min(hit) if hit else math.nan)
        highs.append(max(hit) if hit else math.nan)
    if target > 0:
        ax.axhline(target, color="grey", linestyle="--", linewidth=1,
                   label=f"target {100 * target:g}%")
    ax.set_xlabel(f"time ({unit})")
    ax.set_ylabel("mean-model test accuracy")
    ax.set_ylim(bottom=max(0.0, min(r[1] for s in settings.values()
                                    for run in s.values() for r in run) - 0.02))
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8, loc="lower right")
    ax.set_title("accuracy over time: mean and min-max over "
                 + (plan.get("over", "run.seed")))

    if target > 0:
        y = list(range(len(labels)))
        errors = [[m - lo if not math.isnan(m) else 0 for m, lo in zip(means, lows)],
                  [hi - m if not math.isnan(m) else 0 for m, hi in zip(means, highs)]]
        bars.barh(y, [0 if math.isnan(m) else m for m in means], xerr=errors, capsize=4,
                  color=[colours[i % len(colours)] for i in y])
        bars.set_yticks(y, [f"{lab}  [{r}]" for lab, r in zip(labels, reached)], fontsize=8)
        bars.invert_yaxis()
        bars.set_xlabel(f"time to {100 * target:g}% ({unit}); [runs that reached it]")
        bars.grid(axis="x", alpha=0.3)
        bars.set_title("time to target: mean, min-max")
    else:
        bars.axis("off")
        bars.text(0.5, 0.5, "no single run.target_accuracy\n(none, or varied: see time_to_target.csv)",
                  ha="center")
    fig.tight_layout()
    out = os.path.join(folder, "sweep_accuracy.png")
    fig.savefig(out, dpi=110)
    print(f"plot: {out}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
