#!/usr/bin/python3
"""Compressed gossip on real peers with bandwidth-bound links (docs/compression.md §7, the
README's table; documented, not run in CI: it needs root).

8 peers on 8 hosts of a LAN in a box (scripts/lan.sh: network namespaces on a bridge, each
host's link shaped by tbf to RATE in both directions, an sshd per host), started by
`fastk run` over real ssh with CURVE: ring, MLP 784-128-10, batch 32, lr 0.05, Fashion-MNIST,
policy full, adapt-then-combine (compressed gossip's order; the uncompressed run uses it too,
so the runs differ only in what goes on the wire). Four kinds, interleaved in every repeat:

  none    the model, float32 (407 kB)
  fp16    CHOCO-SGD with half-precision differences, consensus_step 1
  int8    int8 differences (chunks of 256, stochastic rounding), consensus_step 1
  top_k   the 1% largest entries of each difference, consensus_step 0.05

For each it reports the bytes on the wire per peer-iteration (the kernel's counters of the
hosts' veth ends: everything the hosts sent, TCP/IP, ZeroMQ, CURVE and ssh included), the
time to 80% test accuracy of the mean model (evaluated every EVAL seconds of wall time), the
final accuracy, and what `fastk sim` predicts for the iteration (a calibration of this machine
and sim.link_rate_mbit = RATE; the same peers on one host).

--local-steps 1,2,4,8 runs every kind at each number of local steps H ([consensus]
local_steps: gossip on every H-th iteration, local SGD between; docs/protocol.md §4.8).
Kind top_k_reset is top_k with error reset: an fp16 difference on every R-th gossip
(--reset-every R, default 4; docs/compression.md §8).

  scripts/build.sh build
  /usr/bin/python3 experiments/compression/choco_lan.py [--build build]
        [--rates 100mbit,1gbit] [--iterations 1500] [--repeats 3] [--kinds none,fp16,int8,top_k]
        [--local-steps 1] [--reset-every 4] [--partition iid|shards] [--target 0.80]
        [--json FILE]
"""
import argparse
import json
import os
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import bench_lan  # noqa: E402  (lan, rate_bits, median, run_checked, summary_of, HOSTS, LAN)

CONFIG = """[run]
name = "{name}"
seed = {seed}
iterations = {iterations}
output = "{output}"
target_accuracy = {target}
eval_interval_s = {eval_s}
[topology]
kind = "ring"
peers = 8
[data]
kind = "fashion_mnist"
partition = "{partition}"
[model]
kind = "mlp"
hidden = [128]
[optimizer]
lr = 0.05
batch_size = 32
[consensus]
policy = "full"
order = "adapt_then_combine"
local_steps = {local_steps}
{compression}
[sim]
threads = 2
per_peer_eval = false
link_rate_mbit = {rate_mbit}
calibration = "{calibration}"
[cluster]
base_port = 47200
peer_timeout_ms = 30000
startup_timeout_ms = 60000
{hosts}
"""

KINDS = {
    "none": "",
    "fp16": '[compression]\nkind = "fp16"',
    "int8": '[compression]\nkind = "int8"',
    "top_k": '[compression]\nkind = "top_k"\nfraction = 0.01\nconsensus_step = 0.05',
    # Error reset (docs/compression.md §8): top_k, and an fp16 difference every R-th gossip.
    "top_k_reset": '[compression]\nkind = "top_k"\nfraction = 0.01\nconsensus_step = 0.05\n'
                   'reset_every = {reset_every}',
}
# Evaluation every EVAL seconds: the resolution of the time to target, and a model snapshot
# per peer each time.
EVAL_S = {"100mbit": 0.5, "1gbit": 0.2}


def write_config(workdir, name, kind, rate, args, hosts, local_steps=1):
    path = os.path.join(workdir, f"{name}.toml")
    with open(path, "w") as f:
        f.write(CONFIG.format(name=name, seed=args.seed, iterations=args.iterations,
                              local_steps=local_steps,
                              output=os.path.join(workdir, "runs"),
                              compression=KINDS[kind].format(reset_every=args.reset_every),
                              eval_s=EVAL_S.get(rate, 0.5), target=args.target,
                              partition=args.partition,
                              rate_mbit=bench_lan.rate_bits(rate) / 1e6,
                              calibration=os.path.join(workdir, "calibration.json"),
                              hosts=hosts))
    return path


def real_run(fastk, workdir, name, kind, rate, args, hosts, local_steps):
    config = write_config(workdir, name, kind, rate, args, hosts, local_steps)
    before = bench_lan.hosts_sent_bytes()
    bench_lan.run_checked([fastk, "run", config, "--no-plots", "--output",
                           bench_lan.fresh_output(workdir, name)], f"fastk run ({kind}, {rate})")
    sent = bench_lan.hosts_sent_bytes() - before
    summary = bench_lan.summary_of(workdir, name)
    return {
        "iteration_ms": 1000 * summary["training_phase_s"] / args.iterations,
        "wire_bytes_per_peer_iteration": sent / (bench_lan.HOSTS * args.iterations),
        "fastk_bytes_per_peer_iteration": summary["bytes_per_iteration"],
        "time_to_80_s": summary["time_to_target_s"],
        "accuracy": summary["final_test_accuracy"],
    }


