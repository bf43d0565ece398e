// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Bloom filter arithmetic shared by the local filters (blocked and classic)
// and usable by any other filter implementation (e.g. a RedisBloom-compatible
// one). Plain functions of numbers: no keys, no bits, no state.
//
// Notation: n keys, m bits, bpk = m / n bits per key, k probes per key,
// p false-positive rate.
//
// Thread safety: pure functions. Inputs out of range (n = 0, p outside
// (0, 1), bpk <= 0, NaN) never crash; each function says what it returns.

#ifndef SIFTDB_FILTER_BLOOM_MATH_H_
#define SIFTDB_FILTER_BLOOM_MATH_H_

#include <cstdint>

namespace siftdb {

// --- Classic (whole-array) Bloom ---

// Bits per key that minimizes size for a target rate p:
// -ln(p) / (ln 2)^2 (about 9.585 for p = 1%). 0 when p >= 1 or p is NaN;
// p <= 0 is treated as the smallest positive double.
double ClassicBitsPerKeyForRate(double p);

// The real-valued optimal probe count (m / n) ln 2 for a given bpk.
double ClassicOptimalKExact(double bits_per_key);

// (m / n) ln 2 rounded to the nearest integer and clamped to [1, 30]
// (what siftdb.ClassicBloom uses). 1 for bpk <= 0 or NaN.
int ClassicOptimalK(double bits_per_key);

struct BloomSize {
  uint64_t bits = 0;  // m
  int k = 0;
};

// The seed formulas: m = ceil(-n ln p / (ln 2)^2), k = ClassicOptimalK(m/n).
// n = 0 gives {0, ClassicOptimalK(bpk for p)}; p out of (0, 1) as above.
BloomSize ClassicSizeForRate(uint64_t n, double p);

// Expected false-positive rate of a classic Bloom filter with bpk bits per
// key and k probes, (1 - e^{-k / bpk})^k. 1 when bpk <= 0 or k < 1.
double ClassicFpRate(double bits_per_key, int k);

// The same for exact m and n: (1 - (1 - 1/m)^{k n})^k.
double ClassicFpRateExact(uint64_t m_bits, uint64_t n, int k);

// --- Blocked Bloom (all probes of a key in one block of block_bits) ---

// Expected false-positive rate of a blocked Bloom filter: the block a key
// falls in holds a Poisson(block_bits / bpk) number of keys j, and within a
// block the filter is a classic one of block_bits bits:
//   sum_j Poisson(j; block_bits / bpk) * (1 - (1 - 1/block_bits)^{j k})^k.
// 1 when bpk <= 0, k < 1 or block_bits == 0.
double BlockedFpRate(double bits_per_key, int k, uint32_t block_bits = 512);

// The k in [1, 30] that minimizes BlockedFpRate(bpk, k, block_bits) (the
// smallest such k on a tie). For 512-bit blocks it is a little below
// bpk ln 2, e.g. 7 at 10 bpk (see the table in docs/filter_format.md).
// 1 for bpk <= 0 or NaN.
int BlockedOptimalK(double bits_per_key, uint32_t block_bits = 512);

}  // namespace siftdb

#endif  // SIFTDB_FILTER_BLOOM_MATH_H_
