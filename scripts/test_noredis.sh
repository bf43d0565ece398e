#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# Builds siftdb with -DSIFTDB_WITH_REDIS=OFF into build-noredis/ (or
# $BUILD_DIR) and runs its tests. To prove the engine needs no hiredis, the
# configure step sees a pkg-config path that holds only the other libraries
# the engine finds through pkg-config (hiredis cannot be found even though it
# is installed), and afterwards no program
# or library built may link libhiredis or carry a hiredis symbol. The
# library, every tool, db_bench, the microbenchmarks and the examples are
# built. Of the GoogleTest suites only those whose code depends on the
# configuration are built and run (SIFTDB_TEST_SUITES, default below): errors
# (Options::remote_filter answers FailedPrecondition; the error catalogue
# without its Redis rows), crash (the cycles without a mirror) and tools (the
# tools built without sift_bf / sift_probe). The other suites compile the
# same engine sources as the main build, which runs them, and the C API and
# installed-package checks run here too (the source-tree checks do not). The test suites compile as
# unity batches (SIFTDB_UNITY_TESTS, CMakeLists.txt): a from-scratch build,
# so batching only saves time here. SIFTDB_TEST_SUITES="" builds and runs
# every suite, as before 2026-12-02 (507 s in CI then). Everything compiles
# at -O1 -g1 (NOREDIS_FLAGS overrides): this build proves what links and
# what runs without Redis, not how fast. With both changes the step took
# 199-200 s in CI (2026-12-03).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
BUILD_DIR=${BUILD_DIR:-build-noredis}

pc_only=$(mktemp -d)
trap 'rm -rf "$pc_only"' EXIT
# Keep in step with the pkg_check_modules calls in CMakeLists.txt.
for module in libxxhash liblz4 libzstd; do
  ln -s "$(pkg-config --variable=pcfiledir "$module")/$module.pc" \
    "$pc_only/$module.pc"
done
PKG_CONFIG_LIBDIR=$pc_only PKG_CONFIG_PATH="" \
  BUILD_DIR=$BUILD_DIR bash scripts/build.sh -DSIFTDB_WITH_REDIS=OFF \
  -DSIFTDB_BUILD_BENCH=ON -DSIFTDB_UNITY_TESTS=ON \
  "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=${NOREDIS_FLAGS--O1 -g1 -DNDEBUG}" \
  "-DSIFTDB_TEST_SUITES=${SIFTDB_TEST_SUITES-errors;crash;tools}"

bad=0
while IFS= read -r f; do
  if ldd "$f" 2>/dev/null | grep -q hiredis; then
    echo "test_noredis: $f links libhiredis" >&2
    bad=1
  fi
done < <(find "$BUILD_DIR" -type f -perm -u+x -name '*' ! -name '*.so*' \
           -exec sh -c 'head -c 4 "$1" | grep -q ELF' _ {} \; -print)
if nm -C "$BUILD_DIR/libsiftdb.a" | grep -qiE ' [TU] .*(redis[A-Z]|hiredis)'; then
  echo "test_noredis: libsiftdb.a refers to hiredis" >&2
  bad=1
fi
for absent in sift_bf sift_probe; do
  if [[ -e $BUILD_DIR/tools/$absent ]]; then
    echo "test_noredis: $absent was built without Redis" >&2
    bad=1
  fi
done
((bad == 0)) || exit 1
echo "test_noredis: nothing links hiredis"

cd "$BUILD_DIR"
# The tree checks (label "tree": module arrows, SPDX headers) read only the
# sources, which the main build's tests already checked.
ctest --output-on-failure -j"$(nproc)" --timeout 600 -LE '^tree$' "$@"
