// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Lua scripts that make every mutating RedisBloom-compatible operation
// atomic on plain Redis (>= 6.0: they use BITFIELD_RO). Each script reads the
// meta hash bf:{NAME}:meta, changes bits in bf:{NAME}:bitmap:<i> and moves
// counts in one server-side step. The client does all hashing and 64-bit
// arithmetic (Lua numbers are doubles) and passes Redis bit offsets; scripts
// only pick, set and test bits. The argument layouts are documented in
// redis_bloom_scripts.cc next to each script and in docs/redis_bloom.md.
//
// Scripts reply {'STALE'} without changing anything when the client's view
// of the filter (incarnation id and layout version, or the room left in the
// newest sub-filter) is out of date; the client refreshes and resends.
//
// Thread safety: the RedisScript objects are immutable singletons.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_SCRIPTS_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_SCRIPTS_H_

#include "redis/client/redis_client.h"

namespace siftdb::redis_bloom {

// Number of fields per sub-filter in the add script's plan.
inline constexpr int kPlanLinkFields = 10;
// ARGV index (1-based) of the first plan field in the add script.
inline constexpr int kAddPlanFirstArg = 10;

const RedisScript& AddScript();         // reserve / add / insert
const RedisScript& ExistsScript();      // read-only membership
const RedisScript& LoadHeaderScript();  // BF.LOADCHUNK key 1 <header>
const RedisScript& LoadDataScript();    // BF.LOADCHUNK key it <data>
const RedisScript& DeleteScript();
const RedisScript& ExpireScript();  // pexpire(at) / persist, every key

// Counting Bloom filter (4-bit counters; redis_counting_bloom_scripts.cc).
const RedisScript& CountingReserveScript();
const RedisScript& CountingUpdateScript();  // add / remove
const RedisScript& CountingReadScript();    // exists / count

// A script of `body` behind the shared prelude (the helpers every script
// above uses: meta, prefix, ktype, token, create_link, ...). The object
// lives for the process.
const RedisScript& MakeScript(const char* body);

}  // namespace siftdb::redis_bloom

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_SCRIPTS_H_
