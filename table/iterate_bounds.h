// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// IterateBounds: the user-key range [lower, upper) of a bounded iteration
// (ReadOptions::iterate_lower_bound / iterate_upper_bound), with the user
// comparator that orders it. An absent bound is unbounded on that side;
// lower >= upper is an empty range. The db layer's DBIter enforces the
// bounds key by key; the layers below use them only to avoid reading
// blocks and tables that hold no key of the range.
//
// A plain value: the bound bytes and the comparator are not owned and must
// outlive every copy (ReadOptions documents the same for the caller).

#ifndef SIFTDB_TABLE_ITERATE_BOUNDS_H_
#define SIFTDB_TABLE_ITERATE_BOUNDS_H_

#include <optional>
#include <string>
#include <string_view>

#include "siftdb/comparator.h"
#include "siftdb/options.h"

namespace siftdb {

struct IterateBounds {
  const Comparator* ucmp = nullptr;
  std::optional<std::string_view> lower;
  std::optional<std::string_view> upper;

  // The bounds of `options`, ordered by ucmp.
  static IterateBounds From(const Comparator* ucmp,
                            const ReadOptions& options) {
    return IterateBounds{ucmp, options.iterate_lower_bound,
                         options.iterate_upper_bound};
  }

  // True when at least one bound is set.
  bool active() const { return lower.has_value() || upper.has_value(); }
  // True when no key lies in the range (lower >= upper).
  bool empty() const {
    return lower.has_value() && upper.has_value() &&
           ucmp->Compare(*lower, *upper) >= 0;
  }
  // user_key < lower.
  bool BelowLower(std::string_view user_key) const {
    return lower.has_value() && ucmp->Compare(user_key, *lower) < 0;
  }
  // user_key >= upper.
  bool AtOrAboveUpper(std::string_view user_key) const {
    return upper.has_value() && ucmp->Compare(user_key, *upper) >= 0;
  }
};

// The smallest internal key whose user key is `user_key`: it sorts before
// every entry of that user key, whatever its sequence and type (the
// trailer is all ones), and after every entry of smaller user keys.
std::string SmallestInternalKeyOf(std::string_view user_key);

}  // namespace siftdb

#endif  // SIFTDB_TABLE_ITERATE_BOUNDS_H_
