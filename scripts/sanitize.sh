#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Runs the test suites under the sanitizers (CMakePresets.json):
#   asan  every test under AddressSanitizer + UndefinedBehaviorSanitizer
#         (build-asan/): test preset asan-ubsan, then asan-ubsan-heavy (the
#         long tests, without detect_stack_use_after_return; see
#         CMakePresets.json)
#   tsan  the concurrent tests under ThreadSanitizer (preset tsan,
#         build-tsan/; which tests: the tsan test preset's name filter)
#
#   scripts/sanitize.sh [asan|tsan|all]      (default: all)
#
# Prints how long each build and each test run took (CI budgets them).
# Environment: JOBS (ctest parallelism, default nproc), TSAN_TARGETS (the
# test programs built for the tsan part; default the ones holding the
# concurrent tests), CTEST_ARGS (extra ctest arguments, e.g. "-R Cache").
#
# Known, not yet fixed reports are skipped through scripts/ubsan.supp and
# scripts/tsan.supp (each entry says why); any other report fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
what=${1:-all}
JOBS=${JOBS:-$(nproc)}
TSAN_TARGETS=${TSAN_TARGETS:-util_test db_test table_test redis_bloom_test redis_server_test sift_bf mirror_test crash_test db_stress db_crashtest ldb}

case "$what" in
  asan | tsan | all) ;;
  *)
    echo "usage: $0 [asan|tsan|all]" >&2
    exit 2
    ;;
esac

timings=()
failed=()

# run LABEL COMMAND...: runs and records the wall time and the CPU time
# (user + system, children included: on a shared machine the CPU time is
# the steadier figure; wall ~ CPU / cores when the machine is otherwise
# idle). A failure is noted and the script goes on.
run() {
  local label=$1
  shift
  local start rc=0 cpu=?
  start=$(date +%s)
  local tfile
  tfile=$(mktemp)
  if [[ -x /usr/bin/time ]]; then
    /usr/bin/time -f '%U %S' -o "$tfile" "$@" || rc=$?
    cpu=$(awk 'END { if (NF == 2) printf "%d", $1 + $2 }' "$tfile")
  else
    "$@" || rc=$?
  fi
  rm -f "$tfile"
  local took=$(($(date +%s) - start))
  timings+=("$(printf '%-12s wall %6ds  cpu %6ss  %s' "$label" "$took" \
    "${cpu:-?}" "$([[ $rc -eq 0 ]] && echo ok || echo "FAILED ($rc)")")")
  [[ $rc -eq 0 ]] || failed+=("$label")
  return 0
}

if [[ $what == asan || $what == all ]]; then
  cmake --preset asan-ubsan >/dev/null
  run asan-build ninja -C build-asan -j"$JOBS"
  # shellcheck disable=SC2086  # CTEST_ARGS is a list of arguments
  run asan-test ctest --preset asan-ubsan -j"$JOBS" ${CTEST_ARGS:-}
  # shellcheck disable=SC2086
  run asan-heavy ctest --preset asan-ubsan-heavy -j"$JOBS" ${CTEST_ARGS:-}
fi

if [[ $what == tsan || $what == all ]]; then
  cmake --preset tsan >/dev/null
  # shellcheck disable=SC2086  # TSAN_TARGETS is a list of targets
  run tsan-build ninja -C build-tsan -j"$JOBS" $TSAN_TARGETS
  # shellcheck disable=SC2086
  run tsan-test ctest --preset tsan -j"$JOBS" ${CTEST_ARGS:-}
fi

echo "sanitize: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%s\n' "${timings[@]}"
if [[ ${#failed[@]} -gt 0 ]]; then
  echo "sanitize: failed: ${failed[*]}" >&2
  exit 1
fi
