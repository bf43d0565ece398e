// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The iterator over one level >= 1 of a Version: its tables are sorted and
// disjoint, so it walks the level's file list and opens each table (through
// the TableCache) only when the iteration reaches it.
//
// With ReadOptions' iterate bounds it opens no table that lies wholly
// outside them (counting kBoundsSkippedTables): moving forward it stops
// before a table whose smallest key is at or above the upper bound,
// backward before one whose largest is below the lower bound. Keys outside
// the bounds in the tables it opens are still returned (DBIter drops them).
//
// Thread safety: an iterator is used by one thread at a time. Ownership:
// `files` and `cache` are not owned and must outlive the iterator (the
// caller pins the Version holding `files`).

#ifndef SIFTDB_DB_LEVEL_ITERATOR_H_
#define SIFTDB_DB_LEVEL_ITERATOR_H_

#include <memory>
#include <vector>

#include "db/version_edit.h"
#include "siftdb/iterator.h"
#include "siftdb/options.h"
#include "table/internal_key.h"
#include "table/iterate_bounds.h"

namespace siftdb {

class TableCache;

// True when table f holds no key inside `bounds`: its smallest user key is
// at or above the upper bound, or its largest is below the lower bound.
bool TableOutsideBounds(const IterateBounds& bounds, const FileMetaData& f);

std::unique_ptr<Iterator> NewLevelIterator(
    const InternalKeyComparator& icmp, TableCache* cache,
    const ReadOptions& options, const std::vector<FileMetaData*>* files);

}  // namespace siftdb

#endif  // SIFTDB_DB_LEVEL_ITERATOR_H_
