// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "filter/ribbon_builder.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <limits>
#include <memory>

#include "filter/bloom_math.h"
#include "filter/ribbon_hash.h"
#include "filter/ribbon_reader.h"

namespace siftdb {

namespace {

// Scratch memory for one build, reused across attempts.
struct Scratch {
  std::vector<uint64_t> a;       // remixed hashes, in input order
  std::vector<uint64_t> sorted;  // the same, bucketed by start
  std::vector<uint32_t> counts;
  std::unique_ptr<RibbonRow[]> coeff;  // per slot; 0: empty
  std::unique_ptr<uint32_t[]> result;
  size_t slots = 0;
};

// Orders a[] by its top bits (hence by start row, which is monotonic in a)
// into sorted[]: one counting-sort pass over about n / 32 buckets, enough to
// keep banding's working set in cache.
void BucketByStart(Scratch& s) {
  const size_t n = s.a.size();
  int bits = 0;
  while (bits < 20 && (size_t{1} << (bits + 5)) < n) ++bits;
  s.sorted.resize(n);
  if (bits == 0) {
    std::copy(s.a.begin(), s.a.end(), s.sorted.begin());
    return;
  }
  const int shift = 64 - bits;
  s.counts.assign((size_t{1} << bits) + 1, 0);
  for (uint64_t a : s.a) s.counts[(a >> shift) + 1]++;
  for (size_t i = 1; i < s.counts.size(); ++i) s.counts[i] += s.counts[i - 1];
  for (uint64_t a : s.a) s.sorted[s.counts[a >> shift]++] = a;
}

inline int CountTrailingZeros(RibbonRow x) {
  const uint64_t lo = static_cast<uint64_t>(x);
  return lo != 0 ? std::countr_zero(lo)
                 : 64 + std::countr_zero(static_cast<uint64_t>(x >> 64));
}

// Bands every key; false when some key's equation contradicts the others.
bool Band(Scratch& s, const RibbonLayout& layout) {
  const uint64_t num_starts = layout.NumStarts();
  const uint64_t upper_row = uint64_t{layout.upper_start} * kRibbonWidth;
  const uint32_t lower_mask = (uint32_t{1} << layout.lower_columns) - 1;
  const uint32_t upper_mask = (lower_mask << 1) | 1;
  RibbonRow* coeff = s.coeff.get();
  uint32_t* result = s.result.get();
  for (uint64_t a : s.sorted) {
    uint64_t row = RibbonStart(a, num_starts);
    const uint32_t mask = row >= upper_row ? upper_mask : lower_mask;
    RibbonRow c = RibbonCoeff(a);
    uint32_t r = RibbonResult(a);
    for (;;) {
      if (coeff[row] == 0) {
        coeff[row] = c;
        result[row] = r;
        break;
      }
      c ^= coeff[row];
      r ^= result[row];
      if (c == 0) {
        // Dependent on the keys before it: consistent (a repeated key) or
        // a contradiction in the columns this key is checked on.
        if ((r & mask) != 0) return false;
        break;
      }
      const int tz = CountTrailingZeros(c);
      row += tz;
      c >>= tz;
    }
  }
  return true;
}

// Back-substitution, last row first, into the interleaved solution at out.
// state[j] holds column j of rows i .. i + 127 (bit 0 = row i); when i is
// the first row of a block, state[j] is that block's word j.
void Solve(const Scratch& s, const RibbonLayout& layout, uint8_t* out) {
  const int cols = layout.lower_columns + 1;
  RibbonRow state[kRibbonMaxColumns] = {};
  const uint64_t rows = uint64_t{layout.num_blocks} * kRibbonWidth;
  for (uint64_t i = rows; i-- > 0;) {
    const RibbonRow c = s.coeff[i];
    const uint32_t r = s.result[i];
    for (int j = 0; j < cols; ++j) {
      const RibbonRow t = state[j] << 1;
      state[j] = t | ((ParsedRibbon::Parity(c & t) ^ (r >> j)) & 1);
    }
    if (i % kRibbonWidth == 0) {
      const uint64_t b = i / kRibbonWidth;
      const int bc = layout.lower_columns + (b >= layout.upper_start ? 1 : 0);
      uint8_t* w = out + layout.WordsBefore(b) * kRibbonWordBytes;
      for (int j = 0; j < bc; ++j) {
        uint64_t lo = static_cast<uint64_t>(state[j]);
        uint64_t hi = static_cast<uint64_t>(state[j] >> 64);
        for (int k = 0; k < 8; ++k) {
          w[j * kRibbonWordBytes + k] = static_cast<uint8_t>(lo >> (8 * k));
          w[j * kRibbonWordBytes + 8 + k] = static_cast<uint8_t>(hi >> (8 * k));
        }
      }
    }
  }
}

RibbonLayout MakeLayout(uint32_t num_blocks, const RibbonShape& shape,
                        uint8_t seed) {
  RibbonLayout l;
  l.num_blocks = num_blocks;
  l.lower_columns = shape.lower_columns;
  l.seed = seed;
  const double starts = static_cast<double>(l.NumStarts());
  const double u = std::round((1 - shape.upper_fraction) * starts /
                              static_cast<double>(kRibbonWidth));
  l.upper_start = static_cast<uint32_t>(
      std::clamp(u, 0.0, static_cast<double>(num_blocks)));
  return l;
}

}  // namespace

RibbonShape RibbonShapeForBitsPerKey(double bits_per_key) {
  RibbonShape shape;
  if (!(bits_per_key > 0)) return shape;
  const double fp = BlockedFpRate(bits_per_key, BlockedOptimalK(bits_per_key));
  if (!(fp > 0) || !(fp < 1)) return shape;
  const double r = std::floor(-std::log2(fp));
  shape.lower_columns =
      static_cast<int>(std::clamp(r, 1.0, double{kRibbonMaxColumns - 1}));
  // fp = (1 - f) 2^-r + f 2^-(r+1)  =>  f = 2 (1 - fp 2^r).
  shape.upper_fraction =
      std::clamp(2 * (1 - fp * std::ldexp(1.0, shape.lower_columns)), 0.0, 1.0);
  return shape;
}

double RibbonShapeFpRate(const RibbonShape& shape) {
  const double low = std::ldexp(1.0, -shape.lower_columns);
  return (1 - shape.upper_fraction) * low + shape.upper_fraction * low / 2;
}

uint32_t RibbonNumBlocks(size_t n) {
  const double blocks =
      std::ceil(static_cast<double>(n) * kRibbonSlotsPerKey / kRibbonWidth);
  if (!(blocks >= 1)) return 1;
  if (blocks >= static_cast<double>(std::numeric_limits<uint32_t>::max())) {
    return std::numeric_limits<uint32_t>::max();
  }
  return static_cast<uint32_t>(blocks);
}

bool RibbonBuild(const RibbonHashChunks& hashes, const RibbonShape& in_shape,
                 std::string* dst, int* attempts) {
  RibbonShape shape = in_shape;
  shape.lower_columns =
      std::clamp(shape.lower_columns, 1, kRibbonMaxColumns - 1);
  size_t n = 0;
  for (const auto& [p, count] : hashes) n += count;
  Scratch s;
  s.a.resize(n);
  uint32_t num_blocks = RibbonNumBlocks(n);
  for (int attempt = 0; attempt < kRibbonMaxAttempts; ++attempt) {
    if (attempts != nullptr) *attempts = attempt + 1;
    // Every fourth failure grows the filter by about 1/32.
    if (attempt > 0 && attempt % 4 == 0) {
      num_blocks += std::max<uint32_t>(1, num_blocks / 32);
    }
    const RibbonLayout layout =
        MakeLayout(num_blocks, shape, static_cast<uint8_t>(attempt));
    const size_t slots = size_t{num_blocks} * kRibbonWidth;
    if (slots / kRibbonWidth != num_blocks) return false;  // overflow
    size_t i = 0;
    for (const auto& [p, count] : hashes) {
      for (size_t j = 0; j < count; ++j) {
        s.a[i++] = RibbonStartHash(p[j], layout.seed);
      }
    }
    BucketByStart(s);
    if (slots > s.slots) {
      s.coeff.reset(new RibbonRow[slots]);
      s.result.reset(new uint32_t[slots]);
      s.slots = slots;
    }
    std::fill_n(s.coeff.get(), slots, RibbonRow{0});
    std::fill_n(s.result.get(), slots, 0u);
    if (!Band(s, layout)) continue;
    const size_t offset = dst->size();
    dst->resize(offset + layout.FilterBytes());
    uint8_t* out = reinterpret_cast<uint8_t*>(dst->data() + offset);
    Solve(s, layout, out);
    EncodeRibbonTail(layout,
                     reinterpret_cast<char*>(out) +
                         layout.WordsBefore(num_blocks) * kRibbonWordBytes);
    return true;
  }
  return false;
}

}  // namespace siftdb
