#!/usr/bin/python3
"""The simulator at scale: wall time, events per second and memory per peer of `fastk sim`
on experiments/configs/sim_scale.toml (random 4-regular graph, logistic regression, batch 2,
static b = 1) at several peer counts, one after the other on this machine.

Usage: experiments/sim/scale.py [--fastk build/fastk] [--peers 1000 10000 100000]
                                [--iterations 100] [--out runs/sim_scale] [--plots]
Prints one row per peer count and writes OUT/scale.csv:
  peers, iterations, events, wall_s (the whole `fastk sim` process: loading, simulating,
  outputs; with --plots also the plots, whose Python process then counts in the peak
  memory too), events_per_s (events / wall_s), peak_rss_mib (the process's maximum
  resident memory), bytes_per_peer (peak RSS / peers) and marginal_bytes_per_peer (the
  growth of peak RSS from the previous row, per added peer: what one more peer costs once
  the data set and the code are paid for).
Measured figures: docs/simulation.md §7.
"""
import argparse
import csv
import json
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run_once(fastk, config, peers, iterations, out, plots):
    folder = out / f"peers-{peers}"
    command = [fastk, "sim", str(config), "--quiet", "--output", str(folder),
               "--set", f"topology.peers={peers}", "--set", f"run.iterations={iterations}"]
    if not plots:
        command.append("--no-plots")
    start = time.monotonic()
    process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True)
    output = process.stdout.read()
    _, status, usage = os.wait4(process.pid, 0)
    wall_s = time.monotonic() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"scale.py: {' '.join(command)} failed:\n{output}")
    summary = json.loads((folder / "summary.json").read_text())
    return {"peers": peers, "iterations": iterations, "events": summary["events"],
            "wall_s": round(wall_s, 1), "events_per_s": round(summary["events"] / wall_s),
            "peak_rss_mib": round(usage.ru_maxrss / 1024),  # ru_maxrss is in KiB on Linux
            "bytes_per_peer": round(usage.ru_maxrss * 1024 / peers)}


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--fastk", default=str(ROOT / "build" / "fastk"))
    parser.add_argument("--config", default=str(ROOT / "experiments/configs/sim_scale.toml"))
    parser.add_argument("--peers", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--iterations", type=int, default=100)
    parser.add_argument("--out", default=str(ROOT / "runs" / "sim_scale"))
    parser.add_argument("--plots", action="store_true", help="also draw each run's PNG plots")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    columns = ["peers", "iterations", "events", "wall_s", "events_per_s", "peak_rss_mib",
               "bytes_per_peer", "marginal_bytes_per_peer"]
    print(" ".join(f"{c:>14}" for c in columns), flush=True)
    for peers in args.peers:
        row = run_once(args.fastk, args.config, peers, args.iterations, out, args.plots)
        if rows:
            grown = (row["peak_rss_mib"] - rows[-1]["peak_rss_mib"]) * 1024 * 1024
            row["marginal_bytes_per_peer"] = round(grown / (peers - rows[-1]["peers"]))
        else:
            row["marginal_bytes_per_peer"] = ""
        rows.append(row)
        print(" ".join(f"{row[c]:>14}" for c in columns), flush=True)
    with open(out / "scale.csv", "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=columns)
        writer.writeheader()
        writer.writerows(rows)
    print(f"wrote {out / 'scale.csv'}")


if __name__ == "__main__":
    main()
