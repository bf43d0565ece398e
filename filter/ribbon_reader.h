// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ParsedRibbon: a decoded view of a serialized Standard Ribbon filter
// ("siftdb.Ribbon", kind 'R'; docs/filter_format.md section 6). Decode once,
// query many times.
//
// Layout: solution words | 8-byte ribbon header | 8-byte common trailer.
// The solution is N blocks of 128 rows; block b holds c_b 128-bit words
// (16 bytes each: low 64 bits then high 64 bits, little-endian), word j
// being result column j of its 128 rows (bit i = row 128 b + i). Blocks
// b < U hold r columns, blocks b >= U hold r + 1. A key (ribbon_hash.h)
// with start row s matches iff for every column j < c_{s / 128} the parity
// of (coefficient AND solution rows s .. s + 127 of column j) equals its
// result bit j.
//
// Any inconsistency (size, kind, version, width, reserved bytes, r or U out
// of range) gives a view that answers true for every hash.
//
// Ownership: the filter bytes must outlive the view. Thread safety:
// immutable; share freely. Copyable (a few words).

#ifndef SIFTDB_FILTER_RIBBON_READER_H_
#define SIFTDB_FILTER_RIBBON_READER_H_

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

#include "filter/filter_format.h"
#include "filter/ribbon_hash.h"

namespace siftdb {

// Persisted (never change).
inline constexpr size_t kRibbonHeaderSize = 8;
inline constexpr size_t kRibbonWordBytes = 16;
// Result columns of any block: the result hash has 32 bits.
inline constexpr int kRibbonMaxColumns = 32;

// The ribbon header (8 bytes, just before the common trailer):
//   offset 0..3  uint32  upper_start  U: first block with r + 1 columns
//   offset 4     uint8   seed         the hash seed that banded
//   offset 5     uint8   width        128 (rows per block)
//   offset 6..7  uint8   reserved     0, 0
struct RibbonLayout {
  uint32_t num_blocks = 0;   // N >= 1
  uint32_t upper_start = 0;  // U <= N
  int lower_columns = 0;     // r, 1 .. kRibbonMaxColumns - 1
  uint8_t seed = 0;
  // Solution words before block b (b * r, plus one per upper block before
  // b; written without a branch: queries choose b at random).
  uint64_t WordsBefore(uint64_t b) const {
    return b * lower_columns + (b > upper_start ? b - upper_start : 0);
  }
  uint64_t NumStarts() const {
    return uint64_t{num_blocks} * kRibbonWidth - (kRibbonWidth - 1);
  }
  // Total serialized size.
  uint64_t FilterBytes() const {
    return WordsBefore(num_blocks) * kRibbonWordBytes + kRibbonHeaderSize +
           kFilterTrailerSize;
  }
};

// Writes the header and trailer (16 bytes) at dst.
void EncodeRibbonTail(const RibbonLayout& layout, char* dst);
// Decodes and checks header and trailer against filter.size(). False on any
// inconsistency.
bool DecodeRibbonLayout(std::string_view filter, RibbonLayout* layout);

class ParsedRibbon {
 public:
  // An always-"may match" view.
  ParsedRibbon() = default;
  explicit ParsedRibbon(std::string_view filter) {
    if (DecodeRibbonLayout(filter, &layout_)) {
      words_ = reinterpret_cast<const uint8_t*>(filter.data());
      num_starts_ = layout_.NumStarts();
    }
  }

  bool valid() const { return words_ != nullptr; }
  const RibbonLayout& layout() const { return layout_; }

  // False only when `hash`'s key was certainly not added.
  bool HashMayMatch(uint64_t hash) const {
    if (words_ == nullptr) return true;
    const uint64_t a = RibbonStartHash(hash, layout_.seed);
    const uint64_t s = RibbonStart(a, num_starts_);
    const RibbonRow coeff = RibbonCoeff(a);
    const uint32_t result = RibbonResult(a);
    const uint64_t b = s / kRibbonWidth;
    const unsigned o = static_cast<unsigned>(s % kRibbonWidth);
    const bool upper = b >= layout_.upper_start;
    const int cols = layout_.lower_columns + (upper ? 1 : 0);
    const uint8_t* w = words_ + layout_.WordsBefore(b) * kRibbonWordBytes;
    // Rows s .. s+127: bits o.. of block b, then bits ..o-1 of block b + 1
    // (whose first `cols` words follow block b's directly; when o == 0 it
    // may not exist: c1 is 0 and block b's words are read instead).
    const RibbonRow c0 = coeff << o;
    const RibbonRow c1 = o == 0 ? 0 : coeff >> (kRibbonWidth - o);
    const uint8_t* next = o == 0 ? w : w + cols * kRibbonWordBytes;
    auto column_mismatch = [&](int j) -> uint32_t {
      const RibbonRow x = (c0 & Load(w + j * kRibbonWordBytes)) ^
                          (c1 & Load(next + j * kRibbonWordBytes));
      return (Parity(x) ^ (result >> j)) & 1;
    };
    // An absent key fails each column with probability 1/2. Testing the
    // first (up to) three columns without branching, then stopping, makes
    // the one data-dependent branch right 7 times in 8 for absent keys.
    const int first = cols < 3 ? cols : 3;
    uint32_t mismatch = 0;
    int j = 0;
    for (; j < first; ++j) mismatch |= column_mismatch(j);
    if (mismatch != 0) return false;
    for (; j < cols; ++j) mismatch |= column_mismatch(j);
    return mismatch == 0;
  }

  static RibbonRow Load(const uint8_t* p) {
    uint64_t lo, hi;
    std::memcpy(&lo, p, 8);
    std::memcpy(&hi, p + 8, 8);
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    lo = __builtin_bswap64(lo);
    hi = __builtin_bswap64(hi);
#endif
    return (RibbonRow{hi} << 64) | lo;
  }
  static uint32_t Parity(RibbonRow x) {
    return static_cast<uint32_t>(__builtin_parityll(
        static_cast<uint64_t>(x) ^ static_cast<uint64_t>(x >> 64)));
  }

 private:
  const uint8_t* words_ = nullptr;  // null: always may match
  RibbonLayout layout_;
  uint64_t num_starts_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_FILTER_RIBBON_READER_H_
