// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// SliceTransform: maps a key to its prefix, so that tables and MemTables can
// also hold prefixes in their filters and a prefix seek (ReadOptions::
// prefix_same_as_start, or an upper bound inside the seek target's prefix)
// skips every one whose filter rejects the prefix (docs/prefix_filters.md).
//
// Contract for an implementation:
//   - Transform(k) is only called when InDomain(k) and returns a prefix of
//     k (a view into k's bytes);
//   - keys of one prefix are contiguous in the comparator's order, and
//     InDomain(Transform(k)) holds;
//   - Name() identifies the mapping and is persisted in every table built
//     with it: two transforms that map any key differently must have
//     different names. A table whose filter was built under another name is
//     never used for prefix decisions (it answers "may match").
// Thread safety: immutable once built; shared by every reader and writer.

#ifndef SIFTDB_INCLUDE_SLICE_TRANSFORM_H_
#define SIFTDB_INCLUDE_SLICE_TRANSFORM_H_

#include <cstddef>
#include <memory>
#include <string_view>

#include "siftdb/export.h"

namespace siftdb {

class SIFTDB_EXPORT SliceTransform {
 public:
  virtual ~SliceTransform() = default;
  // Persisted in tables and in the Redis mirror's manifest.
  virtual const char* Name() const = 0;
  // The prefix of `key`; only for keys InDomain.
  virtual std::string_view Transform(std::string_view key) const = 0;
  // Whether `key` has a prefix under this transform. Keys outside the
  // domain are simply not prefix-filtered.
  virtual bool InDomain(std::string_view key) const = 0;
  // True only if every key that begins with `prefix` (a result of
  // Transform) is in the domain and transforms to `prefix` itself. Lets an
  // iterator whose upper bound is the prefix's bytewise successor use
  // prefix filters (docs/prefix_filters.md). The default, false, is always
  // safe.
  virtual bool SameResultWhenAppended(std::string_view prefix) const {
    return false;
  }
};

// The first n bytes; keys shorter than n are outside the domain. Name:
// "siftdb.FixedPrefix.<n>" (persisted).
SIFTDB_EXPORT std::shared_ptr<const SliceTransform> NewFixedPrefixTransform(
    size_t n);
// The first min(n, size) bytes; every key is in the domain. Name:
// "siftdb.CappedPrefix.<n>" (persisted).
SIFTDB_EXPORT std::shared_ptr<const SliceTransform> NewCappedPrefixTransform(
    size_t n);

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_SLICE_TRANSFORM_H_
