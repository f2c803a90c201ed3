#!/usr/bin/python3
"""Backup-worker experiments (docs/protocol.md, experiments E8 and E12) with
`fastk sim`.

E8:  16 peers, 4x4 torus and ring, logistic regression on Fashion-MNIST, bimodal stragglers
     (x10 with probability 0.1 per iteration), link delay 0.1. Virtual time to the target
     test accuracy of the mean model, mean over seeds, for b = 0 (full), every static b,
     deadline (DBW-D) and adaptive (DBW-C).
E12: torus, stragglers only in the middle third of the iterations: the adaptive policy's
     decided b per third.

Usage: experiments/sim/backup_workers.py [--fastk build/fastk] [--seeds 3] [--out runs/e8]
Not part of CI: it runs about 40 simulations (a few minutes on 2 cores).
"""
import argparse
import csv
import json
import statistics
import shutil
import subprocess
from pathlib import Path

from fashion16 import config_text

BIMODAL = "transient_probability = 0.1\ntransient_factor = 10"


def run(fastk, out, name, seed, topology, consensus, stragglers, iterations, target, stop,
        eval_interval=2.0):
    cfg_dir = Path(out) / "configs"
    cfg_dir.mkdir(parents=True, exist_ok=True)
    cfg = cfg_dir / f"{name}_s{seed}.toml"
    cfg.write_text(config_text(
        f"{name}_s{seed}", seed, out, topology, consensus,
        run=f"iterations = {iterations}\neval_interval_s = {eval_interval}\n"
            f"target_accuracy = {target}\nstop_at_target = {'true' if stop else 'false'}",
        stragglers=stragglers))
    folder = Path(out) / f"{name}_s{seed}"
    shutil.rmtree(folder, ignore_errors=True)  # a rerun's: fastk never writes over a run
    subprocess.run([fastk, "sim", "--quiet", "--no-plots", str(cfg), "--output", str(folder)],
                   check=True, stdout=subprocess.DEVNULL)
    return folder, json.loads((folder / "summary.json").read_text())


def e8(args):
    policies = {"torus": [("b=0", 'policy = "full"')] +
                [(f"static b={b}", f'policy = "static"\nbackups = {b}') for b in (1, 2, 3)] +
                [("deadline", 'policy = "deadline"'), ("adaptive", 'policy = "adaptive"')],
                "ring": [("b=0", 'policy = "full"'), ("static b=1", 'policy = "static"\nbackups = 1'),
                         ("deadline", 'policy = "deadline"'), ("adaptive", 'policy = "adaptive"')]}
    results = {}
    for topology, runs in policies.items():
        print(f"\nE8 {topology}, bimodal x10 p=0.1, target accuracy {args.target}")
        print(f"{'policy':<14}{'time to target':>16}{'per seed':>30}{'mean b':>9}{'final acc':>11}")
        rows = {}
        for label, consensus in runs:
            times, bs, accs = [], [], []
            for seed in range(1, args.seeds + 1):
                _, s = run(args.fastk, args.out, f"e8_{topology}_{label.replace(' ', '_').replace('=', '')}",
                           seed, topology, consensus, BIMODAL, args.iterations, args.target, True)
                times.append(s["time_to_target_s"] if s["time_to_target_s"] is not None else float("inf"))
                bs.append(s["mean_backups"])
                accs.append(s["final_test_accuracy"])
            mean_t = statistics.mean(times)
            rows[label] = mean_t
            print(f"{label:<14}{mean_t:>16.1f}{str([round(t, 1) for t in times]):>30}"
                  f"{statistics.mean(bs):>9.2f}{statistics.mean(accs):>11.4f}")
        static = {k: v for k, v in rows.items() if k.startswith("static")}
        best_label = min(static, key=static.get)
        best = static[best_label]
        print(f"b=0 / best static ({best_label}): {rows['b=0'] / best:.2f}x   "
              f"deadline / best static: {rows['deadline'] / best:.2f}x   "
              f"adaptive / b=0: {rows['adaptive'] / rows['b=0']:.2f}x")
        results[topology] = rows
    return results


def e12(args):
    n = args.iterations_e12
    a, b = n // 3, 2 * n // 3
    stragglers = (f"[[stragglers.windows]]\nfrom_iteration = {a}\nto_iteration = {b}\n"
                  "probability = 0.1\nfactor = 10")
    print(f"\nE12 torus, stragglers (x10, p=0.1) only in iterations [{a}, {b}) of {n}: "
          "adaptive policy, decided b = d - m per third (mean over peers and seeds)")
    thirds = [[], [], []]
    for seed in range(1, args.seeds + 1):
        folder, _ = run(args.fastk, args.out, "e12_torus_adaptive", seed, "torus",
                        'policy = "adaptive"', stragglers, n, 0, False, eval_interval=50.0)
        with open(folder / "iterations.csv") as f:
            for row in csv.DictReader(f):
                k = int(row["iteration"])
                third = 0 if k < a else (1 if k < b else 2)
                thirds[third].append(int(row["neighbours"]) - int(row["awaited"]))
    means = [statistics.mean(t) for t in thirds]
    print(f"before {means[0]:.3f}   during {means[1]:.3f}   after {means[2]:.3f}")
    return means


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--fastk", default="build/fastk")
    p.add_argument("--seeds", type=int, default=3)
    p.add_argument("--out", default="runs/backup_workers")
    p.add_argument("--target", type=float, default=0.78)
    p.add_argument("--iterations", type=int, default=1000)
    p.add_argument("--iterations-e12", type=int, default=600)
    p.add_argument("--only", choices=["e8", "e12"])
    args = p.parse_args()
    args.out = str(Path(args.out).resolve())
    if args.only != "e12":
        e8(args)
    if args.only != "e8":
        e12(args)


if __name__ == "__main__":
    main()
