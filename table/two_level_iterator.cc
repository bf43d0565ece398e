// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/two_level_iterator.h"

#include <algorithm>
#include <cstddef>
#include <new>
#include <string>
#include <utility>

#include "table/internal_key.h"
#include "table/iterator_wrapper.h"

namespace siftdb {
namespace {

// A BlockFunction as a BlockOpener.
class FunctionBlockOpener final : public BlockOpener {
 public:
  explicit FunctionBlockOpener(BlockFunction function)
      : function_(std::move(function)) {}
  std::unique_ptr<Iterator> Open(std::string_view index_value) override {
    return function_(index_value);
  }

 private:
  const BlockFunction function_;
};

class TwoLevelIterator final : public Iterator {
 public:
  // The opener lives in this iterator's own allocation (NewInPlace): it
  // is destroyed with the iterator, and freed with its memory.
  TwoLevelIterator(std::unique_ptr<Iterator> index_iter, BlockOpener* opener,
                   const TwoLevelBounds& bounds)
      : opener_(opener),
        index_iter_(std::move(index_iter)),
        bounds_(bounds.bounds),
        statistics_(bounds.statistics),
        skipped_(bounds.skipped),
        empty_(bounds_.empty()) {
    if (bounds_.lower) lower_seek_key_ = SmallestInternalKeyOf(*bounds_.lower);
    if (bounds_.upper) upper_seek_key_ = SmallestInternalKeyOf(*bounds_.upper);
  }

  ~TwoLevelIterator() override {
    // The blocks first: they were read through the opener (e.g. its
    // readahead window).
    data_iter_.Set(nullptr);
    index_iter_.Set(nullptr);
    opener_->~BlockOpener();
  }

  // The memory came from the global operator new, sized for the opener
  // too; freed unsized.
  static void operator delete(void* p) { ::operator delete(p); }

  bool Valid() const override {
    return status_.ok() && data_iter_.iter() != nullptr && data_iter_.Valid();
  }
  std::string_view key() const override { return data_iter_.key(); }
  std::string_view value() const override { return data_iter_.value(); }

  absl::Status status() const override {
    if (!status_.ok()) return status_;
    absl::Status s = index_iter_.status();
    if (!s.ok()) return s;
    if (data_iter_.iter() != nullptr) return data_iter_.status();
    return absl::OkStatus();
  }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    if (empty_) return Stop();
    index_iter_.Seek(target);
    // The block found may start beyond the upper bound only when target
    // itself is at or above it; then the previous index key tells.
    if (bounds_.upper && index_iter_.Valid() &&
        target.size() >= kInternalKeyTrailerSize &&
        bounds_.AtOrAboveUpper(ExtractUserKey(target)) &&
        PreviousIndexKeyAtOrAboveUpper()) {
      CountSkip();
      return Stop();
    }
    SkipBlocksBelowLower();
    InitDataBlock();
    if (data_iter_.iter() != nullptr) data_iter_.Seek(target);
    SkipEmptyDataBlocksForward();
  }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    if (empty_) return Stop();
    if (bounds_.lower) {
      // The first block whose index key is at or above the lower bound:
      // every block before it lies wholly below.
      index_iter_.Seek(lower_seek_key_);
      SkipBlocksBelowLower();
    } else {
      index_iter_.SeekToFirst();
    }
    InitDataBlock();
    if (data_iter_.iter() != nullptr) data_iter_.SeekToFirst();
    SkipEmptyDataBlocksForward();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    if (empty_) return Stop();
    if (bounds_.upper) {
      // The first block whose index key is at or above the upper bound is
      // the last that may hold a key below it.
      index_iter_.Seek(upper_seek_key_);
      if (!index_iter_.Valid() && index_iter_.status().ok()) {
        index_iter_.SeekToLast();
      }
    } else {
      index_iter_.SeekToLast();
    }
    if (index_iter_.Valid() && IndexKeyBelowLower()) {
      CountSkip();
      return Stop();
    }
    InitDataBlock();
    if (data_iter_.iter() != nullptr) data_iter_.SeekToLast();
    SkipEmptyDataBlocksBackward();
  }

  // Most steps stay inside the block: only leaving it needs the index.
  void Next() override {
    if (!Valid()) return;
    data_iter_.Next();
    if (!data_iter_.Valid()) SkipEmptyDataBlocksForward();
  }

  void Prev() override {
    if (!Valid()) return;
    data_iter_.Prev();
    if (!data_iter_.Valid()) SkipEmptyDataBlocksBackward();
  }

 private:
  // Records the first error of either level and drops the data iterator.
  // Returns true when there was one.
  bool CheckError() {
    absl::Status s;
    if (data_iter_.iter() != nullptr && !data_iter_.Valid()) {
      s = data_iter_.status();
    }
    if (s.ok() && !index_iter_.Valid()) s = index_iter_.status();
    if (s.ok()) return false;
    status_ = std::move(s);
    data_iter_.Set(nullptr);
    data_block_handle_.clear();
    return true;
  }

  // Ends the iteration (invalid, status unchanged).
  void Stop() {
    data_iter_.Set(nullptr);
    data_block_handle_.clear();
  }

  void CountSkip() {
    if (statistics_ != nullptr) statistics_->Record(skipped_);
  }

  // Bound tests on the user key of the index key (REQUIRE: the index is
  // valid). A damaged index key too short for a user key decides nothing.
  bool IndexKeyBelowLower() const {
    const std::string_view k = index_iter_.key();
    return bounds_.lower && k.size() >= kInternalKeyTrailerSize &&
           bounds_.BelowLower(ExtractUserKey(k));
  }
  bool IndexKeyAtOrAboveUpper() const {
    const std::string_view k = index_iter_.key();
    return bounds_.upper && k.size() >= kInternalKeyTrailerSize &&
           bounds_.AtOrAboveUpper(ExtractUserKey(k));
  }

