#!/usr/bin/env bash
# Installs what memhier needs to build and test, from the distribution's packages (Debian 12, Ubuntu 24.04).
# Does nothing when everything is already installed. Sourced by quickstart.sh and test.sh.
set -euo pipefail

packages=(build-essential cmake pkg-config libyaml-cpp-dev libeigen3-dev libboost-program-options-dev doctest-dev
          nlohmann-json3-dev libfmt-dev libzstd-dev libmuparser-dev libbenchmark-dev clang libclang-rt-dev
          python3-matplotlib zstd)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if ((${#missing[@]})); then
  echo "memhier setup: installing ${missing[*]}" >&2
  sudo=()
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { echo "memhier setup: need root or sudo to install ${missing[*]}" >&2; exit 1; }
    sudo=(sudo)
  fi
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get update -qq
  "${sudo[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi
