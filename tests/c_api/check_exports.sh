#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Every function include/siftdb/c.h declares must be marked SIFTDB_EXPORT
# and be a defined, exported symbol of the shared library. Exits 1 listing
# the functions that are not.
#
# Usage: check_exports.sh path/to/c.h path/to/libsiftdb.so
set -euo pipefail
header=$1
library=$2

# Declarations: "siftdb_name(" at a line's start or after a return type.
# Comments dropped, then joined per statement (up to ';') so multi-line
# declarations count once.
statements=$(sed 's|//.*||' "$header" | tr '\n' ' ' | tr ';' '\n')
declared=$(grep -oE '\bsiftdb_[a-z0-9_]+\(' <<<"$statements" | tr -d '(' |
  sort -u)
unmarked=$(grep -E '\bsiftdb_[a-z0-9_]+\(' <<<"$statements" | grep -v 'SIFTDB_EXPORT' |
  grep -oE '\bsiftdb_[a-z0-9_]+\(' | tr -d '(' | sort -u || true)
exported=$(nm -D --defined-only "$library" | awk '$2 == "T" { print $3 }' |
  sort -u)

failures=0
count=0
for name in $declared; do
  count=$((count + 1))
  if ! grep -qx "$name" <<<"$exported"; then
    echo "check_exports: $name is not exported by $library" >&2
    failures=$((failures + 1))
  fi
done
for name in $unmarked; do
  echo "check_exports: $name is declared without SIFTDB_EXPORT" >&2
  failures=$((failures + 1))
done
if ((count < 50)); then
  echo "check_exports: only $count functions found in $header" >&2
  failures=$((failures + 1))
fi
((failures == 0)) || exit 1
echo "check_exports: ok ($count functions)"
