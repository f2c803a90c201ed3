#!/usr/bin/env bash
# Configures and builds fastk. Usage: scripts/build.sh [BUILD_DIR] [extra cmake -D options...]
# Default BUILD_DIR is build/. Installs missing Debian packages first.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"

build_dir=${1:-$root/build}
shift || true
jobs=${FASTK_JOBS:-2}

cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "$@" >/dev/null
cmake --build "$build_dir" -j "$jobs"
