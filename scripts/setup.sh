#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Installs the Debian 12 packages siftdb needs to build, test and benchmark.
# Idempotent: when every package is already present it changes nothing and
# touches no network.
set -euo pipefail

# The Sentinel tests run `redis-server --sentinel` (what Debian's
# redis-sentinel package starts), so redis-server covers them.
PACKAGES=(
  cmake ninja-build g++ pkg-config
  libabsl-dev libsnappy-dev liblz4-dev libzstd-dev libgtest-dev libgmock-dev
  libbenchmark-dev
  libhiredis-dev libxxhash-dev redis-server redis-tools
  libssl-dev openssl
  libevent-dev python3-redis
  clang libclang-rt-14-dev
)
# Optional extras asked for by name, e.g. SIFTDB_EXTRA_PACKAGES="libleveldb-dev".
if [[ -n "${SIFTDB_EXTRA_PACKAGES:-}" ]]; then
  read -r -a extra <<<"${SIFTDB_EXTRA_PACKAGES}"
  PACKAGES+=("${extra[@]}")
fi

missing=()
for p in "${PACKAGES[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  exit 0
fi

SUDO=""
if [[ $(id -u) -ne 0 ]]; then SUDO="sudo"; fi
echo "setup: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
# Debian starts a system redis-server on install; tests run their own on free
# ports, so the system one is not needed.
if command -v systemctl >/dev/null 2>&1; then
  $SUDO systemctl disable --now redis-server >/dev/null 2>&1 || true
fi
