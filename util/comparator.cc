// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// BytewiseComparator: unsigned lexicographic order. Its separator and
// successor rules follow LevelDB's bytewise comparator (shorten at the
// first differing byte when that byte can be bumped without reaching
// limit; successor bumps the first byte that is not 0xff).

#include "siftdb/comparator.h"

#include <algorithm>
#include <string>
#include <string_view>

#include "util/compare_bytes.h"

namespace siftdb {
namespace {

class BytewiseComparatorImpl final : public Comparator {
 public:
  int Compare(std::string_view a, std::string_view b) const override {
    return CompareBytes(a, b);  // unsigned bytes, then length
  }

  // Persisted in every MANIFEST: never change.
  const char* Name() const override { return "siftdb.BytewiseComparator"; }

  void FindShortestSeparator(std::string* start,
                             std::string_view limit) const override {
    const size_t min_length = std::min(start->size(), limit.size());
    size_t diff = 0;
    while (diff < min_length && (*start)[diff] == limit[diff]) diff++;
    if (diff >= min_length) return;  // one is a prefix of the other
    const uint8_t byte = static_cast<uint8_t>((*start)[diff]);
    if (byte < 0xff && byte + 1 < static_cast<uint8_t>(limit[diff])) {
      (*start)[diff] = static_cast<char>(byte + 1);
      start->resize(diff + 1);
    }
  }

  void FindShortSuccessor(std::string* key) const override {
    for (size_t i = 0; i < key->size(); i++) {
      const uint8_t byte = static_cast<uint8_t>((*key)[i]);
      if (byte != 0xff) {
        (*key)[i] = static_cast<char>(byte + 1);
        key->resize(i + 1);
        return;
      }
    }
    // All 0xff (or empty): no shorter successor; leave it alone.
  }
};

}  // namespace

const Comparator* BytewiseComparator() {
  static const Comparator* const singleton = new BytewiseComparatorImpl();
  return singleton;
}

}  // namespace siftdb
