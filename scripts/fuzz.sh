#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Builds the libFuzzer targets (clang, -fsanitize=fuzzer,address,undefined)
# in build-fuzz/ and runs each for a bounded time; fails when any target
# finds a crash, a sanitizer report, a leak or a timeout.
#
#   scripts/fuzz.sh [SECONDS_PER_TARGET] [TARGET...]
#
# SECONDS_PER_TARGET defaults to 30; TARGETs default to every fuzz/*_fuzzer.cc
# (names without _fuzzer: log_reader block table filter version_edit
# write_batch redis_mirror). Each target starts from the committed seeds in
# fuzz/corpus/<target>/ (read only) plus what earlier runs found, kept in
# build-fuzz/corpus/<target>/. A finding is saved as
# build-fuzz/artifacts/<target>/crash-* (or leak-*, timeout-*); the log is
# build-fuzz/logs/<target>.log. Replay one with
#   build-fuzz/fuzz/<target>_fuzzer <file>
#
# Environment: BUILD_DIR (default build-fuzz), FUZZ_ARGS (extra libFuzzer
# flags, e.g. "-use_value_profile=1"). docs/fuzzing.md tells how to run
# longer and what was found.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
SECONDS_PER_TARGET=${1:-30}
shift || true
BUILD_DIR=${BUILD_DIR:-build-fuzz}

if ! command -v clang++ >/dev/null 2>&1; then
  echo "fuzz: clang++ not found; run scripts/setup.sh (clang, libclang-rt-14-dev)" >&2
  exit 2
fi

# -O1 with line tables only, as OSS-Fuzz compiles its targets
# (-O1 -gline-tables-only): reports keep file:line. (CI's fuzz step took
# 406 s before and 367-406 s after, 2026-12-03: no measurable saving.)
if [[ ! -f "$BUILD_DIR/build.ninja" ]]; then
  CC=clang CXX=clang++ cmake -S . -B "$BUILD_DIR" -G Ninja \
    -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1 -DNDEBUG" \
    -DSIFTDB_BUILD_FUZZERS=ON -DSIFTDB_SANITIZE=address,undefined \
    -DSIFTDB_SANITIZE_RECOVER=ON -DSIFTDB_BUILD_TESTS=OFF \
    -DSIFTDB_BUILD_BENCH=OFF -DSIFTDB_BUILD_TOOLS=OFF >/dev/null
fi
ninja -C "$BUILD_DIR" -j"$(nproc)" fuzzers >/dev/null

if [[ $# -gt 0 ]]; then
  targets=("$@")
else
  targets=()
  for src in fuzz/*_fuzzer.cc; do
    name=$(basename "$src" _fuzzer.cc)
    targets+=("$name")
  done
fi

# Leaks are findings too; UBSan is recoverable in this build only so that
# the known reports in scripts/ubsan.supp can be skipped: halt on the rest.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-halt_on_error=1:print_stacktrace=1:suppressions=$ROOT/scripts/ubsan.supp}

failed=()
printf '%-14s %8s %10s %6s %s\n' target seconds execs cov result
for t in "${targets[@]}"; do
  bin="$BUILD_DIR/fuzz/${t}_fuzzer"
  if [[ ! -x "$bin" ]]; then
    echo "fuzz: no such target: $t ($bin)" >&2
    failed+=("$t")
    continue
  fi
  mkdir -p "$BUILD_DIR/corpus/$t" "$BUILD_DIR/artifacts/$t" "$BUILD_DIR/logs"
  seeds=()
  [[ -d "fuzz/corpus/$t" ]] && seeds=("fuzz/corpus/$t")
  log="$BUILD_DIR/logs/$t.log"
  start=$(date +%s)
  rc=0
  # shellcheck disable=SC2086  # FUZZ_ARGS is a list of flags
  "$bin" -max_total_time="$SECONDS_PER_TARGET" -timeout=25 \
    -rss_limit_mb=2048 -print_final_stats=1 \
    -artifact_prefix="$BUILD_DIR/artifacts/$t/" ${FUZZ_ARGS:-} \
    "$BUILD_DIR/corpus/$t" "${seeds[@]}" >"$log" 2>&1 || rc=$?
  elapsed=$(($(date +%s) - start))
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  cov=$(grep -o 'cov: [0-9]*' "$log" | tail -1 | cut -d' ' -f2)
  if [[ $rc -eq 0 ]]; then
    result=ok
  else
    result="FAILED (exit $rc; see $log)"
    failed+=("$t")
  fi
  printf '%-14s %8s %10s %6s %s\n' "$t" "$elapsed" "${execs:-?}" "${cov:-?}" "$result"
done

if [[ ${#failed[@]} -gt 0 ]]; then
  echo "fuzz: findings in: ${failed[*]}" >&2
  for t in "${failed[@]}"; do
    ls "$BUILD_DIR/artifacts/$t"/* 2>/dev/null | sed 's/^/  /' >&2 || true
    grep -m3 -E 'ERROR|FUZZ_CHECK|runtime error' "$BUILD_DIR/logs/$t.log" \
      2>/dev/null | sed 's/^/  /' >&2 || true
  done
  exit 1
fi
