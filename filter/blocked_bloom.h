// Copyright (c) siftdb authors.
//
// Cache-line-blocked Bloom filter ("siftdb.BlockedBloom"): the bit array is
// a whole number of 64-byte (512-bit) blocks; every probe of a key lands in
// the one block the key's hash selects, so a query reads one cache line
// (plus the trailer, which ParsedBlockedBloom decodes once).
//
// From the key's 64-bit hash h (filter/filter_hash.h):
//   block  = (uint64(h >> 32) * num_blocks) >> 32          (fastrange32)
//   x      = uint32(h)
//   repeat k times: x = x * 0x9E3779B9 (mod 2^32); bit x >> 23 of the block
// Filter bit offset = block * 512 + (x >> 23), in Redis bitmap order
// (filter/filter_format.h). Full specification: docs/filter_format.md.
//
// This file knows hashes and bits only; FilterPolicy glue is in
// filter_policy.cc. Thread safety: the free functions are pure;
// ParsedBlockedBloom is an immutable view and may be shared across threads.

#ifndef SIFTDB_FILTER_BLOCKED_BLOOM_H_
#define SIFTDB_FILTER_BLOCKED_BLOOM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "filter/filter_format.h"

namespace siftdb {

// Persisted (part of the format): never change.
inline constexpr uint32_t kBlockedProbeMultiplier = 0x9E3779B9u;

// The block a hash selects among num_blocks (>= 1): fastrange of the high 32
// bits, so any block count works and every block is equally likely.
inline uint32_t BlockedBloomBlockIndex(uint64_t hash, uint32_t num_blocks) {
  return static_cast<uint32_t>(((hash >> 32) * uint64_t{num_blocks}) >> 32);
}

// Blocks for n keys at bits_per_key: max(1, ceil(n * bits_per_key / 512)),
// saturating at UINT32_MAX. bits_per_key must be > 0.
uint32_t BlockedBloomNumBlocks(size_t n, double bits_per_key);

// Appends to *dst a blocked filter of num_blocks (>= 1) blocks and k
// (1..kMaxProbes) probes holding the n hashes, trailer included:
// num_blocks * 64 + kFilterTrailerSize bytes.
void BuildBlockedBloom(const uint64_t* hashes, size_t n, uint32_t num_blocks,
                       int k, std::string* dst);

// The filter bit offsets the k probes of `hash` touch, in probe order
// (duplicates kept). For tests and documentation.
std::vector<uint64_t> BlockedBloomProbeBits(uint64_t hash, uint32_t num_blocks,
                                            int k);

// A decoded view of a serialized blocked filter. Decode once, query many
// times. The filter bytes must outlive the view. A filter that does not
// decode (empty, truncated, wrong magic/kind/version, k outside
// 1..kMaxProbes, size not num_blocks * 64 + 8) gives a view that answers
// true for every hash. Copyable: it is three words.
class ParsedBlockedBloom {
 public:
  // An always-"may match" view.
  ParsedBlockedBloom() = default;
  explicit ParsedBlockedBloom(std::string_view filter);

  // True when the bytes decoded as a blocked filter.
  bool valid() const { return bits_ != nullptr; }
  uint32_t num_blocks() const { return num_blocks_; }
  int k() const { return k_; }

  // False only when `hash`'s key was certainly not added. Reads one 64-byte
  // block. Probes are evaluated without early exit: for absent keys a
  // data-dependent branch per probe mispredicts more than it saves.
  bool HashMayMatch(uint64_t hash) const {
    if (bits_ == nullptr) return true;
    const uint8_t* block =
        bits_ + size_t{BlockedBloomBlockIndex(hash, num_blocks_)} * kBlockBytes;
    uint32_t x = static_cast<uint32_t>(hash);
    uint32_t all = 1;
    for (int i = 0; i < k_; ++i) {
      x *= kBlockedProbeMultiplier;
      const uint32_t bit = x >> 23;  // 0..511
      all &= static_cast<uint32_t>(block[bit >> 3]) >> (7 - (bit & 7));
    }
    return (all & 1) != 0;
  }

 private:
  const uint8_t* bits_ = nullptr;  // null: always may match
  uint32_t num_blocks_ = 0;
  int k_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_FILTER_BLOCKED_BLOOM_H_
