// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Classic whole-array Bloom filter ("siftdb.ClassicBloom"): m bits, k probes
// spread over the whole array by double hashing. Slower than the blocked
// filter (k cache lines per query, two divisions) but with the textbook
// false-positive rate; kept for comparison and for sizes from (n, p).
//
// From the key's 64-bit hash h (filter/filter_hash.h):
//   a = uint32(h), b = uint32(h >> 32)
//   probe i (0 <= i < k) sets bit (a + i * b) mod m
// computed as pos = a mod m, step = b mod m, pos = (pos + step) mod m.
// m is a multiple of 8 (the bit array is m / 8 bytes, every bit usable).
// Bits are in Redis bitmap order (filter/filter_format.h).
// Full specification: docs/filter_format.md.
//
// Thread safety: the free functions are pure; ParsedClassicBloom is an
// immutable view and may be shared across threads; a ClassicBloomWriter
// belongs to one thread.

#ifndef SIFTDB_FILTER_CLASSIC_BLOOM_H_
#define SIFTDB_FILTER_CLASSIC_BLOOM_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "filter/filter_format.h"

namespace siftdb {

// Smallest m siftdb.ClassicBloom builds: tiny filters with a handful of bits
// have a poor false-positive rate for little saving.
inline constexpr uint32_t kClassicMinBits = 64;
// Largest m the 32-bit trailer field holds as a whole number of bytes.
inline constexpr uint32_t kClassicMaxBits = 0xFFFFFFF8u;

// Bits for n keys at bits_per_key: ceil(n * bits_per_key) rounded up to a
// multiple of 8 and clamped to [kClassicMinBits, kClassicMaxBits].
// bits_per_key must be > 0.
uint32_t ClassicBloomNumBits(size_t n, double bits_per_key);

// Lays out a classic filter of m bits and k probes at the end of *dst (bit
// array zeroed and trailer written on construction); Add() sets the probes
// of hashes, in any number of pieces. m should be a multiple of 8 (others
// are rounded up, and clamped to [8, kClassicMaxBits]); k is clamped to
// 1..kMaxProbes. m is a whole number of bytes so that the trailer's m is
// fully determined by (and checked against) the filter's size. *dst must
// outlive the writer and not be changed by anyone else meanwhile. Appends
// m / 8 + kFilterTrailerSize bytes.
class ClassicBloomWriter {
 public:
  ClassicBloomWriter(uint32_t m, int k, std::string* dst);
  ClassicBloomWriter(const ClassicBloomWriter&) = delete;
  ClassicBloomWriter& operator=(const ClassicBloomWriter&) = delete;

  void Add(const uint64_t* hashes, size_t n);

 private:
  std::string* const dst_;
  const size_t offset_;
  const uint32_t m_;
  const int k_;
};

// The filter bit offsets the k probes of `hash` touch, in probe order.
std::vector<uint64_t> ClassicBloomProbeBits(uint64_t hash, uint32_t m, int k);

// A decoded view of a serialized classic filter; the bytes must outlive it.
// Undecodable bytes (empty, truncated, wrong magic/kind/version, k outside
// 1..kMaxProbes, m = 0 or not a multiple of 8, size not m / 8 + 8) give a view
// that answers true for every hash.
class ParsedClassicBloom {
 public:
  ParsedClassicBloom() = default;
  explicit ParsedClassicBloom(std::string_view filter);

  bool valid() const { return bits_ != nullptr; }
  uint32_t num_bits() const { return m_; }
  int k() const { return k_; }

  bool HashMayMatch(uint64_t hash) const {
    if (bits_ == nullptr) return true;
    uint32_t pos = static_cast<uint32_t>(hash) % m_;
    const uint32_t step = static_cast<uint32_t>(hash >> 32) % m_;
    for (int i = 0; i < k_; ++i) {
      if (!GetFilterBit(bits_, pos)) return false;
      const uint64_t next = uint64_t{pos} + step;  // < 2m, no overflow
      pos = static_cast<uint32_t>(next >= m_ ? next - m_ : next);
    }
    return true;
  }

 private:
  const uint8_t* bits_ = nullptr;
  uint32_t m_ = 0;
  int k_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_FILTER_CLASSIC_BLOOM_H_
