#!/usr/bin/env bash
# Installs every Debian package fastk needs to build, test, run and plot, and any packages
# given as arguments (scripts/fuzz.sh adds clang's). Idempotent and fast when everything is present: apt runs only for missing packages.
set -euo pipefail

packages=(
  cmake ninja-build g++ pkg-config git ccache
  libeigen3-dev libspectra-dev libzmq3-dev cppzmq-dev zlib1g-dev libtomlplusplus-dev libcli11-dev
  libgtest-dev libgmock-dev libbenchmark-dev nlohmann-json3-dev clang-format
  python3 python3-matplotlib
  # TorchScript models ([model] kind = "torchscript", learning/torchscript/): libtorch, the
  # exporter's PyTorch, and a BLAS for libtorch's matrix products. Debian's default
  # (netlib) BLAS made a libtorch MLP gradient 5x slower; OpenBLAS's serial build uses no
  # threads of its own, so each peer stays on its one core.
  libtorch-dev python3-torch libopenblas0-serial
  dataset-fashion-mnist
  # The LAN-in-a-box tests (scripts/lan.sh, scripts/lan-slurm.sh): installed here, before
  # any test runs, because a package installed while CTest runs two LAN tests at once is
  # half-set-up for the other one (sshd without its privilege-separation user).
  openssh-server openssh-client iproute2 util-linux  # sshd per host; ip, tc; nsenter, flock
  openmpi-bin  # the tests start peers across LAN-in-a-box hosts with mpirun too
  nftables     # and block an edge with a firewall rule for fastk doctor to find
  slurm-wlm munge  # and with srun on a Slurm of the LAN's own (scripts/lan-slurm.sh)
)
packages+=("$@")

missing=()
for p in "${packages[@]}"; do
  status=$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null || true)
  [[ "$status" == "install ok installed" ]] || missing+=("$p")
done

if ((${#missing[@]} == 0)); then
  exit 0
fi

echo "fastk: installing Debian packages: ${missing[*]}"
if [[ $(id -u) -ne 0 ]]; then
  sudo_cmd=(sudo)
else
  sudo_cmd=()
fi
"${sudo_cmd[@]}" apt-get update -qq
DEBIAN_FRONTEND=noninteractive "${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends \
  "${missing[@]}" >/dev/null
echo "fastk: packages installed"
