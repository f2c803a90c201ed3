#!/usr/bin/python3
"""The start-up benchmark (docs/benchmarks.md §11; documented, not run in CI).

What `fastk run` costs outside its training phase: 8 real peers of the quickstart (ring,
Fashion-MNIST, MLP 784-128-10, stragglers, the mean model every 0.1 s), 600 iterations, plots
off. Two binaries alternate, run after run, so that a machine whose speed drifts affects both
alike; the figure of a run is its wall time, measured here around the `fastk run` process,
minus the training phase its summary.json reports.

  /usr/bin/python3 experiments/bench_startup.py OLD/fastk NEW/fastk [--pairs 9]
        [--calibration CALIBRATION.json] [--config experiments/configs/quickstart.toml]

Prints one line per run and then, per binary, the medians of the gap, the training phase,
the time from the launch to the last peer's first iteration, and the number of evaluation
instants. Run it on a quiet machine: idle-time evaluation (docs/running.md) has nothing to use
while something else keeps the cores busy.
"""
import argparse
import glob
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))


def one_run(binary, args, out):
    command = [binary, "run", args.config, "--set", f"run.iterations={args.iterations}",
               "--no-plots", "--output", out]
    if args.calibration:
        command += ["--calibration", args.calibration]
    start = time.time()
    done = subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    wall = time.time() - start
    if done.returncode != 0:
        sys.exit(f"{binary} run failed ({done.returncode}):\n{done.stderr[-2000:]}")
    summary = json.load(open(os.path.join(out, "summary.json")))
    peers = [json.load(open(f)) for f in glob.glob(os.path.join(out, "peers/peer-*/summary.json"))]
    with open(os.path.join(out, "evaluation.csv")) as csv:
        instants = sum(1 for _ in csv) - 1
    return {
        "gap": wall - summary["training_phase_s"],
        "training": summary["training_phase_s"],
        "first_iteration": max(p["first_iteration_unix_s"] for p in peers) - start,
        "instants": instants,
        "accuracy": summary["final_test_accuracy"],
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0],
                                     formatter_class=argparse.RawDescriptionHelpFormatter,
                                     epilog=__doc__.split("\n", 2)[2])
    parser.add_argument("old", help="the first fastk binary (the reference)")
    parser.add_argument("new", help="the second fastk binary")
    parser.add_argument("--pairs", type=int, default=9, help="runs of each binary (default 9)")
    parser.add_argument("--iterations", type=int, default=600)
    parser.add_argument("--calibration", help="a calibration file for both binaries")
    parser.add_argument("--config", default=os.path.join(ROOT, "experiments/configs/quickstart.toml"))
    args = parser.parse_args()
    for binary in (args.old, args.new):
        if not os.access(binary, os.X_OK):
            parser.error(f"{binary} is not an executable file")
    results = {"old": [], "new": []}
    scratch = tempfile.mkdtemp(prefix="fastk-bench-startup-")
    try:
        for pair in range(args.pairs):
            for name, binary in (("old", args.old), ("new", args.new)):
                out = os.path.join(scratch, f"{name}-{pair}")
                row = one_run(binary, args, out)
                shutil.rmtree(out)
                results[name].append(row)
                print(name, pair, " ".join(f"{k} {v:.3f}" for k, v in row.items()), flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for name, rows in results.items():
        medians = {k: statistics.median(r[k] for r in rows) for k in rows[0]}
        print(name, "medians:", " ".join(f"{k} {v:.2f}" for k, v in medians.items()))


if __name__ == "__main__":
    main()
