#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Self-test of scripts/check_layers.sh: a small tree that keeps every arrow
# passes, and each kind of broken arrow, added alone, makes it fail naming
# the offending file. Run by ctest (check_layers_selftest).
set -euo pipefail
check="$(cd "$(dirname "$0")" && pwd)/check_layers.sh"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

make_tree() {
  rm -rf "$tmp/t"
  mkdir -p "$tmp/t"/{util,util/testing,wal,filter,table,db/mirror,redis/client,redis/bloom,redis/mirror,include/siftdb,tools/x,tests/x}
  cd "$tmp/t"
  echo '#include "util/coding.h"' >wal/log.cc
  printf '#include "table/block.h"\n#include "wal/log.h"\n#include "siftdb/db.h"\n#include "absl/status/status.h"\n#include "db/remote_mirror.h"\n' >db/db.cc
  printf '#include "db/db.h"\n#include "redis/mirror/w.h"\n#include "redis/client/c.h"\n#include "filter/f.h"\n' >db/mirror/m.cc
  printf '#include <hiredis.h>\n#include "util/coding.h"\n' >redis/client/c.cc
  printf '#include "redis/client/c.h"\n' >redis/bloom/b.cc
  printf '#include "filter/f.h"\n#include "redis/client/c.h"\n' >redis/mirror/w.cc
  printf '#include "db/mirror/m.h"\n#include "redis/bloom/b.h"\n' >tools/x/x.cc
  printf '#include "util/coding.h"\n' >util/testing/fi.cc
  cd - >/dev/null
}

expect() {  # expect pass|fail FILE LINE
  local want=$1 file=$2 line=${3:-}
  make_tree
  if [[ -n $file ]]; then printf '%s\n' "$line" >>"$tmp/t/$file"; fi
  if out=$(bash "$check" "$tmp/t" 2>&1); then got=pass; else got=fail; fi
  if [[ $got != "$want" ]]; then
    echo "check_layers_test: expected $want with '$line' in ${file:-nothing}, got $got:" >&2
    echo "$out" >&2
    exit 1
  fi
  if [[ $want == fail && $out != *"$file"* ]]; then
    echo "check_layers_test: the failure does not name $file: $out" >&2
    exit 1
  fi
}

expect pass "" ""
expect fail filter/f.cc '#include "table/block.h"'
expect fail util/u.cc '#include "wal/log.h"'
expect fail wal/log.cc '#include "filter/f.h"'
expect fail table/t.cc '#include "db/db.h"'
expect fail db/db.cc '#include "db/mirror/remote_mirror_impl.h"'
expect fail db/db.cc '#include "redis/client/c.h"'
expect fail redis/client/c.cc '#include "filter/f.h"'
expect fail redis/bloom/b.cc '#include "filter/f.h"'
expect fail redis/mirror/w.cc '#include "table/t.h"'
expect fail redis/mirror/w.cc '#include "db/db.h"'
expect fail redis/mirror/w.cc '#include <hiredis.h>'
expect fail util/testing/fi.cc '#include "db/db.h"'
expect fail include/siftdb/db.h '#include "db/db_impl.h"'
expect fail table/t.cc '#include "tests/x/helper.h"'
expect pass tests/x/t.cc '#include "db/mirror/m.h"'
expect pass db/mirror/m.cc '#include "table/t.h"'
echo "check_layers_test: ok"
