#!/usr/bin/env bash
# The python-interpreter check itself (check_python_interpreter.sh): on its probe file it
# must flag the three lines that take the first python3 on PATH, and only those.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
probe=tests/lint/python_interpreter_probe.txt
output=$("$root/tests/lint/check_python_interpreter.sh" "$root" "$probe")
code=$?
flagged=$(grep -c "^$probe:" <<<"$output")
if [[ $code -ne 1 || "$flagged" -ne 3 ]] || ! grep -q "^$probe:1:" <<<"$output" ||
   ! grep -q "^$probe:2:" <<<"$output" || ! grep -q "^$probe:3:" <<<"$output"; then
  echo "expected exit code 1 and lines 1, 2 and 3 of $probe flagged; got exit code $code:"
  echo "$output"
  exit 1
fi
echo "the python-interpreter check flags exactly the probe's three bad lines"
