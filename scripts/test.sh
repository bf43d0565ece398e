#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's second command: set up, build and run every test (ctest).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
cd "$BUILD_DIR"
ctest --output-on-failure -j"$(nproc)" --timeout 600
