#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# The README's first command: set up, build and run the main job
# (db_bench with its default workload; hello_siftdb until db_bench exists).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
BUILD_DIR=${BUILD_DIR:-build}
if [[ -x "$BUILD_DIR/bench/db_bench" ]]; then
  exec "$BUILD_DIR/bench/db_bench" "$@"
fi
exec "$BUILD_DIR/examples/hello_siftdb"
