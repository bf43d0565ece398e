// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The iterator over one level >= 1 of a Version: its tables are sorted and
// disjoint, so it walks the level's file list and opens each table (through
// the TableCache) only when the iteration reaches it.
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

namespace siftdb {

class TableCache;

std::unique_ptr<Iterator> NewLevelIterator(
    const InternalKeyComparator& icmp, TableCache* cache,
    const ReadOptions& options, const std::vector<FileMetaData*>* files);

}  // namespace siftdb

#endif  // SIFTDB_DB_LEVEL_ITERATOR_H_
