#!/usr/bin/env bash
# Third-party headers whose warnings need handling are included through one wrapper each:
# Eigen only through third_party/eigen.h (eigen_sparse.h, spectra.h for Spectra), which keeps GCC 12's false warnings from its
# intrinsic headers out of the build (docs/build.md); the warning-scope probe includes Eigen
# directly on purpose. Lists every other direct include it finds.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
mapfile -t files < <(git ls-files --cached --others --exclude-standard -- \
  '*.h' '*.hpp' '*.cc' '*.cpp' '*.inl' 2>/dev/null || true)
if ((${#files[@]} == 0)); then  # not a git checkout: every C++ file under the root
  mapfile -t files < <(find . -path ./build -prune -o -path './build-*' -prune -o -type f \
    \( -name '*.h' -o -name '*.hpp' -o -name '*.cc' -o -name '*.cpp' -o -name '*.inl' \) -print)
fi
hits=""
if ((${#files[@]})); then
  hits=$(grep -nHE '#[[:space:]]*include[[:space:]]*[<"]((unsupported/)?Eigen|Spectra)/' "${files[@]}" |
    sed 's|^\./||' | grep -vE '^(third_party/eigen\.h|third_party/eigen_sparse\.h|third_party/spectra\.h|tests/lint/warning_scope_probe\.cc):' || true)
fi
if [[ -n "$hits" ]]; then
  echo "include Eigen through \"third_party/eigen.h\" (sparse: eigen_sparse.h) and Spectra through"
  echo "\"third_party/spectra.h\", not directly:"
  echo "$hits"
  exit 1
fi
echo "includes: Eigen and Spectra only through their third_party/ wrappers"
