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
if [[ ! $seconds =~ ^[0-9]+$ ]] || ((seconds == 0)); then
  echo "usage: scripts/fuzz.sh [SECONDS] [TARGET...] (SECONDS a positive whole number)" >&2
  exit 2
fi
shift || true
targets=("$@")
((${#targets[@]})) || targets=(wire_fuzz config_fuzz data_files_fuzz shm_ref_fuzz)
build_dir=${FASTK_FUZZ_BUILD_DIR:-$root/build-fuzz}

"$root/scripts/install-deps.sh" clang-14 libclang-rt-14-dev llvm-14  # llvm-14: the symbolizer
# Without libtorch (FASTK_TORCH=OFF): the fuzz targets parse inputs, not models, and
# libtorch 1.13's headers do not compile with clang 14 in C++20. Set on every run, so that a
# build folder configured before the option existed gets it too.
if [[ ! -f "$build_dir/build.ninja" ]]; then  # a configure that failed leaves no build.ninja
  CC=clang-14 CXX=clang++-14 cmake -S "$root" -B "$build_dir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DFASTK_LIBFUZZER=ON -DFASTK_SANITIZE='address;undefined' -DFASTK_MARCH= \
    -DFASTK_BUILD_TESTS=ON -DFASTK_BUILD_BENCHMARKS=OFF -DFASTK_TORCH=OFF > /dev/null
else
  cmake -DFASTK_TORCH=OFF "$build_dir" > /dev/null
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
  if ! ASAN_SYMBOLIZER_PATH=/usr/bin/llvm-symbolizer-14 "$build_dir/tests/$target" "$work/$corpus" -max_total_time="$seconds" -timeout=10 \
    -rss_limit_mb=1024 -print_final_stats=1 -artifact_prefix="$build_dir/" > "$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz: $target failed (the input is saved in $build_dir/, see above)" >&2
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  committed=$(find "$root/tests/fuzz/corpus/$corpus" -type f | wc -l)
  after=$(find "$work/$corpus" -type f | wc -l)
  echo "fuzz: $target: $runs inputs in $seconds s, no failure; corpus $after inputs ($committed committed)"
done
