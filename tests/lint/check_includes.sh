#!/usr/bin/env bash
# Third-party headers whose warnings need handling are included through one wrapper each:
# Eigen only through third_party/eigen.h, which keeps GCC 12's false warnings from its
# intrinsic headers out of the build (docs/build.md); the warning-scope probe includes Eigen
# directly on purpose. Lists every other direct include it finds.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
hits=$(grep -rnE '#[[:space:]]*include[[:space:]]*<Eigen/' \
  --include='*.h' --include='*.cc' --exclude-dir=build --exclude-dir='build-*' . |
  grep -vE '^\./(third_party/eigen\.h|tests/lint/warning_scope_probe\.cc):' || true)
if [[ -n "$hits" ]]; then
  echo "include Eigen through \"third_party/eigen.h\", not directly:"
  echo "$hits"
  exit 1
fi
echo "includes: Eigen only through third_party/eigen.h"
