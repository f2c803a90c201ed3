#!/usr/bin/env bash
# A Slurm cluster on a LAN in a box (scripts/lan.sh): one slurmd per host namespace (node hI
# at the host's address), a slurmctld and a munged on this machine, all private to the LAN:
# their own config, state, munge socket and ports (20000 + 2 x the LAN's subnet number, and
# one more), so a Slurm the machine already runs, or another LAN's, is not touched. Then `srun` starts peers across the hosts as on a cluster.
# Root only; needs slurm-wlm and munge (scripts/install-deps.sh installs them).
#
#   scripts/lan-slurm.sh up [--name NAME]     (after scripts/lan.sh up --name NAME)
#   scripts/lan-slurm.sh down [--name NAME]
#   SLURM_CONF=/run/fastk-slurm/NAME/slurm.conf srun -N 4 -n 8 fastk node CONFIG
#
# One partition `lan` with every host; a job may share a host's CPUs with other tasks
# (--overcommit), as peers of one host do. slurmd runs with the host's network namespace
# only (nsenter --net), so it sees this machine's cgroups; the proctrack and task plugins
# that need cgroups are not used.
set -Eeuo pipefail

name=fklan
usage() { awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit "${1:-2}"; }
fail() { echo "lan-slurm.sh: $*" >&2; exit 1; }

command=${1:-}
[[ -n $command ]] || usage
shift
while [[ $# -gt 0 ]]; do
  case $1 in
    --name) name=${2:?--name needs a name}; shift 2 ;;
    -h | --help) usage 0 ;;
    *) fail "unknown option '$1' (scripts/lan-slurm.sh --help)" ;;
  esac
done
lan=/run/fastk-lan/$name
state=/run/fastk-slurm/$name
export SLURM_CONF=$state/slurm.conf

preflight() {
  ((EUID == 0)) || fail "must run as root (slurmd and munged need it)"
  [[ -f $lan/hosts ]] || fail "no LAN named $name is up: scripts/lan.sh up --name $name first"
  # Not installed here: tests run in parallel, and one must not find a package half installed.
  command -v slurmctld > /dev/null && [[ -x /usr/sbin/munged ]] ||
    fail "no slurmctld or munged (scripts/install-deps.sh installs slurm-wlm and munge)"
  [[ -f /etc/munge/munge.key ]] || fail "no /etc/munge/munge.key (reinstall munge: its setup makes the key)"
}

down() {
  local pids=()
  for pidfile in "$state"/slurmd-*.pid "$state"/slurmctld.pid "$state"/munge/munged.pid; do
    [[ -f $pidfile ]] && pids+=("$(cat "$pidfile")")
  done
  ((${#pids[@]} == 0)) || kill "${pids[@]}" 2> /dev/null || true
  # Gone before `up` binds their ports again (5 s at most).
  for _ in $(seq 1 50); do
    kill -0 "${pids[@]}" 2> /dev/null || break
    sleep 0.1
  done
  rm -rf "$state"
}

write_config() {
  local subnet port
  subnet=$(head -1 "$lan/hosts" | cut -d' ' -f1 | sed 's/\.[0-9]*$//')
  port=$((20000 + 2 * ${subnet##*.}))
  cat > "$SLURM_CONF" << EOF
ClusterName=fastk$name
SlurmctldHost=$(hostname)($subnet.254)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$state/munge/munge.socket
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$state/state
SlurmdSpoolDir=$state/spool/%n
SlurmctldPidFile=$state/slurmctld.pid
SlurmdPidFile=$state/slurmd-%n.pid
SlurmctldLogFile=$state/slurmctld.log
SlurmdLogFile=$state/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
MpiDefault=none
ReturnToService=2
EOF
  local i=0
  while read -r address _; do
    i=$((i + 1))
    echo "NodeName=h$i NodeHostname=$(hostname) NodeAddr=$address CPUs=$(nproc) State=UNKNOWN"
  done < "$lan/hosts" >> "$SLURM_CONF"
  echo "PartitionName=lan Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES" >> "$SLURM_CONF"
  printf 'CgroupPlugin=cgroup/v1\nIgnoreSystemd=yes\n' > "$state/cgroup.conf"
}

start_munged() {
  mkdir -p "$state/munge"
  chown munge:munge "$state/munge"
  runuser -u munge -- /usr/sbin/munged --socket="$state/munge/munge.socket" \
    --pid-file="$state/munge/munged.pid" --seed-file="$state/munge/munge.seed" \
    --log-file="$state/munge/munged.log" --key-file=/etc/munge/munge.key ||
    fail "munged did not start (see $state/munge/munged.log)"
}

# Every node idle, within 60 s (a loaded 2-core machine is slow to start four slurmds).
wait_for_nodes() {
  local count
  count=$(wc -l < "$lan/hosts")
  for _ in $(seq 1 300); do
    [[ $(sinfo -h -t idle -o '%D' 2> /dev/null | head -1) == "$count" ]] && return 0
    sleep 0.2
  done
  fail "the nodes did not become idle in 60 s (sinfo: $(sinfo -h 2>&1 | head -3); logs in $state)"
}

up() {
  preflight
  down
  # Whatever ends `up` early (a failing command, fail's exit, Ctrl-C) removes what it made.
  trap 'status=$?; echo "lan-slurm.sh: up failed; removing what it made" >&2; down; exit $status' EXIT
  trap 'exit 130' INT TERM
  mkdir -p "$state/state"
  chmod 755 /run/fastk-slurm "$state"
  write_config
  start_munged
  slurmctld || fail "slurmctld did not start (see $state/slurmctld.log)"
  local i=0
  while read -r _ ns; do
    i=$((i + 1))
    mkdir -p "$state/spool/h$i"
    nsenter --net="/run/netns/$ns" slurmd -N "h$i" || fail "slurmd did not start in $ns"
  done < "$lan/hosts"
  wait_for_nodes
  trap - EXIT INT TERM
  echo "lan-slurm.sh: Slurm on LAN $name is up ($(sinfo -h -o '%D nodes, partition %P')); try:"
  echo "  SLURM_CONF=$SLURM_CONF srun -N 2 -n 4 hostname"
}

case $command in
  up) up ;;
  down) down; echo "lan-slurm.sh: Slurm on LAN $name is down" ;;
  -h | --help) usage 0 ;;
  *) fail "unknown command '$command' (up, down)" ;;
esac
