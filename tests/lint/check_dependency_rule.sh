#!/usr/bin/env bash
# The dependency rule (docs/design.md, "Layout and the dependency rule"): the pure libraries
# (isa, topology, learning, consensus, simulation, coding, compression) include no ZeroMQ,
# Asio, TOML++, threads, sockets or clocks, and include nothing from node/. consensus/ does
# not include simulation/ (the engine sits on the protocol), and the real runtime's folders
# of node/ include nothing from simulation/ (what both runtimes share is consensus/'s).
# Also checks the CMake side: pure targets do not link the I/O libraries. And the order among
# node/'s libraries (node/CMakeLists.txt): a folder includes only the node/ folders below it.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
pure=(isa topology learning consensus simulation coding compression)
forbidden='#[[:space:]]*include[[:space:]]*[<"](zmq\.h|zmq\.hpp|zmq_addon\.hpp|boost/asio[^">]*|asio\.hpp|toml\+\+/[^">]*|thread|mutex|condition_variable|future|chrono|sys/socket\.h|netinet/[^">]*|arpa/inet\.h|node/[^">]*)[">]'
status=0
for dir in "${pure[@]}"; do
  [[ -d "$dir" ]] || continue
  hits=$(grep -rnE "$forbidden" "$dir" --include='*.h' --include='*.cc' || true)
  if [[ -n "$hits" ]]; then
    echo "dependency rule broken in $dir/ (pure code must not include I/O, threads, clocks or node/):"
    echo "$hits"
    status=1
  fi
  if [[ -f "$dir/CMakeLists.txt" ]] &&
    grep -nE 'libzmq|cppzmq|tomlplusplus|Boost::|Threads::|fastk_node' "$dir/CMakeLists.txt"; then
    echo "dependency rule broken: $dir/CMakeLists.txt links an I/O library or node/"
    status=1
  fi
done

# The simulator's engine stays out of the protocol and of the real runtime.
for dir in consensus node/peer node/training node/stragglers node/transport node/wire node/os; do
  if hits=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"]simulation/' "$dir" --include='*.h' --include='*.cc'); then
    echo "dependency rule broken: $dir/ includes the simulator's engine (simulation/):"
    echo "$hits"
    status=1
  fi
  if [[ -f "$dir/CMakeLists.txt" ]] && grep -n 'fastk_simulation' "$dir/CMakeLists.txt"; then
    echo "dependency rule broken: $dir/CMakeLists.txt links fastk_simulation"
    status=1
  fi
done
if grep -nE 'fastk_node_library\((fastk_node_(peer|training|stragglers|transport|link|wire|os))\b[^)]*fastk_simulation' -z node/CMakeLists.txt >/dev/null; then
  echo "dependency rule broken: a library of the real runtime links fastk_simulation (node/CMakeLists.txt)"
  status=1
fi

# node/: each folder and the node/ folders it may include (node/CMakeLists.txt has the order).
declare -A below=(
  [os]="" [wire]="" [stragglers]="" [training]=""
  [transport]="wire os"
  [config]="stragglers"
  [metrics]="config stragglers"
  [calibration]="config metrics stragglers os"
  [sim]="calibration config metrics stragglers training"
  [launch]="config metrics os stragglers"
  [report]="launch config metrics os stragglers"
  [measure]="config training transport wire os stragglers"
  [peer]="config launch metrics stragglers training transport wire os"
  [doctor]="config launch measure metrics stragglers training transport wire os"
  [cli]="*"
)
for dir in node/*/; do
  folder=$(basename "$dir")
  allowed=${below[$folder]-missing}
  if [[ $allowed == missing ]]; then
    echo "dependency rule: node/$folder/ has no place in the order (tests/lint/check_dependency_rule.sh, node/CMakeLists.txt)"
    status=1
    continue
  fi
  [[ $allowed == "*" ]] && continue
  while IFS= read -r hit; do
    [[ -z $hit ]] && continue
    used=$(sed -E 's|.*#[[:space:]]*include[[:space:]]*[<"]node/([a-z0-9_]+)/.*|\1|' <<<"$hit")
    [[ $used == "$folder" ]] && continue
    if [[ " $allowed " != *" $used "* ]]; then
      echo "dependency rule broken: node/$folder/ may not include node/$used/ ($hit)"
      status=1
    fi
  done < <(grep -rnE '#[[:space:]]*include[[:space:]]*[<"]node/[a-z0-9_]+/' "$dir" --include='*.h' --include='*.cc' || true)
  # ZeroMQ only in the transport and what sits on it (its headers are on the system path, so
  # an include below would compile and drag libzmq into the simulator).
  case " transport measure peer cli " in *" $folder "*) continue ;; esac
  if zmq=$(grep -rnE '#[[:space:]]*include[[:space:]]*[<"](zmq\.h|zmq\.hpp|zmq_addon\.hpp)[">]' "$dir" --include='*.h' --include='*.cc'); then
    echo "dependency rule broken: node/$folder/ includes ZeroMQ (only transport, measure, peer, cli may):"
    echo "$zmq"
    status=1
  fi
done

checked=$(for d in "${pure[@]}"; do [[ -d $d ]] && echo "$d"; done | tr '\n' ' ')
[[ $status -eq 0 ]] && echo "dependency rule holds for: $checked and the order of node/'s libraries"
exit $status
