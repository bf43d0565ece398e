// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/bloom/redis_bloom_probes.h"

namespace siftdb::redis_bloom {

void AddOffsets(RedisArgs* args, const std::vector<HashPair>& h, uint64_t start,
                const LinkSpec& spec) {
  for (size_t i = start; i < h.size(); i++) {
    for (uint32_t r = 0; r < spec.hashes; r++) {
      args->AddUint(RedisBitOffset(ProbeBit(h[i], r, spec.bits)));
    }
  }
}

// Bit arrays up to this many bytes per probe of a batch are tested from a
// copy inside the exists script (mode 'b') rather than with BITFIELD_RO:
// bringing a byte into Lua costs ~1.4 ns (Redis's Lua hashes every byte of
// a new string) against ~300 ns for a BITFIELD probe, and an absent item
// stops at its first zero bit either way. Measured in bench/redis_bloom_bench
// (BM_MExists at capacity 100k vs 2M); see docs/redis_bloom.md section 9.
namespace {

constexpr uint64_t kBulkBytesPerProbe = 32;
// The record holds a 24-bit byte index.
constexpr uint64_t kMaxBulkBytes = uint64_t{1} << 23;

}  // namespace

bool UseBulkProbes(const LinkSpec& spec, uint64_t items) {
  return spec.bytes <= kMaxBulkBytes &&
         spec.bytes <= kBulkBytesPerProbe * items * spec.hashes;
}

std::string BulkProbes(const std::vector<HashPair>& h, const LinkSpec& spec) {
  std::string out(h.size() * spec.hashes * 4, '\0');
  char* p = out.data();
  for (const HashPair& hp : h) {
    for (uint32_t r = 0; r < spec.hashes; r++) {
      const uint64_t x = ProbeBit(hp, r, spec.bits);
      const uint64_t byte = x >> 3;
      *p++ = static_cast<char>(byte & 0xff);
      *p++ = static_cast<char>((byte >> 8) & 0xff);
      *p++ = static_cast<char>((byte >> 16) & 0xff);
      *p++ = static_cast<char>(1u << (x & 7));
    }
  }
  return out;
}

}  // namespace siftdb::redis_bloom
