#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Clang's thread-safety analysis over the library: every source file of the
# modules (docs/architecture.md) is parsed with
# `clang++ -fsyntax-only -Wthread-safety -Werror`, so the ABSL_GUARDED_BY /
# ABSL_EXCLUSIVE_LOCKS_REQUIRED annotations must hold. No object code is
# made (a syntax-only pass takes about a minute on 2 cores). Exits 1 on the
# first file with a finding, printing clang's report.
set -euo pipefail
cd "$(dirname "$0")/.."
CLANGXX=${CLANGXX:-clang++}
if ! command -v "$CLANGXX" >/dev/null; then
  echo "thread_safety: $CLANGXX not found (scripts/setup.sh installs clang)" >&2
  exit 2
fi
mapfile -t sources < <(ls util/*.cc util/testing/*.cc wal/*.cc filter/*.cc \
  table/*.cc db/*.cc db/mirror/*.cc redis/client/*.cc redis/bloom/*.cc \
  redis/mirror/*.cc redis/server/*.cc c/*.cc)
read -r -a hiredis_includes <<<"$(pkg-config --cflags-only-I hiredis)"
flags=(-std=c++20 -fsyntax-only -Wthread-safety -Werror -Iinclude -I.
       -DSIFTDB_WITH_REDIS=1
       "${hiredis_includes[@]}")
printf '%s\n' "${sources[@]}" |
  xargs -P "$(nproc)" -I{} "$CLANGXX" "${flags[@]}" {}
echo "thread_safety: ${#sources[@]} files clean"
