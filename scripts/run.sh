#!/usr/bin/env bash
# The main job: builds fastk and runs the default experiment.
# Usage: scripts/run.sh [CONFIG]   (default: experiments/configs/quickstart.toml)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/build.sh" "$root/build"
config=${1:-$root/experiments/configs/quickstart.toml}
"$root/build/fastk" topo --config "$config"
