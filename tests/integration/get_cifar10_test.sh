#!/usr/bin/env bash
# scripts/get-cifar10.sh without the internet: a fake archive (given with --archive, or
# "downloaded" from a file:// address) is refused on its MD5, nothing is unpacked, and a
# downloaded one is deleted; --check names missing and truncated batch files.
# Usage: get_cifar10_test.sh REPO_ROOT
set -euo pipefail
script=$1/scripts/get-cifar10.sh
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
failures=0
fail() { echo "FAIL: $*" >&2; failures=$((failures + 1)); }

# Runs the script with the given arguments; its exit status in $status, its output in $out.
run() {
  set +e
  out=$("$script" "$@" 2>&1)
  status=$?
  set -e
}
expect() {  # expect STATUS SUBSTRING WHAT
  [[ $status == "$1" ]] || fail "$3: exit status $status, expected $1; output: $out"
  [[ $out == *"$2"* ]] || fail "$3: output lacks '$2': $out"
}

# A fake archive: a real tar.gz of the right layout, but not the published bytes.
mkdir -p "$tmp/src/cifar-10-batches-bin"
for f in data_batch_{1..5}.bin test_batch.bin; do
  truncate -s 30730000 "$tmp/src/cifar-10-batches-bin/$f"
done
tar -czf "$tmp/fake.tar.gz" -C "$tmp/src" cifar-10-batches-bin

run "$tmp/out/cifar" --archive "$tmp/fake.tar.gz"
expect 1 "not the published c32a1d4ab5d03f1284b67883e8d87530" "--archive with a wrong MD5"
[[ -f $tmp/fake.tar.gz ]] || fail "a given archive was deleted"
[[ ! -e $tmp/out/cifar ]] || fail "a refused archive was unpacked"

FASTK_CIFAR10_URL=file://$tmp/fake.tar.gz run "$tmp/out/cifar"
expect 1 "was deleted" "a download with a wrong MD5"
[[ ! -e $tmp/out/cifar ]] || fail "a refused download was unpacked"
leftovers=$(find "$tmp/out" -mindepth 1 | wc -l)
[[ $leftovers == 0 ]] || fail "a refused download left files: $(find "$tmp/out")"

FASTK_CIFAR10_URL=file://$tmp/nothing.tar.gz run "$tmp/out/cifar"
expect 1 "the download from file://$tmp/nothing.tar.gz failed" "a failed download"

run "$tmp/src/cifar-10-batches-bin" --check
expect 0 "holds the six CIFAR-10 batch files" "--check on a complete folder"
rm "$tmp/src/cifar-10-batches-bin/test_batch.bin"
truncate -s 1000 "$tmp/src/cifar-10-batches-bin/data_batch_3.bin"
run "$tmp/src/cifar-10-batches-bin" --check
expect 1 "test_batch.bin is missing" "--check with a missing file"
expect 1 "data_batch_3.bin has 1000 bytes, not 30730000" "--check with a truncated file"

run --bogus
expect 2 "usage: scripts/get-cifar10.sh" "an unknown option"

if ((failures > 0)); then
  echo "$failures failure(s)" >&2
  exit 1
fi
echo "get-cifar10.sh: all checks passed"
