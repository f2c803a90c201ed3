#!/usr/bin/env bash
# Compiles the whole tree (libraries, fastk, tests, benchmarks) with warnings as errors for
# FASTK_MARCH levels other than the one scripts/test.sh builds (the default, x86-64, whose
# kernels are compiled for x86-64-v3 and x86-64-v4 as well): by default x86-64-v4 (AVX-512)
# and x86-64-v3 (AVX2), whole binaries of one level, as FASTK_MARCH=native gives on such
# machines. So all three are compiled everywhere: a machine without AVX-512 can tell the tree
# would break on one, and the other way round. Compiling is enough: nothing built is run
# (test discovery waits until the tests run), since it may not run here. CI runs it after
# scripts/test.sh (docs/build.md).
# Without libtorch (FASTK_TORCH=OFF): its headers know no -march of ours, and so the build
# that refuses TorchScript models is compiled too.
# Usage: scripts/check-isa.sh [LEVEL...]   (default: the two levels described above)
# Build folders: build-isa/<LEVEL>/ (kept, so a second run only rebuilds what changed).
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
"$root/scripts/install-deps.sh"
cxx=${CXX:-c++}

levels=("$@")
if ((${#levels[@]} == 0)); then
  levels=(x86-64-v4 x86-64-v3)
  echo "check-isa: scripts/test.sh builds the default x86-64 (with its kernels); checking ${levels[*]}"
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
    -DFASTK_MARCH="$level" -DFASTK_WERROR=ON -DFASTK_BUILD_TESTS=ON -DFASTK_TORCH=OFF \
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
