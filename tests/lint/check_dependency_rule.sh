#!/usr/bin/env bash
# The dependency rule (docs/design.md, "Layout and the dependency rule"): the pure libraries
# (topology, learning, consensus, coding) include no ZeroMQ, Asio, TOML++, threads, sockets or
# clocks, and include nothing from node/.
# Also checks the CMake side: pure targets do not link the I/O libraries.
set -uo pipefail
root=${1:-$(cd "$(dirname "$0")/../.." && pwd)}
cd "$root" || exit 2
pure=(topology learning consensus coding)
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
checked=$(for d in "${pure[@]}"; do [[ -d $d ]] && echo "$d"; done | tr '\n' ' ')
[[ $status -eq 0 ]] && echo "dependency rule holds for: $checked"
exit $status
