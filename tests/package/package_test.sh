#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Installs a built siftdb into a temporary prefix and consumes it the two
# ways users do:
#   1. CMake: find_package(siftdb) from a default C++17 project
#      (consumer/), linking siftdb::siftdb and siftdb::siftdb_shared;
#   2. pkg-config: `pkg-config --cflags --libs siftdb` (shared) and
#      `--static` (static), with no -std flag forced by the .pc file.
# Each program opens a DB, writes, reads and iterates with a comparator of
# its own. Also checks what libsiftdb.so exports: the API only (no
# internal class, no absl or std symbol of its own), and its SONAME.
#
# Usage: package_test.sh BUILD_DIR SOURCE_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
src=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/siftdb_package.XXXXXX")
trap 'rm -rf "$work"' EXIT
prefix=$work/prefix
fail() { echo "package_test: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
version=$(sed -n 's/^#define SIFTDB_VERSION_\(MAJOR\|MINOR\|PATCH\) \([0-9]*\)$/\2/p' \
  "$src/include/siftdb/version.h" | paste -sd.)
major=${version%%.*}
lib=$(ls "$prefix"/lib*/libsiftdb.so."$version") || fail "no libsiftdb.so.$version installed"
libdir=$(dirname "$lib")
soname=$(objdump -p "$lib" | awk '/SONAME/ {print $2}')
[[ $soname == "libsiftdb.so.$major" ]] || fail "SONAME is '$soname', want libsiftdb.so.$major"

# Exports: C API functions and namespace siftdb only; nothing internal.
exports=$(nm -DC --defined-only "$lib" | cut -c20-)
if leaked=$(grep -vE '^(siftdb_|siftdb::|(vtable|typeinfo|typeinfo name|VTT) for siftdb::)' <<<"$exports"); then
  fail "libsiftdb.so exports symbols outside the API: $(head -5 <<<"$leaked")"
fi
for internal in DBImpl VersionSet TableCache MemTable RedisClient RedisBloomImpl \
                BlockBuilder LRUCache Arena; do
  if grep -q "siftdb::$internal\b" <<<"$exports"; then
    fail "libsiftdb.so exports internal siftdb::$internal"
  fi
done
for api in 'siftdb::DB::Open' 'siftdb::Version()' 'siftdb::WriteBatch::Put' \
           'siftdb::NewBloomFilterPolicy' 'siftdb_open' 'vtable for siftdb::Iterator'; do
  grep -qF "$api" <<<"$exports" || fail "libsiftdb.so does not export $api"
done

# CMake consumer, default standard C++17.
cmake -S "$src/tests/package/consumer" -B "$work/consumer" -G Ninja \
  -DCMAKE_PREFIX_PATH="$prefix" >/dev/null
ninja -C "$work/consumer" >/dev/null || fail "the CMake consumer does not build"
# Outputs are captured before grep -q reads them: with pipefail, a writer
# still printing when grep -q exits at its match dies of SIGPIPE and fails
# the pipeline (that made this test flaky on ldd's several lines).
out=$("$work/consumer/consumer_static" "$work/db_static") || fail "consumer_static failed"
grep -q "consumer ok $version" <<<"$out" || fail "consumer_static failed: $out"
out=$(LD_LIBRARY_PATH= "$work/consumer/consumer_shared" "$work/db_shared") ||
  fail "consumer_shared failed"
grep -q "consumer ok $version" <<<"$out" || fail "consumer_shared failed: $out"
deps=$(ldd "$work/consumer/consumer_shared")
grep -q "$libdir/libsiftdb.so.$major" <<<"$deps" ||
  fail "consumer_shared is not linked to the installed libsiftdb.so: $deps"

# pkg-config consumer: the .pc forces no -std, so the caller picks C++20.
export PKG_CONFIG_PATH=$libdir/pkgconfig
cflags=$(pkg-config --cflags siftdb)
[[ $cflags != *-std=* ]] || fail "siftdb.pc forces a standard: $cflags"
# shellcheck disable=SC2046
g++ -std=c++20 "$src/tests/package/consumer/main.cc" -o "$work/pc_shared" \
  $cflags $(pkg-config --libs siftdb) || fail "pkg-config (shared) link failed"
out=$(LD_LIBRARY_PATH=$libdir "$work/pc_shared" "$work/db_pc_shared") || out=""
grep -q "consumer ok" <<<"$out" ||
  fail "pkg-config shared consumer failed"
# shellcheck disable=SC2046
g++ -std=c++20 "$src/tests/package/consumer/main.cc" -o "$work/pc_static" \
  $cflags -Wl,-Bstatic -lsiftdb -Wl,-Bdynamic \
  $(pkg-config --static --libs siftdb | sed 's/-lsiftdb//') ||
  fail "pkg-config --static link failed"
out=$("$work/pc_static" "$work/db_pc_static") || out=""
grep -q "consumer ok" <<<"$out" ||
  fail "pkg-config static consumer failed"
# A C++17 program including the C++ API gets one clear error.
echo '#include "siftdb/db.h"' >"$work/old.cc"
if g++ -std=c++17 -fsyntax-only $cflags "$work/old.cc" 2>"$work/old.err"; then
  fail "a C++17 include of siftdb/db.h compiled"
fi
grep -q "need C++20" "$work/old.err" || fail "no clear C++20 error: $(head -3 "$work/old.err")"
echo "package_test: ok (siftdb $version; CMake C++17 consumer, pkg-config shared and static)"
