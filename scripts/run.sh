#!/usr/bin/env bash
# The main job: builds the fastk binary (not the tests) and runs the default experiment with
# real peer processes (fastk run): 8 peers on a ring, Fashion-MNIST, MLP, injected stragglers,
# adaptive policy.
# Outputs, plots included, go to runs/quickstart/.
# Usage: scripts/run.sh [CONFIG]   (default: experiments/configs/quickstart.toml)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" "$root/build" --target fastk
config=${1:-$root/experiments/configs/quickstart.toml}
cd "$root"
"$root/build/fastk" run "$config"
