// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
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
// Probe i's x is uint32(h) * 0x9E3779B9^(i+1): the code multiplies by
// precomputed powers so the k probes do not wait on each other, and on CPUs
// with AVX2 tests eight probes per instruction (chosen at run time; the
// answer is identical).
//
// This file knows hashes and bits only; FilterPolicy glue is in
// filter_policy.cc. Thread safety: the free functions are pure;
// ParsedBlockedBloom is an immutable view and may be shared across threads;
// a BlockedBloomWriter belongs to one thread.

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

// x for probe i (0 <= i < 32) is uint32(h) * kBlockedProbePowers.v[i], where
// v[i] = kBlockedProbeMultiplier^(i + 1) mod 2^32.
struct BlockedProbePowers {
  uint32_t v[32];
};
inline constexpr BlockedProbePowers MakeBlockedProbePowers() {
  BlockedProbePowers p{};
  uint32_t x = 1;
  for (int i = 0; i < 32; ++i) {
    x *= kBlockedProbeMultiplier;
    p.v[i] = x;
  }
  return p;
}
alignas(64) inline constexpr BlockedProbePowers kBlockedProbePowers =
    MakeBlockedProbePowers();

// The bit (0..511) inside its block that probe i (0 <= i < 32) of a key sets,
// where lo = uint32(hash). The one definition of the persisted probe rule
// (docs/filter_format.md 2.1): every writer and reader of blocked filters,
// local or mirrored, calls this. Never change.
inline uint32_t BlockedBloomProbeBit(uint32_t lo, int i) {
  return (lo * kBlockedProbePowers.v[i]) >> 23;
}

// Filter-wide bit offsets of the k (<= 32) probes of `hash` in a filter of
// num_blocks (>= 1) blocks, in probe order (duplicates kept), into out[0, k).
inline void BlockedBloomProbeOffsets(uint64_t hash, uint32_t num_blocks, int k,
                                     uint64_t* out) {
  const uint64_t base =
      uint64_t{BlockedBloomBlockIndex(hash, num_blocks)} * kBlockBits;
  const uint32_t lo = static_cast<uint32_t>(hash);
  for (int i = 0; i < k; i++) out[i] = base + BlockedBloomProbeBit(lo, i);
}

// Blocks for n keys at bits_per_key: max(1, ceil(n * bits_per_key / 512)),
// saturating at UINT32_MAX. bits_per_key must be > 0.
uint32_t BlockedBloomNumBlocks(size_t n, double bits_per_key);

// Lays out a blocked filter of num_blocks blocks (0 is taken as 1) and k
// probes (clamped to 1..kMaxProbes) at the end of *dst, whose bit array is
// zeroed and trailer written on construction; Add() sets the probes of
// hashes, any number of times, in pieces. *dst must outlive the writer and
// not be changed by anyone else meanwhile. The result is
// num_blocks * 64 + kFilterTrailerSize bytes appended to *dst.
class BlockedBloomWriter {
 public:
  BlockedBloomWriter(uint32_t num_blocks, int k, std::string* dst);
  BlockedBloomWriter(const BlockedBloomWriter&) = delete;
  BlockedBloomWriter& operator=(const BlockedBloomWriter&) = delete;

  void Add(const uint64_t* hashes, size_t n);

 private:
  std::string* const dst_;
  const size_t offset_;  // where the bit array starts in *dst_
  const uint32_t num_blocks_;
  const int k_;
};

// The filter bit offsets the k probes of `hash` touch, in probe order
// (duplicates kept). For tests and documentation.
std::vector<uint64_t> BlockedBloomProbeBits(uint64_t hash, uint32_t num_blocks,
                                            int k);

// Tests one key's k (1..kMaxProbes) probes against its 64-byte block:
// true iff every probe bit is set. `lo` is uint32(hash).
using BlockedProbeFn = bool (*)(const uint8_t* block, uint32_t lo, int k);
// Portable version.
bool BlockedBloomProbeScalar(const uint8_t* block, uint32_t lo, int k);
// AVX2 version, or nullptr when the CPU (or the build target) lacks AVX2.
BlockedProbeFn BlockedBloomProbeAvx2();
// The fastest version this CPU runs (decided once per process).
BlockedProbeFn BlockedBloomSelectProbe();
inline BlockedProbeFn BlockedBloomBestProbe() {
  static const BlockedProbeFn best = BlockedBloomSelectProbe();
  return best;
}

// A decoded view of a serialized blocked filter. Decode once, query many
// times. The filter bytes must outlive the view. A filter that does not
// decode (empty, truncated, wrong magic/kind/version, k outside
// 1..kMaxProbes, size not num_blocks * 64 + 8) gives a view that answers
// true for every hash. Copyable: it is four words.
class ParsedBlockedBloom {
 public:
  // An always-"may match" view.
  ParsedBlockedBloom() = default;
  // Inline: FilterPolicy::KeyMayMatch decodes on every call.
  explicit ParsedBlockedBloom(std::string_view filter) {
    FilterTrailer t;
    if (!DecodeFilterTrailer(filter, &t)) return;
    if (t.kind != FilterKind::kBlocked || t.version != kFilterFormatVersion ||
        t.k < 1 || t.k > kMaxProbes || t.param == 0 ||
        filter.size() - kFilterTrailerSize != uint64_t{t.param} * kBlockBytes) {
      return;
    }
    bits_ = reinterpret_cast<const uint8_t*>(filter.data());
    probe_ = BlockedBloomBestProbe();
    num_blocks_ = t.param;
    k_ = t.k;
  }

  // True when the bytes decoded as a blocked filter.
  bool valid() const { return bits_ != nullptr; }
  uint32_t num_blocks() const { return num_blocks_; }
  int k() const { return k_; }

  // False only when `hash`'s key was certainly not added. Reads one 64-byte
  // block. All k probes are evaluated (no early exit: for absent keys a
  // data-dependent branch per probe mispredicts more than it saves).
  bool HashMayMatch(uint64_t hash) const {
    if (bits_ == nullptr) return true;
    const uint8_t* block =
        bits_ + size_t{BlockedBloomBlockIndex(hash, num_blocks_)} * kBlockBytes;
    return probe_(block, static_cast<uint32_t>(hash), k_);
  }

  // Starts loading the 64-byte block HashMayMatch(hash) reads, so that a
  // batch of lookups overlaps its cache misses. No effect on answers.
  void Prefetch(uint64_t hash) const {
    if (bits_ == nullptr) return;
    __builtin_prefetch(bits_ +
                       size_t{BlockedBloomBlockIndex(hash, num_blocks_)} *
                           kBlockBytes);
  }

 private:
  const uint8_t* bits_ = nullptr;  // null: always may match
  BlockedProbeFn probe_ = nullptr;
  uint32_t num_blocks_ = 0;
  int k_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_FILTER_BLOCKED_BLOOM_H_
