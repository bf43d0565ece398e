// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/bloom/murmurhash64a.h"

#include "util/coding.h"

namespace siftdb {

uint64_t MurmurHash64A(const void* data, size_t len, uint64_t seed) {
  constexpr uint64_t m = kMurmurHash64AMultiplier;
  constexpr int r = 47;
  const char* p = static_cast<const char*>(data);
  uint64_t h = seed ^ (static_cast<uint64_t>(len) * m);

  const size_t words = len / 8;
  for (size_t i = 0; i < words; i++) {
    uint64_t k = DecodeFixed64(p + 8 * i);
    k *= m;
    k ^= k >> r;
    k *= m;
    h ^= k;
    h *= m;
  }

  // The 0..7 trailing bytes, as the low bytes of one little-endian word.
  const unsigned char* tail =
      reinterpret_cast<const unsigned char*>(p + 8 * words);
  const size_t rest = len & 7;
  if (rest != 0) {
    for (size_t i = rest; i-- > 0;) {
      h ^= static_cast<uint64_t>(tail[i]) << (8 * i);
    }
    h *= m;
  }

  h ^= h >> r;
  h *= m;
  h ^= h >> r;
  return h;
}

}  // namespace siftdb
