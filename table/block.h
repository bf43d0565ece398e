// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Block: one decoded (uncompressed) block in memory and iterators over it.
// The layout is the one BlockBuilder writes (see table/block_builder.h).
//
// Safety: Block::Create() checks the restart array (count, every offset
// inside the entry region, strictly increasing, first at 0); the iterators
// check every entry they decode against the bytes of the block. Malformed
// bytes produce DataLoss naming the file and the block offset — never an
// out-of-bounds read.
//
// Thread safety: a Block is immutable and may be read by many threads; each
// iterator is used by one thread at a time.
// Lifetime: an iterator borrows the Block, the comparator and the file name
// it was created with; they must outlive it.

#ifndef SIFTDB_TABLE_BLOCK_H_
#define SIFTDB_TABLE_BLOCK_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "siftdb/comparator.h"
#include "siftdb/iterator.h"
#include "table/format.h"
#include "table/internal_key.h"

namespace siftdb {

// Narrows the binary search of a block's restart points before any key is
// compared. For a target, Narrow sets [*lo, *hi] (lo <= hi < the block's
// restart count) so that the last restart point whose key is below the
// target lies in it, or, when no restart key is below the target, lo is 0.
// A hint that cannot tell answers the whole range. Keys are then compared
// only inside the range, so a hint changes how many keys a search reads,
// never what it finds. Implementations are immutable and thread-safe.
class RestartSearchHint {
 public:
  virtual ~RestartSearchHint() = default;
  virtual void Narrow(std::string_view target, uint32_t* lo,
                      uint32_t* hi) const = 0;
  // Bytes the hint holds on the heap, itself included.
  virtual size_t MemoryUsage() const = 0;
};

class Block {
 public:
  // Takes `contents`, read from `file_name` at `offset` (both used in error
  // messages only). DataLoss when the restart array is malformed.
  static absl::StatusOr<std::unique_ptr<Block>> Create(
      BlockContents contents, uint64_t offset, std::string_view file_name);

  Block(const Block&) = delete;
  Block& operator=(const Block&) = delete;

  // Bytes of the block (entries, restart array and count).
  size_t size() const { return contents_.size; }
  uint64_t offset() const { return offset_; }
  uint32_t num_restarts() const { return num_restarts_; }
  std::string_view data() const { return contents_.data(); }

  // Installs a hint for every later Seek (iterators' and the one-shot
  // lookups'). Built for this block's restart points; must be installed
  // before the block is shared with other threads.
  void SetSearchHint(std::unique_ptr<const RestartSearchHint> hint) {
    hint_ = std::move(hint);
  }
  // Sets *key to the whole key of restart point `index` (< num_restarts();
  // a restart entry shares no bytes with the one before). False when the
  // entry there does not decode inside the block.
  bool RestartKey(uint32_t index, std::string_view* key) const;

  // The hint's bytes (0 without one).
  size_t SearchHintMemoryUsage() const {
    return hint_ == nullptr ? 0 : hint_->MemoryUsage();
  }

  // Starts loading the whole block into the CPU's second-level cache (a
  // hint; no effect on answers), so that a batch of lookups overlaps its
  // memory misses. Not into the first level: a batch prefetches dozens of
  // blocks, several times the L1's size, where they would evict each other
  // and hold its few miss buffers (docs/benchmarks.md, MultiGet in memory).
  void Prefetch() const {
    const char* p = contents_.data().data();
    for (size_t i = 0; i < contents_.size; i += 64) {
      __builtin_prefetch(p + i, /*rw=*/0, /*locality=*/1);  // prefetcht2
    }
  }

  // An iterator over the entries, ordered by `comparator` (which must be the
  // order they were added in). `file_name` names the file in error messages
  // and must outlive the iterator, as must this block.
  std::unique_ptr<Iterator> NewIterator(const Comparator* comparator,
                                        std::string_view file_name) const;

  // One-shot lookup without allocating an iterator (point lookups): calls
  // found(key, value) with the first entry >= target, if any. The views
  // point into this block (the key into a scratch buffer) and are valid
  // only during the call. Errors as the iterator's status().
  absl::Status Seek(
      const Comparator* comparator, std::string_view file_name,
      std::string_view target,
      absl::FunctionRef<void(std::string_view, std::string_view)> found) const;
  // The same lookup in a block of internal keys (every data and index
  // block of a table), comparing without a virtual call: a point lookup
  // compares about ten keys in each of the two blocks it searches.
  absl::Status Seek(
      const InternalKeyComparator& comparator, std::string_view file_name,
      std::string_view target,
      absl::FunctionRef<void(std::string_view, std::string_view)> found) const;

 private:
  // Both Seeks: compare(a, b) orders keys as the block's comparator does.
  template <typename Compare>
  absl::Status SeekWith(
      const Compare& compare, std::string_view file_name,
      std::string_view target,
      absl::FunctionRef<void(std::string_view, std::string_view)> found) const;

  Block(BlockContents contents, uint64_t offset, uint32_t restart_offset,
        uint32_t num_restarts);

  BlockContents contents_;
  const uint64_t offset_;
  const uint32_t restart_offset_;  // where the restart array begins
  const uint32_t num_restarts_;
  std::unique_ptr<const RestartSearchHint> hint_;  // may be null
};

}  // namespace siftdb

#endif  // SIFTDB_TABLE_BLOCK_H_
