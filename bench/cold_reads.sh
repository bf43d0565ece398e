#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Point reads from storage: drops the page cache, then runs one db_bench
# read benchmark on an existing DB, optionally inside a memory cgroup so
# that the DB cannot be held in memory. Needs root (drop_caches, cgroups).
#
#   bench/cold_reads.sh DB_BENCH DB NUM BENCHMARK [MEMORY_MB] -- [db_bench flags]
#
# MEMORY_MB 0 (default): no cgroup, the page cache may fill with the DB.
# Example (the table in docs/compaction.md, "Reading tables from storage"):
#   build/bench/db_bench --db=/tmp/cold --num=10000000 \
#     --benchmarks=fillrandom,compact
#   for b in readrandom multireadrandom; do
#     bench/cold_reads.sh build/bench/db_bench /tmp/cold 10000000 $b 200 -- \
#       --reads=20000 --batch_size=32 --advise_random_on_open=1
#   done
set -euo pipefail
if [ $# -lt 4 ]; then
  sed -n '3,16p' "$0" >&2
  exit 2
fi
db_bench=$1 db=$2 num=$3 benchmark=$4
memory_mb=${5:-0}
shift $(($# >= 5 ? 5 : 4))
[ "${1:-}" = "--" ] && shift

if [ "$memory_mb" -gt 0 ]; then
  if [ -d /sys/fs/cgroup/memory ]; then  # cgroup v1
    cg=/sys/fs/cgroup/memory/siftdb_cold_reads
    mkdir -p "$cg"
    echo $((memory_mb << 20)) > "$cg/memory.limit_in_bytes"
    echo $$ > "$cg/tasks"
  else  # cgroup v2
    cg=/sys/fs/cgroup/siftdb_cold_reads
    mkdir -p "$cg"
    echo $((memory_mb << 20)) > "$cg/memory.max"
    echo $$ > "$cg/cgroup.procs"
  fi
fi
sync
echo 3 > /proc/sys/vm/drop_caches
exec "$db_bench" --db="$db" --use_existing_db=1 --num="$num" \
  --benchmarks="$benchmark" "$@"
