// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Random: a small, fast, deterministic pseudo-random generator for tests,
// benchmarks and the skiplist's node heights. Not for anything that needs
// unpredictability. The same seed always yields the same sequence, on
// every platform.
//
// Thread safety: none; give each thread its own Random.
// Algorithm: SplitMix64 (Steele, Lea and Flood, 2014), whose output passes
// BigCrush and whose state is one 64-bit word.

#ifndef SIFTDB_UTIL_RANDOM_H_
#define SIFTDB_UTIL_RANDOM_H_

#include <cstdint>

namespace siftdb {

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}

  // 64 uniformly distributed bits.
  uint64_t Next64() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // 32 uniformly distributed bits.
  uint32_t Next() { return static_cast<uint32_t>(Next64() >> 32); }

  // Uniform in [0, n - 1]. REQUIRES n > 0 (0 is answered with 0).
  uint32_t Uniform(uint32_t n) {
    if (n == 0) return 0;
    // Multiply-shift (Lemire): bias below 2^-32, no division.
    return static_cast<uint32_t>((uint64_t{Next()} * n) >> 32);
  }

  // True about once every n calls. REQUIRES n > 0 (n <= 1 is always true).
  bool OneIn(uint32_t n) { return n <= 1 || Uniform(n) == 0; }

  // Skewed towards small numbers: first picks a base uniformly from
  // [0, max_log], then returns a uniform number in [0, 2^base - 1].
  // REQUIRES 0 <= max_log <= 31.
  uint32_t Skewed(int max_log) {
    if (max_log < 0) max_log = 0;
    if (max_log > 31) max_log = 31;
    const uint32_t base = Uniform(static_cast<uint32_t>(max_log) + 1);
    return Uniform(uint32_t{1} << base);
  }

 private:
  uint64_t state_;
};

}  // namespace siftdb

#endif  // SIFTDB_UTIL_RANDOM_H_
