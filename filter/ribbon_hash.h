// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The persisted per-key derivation of siftdb's Standard Ribbon filter
// ("siftdb.Ribbon", docs/filter_format.md section 6): from a key's 64-bit
// hash h (filter/filter_hash.h) and the filter's seed, the row where the
// key's equation starts, its 128-bit coefficient row (bit 0 always 1) and
// its 32 result bits (a filter uses the low r or r + 1 of them).
//
// Persisted: every constant and step here is part of the format; never
// change. Thread safety: pure functions.

#ifndef SIFTDB_FILTER_RIBBON_HASH_H_
#define SIFTDB_FILTER_RIBBON_HASH_H_

#include <cstdint>

namespace siftdb {

// Persisted constants: never change.
inline constexpr uint64_t kRibbonSeedMultiplier = 0x9E3779B97F4A7C15ull;
inline constexpr uint64_t kRibbonCoeffLoAdd = 0xD6E8FEB86659FD93ull;
inline constexpr uint64_t kRibbonCoeffHiAdd = 0xA0761D6478BD642Full;
// Rows per block = coefficient width w.
inline constexpr uint32_t kRibbonWidth = 128;

using RibbonRow = unsigned __int128;

// MurmurHash3's 64-bit finalizer (fmix64): a bijection of 64-bit values.
inline uint64_t RibbonMix(uint64_t x) {
  x ^= x >> 33;
  x *= 0xFF51AFD7ED558CCDull;
  x ^= x >> 33;
  x *= 0xC4CEB9FE1A85EC53ull;
  x ^= x >> 33;
  return x;
}

// a: the first remix, from which the start row and the result bits come.
inline uint64_t RibbonStartHash(uint64_t h, uint8_t seed) {
  return RibbonMix(h + uint64_t{seed} * kRibbonSeedMultiplier);
}

// Start row in [0, num_starts): fastrange64 of a (top 64 bits of the
// 128-bit product).
inline uint64_t RibbonStart(uint64_t a, uint64_t num_starts) {
  return static_cast<uint64_t>((RibbonRow{a} * num_starts) >> 64);
}

// Coefficient row: low word b = mix(a + C1) with bit 0 set, high word
// mix(b' + C2) where b' is b before setting bit 0. Bit i is the coefficient
// of solution row start + i.
inline RibbonRow RibbonCoeff(uint64_t a) {
  const uint64_t b = RibbonMix(a + kRibbonCoeffLoAdd);
  const uint64_t c = RibbonMix(b + kRibbonCoeffHiAdd);
  return (RibbonRow{c} << 64) | RibbonRow{b | 1};
}

// The 32 result bits: the low half of a (bit j is column j's result).
inline uint32_t RibbonResult(uint64_t a) { return static_cast<uint32_t>(a); }

}  // namespace siftdb

#endif  // SIFTDB_FILTER_RIBBON_HASH_H_
