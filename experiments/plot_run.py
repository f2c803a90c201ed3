#!/usr/bin/python3
"""Plots of a fastk run folder (from `fastk run` or `fastk sim`: the files are the same).

Usage: /usr/bin/python3 experiments/plot_run.py RUN_DIR
(Debian's interpreter, where python3-matplotlib installs; fastk calls it so too.)

Reads RUN_DIR/evaluation.csv (the mean model over time) and RUN_DIR/iterations.csv (one row
per peer and iteration) and writes into RUN_DIR:
  accuracy_loss.png   test accuracy and loss of the mean model against time and iterations
  backups.png         heat maps, peers against iterations: backups (neighbours the policy
                      decided not to wait for) and used (neighbour models actually mixed),
                      each cell the mean over a block of iterations (above 256 peers, 256 of
                      them evenly spaced, as the title says)
  waiting.png         share of time each peer spent waiting for neighbours (above 256 peers,
                      a histogram over every peer)
  neighbours.png      who waited for whom (from neighbours.csv, up to 64 peers): how often
                      each neighbour's model was the last one a peer waited for after its own
                      gradient, and how often it was mixed at all
Times are seconds since the training started (virtual in `fastk sim`); in iterations.csv
of a real run each peer counts from its own start. A plot that cannot be written (a full
disk) ends the script with exit code 1 and a line naming the file.
"""
import csv
import os
import sys
from array import array
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


# Peers drawn one per row (heat maps) or bar (waiting); above, a sample or a histogram.
MAX_PEERS_DRAWN = 256


def read_csv(path):
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


class PeerIterations:
    """What the plots need of one peer's rows of iterations.csv, compactly: a simulation of
    100,000 peers writes ten million rows, which as dictionaries would take tens of GB."""

    def __init__(self):
        self.backups = array("i")
        self.used = array("i")
        self.first_start_s = None
        self.last_update_s = 0.0
        self.waited_s = 0.0

    def __len__(self):
        return len(self.backups)


def read_iterations(path):
    """Streams iterations.csv into a PeerIterations per peer."""
    by_peer = defaultdict(PeerIterations)
    with open(path, newline="") as f:
        rows = csv.reader(f)
        header = next(rows, None)
        if header is None:
            return by_peer
        at = {name: i for i, name in enumerate(header)}
        peer, backups, used = at["peer"], at["backups"], at["used"]
        start, update, wait = at["start_s"], at["update_s"], at["wait_s"]
        for row in rows:
            p = by_peer[int(row[peer])]
            p.backups.append(int(row[backups]))
            p.used.append(int(row[used]))
            if p.first_start_s is None:
                p.first_start_s = float(row[start])
            p.last_update_s = float(row[update])
            p.waited_s += float(row[wait])
    return by_peer


