#!/usr/bin/python3
"""Gradient coding inside neighbourhoods (docs/coding.md §7) with `fastk sim`.

16 peers on a 4x4 torus (each peer's four neighbours, sorted by id, form two blocks of two;
one late member tolerated per block), logistic regression on Fashion-MNIST, Markov
(Gilbert-Elliott) stragglers: each peer's compute is 10x slower in the bad state, entered
with probability p_NS per iteration and left with p_SN. Three runs per seed:
  uncoded   policy full: every peer waits for all its neighbours (D-PSGD)
  static    coding.scheme = "frc": wait until every block is covered, fixed roles
  dynamic   the same with coding.dynamic_roles = true (GC-DC style role re-assignment)
Coded peers spread one mini-batch over the partitions they compute (split_batch), so an
iteration costs the same compute in all three. Reported per run: the mean per-iteration
completion time (each peer's time to finish all its iterations divided by their number,
averaged over peers, virtual seconds; coded peers that fell behind skip iterations, so
per-row durations would flatter them), the iterations skipped, the virtual time of the
whole run, the final accuracy of the mean model, and accuracy against virtual time
(accuracy_vs_time.png).

With --figure links it compares codes when links, not compute, are the bottleneck: every
peer's link is limited to each of --rates Mbit/s in each direction (sim.link_rate_mbit;
0 = unlimited), and the variants are
  uncoded   as above: a model per neighbour
  frc1      as static above: a model and a whole gradient sum per neighbour
  frc3      frc with stragglers = 3: one block of 4 neighbours, any 1 covers it
  mds       coding.scheme = "mds", stragglers = 2, sub_blocks = 2: the same block of 4 and the
            same computation as frc3, but half-length shares, any 2 of which cover it
and the plot (iteration_vs_rate.png) shows the mean time per iteration against the rate,
with the range over seeds.

With --figure ce_codes it runs Ye and Abbe's comparison the same way, every code tolerating
s = 1 straggler in a neighbourhood (docs/reproduction.md §5.4):
  uncoded     a model per neighbour
  frc         frc, stragglers = 1: blocks of 2 neighbours, any 1 covers each
  crc         Tandon et al.'s cyclic repetition code: each neighbour holds 2 partitions of
              the 4, sends a whole-gradient combination; any 3 of 4 cover the block
  cyclic_mds  Tandon et al.'s cyclic MDS code (cyclic_mds, sub_blocks = 1): the same
              placement and rule as crc, from a Gaussian MDS generator
  ce_m2       the communication-efficient code (cyclic_mds, sub_blocks = 2): each holds 3
              partitions and sends half a gradient; any 3 of 4 cover the block

With --figure erasurehead it compares exact coding with ErasureHead's deadline (Wang, Charles
and Papailiopoulos) on the torus and stragglers above:
  uncoded      policy full, as above
  exact        frc with stragglers = 1, waiting until every block is covered
  erasurehead  the same code, but --deadline seconds after its own gradient a peer steps with
               the blocks covered so far and drops the others (coding.deadline_s, rescaled)
and reports the time to --target accuracy of the mean model (time_to_target.png: accuracy
against virtual time, seed 1).

With --figure models it runs uncoded, static and dynamic under GC-DC's two worker models:
homogeneous (every peer's chain p_NS = 0.05, p_SN = 0.3) and heterogeneous (peers 0, 5, 10
and 15 straggle with p_NS = 0.2, the others with p_NS = 0.018: the same long-run share of
straggling iterations, 1/7, concentrated on a quarter of the peers;
[[stragglers.markov_classes]]), and reports the time per iteration and to --target
(worker_models.png).

Usage: experiments/coding/coded_neighbourhoods.py [--fastk build/fastk] [--seeds 3]
                                                  [--out runs/coding]
                                                  [--figure roles|links|ce_codes|
                                                            erasurehead|models]
                                                  [--rates 0,1,0.5,0.25,0.125]
Not part of CI (tests/integration/reproduction_shape_test.cc checks the shapes): it runs 3 x
seeds simulations (4 x rates x seeds with --figure links, 6 x seeds with --figure models),
about 1 s each on 2 cores; with --runtime real, `fastk run` instead, 10-60 s each.
"""
import argparse
import csv
import json
import statistics
import shutil
import subprocess
from pathlib import Path