def simulated_iteration_ms(fastk, workdir, name, kind, rate, args, local_steps):
    config = write_config(workdir, name + "_sim", kind, rate, args, "", local_steps)
    bench_lan.run_checked([fastk, "sim", config, "--no-plots", "--quiet", "--output",
                           bench_lan.fresh_output(workdir, name + "_sim")], f"fastk sim ({kind})")
    return 1000 * bench_lan.summary_of(workdir, name + "_sim")["training_phase_s"] / args.iterations


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(bench_lan.ROOT, "build"))
    parser.add_argument("--rates", default="100mbit,1gbit", help="link rates, tc syntax")
    parser.add_argument("--kinds", default=",".join(KINDS), help="of " + ", ".join(KINDS))
    parser.add_argument("--iterations", type=int, default=1500)
    parser.add_argument("--repeats", type=int, default=3, help="runs per kind; medians")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--local-steps", default="1",
                        help="numbers of local steps H to run each kind at (default 1)")
    parser.add_argument("--reset-every", type=int, default=4,
                        help="top_k_reset: gossips between error resets (default 4)")
    parser.add_argument("--partition", default="iid", choices=["iid", "shards"],
                        help="data.partition: shards gives each peer 2 classes (non-iid)")
    parser.add_argument("--target", type=float, default=0.80,
                        help="the accuracy whose time is reported (default 0.80)")
    parser.add_argument("--json", help="also write every run's figures to this file")
    args = parser.parse_args()
    kinds = args.kinds.split(",")
    try:
        steps = [int(h) for h in args.local_steps.split(",")]
    except ValueError:
        sys.exit(f"choco_lan: --local-steps {args.local_steps!r} is not a list of integers")
    if args.reset_every < 1:
        sys.exit("choco_lan: --reset-every must be >= 1")
    if any(h < 1 for h in steps):
        sys.exit("choco_lan: --local-steps must be >= 1")
    if unknown := [k for k in kinds if k not in KINDS]:
        sys.exit(f"choco_lan: unknown kinds {unknown}; expected some of {list(KINDS)}")
    fastk = bench_lan.root_and_fastk(args.build)
    results = []
    with tempfile.TemporaryDirectory(prefix="fastk_choco_lan_") as workdir:
        bench_lan.calibrate(fastk, write_config(workdir, "calibrate", "none", "100mbit", args, ""),
                            workdir)
        try:
            for rate in args.rates.split(","):
                hosts = bench_lan.lan_up(rate)
                for repeat in range(args.repeats):
                    for kind, h in [(k, h) for k in kinds for h in steps]:
                        name = f"{kind}_h{h}_{rate}_r{repeat}"
                        result = {"kind": kind, "local_steps": h, "rate": rate, "repeat": repeat,
                                  "real": real_run(fastk, workdir, name, kind, rate, args, hosts,
                                                   h),
                                  "sim_iteration_ms": simulated_iteration_ms(
                                      fastk, workdir, name, kind, rate, args, h)}
                        results.append(result)
                        print("  " + json.dumps(result), flush=True)
        finally:
            bench_lan.lan("down", "--name", bench_lan.LAN)
    report(results, kinds, steps, args)


def report(results, kinds, steps, args):
    median = bench_lan.median
    print(f"\n8 peers on 8 hosts, ring, MLP, Fashion-MNIST, policy full, {args.iterations} "
          f"iterations, medians of {args.repeats}\n")
    print("| link | kind | H | wire bytes/peer-iteration | iteration (real) | iteration (sim) "
          f"| time to {100 * args.target:.0f}% | vs none, H = 1 | final accuracy |")
    print("|---|---|---|---|---|---|---|---|---|")
    for rate in args.rates.split(","):
        def mine(kind, h):
            return [r for r in results
                    if r["kind"] == kind and r["rate"] == rate and r["local_steps"] == h]

        def time_to_80(kind, h):
            times = [r["real"]["time_to_80_s"] for r in mine(kind, h)]
            return None if None in times else median(times)

        base = time_to_80("none", 1) if "none" in kinds and 1 in steps else None
        for kind, h in [(k, h) for k in kinds for h in steps]:
            runs = mine(kind, h)
            t = time_to_80(kind, h)
            speedup = f"{base / t:.2f}x" if base and t else "-"
            print(f"| {rate} | {kind} | {h} "
                  f"| {median([r['real']['wire_bytes_per_peer_iteration'] for r in runs]):.0f} "
                  f"| {median([r['real']['iteration_ms'] for r in runs]):.1f} ms "
                  f"| {median([r['sim_iteration_ms'] for r in runs]):.1f} ms "
                  f"| {'not reached' if t is None else f'{t:.1f} s'} | {speedup} "
                  f"| {100 * median([r['real']['accuracy'] for r in runs]):.2f}% |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
