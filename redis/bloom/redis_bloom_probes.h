// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// How a batch's probes travel to the Redis Bloom filter's Lua scripts
// (docs/redis_bloom.md): as decimal Redis bit offsets, one argument per
// probe (for BITFIELD inside the script), or as one packed block of
// byte-index/mask records that the script tests against a copy of a small
// bit array (probe mode 'b').
//
// Thread safety: pure functions.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_PROBES_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_PROBES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "redis/bloom/redis_bloom_layout.h"
#include "redis/client/redis_reply.h"

namespace siftdb::redis_bloom {

// Appends the Redis bit offsets of every probe of items start.. of h.
void AddOffsets(RedisArgs* args, const std::vector<HashPair>& h, uint64_t start,
                const LinkSpec& spec);

// Whether a batch of `items` probes a sub-filter of `spec` in mode 'b'.
bool UseBulkProbes(const LinkSpec& spec, uint64_t items);

// The 'b' probe block: per item and probe, the byte index (24-bit little
// endian) and the bit's mask in RedisBloom's layout.
std::string BulkProbes(const std::vector<HashPair>& h, const LinkSpec& spec);

}  // namespace siftdb::redis_bloom

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_PROBES_H_
