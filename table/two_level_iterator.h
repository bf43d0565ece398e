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
// Bounds (NewBoundedTwoLevelIterator): when the index keys are internal
// keys such that each is >= every key of its block and < every key of the
// blocks after it (a table's index; a level's list of tables by largest
// key), the iterator can tell from the index alone that a block lies wholly
// outside [lower, upper) and then does not open it: block k+1 when the user
// key of index key k is >= upper, block k when the user key of index key k
// is < lower. It behaves exactly as an iterator over the blocks it keeps
// (every operation, in both directions, sees the same set), so a merge of
// such iterators stays exact. It does not filter keys inside a kept block:
// keys outside the bounds may still be returned, and the caller (DBIter)
// enforces the bounds key by key. Lower >= upper gives an empty iterator.
//
// Thread safety: one thread at a time. The block function must be safe to
// call for as long as the iterator lives.

#ifndef SIFTDB_TABLE_TWO_LEVEL_ITERATOR_H_
#define SIFTDB_TABLE_TWO_LEVEL_ITERATOR_H_

#include <functional>
#include <memory>
#include <new>
#include <string_view>
#include <type_traits>
#include <utility>

#include "absl/functional/function_ref.h"
#include "siftdb/iterator.h"
#include "table/iterate_bounds.h"
#include "util/statistics.h"

namespace siftdb {

// Opens the block named by an index value. Never returns null (return
// NewErrorIterator() on failure).
using BlockFunction =
    std::function<std::unique_ptr<Iterator>(std::string_view index_value)>;

// The same as an object the two-level iterator owns: what it needs to open
// blocks (options, a readahead window) lives in one allocation with it,
// where a BlockFunction's captures would take a second one per iterator.
class BlockOpener {
 public:
  virtual ~BlockOpener() = default;
  // Never returns null (NewErrorIterator() on failure).
  virtual std::unique_ptr<Iterator> Open(std::string_view index_value) = 0;
};

std::unique_ptr<Iterator> NewTwoLevelIterator(
    std::unique_ptr<Iterator> index_iter, BlockFunction block_function);

// How a bounded two-level iterator limits itself (see the top of the file).
struct TwoLevelBounds {
  IterateBounds bounds;  // inactive: a plain two-level iterator
  // Counts `skipped` once per block it decided not to open. May be null.
  Statistics* statistics = nullptr;
  Ticker skipped = Ticker::kNumTickers;
};

std::unique_ptr<Iterator> NewBoundedTwoLevelIterator(
    std::unique_ptr<Iterator> index_iter, BlockFunction block_function,
    const TwoLevelBounds& bounds);

namespace two_level_internal {
// NewBoundedTwoLevelIteratorInPlace's work: construct_opener builds the
// opener at `where` (opener_size bytes, aligned to opener_alignment).
std::unique_ptr<Iterator> NewInPlace(
    std::unique_ptr<Iterator> index_iter, const TwoLevelBounds& bounds,
    size_t opener_size, size_t opener_alignment,
    absl::FunctionRef<BlockOpener*(void* where)> construct_opener);
}  // namespace two_level_internal

// As above, with an Opener (a BlockOpener) built from opener_args in the
// iterator's own allocation: one allocation per iterator, where a
// BlockFunction's captures take a second. A table iterator and a level
// iterator are built for every seek.
template <typename Opener, typename... Args>
std::unique_ptr<Iterator> NewBoundedTwoLevelIteratorInPlace(
    std::unique_ptr<Iterator> index_iter, const TwoLevelBounds& bounds,
    Args&&... opener_args) {
  static_assert(std::is_base_of_v<BlockOpener, Opener>);
  return two_level_internal::NewInPlace(
      std::move(index_iter), bounds, sizeof(Opener), alignof(Opener),
      [&](void* where) -> BlockOpener* {
        return new (where) Opener(std::forward<Args>(opener_args)...);
      });
}

}  // namespace siftdb

#endif  // SIFTDB_TABLE_TWO_LEVEL_ITERATOR_H_
