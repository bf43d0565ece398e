// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// IteratorWrapper: owns an Iterator and caches its Valid() and key(), which
// merging and two-level iterators ask for far more often than they move the
// iterator (saves a virtual call and keeps the key hot in cache).
//
// Thread safety: as the wrapped iterator (one thread at a time).
// Invariant: after every positioning call, valid_ == iter_->Valid() and,
// when valid_, key_ == iter_->key().

#ifndef SIFTDB_TABLE_ITERATOR_WRAPPER_H_
#define SIFTDB_TABLE_ITERATOR_WRAPPER_H_

#include <memory>
#include <string_view>
#include <utility>

#include "siftdb/iterator.h"

namespace siftdb {

class IteratorWrapper {
 public:
  IteratorWrapper() = default;
  explicit IteratorWrapper(std::unique_ptr<Iterator> iter) {
    Set(std::move(iter));
  }
  IteratorWrapper(const IteratorWrapper&) = delete;
  IteratorWrapper& operator=(const IteratorWrapper&) = delete;
  IteratorWrapper(IteratorWrapper&&) = default;
  IteratorWrapper& operator=(IteratorWrapper&&) = default;

  Iterator* iter() const { return iter_.get(); }

  // Replaces (and destroys) the wrapped iterator; null leaves it empty.
  void Set(std::unique_ptr<Iterator> iter) {
    iter_ = std::move(iter);
    if (iter_ == nullptr) {
      valid_ = false;
    } else {
      Update();
    }
  }

  // REQUIRE: iter() != nullptr for everything below.
  bool Valid() const { return valid_; }
  std::string_view key() const { return key_; }
  std::string_view value() const { return iter_->value(); }
  absl::Status status() const { return iter_->status(); }
  void Next() {
    iter_->Next();
    Update();
  }
  void Prev() {
    iter_->Prev();
    Update();
  }
  void Seek(std::string_view k) {
    iter_->Seek(k);
    Update();
  }
  void SeekToFirst() {
    iter_->SeekToFirst();
    Update();
  }
  void SeekToLast() {
    iter_->SeekToLast();
    Update();
  }

 private:
  void Update() {
    valid_ = iter_->Valid();
    if (valid_) key_ = iter_->key();
  }

  std::unique_ptr<Iterator> iter_;
  bool valid_ = false;
  std::string_view key_;
};

}  // namespace siftdb

#endif  // SIFTDB_TABLE_ITERATOR_WRAPPER_H_
