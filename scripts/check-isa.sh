#!/usr/bin/env bash
# Compiles the whole tree (libraries, fastk, tests, benchmarks) with warnings as errors for
# instruction sets other than this machine's, so that a machine without AVX-512 can tell the
# tree would break on one, and the other way round. Compiling is enough: the binaries are not
# run (they may not run here). CI runs it after scripts/test.sh (docs/build.md).
# Usage: scripts/check-isa.sh [LEVEL...]   (default: x86-64-v4 x86-64, AVX-512 and baseline)
# Build folders: build-isa/<LEVEL>/ (kept, so a second run only rebuilds what changed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
levels=("$@")
((${#levels[@]})) || levels=(x86-64-v4 x86-64)
"$root/scripts/install-deps.sh"

failed=()
for level in "${levels[@]}"; do
  if ! g++ -march="$level" -x c++ -c /dev/null -o /dev/null 2>/dev/null; then
    echo "check-isa: the compiler does not know -march=$level" >&2
    exit 2
  fi
  build_dir=$root/build-isa/$level
  log=$build_dir.log
  mkdir -p "$build_dir"
  start=$SECONDS
  echo "check-isa: compiling for -march=$level with warnings as errors (log: $log)"
  if cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFASTK_MARCH="$level" -DFASTK_WERROR=ON -DFASTK_BUILD_TESTS=ON \
    -DFASTK_BUILD_BENCHMARKS=ON >"$log" 2>&1 &&
    cmake --build "$build_dir" -j "${FASTK_JOBS:-2}" >>"$log" 2>&1; then
    echo "check-isa: -march=$level clean ($((SECONDS - start)) s)"
  else
    failed+=("$level")
    echo "check-isa: -march=$level FAILED ($(grep -c 'error:' "$log") errors); the first:" >&2
    { grep -m 3 '^FAILED: ' "$log" && grep -m 5 'error:' "$log"; } | cut -c 1-300 >&2 ||
      tail -20 "$log" >&2
  fi
done
if ((${#failed[@]})); then
  echo "check-isa: failed for ${failed[*]}; see build-isa/<level>.log" >&2
  exit 1
fi
