#!/usr/bin/env bash
# A LAN in a box: K network namespaces as "hosts" on one Linux bridge, each link shaped to a
# rate, and an sshd in every host that accepts a key made for this LAN, so that peers can be
# launched "on other machines" with real ssh without leaving this machine. Root only.
#
#   scripts/lan.sh up [--hosts K] [--rate RATE] [--name NAME]   (K = 4, RATE = 1gbit)
#   scripts/lan.sh exec [--name NAME] HOST COMMAND...           (HOST = 1..K)
#   scripts/lan.sh status | down [--name NAME]
#
# Host i is the namespace NAME-hI with address 10.213.N.i/24 on eth0 (N from the name: `up`
# and `status` print the addresses, /run/fastk-lan/NAME/hosts lists them); this machine's
# own namespace is 10.213.N.254 on the bridge, so a launcher here reaches every host. RATE (tc
# syntax: 100mbit, 1gbit) shapes each host's link in both directions with a token bucket
# (tbf; this kernel has no netem). The LAN's key and ssh settings stay in /run/fastk-lan/NAME
# (root's ~/.ssh is not touched): `ssh -F /run/fastk-lan/NAME/ssh_config 10.213.N.2` logs in,
# and /run/fastk-lan/NAME/bin holds ssh and scp that add that -F, so with it first on PATH
# fastk run, fastk doctor and mpirun reach the hosts as they would a cluster's:
#   PATH=/run/fastk-lan/NAME/bin:$PATH fastk run CONFIG
#
# Traffic stays inside the namespaces this script creates and the bridge's own address.
# `up` on a LAN that exists rebuilds it; `down` removes everything and is safe to repeat;
# a failing or interrupted `up` removes what it made. A test killed before its clean-up
# leaves its LAN up until the next `up` of that name (which rebuilds it) or `down`.
#
# The hosts share this machine's file system, as hosts with an NFS home do: `fastk run`'s scp
# then fetches each remote peer's folder onto itself, which keeps it (scp speaks SFTP and
# writes in place; checked with a 20 MB file), so `fastk run` across the hosts works.
set -Eeuo pipefail # -E: the ERR trap of `up` fires inside its functions too

name=fklan
hosts=4
rate=1gbit
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit "${1:-2}"; }
fail() { echo "lan.sh: $*" >&2; exit 1; }

command=${1:-}
[[ -n $command ]] || usage
shift
if [[ $command == exec && ${1:-} == --name ]]; then
  name=${2:?--name needs a name}
  shift 2
fi
while [[ $# -gt 0 && $command != exec ]]; do
  case $1 in
    --hosts) hosts=${2:?--hosts needs a number}; shift 2 ;;
    --rate) rate=${2:?--rate needs a rate such as 100mbit}; shift 2 ;;
    --name) name=${2:?--name needs a name}; shift 2 ;;
    -h | --help) usage 0 ;;
    *) fail "unknown option '$1' (scripts/lan.sh --help)" ;;
  esac
done
[[ $name =~ ^[a-z][a-z0-9]{0,7}$ ]] || fail "--name must be 1-8 lower-case letters or digits (interface names are short)"
[[ $hosts =~ ^[0-9]+$ ]] && ((hosts >= 1 && hosts <= 32)) || fail "--hosts must be 1..32"
state=/run/fastk-lan/$name
bridge=${name}br
# Each LAN name its own /24, so two LANs (a user's and a test's) do not collide.
subnet=10.213.$(($(printf '%s' "$name" | cksum | cut -d' ' -f1) % 200 + 10))

namespace() { echo "$name-h$1"; }
address() { echo "$subnet.$1"; }

# What `up` needs, each missing piece named with what to do about it.
preflight() {
  ((EUID == 0)) || fail "must run as root (network namespaces, bridges and sshd need it)"
  command -v ip > /dev/null || fail "no 'ip' command (apt-get install iproute2)"
  command -v tc > /dev/null || fail "no 'tc' command (apt-get install iproute2)"
  # Not installed here: tests bring LANs up in parallel, and one must not find sshd half
  # installed by another.
  [[ -x /usr/sbin/sshd ]] || fail "no sshd (scripts/install-deps.sh installs openssh-server)"
  local probe="$name-probe$$"
  ip netns add "$probe" 2> /dev/null || fail "cannot create network namespaces here (ip netns add failed: a container without CAP_SYS_ADMIN?)"
  ip netns delete "$probe"
}

down() {
  for pidfile in "$state"/sshd-*.pid; do
    [[ -f $pidfile ]] && kill "$(cat "$pidfile")" 2> /dev/null || true
  done
  for ns in $(ip netns list 2> /dev/null | awk '{print $1}' | grep -E "^$name-h[0-9]+$" || true); do
    ip netns pids "$ns" 2> /dev/null | xargs -r kill 2> /dev/null || true
    ip netns delete "$ns"
  done
  # A deleted namespace lingers while anything holds it (a socket in TIME_WAIT does), and
  # with it the host's veth pair: delete the pairs from this side, so `up` can make them anew.
  for link in $(ip -o link show 2> /dev/null | awk -F': ' '{print $2}' | cut -d@ -f1 |
    grep -E "^${name}v[0-9]+$" || true); do
    ip link delete "$link" 2> /dev/null || true
  done
  ip link delete "$bridge" 2> /dev/null || true
  rm -rf "$state"
}

