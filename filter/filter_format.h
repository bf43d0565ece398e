// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Pieces shared by siftdb's local filter encodings (blocked and classic
// Bloom, Ribbon): the bit order and the 8-byte trailer. The full byte-level
// specification, with test vectors, is docs/filter_format.md.
//
// A serialized filter is
//     bit array (B bytes) | trailer (kFilterTrailerSize = 8 bytes)
// The trailer comes AFTER the bits so that filter bit i is bit offset i of
// the same bytes stored as a Redis string (GETBIT key i).
//
// Bit order (Redis bitmap order, most significant bit first): filter bit i
// is bit (7 - i % 8) of byte i / 8, i.e. byte[i >> 3] & (0x80 >> (i & 7)).
//
// Trailer (fixed little-endian fields, all persisted, never change):
//   offset 0..3  uint32  param   blocked: number of 64-byte blocks
//                                classic: number of bits m
//                                ribbon: number of 128-row blocks
//                                partitioned: number of partitions
//   offset 4     uint8   k       probes per key, 1..kMaxProbes
//                                (ribbon: result columns of the lower
//                                blocks, 1..kRibbonMaxColumns - 1)
//   offset 5     uint8   version kFilterFormatVersion
//   offset 6     uint8   kind    FilterKind ('B', 'C', 'R' or 'P')
//   offset 7     uint8   magic   kFilterMagic ('S')
//
// Thread safety: pure functions over caller-owned memory.

#ifndef SIFTDB_FILTER_FILTER_FORMAT_H_
#define SIFTDB_FILTER_FILTER_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

#include "util/coding.h"

namespace siftdb {

// Persisted constants: never change.
inline constexpr size_t kFilterTrailerSize = 8;
inline constexpr uint8_t kFilterFormatVersion = 1;
inline constexpr uint8_t kFilterMagic = 0x53;  // 'S'
inline constexpr int kMaxProbes = 30;
// Blocked filters: one block is one 64-byte cache line = 512 bits.
inline constexpr size_t kBlockBytes = 64;
inline constexpr uint32_t kBlockBits = 512;

// FilterPolicy names (persisted in table properties; never change). The
// "siftdb." prefix is reserved for the policies in this directory.
inline constexpr char kBlockedBloomPolicyName[] = "siftdb.BlockedBloom";
inline constexpr char kClassicBloomPolicyName[] = "siftdb.ClassicBloom";
inline constexpr char kRibbonPolicyName[] = "siftdb.Ribbon";

// Which encoding a trailer describes. Persisted: never change the values.
enum class FilterKind : uint8_t {
  kBlocked = 0x42,  // 'B'
  kClassic = 0x43,  // 'C'
  kRibbon = 0x52,   // 'R' (readers older than it answer "may match")
  // 'P': partitions of an inner kind plus an index (partitioned_filter.h;
  // readers older than it answer "may match").
  kPartitioned = 0x50,
};

struct FilterTrailer {
  uint32_t param = 0;  // blocks (blocked) or bits (classic)
  uint8_t k = 0;
  uint8_t version = kFilterFormatVersion;
  FilterKind kind = FilterKind::kBlocked;
};

// Writes the 8 trailer bytes at dst.
inline void EncodeFilterTrailer(const FilterTrailer& t, char* dst) {
  EncodeFixed32(dst, t.param);
  dst[4] = static_cast<char>(t.k);
  dst[5] = static_cast<char>(t.version);
  dst[6] = static_cast<char>(t.kind);
  dst[7] = static_cast<char>(kFilterMagic);
}

// Reads the trailer at the end of `filter`. False when the filter is too
// short or the magic byte is wrong; the fields are returned unchecked
// otherwise (each mode validates k, version, kind and size itself).
inline bool DecodeFilterTrailer(std::string_view filter, FilterTrailer* t) {
  if (filter.size() < kFilterTrailerSize) return false;
  const char* p = filter.data() + filter.size() - kFilterTrailerSize;
  if (static_cast<uint8_t>(p[7]) != kFilterMagic) return false;
  t->param = DecodeFixed32(p);
  t->k = static_cast<uint8_t>(p[4]);
  t->version = static_cast<uint8_t>(p[5]);
  t->kind = static_cast<FilterKind>(static_cast<uint8_t>(p[6]));
  return true;
}

// Redis bitmap order (see above).
inline void SetFilterBit(uint8_t* bits, uint64_t i) {
  bits[i >> 3] |= static_cast<uint8_t>(0x80u >> (i & 7));
}
inline bool GetFilterBit(const uint8_t* bits, uint64_t i) {
  return (bits[i >> 3] & (0x80u >> (i & 7))) != 0;
}

}  // namespace siftdb

#endif  // SIFTDB_FILTER_FILTER_FORMAT_H_
