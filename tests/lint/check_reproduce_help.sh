#!/usr/bin/env bash
# experiments/reproduce.sh --help: exits 0 and describes every figure the script can make
# (each branch of its `case`), so the list a user reads is the list that runs.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
script=$root/experiments/reproduce.sh
help=$("$script" --help 2>&1)
code=$?
if [[ $code -ne 0 ]]; then
  echo "reproduce.sh --help exited with $code:"
  echo "$help"
  exit 1
fi
mapfile -t figures < <(sed -nE 's/^    ([a-z_]+)\)$/\1/p' "$script")
if ((${#figures[@]} == 0)); then
  echo "found no figure branches in $script"
  exit 1
fi
missing=()
for f in "${figures[@]}"; do
  grep -qE "^  $f( |$)" <<<"$help" || missing+=("$f")
done
if ((${#missing[@]})); then
  echo "reproduce.sh --help does not describe: ${missing[*]}"
  exit 1
fi
echo "reproduce.sh --help describes its ${#figures[@]} figures"
