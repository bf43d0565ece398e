// Copyright (c) siftdb authors.

#include "filter/blocked_bloom.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace siftdb {

namespace {

// Sets the k probe bits of `hash` in its block.
inline void AddHash(uint64_t hash, uint8_t* block, int k) {
  uint32_t x = static_cast<uint32_t>(hash);
  for (int i = 0; i < k; ++i) {
    x *= kBlockedProbeMultiplier;
    SetFilterBit(block, x >> 23);
  }
}

}  // namespace

uint32_t BlockedBloomNumBlocks(size_t n, double bits_per_key) {
  const double blocks =
      std::ceil(static_cast<double>(n) * bits_per_key / kBlockBits);
  if (!(blocks >= 1)) return 1;  // also NaN
  if (blocks >= static_cast<double>(std::numeric_limits<uint32_t>::max())) {
    return std::numeric_limits<uint32_t>::max();
  }
  return static_cast<uint32_t>(blocks);
}

void BuildBlockedBloom(const uint64_t* hashes, size_t n, uint32_t num_blocks,
                       int k, std::string* dst) {
  // Out-of-contract arguments are normalized rather than trusted.
  num_blocks = std::max<uint32_t>(num_blocks, 1);
  k = std::clamp(k, 1, kMaxProbes);
  const size_t start = dst->size();
  const size_t bytes = size_t{num_blocks} * kBlockBytes;
  dst->resize(start + bytes + kFilterTrailerSize, '\0');
  uint8_t* bits = reinterpret_cast<uint8_t*>(dst->data() + start);
  // Blocks are random cache lines: prefetch a few keys ahead so the misses
  // overlap instead of serializing.
  constexpr size_t kPrefetchDistance = 8;
  for (size_t i = 0; i < n; ++i) {
    if (i + kPrefetchDistance < n) {
      __builtin_prefetch(
          bits + size_t{BlockedBloomBlockIndex(hashes[i + kPrefetchDistance],
                                               num_blocks)} *
                     kBlockBytes,
          /*rw=*/1);
    }
    AddHash(hashes[i],
            bits + size_t{BlockedBloomBlockIndex(hashes[i], num_blocks)} *
                       kBlockBytes,
            k);
  }
  FilterTrailer trailer;
  trailer.param = num_blocks;
  trailer.k = static_cast<uint8_t>(k);
  trailer.kind = FilterKind::kBlocked;
  EncodeFilterTrailer(trailer, dst->data() + start + bytes);
}

std::vector<uint64_t> BlockedBloomProbeBits(uint64_t hash, uint32_t num_blocks,
                                            int k) {
  std::vector<uint64_t> out;
  if (num_blocks == 0) return out;
  const uint64_t base =
      uint64_t{BlockedBloomBlockIndex(hash, num_blocks)} * kBlockBits;
  uint32_t x = static_cast<uint32_t>(hash);
  for (int i = 0; i < k; ++i) {
    x *= kBlockedProbeMultiplier;
    out.push_back(base + (x >> 23));
  }
  return out;
}

ParsedBlockedBloom::ParsedBlockedBloom(std::string_view filter) {
  FilterTrailer t;
  if (!DecodeFilterTrailer(filter, &t)) return;
  if (t.kind != FilterKind::kBlocked || t.version != kFilterFormatVersion ||
      t.k < 1 || t.k > kMaxProbes || t.param == 0) {
    return;
  }
  if (filter.size() - kFilterTrailerSize != uint64_t{t.param} * kBlockBytes) {
    return;
  }
  bits_ = reinterpret_cast<const uint8_t*>(filter.data());
  num_blocks_ = t.param;
  k_ = t.k;
}

}  // namespace siftdb
