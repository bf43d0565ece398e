// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Deterministic key generators for the filter tests. Header-only; not
// thread-safe (each test owns its generator).

#ifndef SIFTDB_TESTS_FILTER_FILTER_TEST_KEYS_H_
#define SIFTDB_TESTS_FILTER_FILTER_TEST_KEYS_H_

#include <cstdint>
#include <string>

namespace siftdb::test {

// SplitMix64: a tiny, well-mixed, seedable generator (Steele, Lea and
// Flood, 2014); deterministic across platforms, unlike std distributions.
class SplitMix64 {
 public:
  explicit SplitMix64(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
  }
  // Uniform-enough in [0, n) for test purposes; n > 0.
  uint64_t Uniform(uint64_t n) { return Next() % n; }

 private:
  uint64_t state_;
};

// A 16-byte big-endian counter: keys i and i + 1 differ only in the last
// byte or few, the "adjacent keys" a weak filter hash lets through.
inline std::string BigEndianKey(uint64_t i) {
  std::string key(16, '\0');
  for (int j = 0; j < 8; ++j) key[15 - j] = static_cast<char>(i >> (8 * j));
  return key;
}

// `len` random bytes.
inline std::string RandomKey(SplitMix64* rng, size_t len) {
  std::string key(len, '\0');
  for (size_t i = 0; i < len; i += 8) {
    const uint64_t r = rng->Next();
    for (size_t j = 0; j < 8 && i + j < len; ++j) {
      key[i + j] = static_cast<char>(r >> (8 * j));
    }
  }
  return key;
}

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_FILTER_FILTER_TEST_KEYS_H_
