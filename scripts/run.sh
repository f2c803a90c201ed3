#!/usr/bin/env bash
# The main job: builds the fastk binary (not the tests), measures this machine once
# (fastk calibrate) and runs the quickstart with real peer processes (fastk run): 8 peers on
# a ring, Fashion-MNIST, MLP, injected stragglers, the adaptive policy; then the same run
# with policy "full" on the same straggler draws, and compares the two: one plot of the mean
# model's accuracy against time, one line with both times to the target accuracy.
# Outputs, plots included, go to runs/quickstart/ and runs/quickstart-full/.
# Usage: scripts/run.sh [CONFIG]   (another config: just `fastk run CONFIG`)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" "$root/build" --target fastk
cd "$root"
fastk=$root/build/fastk
if (($#)); then
  exec "$fastk" run "$1"
fi
config=experiments/configs/quickstart.toml
calibration=runs/quickstart-calibration.json
mkdir -p runs
echo "== this machine's costs (fastk calibrate)"
"$fastk" calibrate "$config" --output runs/quickstart-calibration -f "$calibration" | tail -9
echo "== adaptive policy (fastk run $config)"
"$fastk" run "$config" --calibration "$calibration"
echo "== the same run waiting for every neighbour (policy full)"
"$fastk" run "$config" --calibration "$calibration" --set consensus.policy=full \
  --set run.name=quickstart-full
echo "== adaptive against full"
/usr/bin/python3 experiments/compare_runs.py runs/quickstart runs/quickstart-full \
  --output runs/quickstart/adaptive_vs_full.png
