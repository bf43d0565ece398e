// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Builds siftdb's Standard Ribbon filter ("siftdb.Ribbon"; format:
// docs/filter_format.md section 6, reader: ribbon_reader.h) from 64-bit key
// hashes.
//
// Sizing: bits_per_key is a "Bloom equivalent": the filter aims at the
// false-positive rate of a blocked Bloom filter at that many bits per key
// (BlockedFpRate), using r result columns for some blocks and r + 1 for the
// rest so that the average rate matches (2^-r and 2^-(r+1) mixed). Slots are
// n * kRibbonSlotsPerKey rounded up to whole 128-row blocks.
//
// Building: each key's equation (ribbon_hash.h) is banded by on-the-fly
// Gaussian elimination (keys sorted by start row first, so the band is
// walked in order), then back-substituted into the interleaved solution.
// When banding fails the next seed is tried; every few failures the filter
// grows. If kRibbonMaxAttempts attempts fail, nothing is written (an empty
// filter: "may match" for everything).
//
// Thread safety: pure functions; each call uses its own scratch memory.

#ifndef SIFTDB_FILTER_RIBBON_BUILDER_H_
#define SIFTDB_FILTER_RIBBON_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace siftdb {

// Not persisted (readers take everything from the filter): may be tuned.
inline constexpr double kRibbonSlotsPerKey = 1.05;
inline constexpr int kRibbonMaxAttempts = 32;

// Result columns for a Bloom-equivalent bits_per_key (> 0): blocks hold
// lower_columns (r, 1..31) or r + 1 columns; upper_fraction of the keys
// (those starting in the upper blocks) get r + 1.
struct RibbonShape {
  int lower_columns = 1;
  double upper_fraction = 0;
};
RibbonShape RibbonShapeForBitsPerKey(double bits_per_key);

// The expected false-positive rate of a shape (the average of 2^-r and
// 2^-(r+1) weighted by upper_fraction).
double RibbonShapeFpRate(const RibbonShape& shape);

// Blocks for n keys (attempt 0): max(1, ceil(n * kRibbonSlotsPerKey /
// 128)), saturating.
uint32_t RibbonNumBlocks(size_t n);

// Pieces of the hash list: (pointer, count) pairs, read only during the
// call. Repeated hashes are harmless.
using RibbonHashChunks = std::vector<std::pair<const uint64_t*, size_t>>;

// Appends a Ribbon filter over the hashes to *dst. Returns false (and
// appends nothing: an empty, always-"may match" filter) if no attempt
// banded. Statistics for tests and benchmarks when attempts != nullptr.
bool RibbonBuild(const RibbonHashChunks& hashes, const RibbonShape& shape,
                 std::string* dst, int* attempts = nullptr);

}  // namespace siftdb

#endif  // SIFTDB_FILTER_RIBBON_BUILDER_H_