# ssh and scp that read the LAN's ssh settings, for PATH: programs that run plain `ssh`
# (fastk run, fastk doctor, mpirun) then find the LAN's key without root's ~/.ssh/config.
write_ssh_wrappers() {
  mkdir -p "$state/bin"
  for tool in ssh scp; do
    printf '#!/bin/sh\nexec /usr/bin/%s -F %s "$@"\n' "$tool" "$state/ssh_config" > "$state/bin/$tool"
    chmod 755 "$state/bin/$tool"
  done
}

# One host: namespace, veth pair into the bridge, address, shaped link both ways.
make_host() {
  local i=$1 ns outside="${name}v$1"
  ns=$(namespace "$i")
  ip netns add "$ns"
  ip link add "$outside" type veth peer name eth0 netns "$ns"
  ip link set "$outside" master "$bridge" up
  ip -n "$ns" addr add "$(address "$i")/24" dev eth0
  ip -n "$ns" link set eth0 up
  ip -n "$ns" link set lo up
  # Egress of each end: the host's sends, and what the bridge sends to the host.
  ip netns exec "$ns" tc qdisc add dev eth0 root tbf rate "$rate" burst 256kb latency 50ms
  tc qdisc add dev "$outside" root tbf rate "$rate" burst 256kb latency 50ms
}

# An sshd in host i, on its own address, accepting only this LAN's key.
start_sshd() {
  local i=$1
  cat > "$state/sshd-$i.conf" << EOF
ListenAddress $(address "$i")
HostKey $state/host_key
AuthorizedKeysFile $state/authorized_keys
PidFile $state/sshd-$i.pid
PermitRootLogin prohibit-password
PasswordAuthentication no
KbdInteractiveAuthentication no
UsePAM no
StrictModes no
AcceptEnv FASTK_*
Subsystem sftp /usr/lib/openssh/sftp-server
EOF
  ip netns exec "$(namespace "$i")" /usr/sbin/sshd -f "$state/sshd-$i.conf" ||
    fail "sshd did not start in host $i (see $state/sshd-$i.conf)"
}

up() {
  preflight
  down
  # Whatever ends `up` early (a failing command, fail's exit, Ctrl-C) removes what it made.
  trap 'status=$?; echo "lan.sh: up failed; removing what it made" >&2; down; exit $status' EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$state" /run/sshd
  chmod 700 "$state"
  ssh-keygen -q -t ed25519 -N '' -f "$state/id_ed25519" -C "fastk-lan-$name"
  ssh-keygen -q -t ed25519 -N '' -f "$state/host_key"
  cp "$state/id_ed25519.pub" "$state/authorized_keys"
  cat > "$state/ssh_config" << EOF
Host $subnet.*
  IdentityFile $state/id_ed25519
  IdentitiesOnly yes
  BatchMode yes
  StrictHostKeyChecking no
  UserKnownHostsFile /dev/null
  LogLevel ERROR
  ConnectTimeout 5
EOF
  ip link add "$bridge" type bridge
  ip addr add "$(address 254)/24" dev "$bridge"
  ip link set "$bridge" up
  for ((i = 1; i <= hosts; i++)); do make_host "$i"; done
  for ((i = 1; i <= hosts; i++)); do start_sshd "$i"; done
  for ((i = 1; i <= hosts; i++)); do echo "$(address "$i") $(namespace "$i")"; done > "$state/hosts"
  write_ssh_wrappers
  wait_for_ssh
  trap - EXIT INT TERM
  echo "lan.sh: $hosts hosts up ($subnet.1..$subnet.$hosts, links at $rate); try:"
  echo "  ssh -F $state/ssh_config $(address 1) hostname"
  echo "  PATH=$state/bin:\$PATH fastk run CONFIG   (fastk run, doctor and mpirun use this ssh)"
}

# sshd takes a moment to listen: retry each host for up to 30 s (a loaded 2-core machine,
# with CTest's other tests running, has taken over 5 s).
wait_for_ssh() {
  for ((i = 1; i <= hosts; i++)); do
    local ok=0
    for _ in $(seq 1 300); do
      if ssh -F "$state/ssh_config" "$(address "$i")" true 2> /dev/null; then
        ok=1
        break
      fi
      sleep 0.1
    done
    ((ok)) || fail "cannot ssh into host $i ($(address "$i")) after 30 s"
  done
}

status() {
  [[ -d $state ]] || { echo "lan.sh: no LAN named $name is up"; return 1; }
  echo "lan.sh: LAN $name (ssh -F $state/ssh_config ADDRESS):"
  while read -r addr ns; do
    local shaped
    shaped=$(ip netns exec "$ns" tc qdisc show dev eth0 | grep -o 'rate [^ ]*' || echo "unshaped")
    echo "  $ns  $addr  $shaped"
  done < "$state/hosts"
}

case $command in
  up) up ;;
  down) down; echo "lan.sh: $name is down" ;;
  status) status ;;
  exec)
    i=${1:?exec needs a host number}
    shift
    [[ $# -gt 0 ]] || fail "exec needs a command"
    ip netns exec "$(namespace "$i")" "$@"
    ;;
  -h | --help) usage 0 ;;
  *) fail "unknown command '$command' (up, down, status, exec)" ;;
esac
