// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The non-virtual parts of Iterator, and the empty and error iterators.

#include "siftdb/iterator.h"

#include <utility>

namespace siftdb {

Iterator::~Iterator() {
  if (first_cleanup_.function != nullptr) {
    first_cleanup_.function(first_cleanup_.arg1, first_cleanup_.arg2);
  }
  for (auto& fn : cleanups_) fn();
}

void Iterator::RegisterCleanup(std::function<void()> fn) {
  cleanups_.push_back(std::move(fn));
}

void Iterator::RegisterCleanup(CleanupFunction function, void* arg1,
                               void* arg2) {
  // The inline slot runs first, so it may hold only the first cleanup.
  if (first_cleanup_.function == nullptr && cleanups_.empty()) {
    first_cleanup_ = Cleanup{function, arg1, arg2};
    return;
  }
  cleanups_.push_back([function, arg1, arg2] { function(arg1, arg2); });
}

namespace {

// Never Valid(); status() is whatever it was built with.
class EmptyIterator final : public Iterator {
 public:
  explicit EmptyIterator(absl::Status status) : status_(std::move(status)) {}

  bool Valid() const override { return false; }
  void SeekToFirst() override {}
  void SeekToLast() override {}
  void Seek(std::string_view) override {}
  // Next, Prev, key and value REQUIRE Valid(), which never holds; they are
  // harmless no-ops rather than crashes.
  void Next() override {}
  void Prev() override {}
  std::string_view key() const override { return {}; }
  std::string_view value() const override { return {}; }
  absl::Status status() const override { return status_; }

 private:
  const absl::Status status_;
};

}  // namespace

std::unique_ptr<Iterator> NewEmptyIterator() {
  return std::make_unique<EmptyIterator>(absl::OkStatus());
}

std::unique_ptr<Iterator> NewErrorIterator(absl::Status status) {
  return std::make_unique<EmptyIterator>(std::move(status));
}

}  // namespace siftdb
