#!/usr/bin/env bash
# One python for everything that plots: Debian's /usr/bin/python3, where python3-matplotlib
# installs and which fastk itself runs plot_run.py with (node/report/plots.cc). A script
# started through `#!/usr/bin/env python3`, or a `python3 x.py` line, takes the first python3
# on PATH instead (a virtual environment, conda), which often has no matplotlib: the run
# then fails at its plots, after all its work. Lists every such line in experiments/ and
# scripts/ (and in any file given as further arguments, for the test of this check).
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
shift || true
files=("$@")
if ((${#files[@]} == 0)); then
  mapfile -t files < <(git ls-files --cached --others --exclude-standard -- experiments scripts \
    2>/dev/null || true)
  if ((${#files[@]} == 0)); then  # not a git checkout
    mapfile -t files < <(find experiments scripts -type f)
  fi
fi
# A shebang through env, or python3 run bare on a script or with -c/-m/-u (a package list
# such as install-deps.sh's `python3 python3-matplotlib` is no invocation).
shebang='^#![[:space:]]*/usr/bin/env[[:space:]]+(-S[[:space:]]+)?python3?([[:space:]]|$)'
bare='(^|[^/[:alnum:]_.-])python3?[[:space:]]+(-[cmuIB]|[^[:space:]]*\.py)'
hits=""
if ((${#files[@]})); then
  hits=$(grep -nHIE "$shebang|$bare" "${files[@]}" 2>/dev/null || true)
fi
if [[ -n "$hits" ]]; then
  echo "run python as /usr/bin/python3 (shebang #!/usr/bin/python3), not the first python3 on PATH:"
  echo "$hits"
  exit 1
fi
echo "python: every script in experiments/ and scripts/ names /usr/bin/python3"
