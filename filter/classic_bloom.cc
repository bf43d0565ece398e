// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "filter/classic_bloom.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace siftdb {

uint32_t ClassicBloomNumBits(size_t n, double bits_per_key) {
  const double bits = std::ceil(static_cast<double>(n) * bits_per_key);
  if (!(bits >= kClassicMinBits)) return kClassicMinBits;  // also NaN
  if (bits >= static_cast<double>(kClassicMaxBits)) return kClassicMaxBits;
  // Round up to whole bytes.
  return (static_cast<uint32_t>(bits) + 7) & ~uint32_t{7};
}

namespace {

// Out-of-contract sizes are normalized rather than trusted.
uint32_t NormalizeBits(uint32_t m) {
  if (m > kClassicMaxBits) return kClassicMaxBits;
  return std::max<uint32_t>(8, (m + 7) & ~uint32_t{7});
}

}  // namespace

ClassicBloomWriter::ClassicBloomWriter(uint32_t m, int k, std::string* dst)
    : dst_(dst),
      offset_(dst->size()),
      m_(NormalizeBits(m)),
      k_(std::clamp(k, 1, kMaxProbes)) {
  const size_t bytes = size_t{m_} / 8;
  dst_->resize(offset_ + bytes + kFilterTrailerSize, '\0');
  FilterTrailer trailer;
  trailer.param = m_;
  trailer.k = static_cast<uint8_t>(k_);
  trailer.kind = FilterKind::kClassic;
  EncodeFilterTrailer(trailer, dst_->data() + offset_ + bytes);
}

void ClassicBloomWriter::Add(const uint64_t* hashes, size_t n) {
  uint8_t* bits = reinterpret_cast<uint8_t*>(dst_->data() + offset_);
  for (size_t i = 0; i < n; ++i) {
    uint32_t pos = static_cast<uint32_t>(hashes[i]) % m_;
    const uint32_t step = static_cast<uint32_t>(hashes[i] >> 32) % m_;
    for (int j = 0; j < k_; ++j) {
      SetFilterBit(bits, pos);
      const uint64_t next = uint64_t{pos} + step;  // < 2m, no overflow
      pos = static_cast<uint32_t>(next >= m_ ? next - m_ : next);
    }
  }
}

std::vector<uint64_t> ClassicBloomProbeBits(uint64_t hash, uint32_t m, int k) {
  std::vector<uint64_t> out;
  if (m == 0) return out;
  const uint64_t a = static_cast<uint32_t>(hash);
  const uint64_t b = hash >> 32;
  for (int i = 0; i < k; ++i) {
    out.push_back((a + uint64_t(i) * b) % m);  // the textbook form
  }
  return out;
}

ParsedClassicBloom::ParsedClassicBloom(std::string_view filter) {
  FilterTrailer t;
  if (!DecodeFilterTrailer(filter, &t)) return;
  if (t.kind != FilterKind::kClassic || t.version != kFilterFormatVersion ||
      t.k < 1 || t.k > kMaxProbes || t.param == 0 || t.param % 8 != 0) {
    return;
  }
  if (filter.size() - kFilterTrailerSize != uint64_t{t.param} / 8) {
    return;
  }
  bits_ = reinterpret_cast<const uint8_t*>(filter.data());
  m_ = t.param;
  k_ = t.k;
}

}  // namespace siftdb
