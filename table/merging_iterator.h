// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// NewMergingIterator: the sorted union of several sorted iterators (the
// MemTables and tables of a database), forward and backward, switching
// direction at any point.
//
// Order: entries are yielded by key; entries with equal keys in different
// children come in child order (children[0] first when moving forward,
// last when moving backward), so the merge is a total order over
// (key, child index) and is exact under direction changes even when keys
// repeat across children. REQUIRES: within one child, keys are unique and
// increasing (true of internal keys).
//
// Errors are fail-stop and sticky: once any child reports an error, the
// merging iterator is invalid and status() returns that error.
//
// Cost: the valid children form a binary heap in the current direction, so
// a step costs O(log n) key comparisons (about two when the child that just
// moved stays in front); Seek and direction changes touch every child (a
// probing merge, below, may skip some on Seek).
// Thread safety: one thread at a time. The comparator is not owned and must
// outlive the iterator.

#ifndef SIFTDB_TABLE_MERGING_ITERATOR_H_
#define SIFTDB_TABLE_MERGING_ITERATOR_H_

#include <functional>
#include <memory>
#include <optional>
#include <string_view>
#include <vector>

#include "siftdb/comparator.h"
#include "siftdb/iterator.h"
#include "table/internal_key.h"

namespace siftdb {

// Takes ownership of the children (null entries are ignored). With no
// children: an empty iterator; with one: that child itself.
std::unique_ptr<Iterator> NewMergingIterator(
    const Comparator* comparator,
    std::vector<std::unique_ptr<Iterator>> children);

// A cheap test a probing merge runs before positioning a child for
// Seek(target), where target is an internal key: false only when the child
// certainly holds no entry whose user key is target's (e.g. its Bloom
// filter says so). It may say true wrongly, never false wrongly.
using ChildProbe = std::function<bool(std::string_view target)>;

// As NewMergingIterator, over internal keys, with one probe per child
// (null: none). Seek(target) positions only the children whose probe says
// "maybe"; when the merge then starts at an entry with target's user key
// (a point-like seek of a key that exists), the others stay unpositioned
// until the merge moves past it (Next or Prev), since each of their first
// entries at or after target has a larger user key. Otherwise they are
// positioned before Seek returns. The result is exactly that of
// NewMergingIterator; only the work differs: a seek of an existing key
// reads data blocks of the children that may hold it and no others.
std::unique_ptr<Iterator> NewProbingMergingIterator(
    const InternalKeyComparator* comparator,
    std::vector<std::unique_ptr<Iterator>> children,
    std::vector<ChildProbe> probes);

// Prefix seeks. SeekPrefix(target) returns the prefix that every entry the
// caller will read after Seek(target) has (a view into target), or nullopt
// when the caller may read past it (a total-order seek). A ChildPrefixProbe
// (target, prefix) is false only when the child certainly holds no entry at
// or after target whose user key has that prefix.
using SeekPrefix =
    std::function<std::optional<std::string_view>(std::string_view target)>;
using ChildPrefixProbe =
    std::function<bool(std::string_view target, std::string_view prefix)>;

// As above, and on a Seek whose SeekPrefix is set, the children whose
// prefix probe says no are left out until the next Seek, SeekToFirst,
// SeekToLast or change of direction (Prev), which repositions every
// child. Moving forward, the merge then differs from a plain one only
// past the prefix's entries, which the caller promised not to use: it
// must stop at the first entry outside the prefix. prefix_probes: one per
// child (null: never left out).
std::unique_ptr<Iterator> NewProbingMergingIterator(
    const InternalKeyComparator* comparator,
    std::vector<std::unique_ptr<Iterator>> children,
    std::vector<ChildProbe> probes, SeekPrefix seek_prefix,
    std::vector<ChildPrefixProbe> prefix_probes);

}  // namespace siftdb

#endif  // SIFTDB_TABLE_MERGING_ITERATOR_H_
