// Copyright (c) siftdb authors.

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

void BuildClassicBloom(const uint64_t* hashes, size_t n, uint32_t m, int k,
                       std::string* dst) {
  // Out-of-contract arguments are normalized rather than trusted.
  m = m > kClassicMaxBits ? kClassicMaxBits
                          : std::max<uint32_t>(8, (m + 7) & ~uint32_t{7});
  k = std::clamp(k, 1, kMaxProbes);
  const size_t start = dst->size();
  const size_t bytes = size_t{m} / 8;
  dst->resize(start + bytes + kFilterTrailerSize, '\0');
  uint8_t* bits = reinterpret_cast<uint8_t*>(dst->data() + start);
  for (size_t i = 0; i < n; ++i) {
    uint32_t pos = static_cast<uint32_t>(hashes[i]) % m;
    const uint32_t step = static_cast<uint32_t>(hashes[i] >> 32) % m;
    for (int j = 0; j < k; ++j) {
      SetFilterBit(bits, pos);
      const uint64_t next = uint64_t{pos} + step;
      pos = static_cast<uint32_t>(next >= m ? next - m : next);
    }
  }
  FilterTrailer trailer;
  trailer.param = m;
  trailer.k = static_cast<uint8_t>(k);
  trailer.kind = FilterKind::kClassic;
  EncodeFilterTrailer(trailer, dst->data() + start + bytes);
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
