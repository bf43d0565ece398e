#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
#
# The BF.* server (sift_bf --serve) under redis-benchmark: single BF.ADD and
# BF.EXISTS requests (not pipelined, -P 1) from 1, 8 and 64 connections,
# beside GET and SET against the same plain redis-server, so the server's
# cost shows next to Redis's own. Starts its own redis-server and sift_bf
# on 127.0.0.1; the load generator shares the machine's cores.
#
# Usage: bench/redis_bloom_serve.sh [BUILD_DIR] [REQUESTS]   (build, 200000)
# SERVE_BATCHES=N sets sift_bf --serve_batches (1).
set -euo pipefail
build=${1:-build}
n=${2:-200000}
rport=${RPORT:-16479}
sport=${SPORT:-16480}
dir=$(mktemp -d)
redis-server --port "$rport" --bind 127.0.0.1 --save '' --appendonly no \
  --dir "$dir" --daemonize yes --pidfile "$dir/redis.pid" >/dev/null
"$build/tools/sift_bf" --redis "127.0.0.1:$rport" --serve "$sport" \
  --serve_batches "${SERVE_BATCHES:-1}" \
  >"$dir/serve.log" 2>&1 &
serve_pid=$!
trap 'kill $serve_pid 2>/dev/null || true; kill "$(cat "$dir/redis.pid")" || true; rm -rf "$dir"' EXIT
sleep 1
rate() {  # port, clients, command...
  local port=$1 c=$2
  shift 2
  redis-benchmark -p "$port" -c "$c" -P 1 -n "$n" -r 100000000 -q "$@" |
    tr '\r' '\n' | grep 'requests per second' | tail -1 |
    sed 's/.*: \([0-9.]*\) requests per second.*/\1/'
}
echo "uptime: $(uptime)"
echo "requests per run: $n; filter f reserved 0.01 / 4,000,000"
printf '%-8s %12s %12s %12s %12s\n' clients "BF.ADD" "BF.EXISTS" \
  "GET(redis)" "SET(redis)"
for c in 1 8 64; do
  redis-cli -p "$rport" FLUSHALL >/dev/null
  redis-cli -p "$sport" BF.RESERVE f 0.01 4000000 >/dev/null
  add=$(rate "$sport" "$c" BF.ADD f __rand_int__)
  exists=$(rate "$sport" "$c" BF.EXISTS f __rand_int__)
  get=$(rate "$rport" "$c" GET k__rand_int__)
  set=$(rate "$rport" "$c" SET k__rand_int__ v)
  printf '%-8s %12s %12s %12s %12s\n' "$c" "$add" "$exists" "$get" "$set"
done
echo "uptime: $(uptime)"
kill -TERM $serve_pid
wait $serve_pid || true
cat "$dir/serve.log"
