// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A two-level iterator: an index iterator whose values each name a block of
// entries, and a function that opens such a block as an iterator. Yields the
// entries of all blocks in index order, skipping empty blocks. Used for
// tables (index block -> data blocks) and by the db layer for levels
// (file list -> tables).
//
// Errors are fail-stop and sticky: when the index iterator or a block
// iterator reports an error, the two-level iterator becomes invalid and
// status() returns that error from then on; it never silently skips a
// damaged block.
//
// Thread safety: one thread at a time. The block function must be safe to
// call for as long as the iterator lives.

#ifndef SIFTDB_TABLE_TWO_LEVEL_ITERATOR_H_
#define SIFTDB_TABLE_TWO_LEVEL_ITERATOR_H_

#include <functional>
#include <memory>
#include <string_view>

#include "siftdb/iterator.h"

namespace siftdb {

// Opens the block named by an index value. Never returns null (return
// NewErrorIterator() on failure).
using BlockFunction =
    std::function<std::unique_ptr<Iterator>(std::string_view index_value)>;

std::unique_ptr<Iterator> NewTwoLevelIterator(
    std::unique_ptr<Iterator> index_iter, BlockFunction block_function);

}  // namespace siftdb

#endif  // SIFTDB_TABLE_TWO_LEVEL_ITERATOR_H_