BASE = """
[run]
name = "{name}"
seed = {seed}
iterations = {iterations}
output = "{out}"
eval_interval_s = {eval_interval}

[topology]
kind = "torus"
peers = 16

[data]
kind = "fashion_mnist"
test_limit = 2000

[model]
kind = "{model}"

[optimizer]
lr = 0.05
batch_size = 32

[coding]
{coding}

[stragglers]
compute_s = 1.0
link_s = {link_s}
markov_good_to_bad = {p_ns}
markov_bad_to_good = {p_sn}
markov_factor = 10

[sim]
threads = 2
per_peer_eval = false
link_rate_mbit = {rate}

[cluster]
base_port = 47600
{extra}"""

VARIANTS = {
    "uncoded": 'scheme = "none"',
    "static": 'scheme = "frc"\nstragglers = 1',
    "dynamic": 'scheme = "frc"\nstragglers = 1\ndynamic_roles = true',
}
ERASURE_VARIANTS = {
    "uncoded": 'scheme = "none"',
    "exact": 'scheme = "frc"\nstragglers = 1',
    "erasurehead": 'scheme = "frc"\nstragglers = 1\ndeadline_s = {deadline}',
}
LINK_VARIANTS = {
    "uncoded": 'scheme = "none"',
    "frc1": 'scheme = "frc"\nstragglers = 1',
    "frc3": 'scheme = "frc"\nstragglers = 3',
    "mds": 'scheme = "mds"\nstragglers = 2\nsub_blocks = 2',
}
# Ye and Abbe's comparison (docs/reproduction.md §5.4): every code tolerates s = 1 straggler.
CE_VARIANTS = {
    "uncoded": 'scheme = "none"',
    "frc": 'scheme = "frc"\nstragglers = 1',
    "crc": 'scheme = "crc"\nstragglers = 1',
    "cyclic_mds": 'scheme = "cyclic_mds"\nstragglers = 1\nsub_blocks = 1',
    "ce_m2": 'scheme = "cyclic_mds"\nstragglers = 1\nsub_blocks = 2',
}


def run(fastk, out, name, seed, coding, args, rate=0.0, extra="", p_ns=None):
    config = out / f"{name}.toml"
    real = args.runtime == "real"
    config.write_text(BASE.format(name=name, seed=seed, iterations=args.iterations,
                                  out=out.resolve(), coding=coding,
                                  p_ns=args.p_ns if p_ns is None else p_ns, p_sn=args.p_sn,
                                  rate=rate, extra=extra, model=args.model,
                                  eval_interval=0.1 if real else 20,
                                  link_s=0 if real else 0.1))
    folder = out / name
    shutil.rmtree(folder, ignore_errors=True)  # a rerun's: fastk never writes over a run
    subprocess.run([fastk, "run" if real else "sim", "--no-plots", str(config), "--output",
                    str(folder)], check=True, stdout=subprocess.DEVNULL)
    with open(folder / "iterations.csv") as f:
        rows = list(csv.DictReader(f))
    finish = {}
    for r in rows:
        finish[r["peer"]] = max(finish.get(r["peer"], 0.0), float(r["update_s"]))
    decodable = [int(r["decodable"]) for r in rows]
    with open(folder / "evaluation.csv") as f:
        evaluations = [(float(r["time_s"]), float(r["test_accuracy"])) for r in csv.DictReader(f)]
    summary = json.loads((folder / "summary.json").read_text())
    return {
        "iteration_s": statistics.mean(t / args.iterations for t in finish.values()),
        "skipped": len(finish) * args.iterations - len(rows),
        "virtual_s": summary["training_phase_s"],
        "accuracy": summary["final_test_accuracy"],
        "decodable": statistics.mean(decodable),
        "curve": evaluations,
    }


