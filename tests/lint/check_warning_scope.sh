#!/usr/bin/env bash
# Warnings from headers we do not own stay out of the build, ours stay in (docs/build.md).
# Compiles tests/lint/warning_scope_probe.cc for AVX-512 (x86-64-v4), where GCC 12 warns in
# its intrinsic headers, and checks that through third_party/eigen.h the only warning is the
# probe's own maybe-uninitialized read. Needs only a compiler: no AVX-512 CPU.
# Usage: check_warning_scope.sh CXX EIGEN_INCLUDE_DIR [SOURCE_ROOT]
set -uo pipefail
cxx=$1
eigen=$2
root=${3:-$(cd "$(dirname "$0")/../.." && pwd)}
probe=$root/tests/lint/warning_scope_probe.cc
compile() {
  "$cxx" -std=c++20 -O3 -Wall -Wextra -march=x86-64-v4 -I"$root" -isystem "$eigen" "$@" \
    -c "$probe" -o /dev/null 2>&1
}
warnings_in() { grep -E 'warning:' <<<"$1" | grep -oE '^[^:]+' | sort | uniq -c; }

wrapped=$(compile)
status=0
if grep -E 'warning:' <<<"$wrapped" | grep -vq "^$probe:"; then
  echo "FAIL: warnings from headers we do not own got through third_party/eigen.h:"
  warnings_in "$wrapped"
  status=1
fi
if ! grep -qE "^$probe:[0-9]+:[0-9]+: warning: .*maybe_set.*-Wmaybe-uninitialized" <<<"$wrapped"; then
  echo "FAIL: the probe's own maybe-uninitialized read was not reported; the wrapper hides too much:"
  echo "$wrapped" | head -20
  status=1
fi
direct=$(compile -DFASTK_PROBE_DIRECT_EIGEN)
foreign=$(grep -E 'warning:' <<<"$direct" | grep -vc "^$probe:")
version=$("$cxx" -dumpversion 2>/dev/null || echo 0)
if ((foreign == 0 && ${version%%.*} <= 12)); then
  echo "FAIL: without the wrapper GCC $version reported no warning from its headers, so this" \
    "probe no longer exercises third_party/eigen.h; make it trigger them again"
  status=1
fi
if ((status == 0)); then
  echo "warning scope: only our own warning through third_party/eigen.h" \
    "($foreign foreign warnings without it, with $("$cxx" -dumpfullversion 2>/dev/null || echo this compiler))"
fi
exit $status
