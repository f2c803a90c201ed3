#!/usr/bin/env bash
# Fuzzing for real (README "Fuzzing"): builds the fuzz targets with clang's libFuzzer,
# AddressSanitizer and UndefinedBehaviorSanitizer in a build folder of their own, then runs
# each for SECONDS (default 15) starting from a copy of its committed corpus (so every input
# found before is replayed first, and the committed corpus is left as it is). Prints each
# target's executions and new inputs; fails on the first crash, leak, timeout or broken
# promise, keeping the input that caused it (libFuzzer prints where).
# Usage: scripts/fuzz.sh [SECONDS] [TARGET...]
#   targets: wire_fuzz config_fuzz data_files_fuzz shm_ref_fuzz (default: all)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
seconds=${1:-15}
shift || true
targets=("$@")
((${#targets[@]})) || targets=(wire_fuzz config_fuzz data_files_fuzz shm_ref_fuzz)
build_dir=${FASTK_FUZZ_BUILD_DIR:-$root/build-fuzz}

"$root/scripts/install-deps.sh" clang libclang-rt-14-dev
if [[ ! -f "$build_dir/CMakeCache.txt" ]]; then
  CC=clang CXX=clang++ cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFASTK_LIBFUZZER=ON -DFASTK_SANITIZE='address;undefined' -DFASTK_MARCH= \
    -DFASTK_BUILD_TESTS=ON -DFASTK_BUILD_BENCHMARKS=OFF > /dev/null
fi
if ! cmake --build "$build_dir" -j "${FASTK_JOBS:-2}" --target "${targets[@]}" \
  > "$build_dir/build.log" 2>&1; then
  tail -40 "$build_dir/build.log"
  exit 1
fi

work=$(mktemp -d /tmp/fastk-fuzz-XXXXXX)
trap 'rm -rf "$work"' EXIT
for target in "${targets[@]}"; do
  corpus=${target%_fuzz}
  mkdir -p "$work/$corpus"
  cp -r "$root/tests/fuzz/corpus/$corpus/." "$work/$corpus/"
  log="$work/$target.log"
  # -rss_limit_mb: a reader that reserves gigabytes for a forged size is a bug, not a run.
  if ! "$build_dir/tests/$target" "$work/$corpus" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$build_dir/" > "$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $target failed (the input is saved in $build_dir/, see above)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  found=$(($(ls "$work/$corpus" | wc -l) - $(ls "$root/tests/fuzz/corpus/$corpus" | wc -l)))
  echo "fuzz: $target: $runs inputs in $seconds s, no failure, $found new corpus inputs"
done