def plot(results, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    for variant, runs in results.items():
        times, accs = zip(*runs[0]["curve"])
        ax.plot(times, accs, label=f"{variant} (seed 1)")
    ax.set_xlabel("virtual time (s)")
    ax.set_ylabel("test accuracy of the mean model")
    ax.set_title("4x4 torus, Markov stragglers x10")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def fmt(value):
    """Whole numbers from 100 up, three significant digits below (0.0467, 3.39, 42.5)."""
    return f"{value:.0f}" if value >= 100 else f"{value:.3g}"


def spread(groups):
    """Per group of runs: the mean time per iteration, and its distance to the group's min and
    max (error bars): three lists."""
    means, low, high = [], [], []
    for runs in groups:
        times = [r["iteration_s"] for r in runs]
        means.append(statistics.mean(times))
        low.append(means[-1] - min(times))
        high.append(max(times) - means[-1])
    return means, low, high


def time_to(curve, target):
    return next((t for t, accuracy in curve if accuracy >= target), None)


def run_seeds(args, out, variants, label="", **settings):
    """Every variant ({name: [coding] table}) for seeds 1..args.seeds: {name: [run, ...]}.
    `label` prefixes the runs' names and progress lines; settings go to run()."""
    results = {v: [] for v in variants}
    for seed in range(1, args.seeds + 1):
        for variant, coding in variants.items():
            name = f"{label}_{variant}_s{seed}" if label else f"{variant}_s{seed}"
            r = run(args.fastk, out, name, seed, coding, args, **settings)
            r["time_to_target"] = time_to(r["curve"], args.target)
            results[variant].append(r)
            print(f"seed {seed} {label} {variant:12s} iteration {r['iteration_s']:.3f} s  "
                  f"time to {args.target:.0%} {r['time_to_target']}  accuracy "
                  f"{r['accuracy']:.4f}  decodable {r['decodable']:.3f}  skipped {r['skipped']}",
                  flush=True)
    return results


def erasurehead_figure(args, out):
    variants = {v: c.replace("{deadline}", f"{args.deadline:g}")
                for v, c in ERASURE_VARIANTS.items()}
    results = run_seeds(args, out, variants)
    print(f"\nMarkov stragglers p_NS={args.p_ns} p_SN={args.p_sn} x10, {args.iterations} "
          f"iterations, deadline {args.deadline:g} s, mean (min-max) of {args.seeds} seeds:")
    print(f"| variant | time to {args.target:.0%} (virtual s) | reached | time per iteration "
          "(virtual s) | steps with every block | final accuracy |")
    print("|---|---|---|---|---|---|")
    for variant, runs in results.items():
        times = [r["time_to_target"] for r in runs if r["time_to_target"] is not None]
        reach = (f"{statistics.mean(times):.0f} ({min(times):.0f}-{max(times):.0f})"
                 if times else "-")
        spread = lambda key: (f"{statistics.mean(r[key] for r in runs):.4g} "  # noqa: E731
                              f"({min(r[key] for r in runs):.4g}-"
                              f"{max(r[key] for r in runs):.4g})")
        print(f"| {variant} | {reach} | {len(times)}/{len(runs)} | {spread('iteration_s')} | "
              f"{spread('decodable') if variant != 'uncoded' else '-'} | {spread('accuracy')} |")
    if not args.no_plot:
        plot(results, out / "time_to_target.png")
        print(f"plot: {out / 'time_to_target.png'}")


# GC-DC's heterogeneous worker model with the homogeneous model's long-run share of straggling
# iterations, p_NS / (p_NS + p_SN) = 0.05 / 0.35 = 1/7: a quarter of the peers (a diagonal of
# the torus) straggle 40% of the time (p_NS = 0.2), the others 4/70 of it.
UNRELIABLE = [0, 5, 10, 15]
UNRELIABLE_P_NS = 0.2
RELIABLE_P_NS = 0.3 * (4 / 70) / (1 - 4 / 70)


def heterogeneous_stragglers(args):
    classes = f"""[[stragglers.markov_classes]]
peers = {UNRELIABLE}
good_to_bad = {UNRELIABLE_P_NS}
bad_to_good = {args.p_sn}
factor = 10
"""
    return classes, RELIABLE_P_NS


def models_figure(args, out):
    if (args.p_ns, args.p_sn) != (0.05, 0.3):
        raise SystemExit("--figure models keeps the paper's p_NS = 0.05, p_SN = 0.3")
    results = {}
    classes, reliable = heterogeneous_stragglers(args)
    models = {"homogeneous": ("", args.p_ns), "heterogeneous": (classes, reliable)}
    for model, (extra, p_ns) in models.items():
        runs = run_seeds(args, out, VARIANTS, label=model, extra=extra, p_ns=p_ns)
        results.update({(model, variant): rs for variant, rs in runs.items()})
    unit = "wall s" if args.runtime == "real" else "virtual s"
    print(f"\n{args.runtime}, {args.model}, {args.iterations} iterations, mean (min-max) of "
          f"{args.seeds} seeds:")
    print(f"| worker model | variant | time per iteration ({unit}) | time to {args.target:.0%} "
          f"({unit}) | reached | final accuracy |")
    print("|---|---|---|---|---|---|")
    for (model, variant), runs in results.items():
        iteration = [r["iteration_s"] for r in runs]
        times = [r["time_to_target"] for r in runs if r["time_to_target"] is not None]
        reach = (f"{fmt(statistics.mean(times))} ({fmt(min(times))}-{fmt(max(times))})"
                 if times else "-")
        print(f"| {model} | {variant} | {fmt(statistics.mean(iteration))} "
              f"({fmt(min(iteration))}-{fmt(max(iteration))}) | {reach} | {len(times)}/{len(runs)} | "
              f"{statistics.mean(r['accuracy'] for r in runs):.4f} |")
    if not args.no_plot:
        plot_models(results, out / "worker_models.png", unit)
        print(f"plot: {out / 'worker_models.png'}")


def plot_models(results, path, unit):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    models = sorted({m for m, _ in results}, reverse=True)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    width = 0.25
    for i, variant in enumerate(VARIANTS):
        means, low, high = spread([results[(model, variant)] for model in models])
        xs = [j + (i - 1) * width for j in range(len(models))]
        ax.bar(xs, means, width, yerr=[low, high], capsize=3, label=variant)
    ax.set_xticks(range(len(models)), models)
    ax.set_ylabel(f"time per iteration ({unit}), min-max over seeds")
    ax.set_title("GC-DC's worker models: 4x4 torus, Markov stragglers x10")
    ax.grid(axis="y", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def links_figure(args, out, variants):
    """Time per iteration of each variant ({name: [coding] table}) against the link rate."""
    rates = [float(r) for r in args.rates.split(",")]
    results = {}  # (variant, rate) -> runs
    for rate in rates:
        runs = run_seeds(args, out, variants, label=f"{rate:g}mbit", rate=rate)
        results.update({(variant, rate): rs for variant, rs in runs.items()})
    print(f"\nMarkov stragglers p_NS={args.p_ns} p_SN={args.p_sn} x10, {args.iterations} "
          f"iterations, time per iteration (virtual s), mean (min-max) of {args.seeds} seeds:")
    print("| link (Mbit/s) | " + " | ".join(variants) + " |")
    print("|---" * (len(variants) + 1) + "|")
    for rate in rates:
        cells = []
        for variant in variants:
            times = [r["iteration_s"] for r in results[(variant, rate)]]
            cells.append(f"{statistics.mean(times):.2f} ({min(times):.2f}-{max(times):.2f})")
        print(f"| {rate:g} | " + " | ".join(cells) + " |")
    print("final accuracy, mean (min-max) over seeds and rates:")
    for variant in variants:
        accuracies = [r["accuracy"] for rate in rates for r in results[(variant, rate)]]
        print(f"  {variant:10s} {statistics.mean(accuracies):.4f} "
              f"({min(accuracies):.4f}-{max(accuracies):.4f})")
    if not args.no_plot:
        plot_links(results, rates, variants, out / "iteration_vs_rate.png")
        print(f"plot: {out / 'iteration_vs_rate.png'}")


def plot_links(results, rates, variants, path):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    limited = sorted(r for r in rates if r > 0)
    fig, ax = plt.subplots(figsize=(6.4, 4.0))
    # Variants that wait by the same rule coincide (crc and cyclic_mds): dashes keep both seen.
    styles = ["-", "--", "-.", ":"]
    for index, variant in enumerate(variants):
        means, low, high = spread([results[(variant, rate)] for rate in limited])
        line = ax.errorbar(limited, means, yerr=[low, high], marker="o", capsize=3, label=variant,
                           linestyle=styles[index % len(styles)])
        if 0.0 in rates:
            free = statistics.mean(r["iteration_s"] for r in results[(variant, 0.0)])
            ax.axhline(free, color=line[0].get_color(), linestyle=":", linewidth=1)
    ax.set_xscale("log")
    ax.set_xlabel("link rate per peer and direction (Mbit/s); dotted: unlimited")
    ax.set_ylabel("time per iteration (virtual s)")
    ax.set_title("4x4 torus, logistic regression, Markov stragglers x10")
    ax.grid(alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=120)


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--fastk", default="build/fastk")
    parser.add_argument("--seeds", type=int, default=3)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--p-ns", type=float, default=0.05, help="P(good -> bad) per iteration")
    parser.add_argument("--p-sn", type=float, default=0.3, help="P(bad -> good) per iteration")
    parser.add_argument("--out", default="runs/coding")
    parser.add_argument("--no-plot", action="store_true")
    parser.add_argument("--runtime", choices=["sim", "real"], default="sim",
                        help="real: `fastk run`, real peers on this machine (the stragglers "
                        "sleep their slowdown; times are wall seconds)")
    parser.add_argument("--model", default="logistic_regression",
                        help="model.kind (real peers: lenet, so that a gradient, and a "
                        "straggler's sleep, outweighs a message)")
    parser.add_argument("--figure",
                        choices=["roles", "links", "ce_codes", "erasurehead", "models"],
                        default="roles")
    parser.add_argument("--deadline", type=float, default=0.5,
                        help="--figure erasurehead: coding.deadline_s (virtual s)")
    parser.add_argument("--target", type=float, default=0.75,
                        help="--figure erasurehead and models: the accuracy whose time is "
                        "reported")
    parser.add_argument("--rates", default="0,1,0.5,0.25,0.125",
                        help="--figure links and ce_codes: link rates in Mbit/s "
                        "(0 = unlimited)")
    args = parser.parse_args()
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    if args.figure in ("links", "ce_codes"):
        links_figure(args, out, LINK_VARIANTS if args.figure == "links" else CE_VARIANTS)
        return
    if args.figure == "erasurehead":
        erasurehead_figure(args, out)
        return
    if args.figure == "models":
        models_figure(args, out)
        return
    results = run_seeds(args, out, VARIANTS)
    print(f"\nMarkov stragglers p_NS={args.p_ns} p_SN={args.p_sn} x10, {args.iterations} "
          f"iterations, {args.seeds} seeds (mean):")
    print("variant   iteration_s  run_s     accuracy  skipped")
    for variant, runs in results.items():
        print(f"{variant:8s}  {statistics.mean(r['iteration_s'] for r in runs):10.3f}  "
              f"{statistics.mean(r['virtual_s'] for r in runs):8.1f}  "
              f"{statistics.mean(r['accuracy'] for r in runs):.4f}  "
              f"{statistics.mean(r['skipped'] for r in runs):7.1f}")
    if not args.no_plot:
        plot(results, out / "accuracy_vs_time.png")
        print(f"plot: {out / 'accuracy_vs_time.png'}")


if __name__ == "__main__":
    main()
