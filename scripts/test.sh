#!/usr/bin/env bash
# The whole test suite: installs dependencies, builds with warnings as errors, checks
# formatting, runs every CTest test (labels unit, integration, system, fuzz).
# Usage: scripts/test.sh [ctest arguments...], e.g. scripts/test.sh -L unit
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build_dir=${FASTK_BUILD_DIR:-$root/build}
"$root/scripts/build.sh" "$build_dir" -DFASTK_WERROR=ON -DFASTK_BUILD_TESTS=ON
"$root/scripts/check-format.sh"
cd "$build_dir"
ctest --output-on-failure -j "${FASTK_JOBS:-2}" "$@"
