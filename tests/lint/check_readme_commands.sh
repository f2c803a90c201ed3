#!/usr/bin/env bash
# Checks that README.md guides: every `./build/fastk` command in its code blocks parses, its
# links lead somewhere, it stays short, and no example calls a bare `fastk`.
# Usage: check_readme_commands.sh REPO_ROOT FASTK_BINARY
#
# 1. README.md has at most 400 lines.
# 2. No code line starts with a bare `fastk SUBCOMMAND` (optionally after `$ `): the binary is
#    ./build/fastk, and `fastk` alone is "command not found" after the Quick start. Output
#    lines such as "fastk run: peer 3 failed" or "fastk: ..." are not commands (the word after
#    `fastk` ends with a colon, or there is none).
# 3. Every relative link [text](target) outside code blocks names a file or folder of the
#    repository (an #anchor is cut off; http(s), mailto and pure #anchors are not checked),
#    and none leads outside the repository (a path starting with ../).
# 4. Every command line in a fenced code block that invokes ./build/fastk is run with
#    FASTK_PARSE_ONLY=1, which makes the binary parse its command line (subcommand, flags,
#    validators such as existing-file checks) and exit 0 without doing anything, or exit
#    non-zero with CLI11's message. How commands are found:
#    - in a block where some line starts with `$ `, only those lines are commands (the
#      `$ ` is stripped) and the other lines are output; in a block without `$ `, every line
#      is a command (lines starting with # are comments);
#    - a line ending with a backslash continues on the next line; the lines are joined;
#    - only commands that contain ./build/fastk count. What comes before it (mpirun ...,
#      srun ..., VAR=value) is a launcher the check cannot run: it runs the command from
#      ./build/fastk on, cut at the first |, && or ; and without a trailing # comment;
#    - ./build/fastk is replaced by FASTK_BINARY.
#    The commands run in a scratch folder (mktemp -d under $FASTK_TEST_TMP if set, else under
#    $TMPDIR; removed on exit) where the repository's experiments/, scripts/ and docs/ are
#    symlinked, so relative config paths resolve as from the repository root.
#    Placeholder heuristic: many examples read what an earlier example or the Quick start
#    wrote (runs/quickstart, cal.json, runs/quickstart-calibration.json). Before a command
#    runs, every argument (or the VALUE of --opt=VALUE) that does not start with - and looks
#    like a path to such an input - it is relative, does not exist in the scratch folder, and
#    either starts with runs/ or data/, or ends in .json, .toml, .csv, .txt or .f32 - is
#    created: as an empty file when its last component has an extension, else as an empty
#    folder. Values of options that name an output (-o, --output, -f, --file, --dot) are left
#    alone, so an --output folder is not made to exist beforehand.
# It prints each command with OK or FAIL (with the binary's message) and ends with
# "N passed, M failed"; the exit code is 1 when anything failed.
set -euo pipefail

