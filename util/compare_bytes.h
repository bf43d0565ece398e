// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// CompareBytes: the bytewise three-way order of std::string_view::compare
// (unsigned bytes, then length), inline and eight bytes at a time.
//
// Keys are short (db_bench's are 16 bytes, most users' under 64), and the
// merging and block iterators compare them several times per step: a call
// to the C library's memcmp, with its size dispatch, cost about 24
// instructions per comparison of 16-byte keys on top of the caller's own
// (callgrind, readseq over 10M keys, 2026-12-03). Two word loads, a byte
// swap and a compare do the same work for each 8 bytes. The MemTable's
// skiplist compares its keys with it too.
//
// Thread safety: a pure function. Returns <0, 0 or >0, with the sign
// std::string_view::compare gives (the magnitude is not specified).

#ifndef SIFTDB_UTIL_COMPARE_BYTES_H_
#define SIFTDB_UTIL_COMPARE_BYTES_H_

#include <algorithm>
#include <bit>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace siftdb {

// The first 8 bytes at p as a number whose order is their bytewise order.
inline uint64_t LoadBigEndian64(const char* p) {
  uint64_t word;
  std::memcpy(&word, p, sizeof(word));
  if constexpr (std::endian::native == std::endian::little) {
    word = __builtin_bswap64(word);
  }
  return word;
}

inline int CompareBytes(std::string_view a, std::string_view b) {
  const size_t common = std::min(a.size(), b.size());
  size_t i = 0;
  for (; i + 8 <= common; i += 8) {
    const uint64_t x = LoadBigEndian64(a.data() + i);
    const uint64_t y = LoadBigEndian64(b.data() + i);
    if (x != y) return x < y ? -1 : +1;
  }
  for (; i < common; i++) {  // fewer than 8 bytes: no call to memcmp
    const uint8_t x = static_cast<uint8_t>(a[i]);
    const uint8_t y = static_cast<uint8_t>(b[i]);
    if (x != y) return x < y ? -1 : +1;
  }
  if (a.size() == b.size()) return 0;
  return a.size() < b.size() ? -1 : +1;
}

}  // namespace siftdb

#endif  // SIFTDB_UTIL_COMPARE_BYTES_H_
