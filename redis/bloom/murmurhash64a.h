// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// MurmurHash64A: Austin Appleby's public-domain 64-bit MurmurHash2 variant,
// written here from the published algorithm. RedisBloom hashes every item
// with it (notes: docs/redis_bloom.md, "Hash"), so our Redis-backed Bloom
// filter must produce the very same 64-bit values.
//
// The reference reads the input as native 64-bit words; RedisBloom runs on
// little-endian machines, so this implementation always reads little-endian
// words, which gives the reference's values on every host.
//
// Thread safety: a pure function.

#ifndef SIFTDB_REDIS_BLOOM_MURMURHASH64A_H_
#define SIFTDB_REDIS_BLOOM_MURMURHASH64A_H_

#include <cstddef>
#include <cstdint>

namespace siftdb {

// The multiplier of MurmurHash64A; RedisBloom also uses it as the first seed.
inline constexpr uint64_t kMurmurHash64AMultiplier = 0xc6a4a7935bd1e995ULL;

uint64_t MurmurHash64A(const void* data, size_t len, uint64_t seed);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_BLOOM_MURMURHASH64A_H_