if (($# != 2)); then
  echo "usage: $0 REPO_ROOT FASTK_BINARY" >&2
  exit 2
fi
root=$(cd "$1" && pwd)
fastk=$2
[[ $fastk == /* ]] || fastk=$PWD/$fastk
readme=$root/README.md
[[ -f $readme ]] || { echo "$0: no README.md in $root" >&2; exit 2; }
[[ -x $fastk ]] || { echo "$0: $fastk is not an executable" >&2; exit 2; }

passed=0
failed=0
ok() { echo "OK   $1"; passed=$((passed + 1)); }
fail() {
  echo "FAIL $1"
  if (($# > 1)) && [[ -n $2 ]]; then printf '%s\n' "$2" | sed 's/^/     | /'; fi
  failed=$((failed + 1))
}

# 1. Length.
lines=$(wc -l <"$readme")
if ((lines <= 400)); then
  ok "README.md has $lines lines (at most 400)"
else
  fail "README.md has $lines lines (at most 400)"
fi

# Split README.md into code lines (with the number of their block) and text lines.
code_lines=()   # "BLOCK<TAB>LINE"
text_lines=()
in_code=0
block=0
while IFS= read -r line || [[ -n $line ]]; do
  if [[ $line =~ ^[[:space:]]*(\`\`\`|~~~) ]]; then
    if ((in_code)); then in_code=0; else in_code=1; block=$((block + 1)); fi
    continue
  fi
  if ((in_code)); then code_lines+=("$block"$'\t'"$line"); else text_lines+=("$line"); fi
done <"$readme"

# 2. Bare fastk.
bare=()
for entry in "${code_lines[@]}"; do
  line=${entry#*$'\t'}
  if [[ $line =~ ^[[:space:]]*(\$[[:space:]]+)?fastk[[:space:]]+[a-z][a-z0-9_-]*([[:space:]]|$) ]]; then
    bare+=("$line")
  fi
done
if ((${#bare[@]} == 0)); then
  ok "no code line calls a bare fastk"
else
  fail "code lines call a bare fastk (write ./build/fastk)" "$(printf '%s\n' "${bare[@]}")"
fi

# 3. Links.
dead=()
links=0
for line in "${text_lines[@]}"; do
  rest=$line
  while [[ $rest =~ \]\(([^\)[:space:]]+)([[:space:]]+\"[^\"]*\")?\) ]]; do
    target=${BASH_REMATCH[1]}
    rest=${rest#*"${BASH_REMATCH[0]}"}
    case $target in
      http://* | https://* | mailto:* | \#*) continue ;;
    esac
    links=$((links + 1))
    path=${target%%#*}
    resolved=$(realpath -m "$root/$path")
    if [[ $resolved != "$root" && $resolved != "$root"/* ]]; then
      dead+=("$target (outside the repository)")
    elif [[ ! -e $resolved ]]; then
      dead+=("$target")
    fi
  done
done
if ((${#dead[@]} == 0)); then
  ok "all $links relative links of README.md lead to files of the repository"
else
  fail "dead links in README.md" "$(printf '%s\n' "${dead[@]}")"
fi

# 4. Commands.
commands=()
add_command() { [[ $1 == *./build/fastk* ]] && commands+=("$1"); return 0; }
prev_block=-1
has_prompt=0
pending=""
continuing=0
prompt_blocks=" "
for entry in "${code_lines[@]}"; do
  b=${entry%%$'\t'*}
  line=${entry#*$'\t'}
  [[ $line =~ ^[[:space:]]*\$[[:space:]] ]] && prompt_blocks+="$b "
done
for entry in "${code_lines[@]}"; do
  b=${entry%%$'\t'*}
  line=${entry#*$'\t'}
  if [[ $b != "$prev_block" ]]; then
    if ((continuing)); then add_command "$pending"; fi
    pending=""
    continuing=0
    prev_block=$b
    has_prompt=0
    [[ $prompt_blocks == *" $b "* ]] && has_prompt=1
  fi
  if ((continuing)); then
    line=${line#"${line%%[![:space:]]*}"}
    pending+=" $line"
  elif ((has_prompt)); then
    [[ $line =~ ^[[:space:]]*\$[[:space:]]+(.*)$ ]] || continue
    pending=${BASH_REMATCH[1]}
  else
    line=${line#"${line%%[![:space:]]*}"}
    [[ -z $line || $line == \#* ]] && continue
    pending=$line
  fi
  if [[ $pending == *\\ ]]; then
    pending=${pending%\\}
    pending=${pending%"${pending##*[![:space:]]}"}
    continuing=1
  else
    continuing=0
    add_command "$pending"
    pending=""
  fi
done
((continuing)) && add_command "$pending"

if [[ -n ${FASTK_TEST_TMP:-} ]]; then
  mkdir -p "$FASTK_TEST_TMP"
  scratch=$(mktemp -d "$FASTK_TEST_TMP/readme-commands.XXXXXX")
else
  scratch=$(mktemp -d "${TMPDIR:-/tmp}/readme-commands.XXXXXX")
fi
trap 'rm -rf "$scratch"' EXIT
for dir in experiments scripts docs; do
  [[ -e $root/$dir ]] && ln -s "$root/$dir" "$scratch/$dir"
done

# Creates the placeholder inputs of one fastk command (see the heuristic above).
make_placeholders() {
  local -a words
  # The README's own command line, split as bash would (quotes honoured). eval runs nothing
  # the check would not run anyway: the same line is executed right after.
  eval "words=($1)"
  local previous="" word path
  for word in "${words[@]}"; do
    path=$word
    case $previous in
      -o | --output | -f | --file | --dot) previous=$word; continue ;;
    esac
    previous=$word
    if [[ $word == --*=* ]]; then
      case ${word%%=*} in --output | --file | --dot) continue ;; esac
      path=${word#*=}
    elif [[ $word == -* ]]; then
      continue
    fi
    [[ -n $path && $path != /* && ! -e $scratch/$path ]] || continue
    [[ $path == runs/* || $path == data/* || $path =~ \.(json|toml|csv|txt|f32)$ ]] || continue
    if [[ ${path##*/} == ?*.* ]]; then
      mkdir -p "$scratch/$(dirname "$path")"
      : >"$scratch/$path"
    else
      mkdir -p "$scratch/$path"
    fi
  done
}

quoted_fastk=$(printf '%q' "$fastk")
run_timeout=()
command -v timeout >/dev/null && run_timeout=(timeout 120)
echo "${#commands[@]} ./build/fastk commands in README.md"
for cmd in "${commands[@]}"; do
  # From ./build/fastk on, without a trailing comment, up to the first |, && or ;.
  part=./build/fastk${cmd#*./build/fastk}
  part=$(sed -E 's/[[:space:]]+#.*$//; s/[[:space:]]*(\|\||\||&&|;).*$//' <<<"$part")
  args=${part#./build/fastk}
  if ! make_placeholders "$args" 2>/dev/null; then
    fail "$cmd" "cannot split the command line"
    continue
  fi
  set +e
  out=$(cd "$scratch" && FASTK_PARSE_ONLY=1 "${run_timeout[@]}" bash -c "$quoted_fastk$args" 2>&1 </dev/null)
  rc=$?
  set -e
  if ((rc == 0)); then ok "$cmd"; else fail "$cmd" "exit code $rc: $out"; fi
done

echo "$passed passed, $failed failed"
((failed == 0))
