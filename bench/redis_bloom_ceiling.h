// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The ceiling report of redis_bloom_bench: MAdd (lean path) beside the same
// probes sent as one plain BITFIELD SET per batch, and MExists of present
// items beside one plain BITFIELD_RO GET per batch, for filters with 1, 2
// and 4 sub-filters (the newest one sized for 2M items at 1%), as server CPU
// per item (INFO cpu deltas) and wall-clock items/s, interleaved, 3 rounds,
// medians. Both sides hash the same items with the same client code; the
// raw side is one command per batch, so it is the floor of any plain-Redis
// design.
//
// Thread safety: call from one thread; with clients > 1 it runs that many
// threads of its own. Talks to the Redis at `endpoint`.

#ifndef SIFTDB_BENCH_REDIS_BLOOM_CEILING_H_
#define SIFTDB_BENCH_REDIS_BLOOM_CEILING_H_

#include <cstddef>
#include <string>

namespace siftdb {

class RedisClient;

// CPU seconds the server has used (INFO cpu: used_cpu_user + used_cpu_sys;
// 0 when INFO fails). Unlike wall time this hardly moves when other
// processes load the machine.
double ServerCpuSeconds(RedisClient* client);

// Prints the report to stdout. `batches` per measurement on each of
// `clients` connections driven at once (one thread each).
void CeilingReport(const std::string& endpoint, size_t batch, size_t batches,
                   int clients = 1);

}  // namespace siftdb

#endif  // SIFTDB_BENCH_REDIS_BLOOM_CEILING_H_
