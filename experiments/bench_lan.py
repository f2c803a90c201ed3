#!/usr/bin/python3
"""The bandwidth-bound benchmark (docs/benchmarks.md, "LAN"; documented, not run in CI).

8 peers on 8 hosts of a LAN in a box (scripts/lan.sh: network namespaces on a bridge, each
host's link shaped by tbf to RATE in both directions, an sshd per host), started by
`fastk run` over real ssh: ring, MLP 784-128-10, batch 32, Fashion-MNIST, 600 iterations,
policy `full`. For each rate it reports:

  iteration   the training phase (max over peers of first iteration to last update) / iterations
  floor       the bytes a peer sends per iteration (fastk's own count: two models on a ring)
              / the link rate: no run can iterate faster through that link
  ratio       iteration / floor (target: at most 1.25)
  wire        bytes on the wire per peer-iteration, from the kernel's counters of the hosts'
              veth ends (rx of the bridge side = everything the hosts sent: TCP/IP headers,
              ZeroMQ frames, acknowledgements, the launcher's ssh sessions), during the run
  accuracy    the mean model's test accuracy at the end

Needs root (network namespaces). Run as:

  scripts/build.sh build
  /usr/bin/python3 experiments/bench_lan.py [--build build] [--rates 1gbit,100mbit]
                                            [--iterations 600] [--repeats 1] [--json FILE]
                                            [--curve-cost]

Links between the hosts use CURVE (docs/security.md), fastk's default for runs that span
hosts; --curve-cost runs each configuration a second time with [security] curve = "off".
"""
import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_peers  # noqa: E402  (its CONFIG)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LAN = "fkbench"
# fastk run (here and in the experiments that import this) reaches the hosts with the LAN's
# own ssh settings: scripts/lan.sh's ssh and scp, first on PATH (root's ~/.ssh is untouched).
os.environ["PATH"] = f"/run/fastk-lan/{LAN}/bin:" + os.environ.get("PATH", "/usr/bin:/bin")
HOSTS = 8

# bench_peers.py's experiment, on the LAN's hosts instead of this machine.
CONFIG = (bench_peers.CONFIG.replace('name = "bench"', 'name = "bench_lan"')
          .split("[cluster]")[0] + """[cluster]
hosts = [{hosts}]
base_port = 47000
peer_timeout_ms = 30000
startup_timeout_ms = 60000
[security]
curve = "{curve}"
""")


def rate_bits(rate):
    """tc's rate syntax (100mbit, 1gbit, 500kbit) in bits per second."""
    units = {"kbit": 1e3, "mbit": 1e6, "gbit": 1e9, "bit": 1.0}
    for unit, scale in units.items():
        if rate.endswith(unit):
            return float(rate[: -len(unit)]) * scale
    sys.exit(f"bench_lan: cannot read the rate {rate!r} (use tc syntax: 100mbit, 1gbit)")


def lan(*args):
    subprocess.run([os.path.join(ROOT, "scripts", "lan.sh"), *args], check=True,
                   stdout=subprocess.DEVNULL)


def lan_up(rate):
    """The LAN in a box at `rate`; its hosts as the [cluster] hosts line."""
    lan("up", "--name", LAN, "--hosts", str(HOSTS), "--rate", rate)
    with open(f"/run/fastk-lan/{LAN}/hosts") as f:
        addresses = [line.split()[0] for line in f if line.strip()]
    return "hosts = [" + ", ".join(f'"{a}"' for a in addresses) + "]"


def root_and_fastk(build, fastk=None):
    """The fastk binary (`fastk`, or that of `build`); exits unless it is there and this
    process is root."""
    me = os.path.basename(sys.argv[0])
    if os.geteuid() != 0:
        sys.exit(f"{me}: must run as root (scripts/lan.sh makes network namespaces)")
    fastk = os.path.abspath(fastk or os.path.join(build, "fastk"))
    if not os.access(fastk, os.X_OK):
        sys.exit(f"{me}: no fastk at {fastk} (scripts/build.sh {build})")
    return fastk


def calibrate(fastk, config, workdir):
    """A calibration of this machine for `config`, as workdir/calibration.json."""
    print(f"{os.path.basename(sys.argv[0])}: calibrating this machine ...", flush=True)
    run_checked([fastk, "calibrate", config, "-f", os.path.join(workdir, "calibration.json")],
                "fastk calibrate")


