#!/usr/bin/env bash
# Centralized baselines on Fashion-MNIST (not part of CI): runs `fastk train` on each
# experiments/configs/train_*.toml given (default: logistic regression, MLP, LeNet), keeps each
# log in runs/baselines/<config>.log and prints one summary line per model.
# Usage: experiments/train_baselines.sh [CONFIG...]
#   FASTK=path/to/fastk overrides the binary (default: build/fastk, built if missing).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
fastk=${FASTK:-$root/build/fastk}
[[ -x "$fastk" ]] || "$root/scripts/build.sh"
configs=("$@")
if ((${#configs[@]} == 0)); then
  configs=("$root"/experiments/configs/train_{logreg,mlp,lenet}.toml)
fi
out=$root/runs/baselines
mkdir -p "$out"
for config in "${configs[@]}"; do
  name=$(basename "$config" .toml)
  echo "== $name"
  "$fastk" train "$config" | tee "$out/$name.log"
done
echo
echo "summary (logs in $out):"
for config in "${configs[@]}"; do
  name=$(basename "$config" .toml)
  printf '%-14s %s\n' "$name" "$(grep '^final:' "$out/$name.log" || echo 'no result')"
done
