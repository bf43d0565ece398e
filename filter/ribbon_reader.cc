// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "filter/ribbon_reader.h"

#include "util/coding.h"

namespace siftdb {

void EncodeRibbonTail(const RibbonLayout& layout, char* dst) {
  EncodeFixed32(dst, layout.upper_start);
  dst[4] = static_cast<char>(layout.seed);
  dst[5] = static_cast<char>(kRibbonWidth);
  dst[6] = 0;
  dst[7] = 0;
  FilterTrailer t;
  t.param = layout.num_blocks;
  t.k = static_cast<uint8_t>(layout.lower_columns);
  t.kind = FilterKind::kRibbon;
  EncodeFilterTrailer(t, dst + kRibbonHeaderSize);
}

bool DecodeRibbonLayout(std::string_view filter, RibbonLayout* layout) {
  FilterTrailer t;
  if (!DecodeFilterTrailer(filter, &t)) return false;
  if (t.kind != FilterKind::kRibbon || t.version != kFilterFormatVersion) {
    return false;
  }
  if (filter.size() < kFilterTrailerSize + kRibbonHeaderSize) return false;
  const char* h =
      filter.data() + filter.size() - kFilterTrailerSize - kRibbonHeaderSize;
  RibbonLayout l;
  l.num_blocks = t.param;
  l.lower_columns = t.k;
  l.upper_start = DecodeFixed32(h);
  l.seed = static_cast<uint8_t>(h[4]);
  if (static_cast<uint8_t>(h[5]) != kRibbonWidth || h[6] != 0 || h[7] != 0) {
    return false;
  }
  if (l.num_blocks < 1 || l.upper_start > l.num_blocks || l.lower_columns < 1 ||
      l.lower_columns >= kRibbonMaxColumns) {
    return false;
  }
  if (l.FilterBytes() != filter.size()) return false;
  *layout = l;
  return true;
}

}  // namespace siftdb
