// Copyright (c) siftdb authors.
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
// moved stays in front); Seek and direction changes touch every child.
// Thread safety: one thread at a time. The comparator is not owned and must
// outlive the iterator.

#ifndef SIFTDB_TABLE_MERGING_ITERATOR_H_
#define SIFTDB_TABLE_MERGING_ITERATOR_H_

#include <memory>
#include <vector>

#include "siftdb/comparator.h"
#include "siftdb/iterator.h"

namespace siftdb {

// Takes ownership of the children (null entries are ignored). With no
// children: an empty iterator; with one: that child itself.
std::unique_ptr<Iterator> NewMergingIterator(
    const Comparator* comparator,
    std::vector<std::unique_ptr<Iterator>> children);

}  // namespace siftdb

#endif  // SIFTDB_TABLE_MERGING_ITERATOR_H_