def run_checked(command, what):
    """Runs `command`; exits with its output if it fails."""
    done = subprocess.run(command, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if done.returncode != 0:
        sys.exit(f"{os.path.basename(sys.argv[0])}: {what} failed:\n{done.stdout}")


def fresh_output(workdir, name):
    """The run folder of `name` in `workdir`, emptied: fastk never writes over a run, and
    a benchmark's repetitions reuse their names."""
    folder = os.path.join(workdir, "runs", name)
    shutil.rmtree(folder, ignore_errors=True)
    return folder


def summary_of(workdir, name):
    with open(os.path.join(workdir, "runs", name, "summary.json")) as f:
        return json.load(f)


def hosts_sent_bytes():
    """Bytes the hosts sent, summed over the bridge side of their veth pairs."""
    total = 0
    for i in range(1, HOSTS + 1):
        with open(f"/sys/class/net/{LAN}v{i}/statistics/rx_bytes") as f:
            total += int(f.read())
    return total


def run_once(fastk, rate, iterations, workdir, curve="auto"):
    with open(f"/run/fastk-lan/{LAN}/hosts") as f:
        addresses = [line.split()[0] for line in f if line.strip()]
    output = os.path.join(workdir, "runs")
    config = os.path.join(workdir, "bench_lan.toml")
    with open(config, "w") as f:
        f.write(CONFIG.format(iterations=iterations, output=output, peers=HOSTS, curve=curve,
                              hosts=", ".join(f'"{a}"' for a in addresses)))
    before = hosts_sent_bytes()
    started = time.monotonic()
    folder = os.path.join(output, "bench_lan")
    shutil.rmtree(folder, ignore_errors=True)  # a repetition's: fastk never writes over a run
    run = subprocess.run([fastk, "run", config, "--no-plots", "--output", folder], cwd=workdir,
                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.monotonic() - started
    sent = hosts_sent_bytes() - before
    if run.returncode != 0:
        sys.exit(f"bench_lan: fastk run failed at {rate}:\n{run.stdout}")
    with open(os.path.join(folder, "summary.json")) as f:
        summary = json.load(f)
    # What the peers' summaries say their links were, not what was asked for.
    links = {p.get("links") for p in summary["per_peer"]}
    if links != {"curve" if curve != "off" else "plain"}:
        sys.exit(f"bench_lan: asked for curve = {curve!r}, the peers had {links} links")
    iteration_s = summary["training_phase_s"] / iterations
    floor_s = summary["bytes_per_iteration"] * 8 / rate_bits(rate)
    return {
        "rate": rate,
        "links": links.pop(),
        "iteration_ms": 1000 * iteration_s,
        "floor_ms": 1000 * floor_s,
        "ratio": iteration_s / floor_s,
        "fastk_bytes_per_peer_iteration": summary["bytes_per_iteration"],
        "wire_bytes_per_peer_iteration": sent / (HOSTS * iterations),
        "accuracy": summary["final_test_accuracy"],
        "training_phase_s": summary["training_phase_s"],
        "wall_s": wall,
        "wait_fraction": summary["wait_fraction"],
    }


def median(values):
    values = sorted(values)
    return values[len(values) // 2]


def main():
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--build", default=os.path.join(ROOT, "build"),
                        help="build folder holding fastk (default: build/)")
    parser.add_argument("--rates", default="1gbit,100mbit", help="link rates, tc syntax")
    parser.add_argument("--iterations", type=int, default=600)
    parser.add_argument("--repeats", type=int, default=1,
                        help="runs per rate, interleaved across rates; medians reported")
    parser.add_argument("--json", help="also write every run's figures to this file")
    parser.add_argument("--curve-cost", action="store_true",
                        help="each run twice, interleaved: with CURVE links (the default "
                             "between hosts) and with [security] curve = \"off\"")
    args = parser.parse_args()
    fastk = root_and_fastk(args.build)
    rates = args.rates.split(",")
    runs = []
    try:
        with tempfile.TemporaryDirectory(prefix="fastk_bench_lan_") as workdir:
            for repeat in range(args.repeats):
                for rate in rates:
                    lan("up", "--name", LAN, "--hosts", str(HOSTS), "--rate", rate)
                    print(f"bench_lan: run {repeat + 1}/{args.repeats} at {rate} ...", flush=True)
                    for curve in (("auto", "off") if args.curve_cost else ("auto",)):
                        runs.append(run_once(fastk, rate, args.iterations, workdir, curve))
                        print("  " + json.dumps(runs[-1]), flush=True)
    finally:
        lan("down", "--name", LAN)
    print(f"\n{HOSTS} peers on {HOSTS} hosts, ring, MLP 784-128-10, Fashion-MNIST, "
          f"{args.iterations} iterations, policy full (medians of {args.repeats})\n")
    print("| link | links | iteration | floor | ratio | fastk bytes/peer-iter "
          "| wire bytes/peer-iter | accuracy |")
    print("|---|---|---|---|---|---|---|---|")
    for rate in rates:
        for links in ("curve", "plain"):
            mine = [r for r in runs if r["rate"] == rate and r["links"] == links]
            if not mine:
                continue
            m = {k: median([r[k] for r in mine]) for k in mine[0] if k not in ("rate", "links")}
            print(f"| {rate} | {links} | {m['iteration_ms']:.2f} ms | {m['floor_ms']:.2f} ms | "
                  f"{m['ratio']:.2f}x | {m['fastk_bytes_per_peer_iteration']:.0f} | "
                  f"{m['wire_bytes_per_peer_iteration']:.0f} | {100 * m['accuracy']:.2f}% |")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(runs, f, indent=1)


if __name__ == "__main__":
    main()
