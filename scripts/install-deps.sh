#!/usr/bin/env bash
# Installs the Debian 12 packages Fulcrum builds and runs with, skipping those present.
# --test-tools adds the real programs the test suite starts beside fulcrumd: Prometheus,
# a one-node Slurm with munge, lintian and systemd-analyze, torch and torchvision for the
# PyTorch client's tests and examples, and xz for the GPU kit's test (scripts/test.sh passes
# it). pip, setuptools and wheel build fulcrum_torch's wheel.
# Run as root (or with sudo). Safe to run again.
set -euo pipefail

packages=(
  build-essential cmake ninja-build ccache pkg-config git
  libeigen3-dev zlib1g-dev libsqlite3-dev sqlite3
  libboost1.81-dev libboost-json1.81-dev libboost-program-options1.81-dev libssl-dev libspdlog-dev
  qt6-base-dev qt6-charts-dev qt6-websockets-dev libqt6opengl6-dev libgl-dev
  googletest libgtest-dev clang libclang-rt-14-dev clang-format clang-tidy help2man
  dataset-fashion-mnist
  python3-pip python3-setuptools python3-wheel python3-venv
)
if [ "${1:-}" = "--test-tools" ]; then
  packages+=(prometheus lintian systemd slurm-wlm munge python3-torch python3-torchvision python3-websockets xz-utils)
elif [ -n "${1:-}" ]; then
  echo "install-deps: unknown option '$1' (--test-tools is the only one)" >&2
  exit 2
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all ${#packages[@]} packages present"
  exit 0
fi

echo "install-deps: installing ${missing[*]}"
SUDO=""
[ "$(id -u)" -eq 0 ] || SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
