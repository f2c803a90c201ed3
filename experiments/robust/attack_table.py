#!/usr/bin/python3
"""Robust aggregation against each attack (docs/security.md "Attacks"; documented, not run in
CI): the quickstart's peers (8 on a ring, MLP 784-128-10, Fashion-MNIST, batch 32, lr 0.05,
its stragglers), policy full, ITERATIONS iterations, peer 2 attacking. For each aggregation
rule and attack kind, over SEEDS seeds: the final test accuracy of the honest peers' mean
model (summary.json final_test_accuracy, which an attacked run computes over the honest
peers only), as median [min, max]. "clean" is the run without an attacker.

  scripts/build.sh build
  /usr/bin/python3 experiments/robust/attack_table.py [--build build | --fastk PATH]
        [--runtime run|sim]
        [--seeds 1,2,3] [--iterations 1200] [--rules mean,median,trimmed_mean,clipped_0.1]
        [--kinds clean,large,sign_flip,alie,noise,label_flip] [--json FILE] [--plot PNG]
        [--peers 16 --random-regular 4 --attackers 2,9]

Rules: mean, median, trimmed_mean, clipped (clipped_gossip, adaptive radius), clipped_R
(clipped_gossip with clipping_radius = R), validated (mean with [consensus] validate and
validation_score = "loss"), validatedN (with validation_batch = N), validated_RULE (RULE with
that), first_order
(mean with validate and validation_score = "first_order") and first_order_P (that with
validation_penalty = P). Runs are interleaved: every rule and kind of a seed
before the next seed.
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
BASE = os.path.join(ROOT, "experiments", "configs", "quickstart.toml")
KINDS = ["clean", "large", "sign_flip", "alie", "noise", "label_flip"]


def rule_settings(rule):
    """The --set lines of an aggregation rule's name; exits for an unknown one."""
    if rule == "validated":  # validate, scored by losses on a validation batch
        return ["consensus.validate=true", 'consensus.validation_score="loss"']
    if rule == "first_order":  # validate, scored from the gradient (no validation batch)
        return ["consensus.validate=true", 'consensus.validation_score="first_order"']
    if rule.startswith("first_order_"):  # first_order_0.01: with validation_penalty 0.01
        return ["consensus.validate=true", 'consensus.validation_score="first_order"',
                f"consensus.validation_penalty={float(rule[len('first_order_'):])}"]
    if rule.startswith("validated") and rule[len("validated"):].isdigit():  # validated8: batch 8
        return ["consensus.validate=true", 'consensus.validation_score="loss"',
                f"consensus.validation_batch={rule[len('validated'):]}"]
    if rule.startswith("validated_"):
        return rule_settings("validated") + rule_settings(rule[len("validated_"):])
    if rule in ("mean", "median", "trimmed_mean"):
        return [f'consensus.aggregation="{rule}"']
    if rule == "clipped":
        return ['consensus.aggregation="clipped_gossip"']
    if rule.startswith("clipped_"):
        try:
            radius = float(rule[len("clipped_"):])
        except ValueError:
            radius = -1
        if radius > 0:
            return ['consensus.aggregation="clipped_gossip"', f"consensus.clipping_radius={radius}"]
    sys.exit(f"attack_table: unknown rule {rule!r} (mean, median, trimmed_mean, clipped, "
             "clipped_R, validated, validatedN, validated_RULE, first_order, first_order_P)")


