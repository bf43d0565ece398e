#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Configures and builds siftdb (release: -O2 -g) into build/ (or $BUILD_DIR).
# Extra arguments go to cmake, e.g. -DSIFTDB_SANITIZE=address.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD_DIR=${BUILD_DIR:-build}
cmake -S . -B "$BUILD_DIR" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@" >/dev/null
ninja -C "$BUILD_DIR" -j"$(nproc)"