def drawn_peers(by_peer):
    """Every peer up to MAX_PEERS_DRAWN, else that many evenly spaced."""
    peers = sorted(by_peer)
    if len(peers) <= MAX_PEERS_DRAWN:
        return peers
    return [peers[i * len(peers) // MAX_PEERS_DRAWN] for i in range(MAX_PEERS_DRAWN)]


def save(fig, run_dir, name):
    """Writes the figure to RUN_DIR/NAME; a failed write (a full disk, a read-only folder)
    ends the script naming the file, so fastk reports the plots as failed."""
    path = os.path.join(run_dir, name)
    try:
        fig.savefig(path, dpi=110)
    except OSError as e:
        sys.exit(f"plot_run: cannot write {path}: {e.strerror or e}")
    finally:
        plt.close(fig)


def plot_accuracy(run_dir, evaluation):
    ts = [float(r["time_s"]) for r in evaluation]
    ks = [float(r["mean_iteration"]) for r in evaluation]
    acc = [100 * float(r["test_accuracy"]) for r in evaluation]
    loss = [float(r["test_loss"]) for r in evaluation]
    fig, axes = plt.subplots(2, 2, figsize=(11, 7))
    for col, (xs, label) in enumerate([(ts, "time (s)"), (ks, "mean iteration of the peers")]):
        axes[0][col].plot(xs, acc, marker="o", markersize=3)
        axes[0][col].set_ylabel("test accuracy of the mean model (%)")
        axes[1][col].plot(xs, loss, marker="o", markersize=3, color="tab:red")
        axes[1][col].set_ylabel("test loss of the mean model")
        axes[1][col].set_xlabel(label)
        for ax in (axes[0][col], axes[1][col]):
            ax.grid(alpha=0.3)
    fig.suptitle(os.path.basename(os.path.normpath(run_dir)))
    fig.tight_layout()
    save(fig, run_dir, "accuracy_loss.png")


def iteration_blocks(by_peer, peers, columns=100):
    """Per peer drawn, the mean of "backups" and of "used" over blocks of iterations: one line
    per peer and at most `columns` blocks, the same blocks for every peer (a peer that did
    fewer iterations has empty cells at the end)."""
    longest = max(len(by_peer[p]) for p in peers)
    block = max(1, -(-longest // columns))  # ceiling: at most `columns` blocks
    width = -(-longest // block)
    nan = float("nan")
    maps = {"backups": [], "used": []}
    for peer in peers:
        for column, cells in maps.items():
            values = getattr(by_peer[peer], column)
            line = [nan] * width
            for b in range(0, len(values), block):
                chunk = values[b:b + block]
                line[b // block] = sum(chunk) / len(chunk)
            cells.append(line)
    return maps, block, width


def plot_backups(run_dir, by_peer):
    """Peers (rows) against iterations (columns), colour the neighbours each iteration left
    as backups and the ones it mixed: one row per peer stays readable at 64 peers, where
    one line per peer did not at 8."""
    peers = drawn_peers(by_peer)
    maps, block, width = iteration_blocks(by_peer, peers)
    top = max(1, max(max(v for v in line if v == v) for line in maps["used"] + maps["backups"]))
    fig, axes = plt.subplots(2, 1, figsize=(11, min(12, 3 + 0.35 * len(peers))), sharex=True)
    extent = (0, width * block, len(peers) - 0.5, -0.5)
    titles = {"backups": "backups: neighbours not waited for",
              "used": "used: neighbour models mixed"}
    for ax, column in zip(axes, ("backups", "used")):
        image = ax.imshow(maps[column], aspect="auto", interpolation="nearest", cmap="viridis",
                          vmin=0, vmax=top, extent=extent)
        sample = "" if len(peers) == len(by_peer) else f"; {len(peers)} of {len(by_peer)} peers"
        ax.set_title(f"{titles[column]} (mean per iteration over blocks of {block}{sample})",
                     fontsize=10)
        ax.set_ylabel("peer")
        step = max(1, len(peers) // 16)
        ax.set_yticks(range(0, len(peers), step))
        ax.set_yticklabels([str(p) for p in peers[::step]])
        fig.colorbar(image, ax=ax, fraction=0.03, pad=0.01, label="neighbours")
    axes[1].set_xlabel("iteration of the peer")
    fig.tight_layout()
    save(fig, run_dir, "backups.png")


def plot_waiting(run_dir, by_peer):
    fig, ax = plt.subplots(figsize=(11, 4.5))
    peers = sorted(by_peer)
    share = []
    for peer in peers:
        p = by_peer[peer]
        elapsed = p.last_update_s - p.first_start_s
        share.append(100 * p.waited_s / elapsed if elapsed > 0 else 0)
    if len(peers) <= MAX_PEERS_DRAWN:
        ax.bar([str(p) for p in peers], share)
        ax.set_xlabel("peer")
        ax.set_ylabel("time waiting for neighbours (%)")
    else:
        ax.hist(share, bins=50)
        ax.set_xlabel("time waiting for neighbours (%)")
        ax.set_ylabel(f"peers (of {len(peers)})")
    ax.grid(axis="y", alpha=0.3)
    fig.tight_layout()
    save(fig, run_dir, "waiting.png")


def plot_neighbours(run_dir, rows):
    """Peer i (row) against neighbour j (column): (left) the share of i's iterations whose
    wait ended with j's model, the mixed model that came last after i's own gradient; (right)
    the share of i's iterations that mixed j's model."""
    peers = sorted({int(r["peer"]) for r in rows} | {int(r["neighbour"]) for r in rows})
    n = max(peers) + 1
    iterations = defaultdict(set)
    waited = defaultdict(int)
    used = defaultdict(int)
    offered = defaultdict(int)
    last = {}  # (peer, iteration) -> (arrival, neighbour) of the latest mixed model after the gradient
    for r in rows:
        i, j, k = int(r["peer"]), int(r["neighbour"]), int(r["iteration"])
        iterations[i].add(k)
        offered[(i, j)] += 1
        if r["used"] != "1":
            continue
        used[(i, j)] += 1
        arrival = float(r["arrival_s"])
        if arrival > 0 and (arrival > last.get((i, k), (0.0, -1))[0]):
            last[(i, k)] = (arrival, j)
    for (i, _), (_, j) in last.items():
        waited[(i, j)] += 1
    nan = float("nan")
    wait_share = [[nan] * n for _ in range(n)]
    use_share = [[nan] * n for _ in range(n)]
    for (i, j), count in offered.items():
        wait_share[i][j] = waited[(i, j)] / len(iterations[i])
        use_share[i][j] = used[(i, j)] / count
    fig, axes = plt.subplots(1, 2, figsize=(12, 5))
    titles = ["share of iterations peer i waited last for j", "share of iterations i mixed j"]
    for ax, data, title in zip(axes, [wait_share, use_share], titles):
        image = ax.imshow(data, cmap="viridis", vmin=0, vmax=1)
        ax.set_title(title)
        ax.set_xlabel("neighbour j")
        ax.set_ylabel("peer i")
        if n <= 16:
            ax.set_xticks(range(n))
            ax.set_yticks(range(n))
        fig.colorbar(image, ax=ax, fraction=0.046)
    fig.tight_layout()
    save(fig, run_dir, "neighbours.png")


def main(run_dir):
    by_peer = read_iterations(os.path.join(run_dir, "iterations.csv"))
    if not by_peer:
        sys.exit(f"plot_run: {run_dir}/iterations.csv has no rows")
    written = []
    eval_path = os.path.join(run_dir, "evaluation.csv")
    evaluation = read_csv(eval_path) if os.path.exists(eval_path) else []
    if evaluation:
        plot_accuracy(run_dir, evaluation)
        written.append("accuracy_loss.png")
    else:
        print(f"plot_run: no {eval_path}: no accuracy plot", file=sys.stderr)
    plot_backups(run_dir, by_peer)
    plot_waiting(run_dir, by_peer)
    written += ["backups.png", "waiting.png"]
    neighbours_path = os.path.join(run_dir, "neighbours.csv")
    if os.path.exists(neighbours_path) and len(by_peer) <= 64:
        neighbour_rows = read_csv(neighbours_path)
        if neighbour_rows:
            plot_neighbours(run_dir, neighbour_rows)
            written.append("neighbours.png")
    print("plots: " + ", ".join(os.path.join(run_dir, w) for w in written))


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    main(sys.argv[1])
