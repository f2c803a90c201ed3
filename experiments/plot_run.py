#!/usr/bin/env python3
"""Plots of a fastk run folder (from `fastk run`).

Usage: python3 experiments/plot_run.py RUN_DIR

Reads RUN_DIR/iterations.csv (one row per peer and iteration) and RUN_DIR/evaluation.csv
(the mean model at snapshot iterations) and writes into RUN_DIR:
  accuracy_loss.png   test accuracy and loss of the mean model against wall time and iterations
  backups.png         backup workers b used by each peer over time
  waiting.png         share of time each peer spent waiting for neighbours
"""
import csv
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def main(run_dir):
    iterations = read_csv(os.path.join(run_dir, "iterations.csv"))
    if not iterations:
        sys.exit(f"plot_run: {run_dir}/iterations.csv has no rows")
    by_peer = defaultdict(list)
    for row in iterations:
        by_peer[int(row["peer"])].append(row)
    t0 = min(float(r["start_s"]) for r in iterations)

    # Wall time of iteration k: when the mean over peers of their k-th update happened.
    update_at = defaultdict(list)
    for row in iterations:
        update_at[int(row["iteration"]) + 1].append(float(row["update_s"]) - t0)

    eval_path = os.path.join(run_dir, "evaluation.csv")
    evaluation = read_csv(eval_path) if os.path.exists(eval_path) else []
    written = []
    if evaluation:
        ks = [int(r["iteration"]) for r in evaluation]
        ts = [sum(update_at[k]) / len(update_at[k]) if update_at[k] else float("nan") for k in ks]
        acc = [100 * float(r["test_accuracy"]) for r in evaluation]
        loss = [float(r["test_loss"]) for r in evaluation]
        fig, axes = plt.subplots(2, 2, figsize=(11, 7))
        for col, (xs, label) in enumerate([(ts, "wall time (s)"), (ks, "iteration")]):
            axes[0][col].plot(xs, acc, marker="o")
            axes[0][col].set_ylabel("test accuracy of the mean model (%)")
            axes[1][col].plot(xs, loss, marker="o", color="tab:red")
            axes[1][col].set_ylabel("test loss of the mean model")
            axes[1][col].set_xlabel(label)
            for ax in (axes[0][col], axes[1][col]):
                ax.grid(alpha=0.3)
        fig.suptitle(os.path.basename(os.path.normpath(run_dir)))
        fig.tight_layout()
        fig.savefig(os.path.join(run_dir, "accuracy_loss.png"), dpi=110)
        written.append("accuracy_loss.png")

    fig, ax = plt.subplots(figsize=(11, 4.5))
    longest = max(len(rows) for rows in by_peer.values())
    window = max(1, longest // 40)  # b is 0/1/2... per iteration: show its moving average
    for peer, rows in sorted(by_peer.items()):
        b = [int(r["backups"]) for r in rows]
        smooth = [sum(b[max(0, i - window + 1):i + 1]) / len(b[max(0, i - window + 1):i + 1])
                  for i in range(len(b))]
        ax.plot([float(r["update_s"]) - t0 for r in rows], smooth, label=f"peer {peer}",
                alpha=0.8)
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel(f"backup workers b (mean over {window} iterations)")
    ax.grid(alpha=0.3)
    if len(by_peer) <= 16:
        ax.legend(ncol=4, fontsize=8)
    fig.tight_layout()
    fig.savefig(os.path.join(run_dir, "backups.png"), dpi=110)
    written.append("backups.png")

    fig, ax = plt.subplots(figsize=(11, 4.5))
    peers = sorted(by_peer)
    share = []
    for peer in peers:
        rows = by_peer[peer]
        elapsed = float(rows[-1]["update_s"]) - float(rows[0]["start_s"])
        waited = sum(float(r["wait_s"]) for r in rows)
        share.append(100 * waited / elapsed if elapsed > 0 else 0)
    ax.bar([str(p) for p in peers], share)
    ax.set_xlabel("peer")
    ax.set_ylabel("time waiting for neighbours (%)")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    fig.savefig(os.path.join(run_dir, "waiting.png"), dpi=110)
    written.append("waiting.png")
    print("plots: " + ", ".join(os.path.join(run_dir, w) for w in written))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
