#!/usr/bin/python3
"""Backup workers with ResNet-20 on CIFAR-10: time per iteration, simulator against real peers.

Usage: experiments/policies/cifar10_dbw.py [--fastk build/fastk]
           [--config experiments/configs/cifar10_dbw.toml] [--data DIR]
           [--policies full,static,adaptive] [--seeds 1,2,3] --out FOLDER

1. The model: experiments/models/resnet20.pt, exported with export_torchscript.py when missing.
2. The data: DIR (default data/cifar-10-batches-bin) when it holds the six CIFAR-10 batch
   files; otherwise FOLDER/synthetic-cifar10, CIFAR-format files of random pixels (2,000
   records per batch) written here. Their iteration times are those of the real data (the
   same shapes, the same augmentation); their accuracies mean nothing, and are not printed.
3. `fastk calibrate` on this machine (ResNet-20's measured gradient time, its messages and
   cores), then one `fastk sweep` per runtime over the policies and seeds: FOLDER/sim (the
   calibrated simulator) and FOLDER/real (`fastk run`, real peers).
Prints, per policy, the time per iteration (training phase / iterations; mean and min-max over
seeds) in both runtimes and their ratio, writes FOLDER/iteration_times.csv and draws
FOLDER/iteration_times.png.
"""
import argparse
import csv
import json
import os
import random
import subprocess
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BATCHES = [f"data_batch_{i}.bin" for i in range(1, 6)] + ["test_batch.bin"]


def parse_args():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--fastk", default="build/fastk")
    p.add_argument("--config", default="experiments/configs/cifar10_dbw.toml")
    p.add_argument("--data", default="data/cifar-10-batches-bin")
    p.add_argument("--policies", default="full,static,adaptive")
    p.add_argument("--seeds", default="1,2,3")
    p.add_argument("--out", required=True)
    return p.parse_args()


def model_file():
    path = ROOT / "experiments" / "models" / "resnet20.pt"
    if not path.exists():
        run([sys.executable, ROOT / "experiments/models/export_torchscript.py", "resnet20", path])
    return path


def synthetic_cifar10(folder, records=2000, seed=1):
    """CIFAR-10 binary batches of random pixels: a label byte, then 3,072 pixel bytes."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = random.Random(seed)
    for name in BATCHES:
        with open(folder / name, "wb") as f:
            for r in range(records):
                f.write(bytes([r % 10]) + rng.randbytes(3072))
    return folder


def data_folder(args, out):
    given = Path(args.data)
    if all((given / name).exists() for name in BATCHES):
        print(f"data: {given} (CIFAR-10)")
        return given.resolve(), False
    folder = synthetic_cifar10(out / "synthetic-cifar10")
    print(f"data: no CIFAR-10 in {given} (scripts/get-cifar10.sh); synthetic CIFAR-format files "
          f"in {folder}: iteration times only")
    return folder.resolve(), True


def run(cmd):
    print("$ " + " ".join(str(c) for c in cmd), flush=True)
    if subprocess.run([str(c) for c in cmd]).returncode != 0:
        sys.exit(f"cifar10_dbw.py: {cmd[0]} {cmd[1]} failed (its output is above)")


def iteration_times(folder):
    """policy -> [training phase / iterations, one per seed] of a sweep's runs."""
    times = {}
    plan = json.loads((folder / "sweep.json").read_text())
    for entry in plan["runs"]:
        summary = json.loads((folder / "runs" / entry["folder"] / "summary.json").read_text())
        policy = summary["policy"]
        times.setdefault(policy, []).append(summary["training_phase_s"] /
                                            summary["iterations_per_peer"])
    return times


def spread(values):
    mean = sum(values) / len(values)
    return f"{mean:.3f} ({min(values):.3f}-{max(values):.3f})", mean


def report(sim, real, out):
    print("\n| policy | simulated (s per iteration) | real peers (s per iteration) | "
          "simulated / real |")
    print("|---|---|---|---|")
    rows = []
    for policy in sim:
        (s_text, s_mean), (r_text, r_mean) = spread(sim[policy]), spread(real[policy])
        print(f"| {policy} | {s_text} | {r_text} | {s_mean / r_mean:.2f} |")
        rows.append((policy, s_mean, min(sim[policy]), max(sim[policy]), r_mean,
                     min(real[policy]), max(real[policy])))
    with open(out / "iteration_times.csv", "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["policy", "sim_mean_s", "sim_min_s", "sim_max_s", "real_mean_s",
                    "real_min_s", "real_max_s"])
        w.writerows(rows)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    xs = range(len(rows))
    for offset, (label, mean_i, lo_i, hi_i) in enumerate((("simulated", 1, 2, 3),
                                                           ("real peers", 4, 5, 6))):
        means = [r[mean_i] for r in rows]
        ax.bar([x + (offset - 0.5) * 0.38 for x in xs], means, 0.38, label=label,
               yerr=[[m - r[lo_i] for m, r in zip(means, rows)],
                     [r[hi_i] - m for m, r in zip(means, rows)]], capsize=3)
    ax.set_xticks(list(xs), [r[0] for r in rows])
    ax.set_ylabel("time per iteration (s), min-max over seeds")
    ax.set_title("ResNet-20, 8 peers on a ring, 10% of gradients 10x slow")
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "iteration_times.png", dpi=120)
    print(f"\nwrote {out / 'iteration_times.csv'} and {out / 'iteration_times.png'}")


def main():
    args = parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    model = model_file()
    data, synthetic = data_folder(args, out)
    sets = ["--set", f'data.dir="{data}"', "--set", f'model.file="{model}"']
    calibration = out / "calibration.json"
    run([args.fastk, "calibrate", args.config, *sets, "--reference-iterations", 80,
         "--repeats", 10, "-o", out / "calibration-runs", "-f", calibration])
    sweep = [args.fastk, "sweep", args.config, *sets, "--no-plots",
             "--vary", f"consensus.policy={args.policies}", "--vary", f"run.seed={args.seeds}"]
    run(sweep + ["--set", f'sim.calibration="{calibration.resolve()}"', "--set", "sim.threads=2",
                 "--output", out / "sim"])
    run(sweep + ["--runtime", "real", "--output", out / "real"])
    report(iteration_times(out / "sim"), iteration_times(out / "real"), out)
    if synthetic:
        print("(synthetic data: the accuracies in the sweeps' tables mean nothing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
