#!/usr/bin/env bash
# Configures and builds fastk. Installs missing Debian packages first.
# Usage: scripts/build.sh [BUILD_DIR] [--target NAME]... [extra cmake -D options...]
# Default BUILD_DIR is build/; without --target every target is built (tests included when
# FASTK_BUILD_TESTS is on); `--target fastk` builds only the binary and what it links.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"

build_dir=$root/build
if [[ $# -gt 0 && $1 != -* ]]; then
  build_dir=$1
  shift
fi
targets=()
cmake_options=()
while (($#)); do
  if [[ "$1" == "--target" ]]; then
    [[ $# -ge 2 ]] || { echo "scripts/build.sh: --target needs a target name" >&2; exit 2; }
    targets+=(--target "$2")
    shift 2
  else
    cmake_options+=("$1")
    shift
  fi
done
jobs=${FASTK_JOBS:-2}
# ccache (install-deps.sh installs it): a file compiled before, in this tree or another clone
# (paths count from the tree's root), is not compiled again.
if command -v ccache >/dev/null; then
  cmake_options+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR=$root
fi

cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release "${cmake_options[@]}" >/dev/null
cmake --build "$build_dir" -j "$jobs" "${targets[@]}"
