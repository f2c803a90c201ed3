#!/usr/bin/python3
"""Backup policies on real peers and in the calibrated simulator, side by side.

For each straggler setting (on the quickstart: 8 peers, ring, MLP, Fashion-MNIST), every
policy runs on real peers (`fastk run`) and in `fastk sim --calibration`, once per seed
(--repeats seeds: run.seed = 1, 2, ...; real runs interleaved across policies), and the
script prints per policy the medians over seeds of: the time until the mean model reaches
the target accuracy, and the training phase of the fixed iteration count, real and
simulated, with their ratio; then whether both rank the policies alike, by medians and run
by run (a policy is ahead of another where it is faster by more than 1% on every
one of the 5 seeds; the orders each runtime shows, and any the simulator reverses). Seeds matter: one
run's time to target moves by a whole evaluation interval when its accuracy curve wobbles
at the target.

  scripts/build.sh build --target fastk
  /usr/bin/python3 experiments/policies/real_vs_sim.py [--settings quickstart,bimodal,markov]
      [--repeats 5] [--target 0.80] [--build build] [--out runs/real_vs_sim]
      [--from runs/real_vs_sim]   (print the saved tables again, run nothing)

Settings (stragglers as [stragglers] keys, see experiments/configs/README.md):
  quickstart  every peer 10x slow with probability 0.1 per iteration, peer 3 always 4x
  bimodal     every peer 10x slow with probability 0.1 per iteration
  markov      each peer a two-state Markov chain (good->bad 0.05, bad->good 0.3, bad 10x),
              and peer 3 always 4x
Policies: full (b = 0), static b = 1, static b = 2 (m_min = 0: wait for nobody), deadline,
adaptive. "every b" of a ring is 0, 1 and 2. Results also go to OUT/<setting>.json.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
CONFIG = os.path.join(ROOT, "experiments", "configs", "quickstart.toml")

SETTINGS = {
    "quickstart": [],  # the config's own stragglers
    "bimodal": ["stragglers={transient_probability = 0.1, transient_factor = 10}"],
    "markov": ["stragglers={markov_good_to_bad = 0.05, markov_bad_to_good = 0.3, "
               "markov_factor = 10, slow_peers = [3], slow_factors = [4]}"],
}
POLICIES = {
    "full": ["consensus.policy=full"],
    "static b=1": ["consensus.policy=static", "consensus.backups=1"],
    "static b=2": ["consensus.policy=static", "consensus.backups=2", "consensus.m_min=0"],
    "deadline": ["consensus.policy=deadline"],
    "adaptive": ["consensus.policy=adaptive"],
}


def sets(settings):
    args = []
    for s in settings:
        args += ["--set", s]
    return args


def fastk(build, *args):
    return [os.path.join(ROOT, build, "fastk"), *args]


def read_summary(folder):
    with open(os.path.join(folder, "summary.json")) as f:
        return json.load(f)


def run_real(args, common, setting, policy, folder, calibration):
    cmd = fastk(args.build, "run", CONFIG, *sets(common + SETTINGS[setting] + POLICIES[policy]),
                "--output", folder, "--no-plots", "--calibration", calibration)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"real run failed ({' '.join(cmd)}):\n{done.stdout[-2000:]}")
    s = read_summary(folder)
    compute = [p["compute_s"] for p in s["per_peer"] if "compute_s" in p]
    return {"time_to_target_s": s["time_to_target_s"], "training_s": s["training_phase_s"],
            "accuracy": s.get("final_test_accuracy"), "awaited": s["mean_awaited"],
            "backups": s["mean_backups"],
            "compute_per_peer_s": statistics.mean(compute) if compute else None}


def run_sim(args, common, setting, policy, folder, calibration):
    cmd = fastk(args.build, "sim", CONFIG,
                *sets(common + SETTINGS[setting] + POLICIES[policy] + ["sim.per_peer_eval=false"]),
                "--output", folder, "--no-plots", "--quiet", "--threads", "2",
                "--calibration", calibration)
    done = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"simulation failed ({' '.join(cmd)}):\n{done.stdout[-2000:]}")
    s = read_summary(folder)
    return {"time_to_target_s": s["time_to_target_s"], "training_s": s["training_phase_s"],
            "accuracy": s["final_test_accuracy"], "awaited": s["mean_awaited"],
            "backups": s["mean_backups"]}


def median(values):
    """A run that never reached the target counts as infinitely slow, not as absent: dropping
    it would make a policy that often misses the target look fast."""
    values = [math.inf if v is None else v for v in values]
    return statistics.median(values) if values else None


def finite(value):
    """`value` with infinities as null, which strict JSON readers accept."""
    if isinstance(value, dict):
        return {k: finite(v) for k, v in value.items()}
    if isinstance(value, list):
        return [finite(v) for v in value]
    return None if isinstance(value, float) and math.isinf(value) else value


def median_of_known(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, digits=2):
    if v is None:
        return "-"
    return "never" if math.isinf(v) else f"{v:.{digits}f}"


def ratio(a, b):
    if a is None or b is None or b == 0 or math.isinf(b):
        return None
    return None if math.isinf(a) else a / b


def ranking(table, key):
    known = [(p, table[p][key]) for p in table if table[p][key] is not None]
    return [p for p, _ in sorted(known, key=lambda item: item[1])]


CLEAR = 1.0    # a policy is ahead of another when faster on at least this share of the seeds,
MARGIN = 0.01  # each time by more than this fraction (the simulator has no noise: it would
               # otherwise order policies by differences no real run can resolve)


def clear_orders(table, among, runs, key):
    """The pairs (a, b) of `among` where a was faster than b (by MARGIN) on at least CLEAR of
    the seeds, run by run on the same seed (the same straggler draws): an order the seeds agree on.
    Medians alone rank policies whose difference is smaller than the spread between seeds."""
    def value(run):
        return math.inf if run[key] is None else run[key]
    orders = set()
    for a in among:
        for b in among:
            pairs = list(zip(table[a][runs], table[b][runs]))
            ahead = sum(1 for x, y in pairs if value(x) < (1 - MARGIN) * value(y))
            if a != b and pairs and ahead >= math.ceil(CLEAR * len(pairs)):
                orders.add((a, b))
    return orders


def report_orders(table, among, key, name):
    """Prints the orders real peers and the simulator agree on, and any they reverse."""
    real = clear_orders(table, among, "real_runs", key)
    sim = clear_orders(table, among, "sim_runs", key)
    reversed_ = sorted((a, b) for a, b in real if (b, a) in sim)
    def show(orders):
        return ", ".join(f"{a} < {b}" for a, b in sorted(orders)) or "none"
    runs = len(next(iter(table.values()))["real_runs"])
    print(f"  {name}, orders on >= {math.ceil(CLEAR * runs)} of {runs} seeds: "
          f"real {show(real)}")
    print(f"  {' ' * len(name)}  {' ' * 27}sim  {show(sim)}")
    print(f"  {' ' * len(name)}  {' ' * 27}reversed by the simulator: {show(reversed_)}; "
          f"real only: {show(real - sim)}; sim only: {show(sim - real)}")


def compare(args, setting, calibration):
    common = [f"run.target_accuracy={args.target}", "run.eval_interval_s=0.05",
              "run.duration_s=0", "run.stop_at_target=false", f"run.iterations={args.iterations}"]
    out = os.path.join(args.out, setting)
    real = {p: [] for p in POLICIES}
    sim = {p: [] for p in POLICIES}
    reused = None
    if args.reuse_real:  # the real runs of an earlier invocation: only simulate again
        with open(os.path.join(args.reuse_real, f"{setting}.json")) as f:
            reused = {p: row["real_runs"] for p, row in json.load(f).items()}
        short = [p for p in POLICIES if len(reused.get(p, [])) < args.repeats]
        if short:
            sys.exit(f"--reuse-real {args.reuse_real}: {setting} has fewer than {args.repeats} "
                     f"real runs of {', '.join(short)}")
    for repeat in range(args.repeats):  # interleaved: drifts of the machine hit all alike
        seeded = common + [f"run.seed={repeat + 1}"]
        for policy in POLICIES:
            name = f"{policy.replace(' ', '').replace('=', '')}-s{repeat + 1}"
            real[policy].append(reused[policy][repeat] if reused else
                                run_real(args, seeded, setting, policy,
                                         os.path.join(out, "real-" + name), calibration))
            sim[policy].append(run_sim(args, seeded, setting, policy,
                                       os.path.join(out, "sim-" + name), calibration))
            print(f"  {setting}: {policy} seed {repeat + 1}/{args.repeats}: time to target "
                  f"real {fmt(real[policy][-1]['time_to_target_s'])} s, "
                  f"sim {fmt(sim[policy][-1]['time_to_target_s'])} s", flush=True)
    table = {}
    for p in POLICIES:
        table[p] = {
            "real_target_s": median(r["time_to_target_s"] for r in real[p]),
            "real_target_range": [min((r["time_to_target_s"] for r in real[p]
                                       if r["time_to_target_s"] is not None), default=None),
                                  max((r["time_to_target_s"] for r in real[p]
                                       if r["time_to_target_s"] is not None), default=None)],
            "sim_target_s": median(r["time_to_target_s"] for r in sim[p]),
            "real_training_s": median(r["training_s"] for r in real[p]),
            "sim_training_s": median(r["training_s"] for r in sim[p]),
            "real_accuracy": median(r["accuracy"] for r in real[p]),
            "real_compute_per_peer_s": median_of_known(r.get("compute_per_peer_s")
                                                       for r in real[p]),
            "real_awaited": median(r["awaited"] for r in real[p]),
            "sim_awaited": median(r["awaited"] for r in sim[p]),
            "real_runs": real[p],
            "sim_runs": sim[p],
        }
    return table


def report(setting, table, target):
    print(f"\n{setting}: time to {100 * target:.0f}% accuracy and training phase "
          f"(medians over {len(next(iter(table.values()))['real_runs'])} seeds)")
    print(f"  {'policy':11} {'real to target':>15} {'sim':>6} {'sim/real':>8}   "
          f"{'real phase':>10} {'sim':>6} {'sim/real':>8}   {'awaited real/sim':>16}  accuracy  compute/peer")
    for p, row in table.items():
        lo, hi = row["real_target_range"]
        print(f"  {p:11} {fmt(row['real_target_s']):>6} s ({fmt(lo)}-{fmt(hi)}) "
              f"{fmt(row['sim_target_s']):>6} {fmt(ratio(row['sim_target_s'], row['real_target_s'])):>8}   "
              f"{fmt(row['real_training_s']):>8} s {fmt(row['sim_training_s']):>6} "
              f"{fmt(ratio(row['sim_training_s'], row['real_training_s'])):>8}   "
              f"{fmt(row['real_awaited']):>7}/{fmt(row['sim_awaited']):<8}  "
              f"{fmt(100 * row['real_accuracy'] if row['real_accuracy'] else None, 1)}%  "
              f"{fmt(row.get('real_compute_per_peer_s'))} s")
    # The four the issue compares: full, the best static b (on real peers), deadline, adaptive.
    statics = [p for p in table if p.startswith("static")]
    best = min(statics, key=lambda p: table[p]["real_target_s"] or math.inf)
    four = ["full", best, "deadline", "adaptive"]
    for key, name in (("target_s", "time to target"), ("training_s", "training phase")):
        for label, among in (("every policy", list(table)), (f"best static ({best})", four)):
            r = ranking({p: {"v": table[p]["real_" + key]} for p in among}, "v")
            s = ranking({p: {"v": table[p]["sim_" + key]} for p in among}, "v")
            print(f"  {name}, {label}: real {' < '.join(r)}")
            print(f"  {' ' * len(name)}  {' ' * len(label)}  sim  {' < '.join(s)}   "
                  f"{'same' if r == s else 'DIFFERENT'}")
        report_orders(table, four, "time_to_target_s" if key == "target_s" else "training_s",
                      name)
    best_static = min((table[p]["real_target_s"] for p in table
                       if p.startswith("static") or p == "full"
                       if table[p]["real_target_s"] is not None), default=None)
    for p in ("adaptive", "deadline"):
        print(f"  {p}: {fmt(ratio(table[p]['real_target_s'], best_static))}x the best static b, "
              f"{fmt(ratio(table[p]['real_target_s'], table['full']['real_target_s']))}x full "
              f"(time to target, real)")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--settings", default="quickstart,bimodal,markov")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--target", type=float, default=0.80)
    parser.add_argument("--iterations", type=int, default=1200)
    parser.add_argument("--build", default="build")
    parser.add_argument("--out", default=os.path.join(ROOT, "runs", "real_vs_sim"))
    parser.add_argument("--reuse-real", default=None, metavar="DIR",
                        help="take the real runs from an earlier OUT folder; simulate only")
    parser.add_argument("--calibration", default=None,
                        help="a `fastk calibrate` file of the quickstart (default: make one)")
    parser.add_argument("--from", dest="saved", default=None, metavar="DIR",
                        help="print the reports of an earlier OUT folder; run nothing")
    args = parser.parse_args()
    if args.saved:
        for setting in args.settings.split(","):
            with open(os.path.join(args.saved, f"{setting}.json")) as f:
                report(setting, json.load(f), args.target)
        return
    unknown = [s for s in args.settings.split(",") if s not in SETTINGS]
    if unknown:
        sys.exit(f"unknown setting {', '.join(unknown)}; expected some of {', '.join(SETTINGS)}")
    if os.path.isdir(args.out) and os.listdir(args.out):
        sys.exit(f"--out {args.out} holds an earlier comparison: remove it or choose another")
    os.makedirs(args.out, exist_ok=True)
    calibration = args.calibration or os.path.join(args.out, "calibration.json")
    if not args.calibration:
        subprocess.run(fastk(args.build, "calibrate", CONFIG, "--output",
                             os.path.join(args.out, "calibrate"), "-f", calibration), check=True)
    started = time.time()
    for setting in args.settings.split(","):
        table = compare(args, setting, calibration)
        report(setting, table, args.target)
        with open(os.path.join(args.out, f"{setting}.json"), "w") as f:
            json.dump(finite(table), f, indent=2)
    print(f"\n({time.time() - started:.0f} s; load average {os.getloadavg()[0]:.1f})")


if __name__ == "__main__":
    main()