def one_run(fastk, runtime, workdir, rule, kind, seed, iterations, graph, attackers):
    name = f"{rule}_{kind}_s{seed}"
    output = os.path.join(workdir, name)
    shutil.rmtree(output, ignore_errors=True)
    sets = [f"run.seed={seed}", f"run.iterations={iterations}", 'consensus.policy="full"',
            "run.target_accuracy=0", "run.eval_interval_s=1000"] + rule_settings(rule) + graph
    if kind != "clean":
        sets += [f"attack.peers=[{attackers}]", f'attack.kind="{kind}"']
    command = [fastk, runtime, BASE, "--no-plots", "--output", output]
    if runtime == "sim":
        command += ["--quiet", "--set", f"sim.threads={os.cpu_count() or 1}"]
    for s in sets:
        command += ["--set", s]
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"attack_table: {' '.join(command)} failed:\n{done.stdout}")
    with open(os.path.join(output, "summary.json")) as f:
        summary = json.load(f)
    shutil.rmtree(output, ignore_errors=True)  # models and CSVs: only the figure is kept
    return summary["final_test_accuracy"]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"))
    parser.add_argument("--fastk", help="the fastk binary (default: BUILD/fastk)")
    parser.add_argument("--runtime", choices=["run", "sim"], default="run",
                        help="real peers (fastk run, the default) or the simulator")
    parser.add_argument("--seeds", default="1,2,3")
    parser.add_argument("--iterations", type=int, default=1200)
    parser.add_argument("--rules", default="mean,median,trimmed_mean,clipped_0.1")
    parser.add_argument("--kinds", default=",".join(KINDS))
    parser.add_argument("--json", help="also write every run's accuracy to this file")
    parser.add_argument("--plot", help="also draw the table (PNG): per attack, each rule's "
                        "median with its min-max range")
    parser.add_argument("--peers", type=int, help="topology.peers (default: the quickstart's 8)")
    parser.add_argument("--random-regular", type=int, metavar="DEGREE",
                        help="a random regular graph of this degree instead of the ring")
    parser.add_argument("--attackers", default="2", help="attack.peers, comma-separated")
    args = parser.parse_args()
    graph = [f"topology.peers={args.peers}"] if args.peers else []
    if args.random_regular:
        graph += ['topology.kind="random_regular"', f"topology.degree={args.random_regular}"]
    fastk = args.fastk or os.path.abspath(os.path.join(args.build, "fastk"))
    if os.sep not in fastk:  # a name on PATH
        fastk = shutil.which(fastk) or fastk
    if not os.access(fastk, os.X_OK):
        sys.exit(f"attack_table: no fastk at {fastk} (scripts/build.sh {args.build})")
    rules, kinds = args.rules.split(","), args.kinds.split(",")
    for rule in rules:
        rule_settings(rule)
    if unknown := [k for k in kinds if k not in KINDS]:
        sys.exit(f"attack_table: unknown kinds {unknown}; expected some of {KINDS}")
    seeds = [int(s) for s in args.seeds.split(",")]
    results = []
    with tempfile.TemporaryDirectory(prefix="fastk_attack_table_") as workdir:
        for seed in seeds:
            for rule in rules:
                for kind in kinds:
                    accuracy = one_run(fastk, args.runtime, workdir, rule, kind, seed,
                                       args.iterations, graph, args.attackers)
                    results.append({"rule": rule, "kind": kind, "seed": seed,
                                    "accuracy": accuracy})
                    print("  " + json.dumps(results[-1]), flush=True)
    report(results, rules, kinds, seeds, args)


def report(results, rules, kinds, seeds, args):
    where = "real peers (fastk run)" if args.runtime == "run" else "fastk sim"
    print(f"\nhonest mean-model accuracy, {where}, policy full, {args.iterations} iterations, "
          f"attackers {args.attackers}, seeds {','.join(map(str, seeds))}: median [min, max]\n")
    print("| rule | " + " | ".join(kinds) + " |")
    print("|---|" + "---|" * len(kinds))
    for rule in rules:
        cells = []
        for kind in kinds:
            values = sorted(r["accuracy"] for r in results if r["rule"] == rule and r["kind"] == kind)
            middle = values[len(values) // 2]
            cells.append(f"{100 * middle:.2f} [{100 * values[0]:.2f}, {100 * values[-1]:.2f}]")
        print(f"| {rule} | " + " | ".join(cells) + " |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    if args.plot:
        plot(results, rules, kinds, where, args)


def plot(results, rules, kinds, where, args):
    """Grouped bars: per attack kind, each rule's median accuracy, min-max as error bars."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    width = 0.8 / len(rules)
    fig, ax = plt.subplots(figsize=(max(7, 1.4 * len(kinds)), 4))
    for i, rule in enumerate(rules):
        medians, low, high = [], [], []
        for kind in kinds:
            values = sorted(100 * r["accuracy"] for r in results
                            if r["rule"] == rule and r["kind"] == kind)
            middle = values[len(values) // 2]
            medians.append(middle)
            low.append(middle - values[0])
            high.append(values[-1] - middle)
        xs = [k + (i - (len(rules) - 1) / 2) * width for k in range(len(kinds))]
        ax.bar(xs, medians, width, yerr=[low, high], capsize=2, label=rule)
    ax.set_xticks(range(len(kinds)))
    ax.set_xticklabels(kinds)
    ax.set_ylabel("honest mean model, test accuracy (%)")
    ax.set_ylim(0, 100)
    ax.set_title(f"{where}, attackers {args.attackers}, {args.iterations} iterations")
    # Under the axis: inside, it would hide the low bars that matter most.
    ax.legend(fontsize=8, ncol=min(len(rules), 5), loc="upper center",
              bbox_to_anchor=(0.5, -0.1))
    fig.tight_layout()
    fig.savefig(args.plot, dpi=120)
    print(f"plot: {args.plot}")


if __name__ == "__main__":
    main()
