#!/usr/bin/env bash
# Compiles the whole tree (libraries, fastk, tests, benchmarks) with warnings as errors for
# the instruction sets this machine does not have among AVX-512 (x86-64-v4), AVX2
# (x86-64-v3) and the baseline (x86-64), so that with scripts/test.sh (which builds for this
# machine) all three are compiled everywhere: a machine without AVX-512 can tell the tree
# would break on one, and the other way round. Compiling is enough: nothing built is run
# (test discovery waits until the tests run), since it may not run here. CI runs it after
# scripts/test.sh (docs/build.md).
# Usage: scripts/check-isa.sh [LEVEL...]   (default: the two levels described above)
# Build folders: build-isa/<LEVEL>/ (kept, so a second run only rebuilds what changed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
cxx=${CXX:-c++}

# The level -march=native falls in: whether GCC enables AVX-512F or AVX2 for this CPU.
native_level() {
  local macros
  macros=$("$cxx" -march=native -dM -E -x c++ /dev/null)
  if grep -q '__AVX512F__' <<<"$macros"; then
    echo x86-64-v4
  elif grep -q '__AVX2__' <<<"$macros"; then
    echo x86-64-v3
  else
    echo x86-64
  fi
}

levels=("$@")
if ((${#levels[@]} == 0)); then
  native=$(native_level)
  for level in x86-64-v4 x86-64-v3 x86-64; do
    [[ $level == "$native" ]] || levels+=("$level")
  done
  echo "check-isa: this machine builds as $native (scripts/test.sh); checking ${levels[*]}"
fi

failed=()
for level in "${levels[@]}"; do
  if ! "$cxx" -march="$level" -x c++ -c /dev/null -o /dev/null 2>/dev/null; then
    echo "check-isa: the compiler does not know -march=$level" >&2
    exit 2
  fi
  build_dir=$root/build-isa/$level
  log=$build_dir.log
  mkdir -p "$build_dir"
  start=$SECONDS
  echo "check-isa: compiling for -march=$level with warnings as errors (log: $log)"
  export CCACHE_BASEDIR=$root  # ccache entries shared between clones
  if cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFASTK_MARCH="$level" -DFASTK_WERROR=ON -DFASTK_BUILD_TESTS=ON \
    -DCMAKE_CXX_COMPILER_LAUNCHER="$(command -v ccache || true)" \
    -DFASTK_BUILD_BENCHMARKS=ON -DCMAKE_GTEST_DISCOVER_TESTS_DISCOVERY_MODE=PRE_TEST \
    >"$log" 2>&1 &&
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
