#!/usr/bin/env bash
# The main job: builds the fastk binary (not the tests), measures this machine once
# (fastk calibrate) and runs the quickstart with real peer processes (fastk run): 8 peers on
# a ring, Fashion-MNIST, MLP, injected stragglers, the adaptive policy; then the same run
# with policy "full" on the same straggler draws, and compares the two: one plot of the mean
# model's accuracy against time, one line with both times to the target accuracy.
# Outputs, plots included, go to runs/quickstart/ and runs/quickstart-full/ (numbered
# folders on later invocations; the last line names them).
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
mkdir -p runs
# fastk never writes over a run: the first invocation writes runs/quickstart, -full and
# -calibration; each later one numbered folders of its own (runs/quickstart-2, ...).
suffix=""
number=1
while [[ -e runs/quickstart$suffix || -e runs/quickstart-full$suffix ||
  -e runs/quickstart-calibration$suffix ]]; do
  number=$((number + 1))
  suffix=-$number
done
adaptive=runs/quickstart$suffix
full=runs/quickstart-full$suffix
calibration=runs/quickstart-calibration$suffix
echo "== this machine's costs (fastk calibrate)"
"$fastk" calibrate "$config" --output "$calibration" | tail -9
echo "== adaptive policy (fastk run $config)"
"$fastk" run "$config" --calibration "$calibration/calibration.json" --output "$adaptive"
echo "== the same run waiting for every neighbour (policy full)"
"$fastk" run "$config" --calibration "$calibration/calibration.json" \
  --set consensus.policy=full --output "$full"
echo "== adaptive against full"
/usr/bin/python3 experiments/compare_runs.py "$adaptive" "$full" \
  --output "$adaptive/adaptive_vs_full.png"
echo "outputs: $adaptive (adaptive), $full (full), $calibration (this machine's costs)"
