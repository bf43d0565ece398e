// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The arithmetic of a RedisBloom-compatible scalable Bloom filter: how a
// sub-filter ("link") is sized, how an item is hashed, which bits it probes
// and where those bits sit inside a Redis string. Everything here is pure
// computation shared by the Redis-backed filter (redis/bloom/redis_bloom.cc),
// its dump codec and the tests; none of it touches Redis.
//
// The facts come from RedisBloom 2.8.20 (docs/redis_bloom.md section 1
// states them) and are checked against the vectors recorded from it in
// tests/testdata/redisbloom/:
//   bpe    = -(ln(error) / 0.480453013918201)   (RedisBloom's truncated ln2^2)
//   hashes = ceil(ln2 * bpe)
//   bits   = (uint64)(capacity * bpe), bytes rounded up to whole 64-bit
//            words, then bits = bytes * 8            (NOROUND sizing)
//   a = MurmurHash64A(item, seed 0xc6a4a7935bd1e995), b = MurmurHash64A(item,
//   seed a); probe i is bit (a + i*b) mod bits, 64-bit wrapping arithmetic.
//   Bit x lives in byte x >> 3 under mask 1 << (x & 7) (LSB first).
// The exact expressions matter: the header of a dump stores bpe as a double
// and must match RedisBloom's bit for bit.
//
// Thread safety: pure functions and plain structs.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_LAYOUT_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_LAYOUT_H_

#include <cstdint>
#include <string_view>

#include "absl/status/statusor.h"

namespace siftdb::redis_bloom {

// Chain option flags as stored in a dump header. Persisted: never change.
inline constexpr uint32_t kOptNoRound = 1;     // exact sizing, no power of 2
inline constexpr uint32_t kOptEntsIsBits = 2;  // legacy: capacity given in bits
inline constexpr uint32_t kOptForce64 = 4;     // 64-bit MurmurHash64A hashing
inline constexpr uint32_t kOptNoScaling = 8;   // NONSCALING filter
// Options of every filter RedisBloom (and siftdb) creates.
inline constexpr uint32_t kOptDefault = kOptNoRound | kOptForce64;

// A scaling filter's first link gets error_rate * kTighteningRatio, and every
// new link half the error of the previous one.
inline constexpr double kTighteningRatio = 0.5;

// RedisBloom's defaults for BF.ADD / BF.MADD / BF.INSERT auto-creation.
inline constexpr double kDefaultErrorRate = 0.01;
inline constexpr uint64_t kDefaultCapacity = 100;
inline constexpr uint32_t kDefaultExpansion = 2;

// Limits enforced before Redis is touched.
inline constexpr uint64_t kMaxCapacity = uint64_t{1} << 30;
inline constexpr uint32_t kMaxExpansion = 32768;
// Redis's proto-max-bulk-len default: the largest string a link can live in.
inline constexpr uint64_t kMaxLinkBytes = uint64_t{512} << 20;

// RedisBloom's size accounting for BF.INFO "Size": sizeof(SBChain) plus
// sizeof(SBLink) per link plus the bit arrays (x86-64 values).
inline constexpr uint64_t kChainOverheadBytes = 32;
inline constexpr uint64_t kLinkOverheadBytes = 64;

// The parameters of one link, as RedisBloom stores them in a dump header.
struct LinkSpec {
  uint64_t capacity = 0;  // "entries"
  double error = 0;       // this link's own error rate
  double bpe = 0;         // bits per entry
  uint32_t hashes = 0;
  uint64_t bits = 0;
  uint64_t bytes = 0;
  uint8_t n2 = 0;  // log2(bits) for legacy power-of-two links, else 0
};

// Sizes a link the way RedisBloom does with NOROUND|FORCE64. Errors:
// InvalidArgument for capacity outside [1, 2^30] or error outside (0, 1);
// ResourceExhausted when the bit array would exceed kMaxLinkBytes.
absl::StatusOr<LinkSpec> ComputeLink(uint64_t capacity, double error);

// Same sizing without the capacity limit: used for the links a filter grows
// (capacity x expansion may pass 2^30). Only the byte limit applies.
absl::StatusOr<LinkSpec> ComputeGrownLink(uint64_t capacity, double error);

// Hashes per entry for a given bpe (ceil(ln2 * bpe)); used to validate links
// read from a dump.
uint32_t HashesForBpe(double bpe);
double BitsPerEntry(double error);

struct HashPair {
  uint64_t a = 0;
  uint64_t b = 0;
};

HashPair HashItem(std::string_view item);

// RedisBloom bit index of probe i (0-based) in a link of `bits` bits.
inline uint64_t ProbeBit(const HashPair& h, uint32_t i, uint64_t bits) {
  return (h.a + static_cast<uint64_t>(i) * h.b) % bits;
}

// Redis's SETBIT/GETBIT/BITFIELD count bits from the most significant bit of
// each byte, RedisBloom from the least significant: this maps a RedisBloom
// bit index to the Redis bit offset of the same bit, so that the Redis string
// holds RedisBloom's bytes unchanged. The mapping is its own inverse.
inline uint64_t RedisBitOffset(uint64_t x) {
  return (x & ~uint64_t{7}) | (7 - (x & 7));
}

}  // namespace siftdb::redis_bloom

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_LAYOUT_H_
