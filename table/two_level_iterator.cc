// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/two_level_iterator.h"

#include <string>
#include <utility>

#include "table/iterator_wrapper.h"

namespace siftdb {
namespace {

class TwoLevelIterator final : public Iterator {
 public:
  TwoLevelIterator(std::unique_ptr<Iterator> index_iter,
                   BlockFunction block_function)
      : block_function_(std::move(block_function)),
        index_iter_(std::move(index_iter)) {}

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
    index_iter_.Seek(target);
    InitDataBlock();
    if (data_iter_.iter() != nullptr) data_iter_.Seek(target);
    SkipEmptyDataBlocksForward();
  }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    index_iter_.SeekToFirst();
    InitDataBlock();
    if (data_iter_.iter() != nullptr) data_iter_.SeekToFirst();
    SkipEmptyDataBlocksForward();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    index_iter_.SeekToLast();
    InitDataBlock();
    if (data_iter_.iter() != nullptr) data_iter_.SeekToLast();
    SkipEmptyDataBlocksBackward();
  }

  void Next() override {
    if (!Valid()) return;
    data_iter_.Next();
    SkipEmptyDataBlocksForward();
  }

  void Prev() override {
    if (!Valid()) return;
    data_iter_.Prev();
    SkipEmptyDataBlocksBackward();
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

  void SkipEmptyDataBlocksForward() {
    while (data_iter_.iter() == nullptr || !data_iter_.Valid()) {
      if (CheckError()) return;
      if (!index_iter_.Valid()) {
        data_iter_.Set(nullptr);
        return;
      }
      index_iter_.Next();
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
    data_iter_.Set(block_function_(handle));
    data_block_handle_.assign(handle.data(), handle.size());
  }

  BlockFunction block_function_;
  IteratorWrapper index_iter_;
  IteratorWrapper data_iter_;      // may hold nullptr
  std::string data_block_handle_;  // index value data_iter_ was opened for
  absl::Status status_;            // sticky first error
};

}  // namespace

std::unique_ptr<Iterator> NewTwoLevelIterator(
    std::unique_ptr<Iterator> index_iter, BlockFunction block_function) {
  return std::make_unique<TwoLevelIterator>(std::move(index_iter),
                                            std::move(block_function));
}

}  // namespace siftdb