  // Whether the index entry before the current one has a user key at or
  // above the upper bound (so the current block lies wholly beyond it).
  // Leaves the index where it was (or failed: the caller's next steps
  // report the error).
  bool PreviousIndexKeyAtOrAboveUpper() {
    index_iter_.Prev();
    if (!index_iter_.Valid()) {
      if (index_iter_.status().ok()) index_iter_.SeekToFirst();
      return false;
    }
    const bool above = IndexKeyAtOrAboveUpper();
    index_iter_.Next();
    return above;
  }

  // Steps the index past blocks that lie wholly below the lower bound.
  void SkipBlocksBelowLower() {
    while (index_iter_.Valid() && IndexKeyBelowLower()) {
      CountSkip();
      index_iter_.Next();
    }
  }

  void SkipEmptyDataBlocksForward() {
    while (data_iter_.iter() == nullptr || !data_iter_.Valid()) {
      if (CheckError()) return;
      if (!index_iter_.Valid()) {
        data_iter_.Set(nullptr);
        return;
      }
      // Every key of the blocks after this one is above its index key.
      const bool rest_beyond_upper = IndexKeyAtOrAboveUpper();
      index_iter_.Next();
      if (rest_beyond_upper) {
        if (index_iter_.Valid()) {
          CountSkip();
        } else if (CheckError()) {
          return;
        }
        return Stop();
      }
      InitDataBlock();
      if (data_iter_.iter() != nullptr) data_iter_.SeekToFirst();
    }
  }

  void SkipEmptyDataBlocksBackward() {
    while (data_iter_.iter() == nullptr || !data_iter_.Valid()) {
      if (CheckError()) return;
      if (!index_iter_.Valid()) {
        data_iter_.Set(nullptr);
        return;
      }
      index_iter_.Prev();
      // A block whose index key is below the lower bound lies wholly
      // below it, and so does every block before it.
      if (index_iter_.Valid() && IndexKeyBelowLower()) {
        CountSkip();
        return Stop();
      }
      InitDataBlock();
      if (data_iter_.iter() != nullptr) data_iter_.SeekToLast();
    }
  }

  // Points data_iter_ at the block the index iterator names (reusing it
  // when it is already open), or at nothing when the index is exhausted.
  void InitDataBlock() {
    if (!index_iter_.Valid()) {
      data_iter_.Set(nullptr);
      data_block_handle_.clear();
      return;
    }
    const std::string_view handle = index_iter_.value();
    if (data_iter_.iter() != nullptr && handle == data_block_handle_) return;
    data_iter_.Set(opener_->Open(handle));
    data_block_handle_.assign(handle.data(), handle.size());
  }

  BlockOpener* const opener_;
  IteratorWrapper index_iter_;
  IteratorWrapper data_iter_;      // may hold nullptr
  std::string data_block_handle_;  // index value data_iter_ was opened for
  absl::Status status_;            // sticky first error
  const IterateBounds bounds_;     // inactive: no block is skipped
  Statistics* const statistics_;
  const Ticker skipped_;
  const bool empty_;            // lower >= upper: nothing to yield
  std::string lower_seek_key_;  // smallest internal key of each bound
  std::string upper_seek_key_;
};

}  // namespace

std::unique_ptr<Iterator> NewTwoLevelIterator(
    std::unique_ptr<Iterator> index_iter, BlockFunction block_function) {
  return NewBoundedTwoLevelIterator(
      std::move(index_iter), std::move(block_function), TwoLevelBounds());
}

std::unique_ptr<Iterator> NewBoundedTwoLevelIterator(
    std::unique_ptr<Iterator> index_iter, BlockFunction block_function,
    const TwoLevelBounds& bounds) {
  return NewBoundedTwoLevelIteratorInPlace<FunctionBlockOpener>(
      std::move(index_iter), bounds, std::move(block_function));
}

namespace two_level_internal {

std::unique_ptr<Iterator> NewInPlace(
    std::unique_ptr<Iterator> index_iter, const TwoLevelBounds& bounds,
    size_t opener_size, size_t opener_alignment,
    absl::FunctionRef<BlockOpener*(void* where)> construct_opener) {
  // [TwoLevelIterator][padding][opener], one allocation.
  const size_t alignment =
      std::max(opener_alignment, alignof(std::max_align_t));
  if (alignment > __STDCPP_DEFAULT_NEW_ALIGNMENT__) {
    return NewErrorIterator(absl::InternalError(
        "two-level iterator: block opener needs over-aligned memory"));
  }
  const size_t offset =
      (sizeof(TwoLevelIterator) + alignment - 1) / alignment * alignment;
  void* const memory = ::operator new(offset + opener_size);
  char* const base = static_cast<char*>(memory);
  BlockOpener* opener;
  try {
    opener = construct_opener(base + offset);
  } catch (...) {
    ::operator delete(memory);
    throw;
  }
  // The constructor may throw (std::bad_alloc copying the bounds' keys):
  // then the opener is destroyed here and the memory freed.
  TwoLevelIterator* iter;
  try {
    iter = new (memory) TwoLevelIterator(std::move(index_iter), opener, bounds);
  } catch (...) {
    opener->~BlockOpener();
    ::operator delete(memory);
    throw;
  }
  return std::unique_ptr<Iterator>(iter);
}

}  // namespace two_level_internal

}  // namespace siftdb
