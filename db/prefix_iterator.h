// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// PrefixSameAsStartIterator: ReadOptions::prefix_same_as_start over a
// user-key iterator. After Seek(target) with target in the extractor's
// domain, the iterator is valid only on keys of target's prefix: Next and
// Prev end (Valid() false, status OK) at the prefix's ends. Seeks outside
// the domain, SeekToFirst and SeekToLast are not limited.
//
// This is what lets the merge below leave out tables and MemTables whose
// prefix filter rejects the prefix (NewProbingMergingIterator): past the
// prefix its order is no longer complete, and this iterator never shows
// that part.
//
// It is lazy: a subclass supplies the inner iterator (NewInner), built on
// first need, and SourcesMayHoldPrefix. A Seek in the domain asks
// SourcesMayHoldPrefix first; when no source may hold a key of the prefix
// at or after the target, the iterator is invalid with status OK at once,
// without building or moving the inner iterator. A seek to an absent
// prefix then costs the filter probes only, not an iterator tree.
//
// Thread safety: one thread at a time. `extractor` must outlive the
// iterator.

#ifndef SIFTDB_DB_PREFIX_ITERATOR_H_
#define SIFTDB_DB_PREFIX_ITERATOR_H_

#include <memory>
#include <string>
#include <string_view>

#include "siftdb/iterator.h"
#include "siftdb/slice_transform.h"

namespace siftdb {

class PrefixSameAsStartIterator : public Iterator {
 public:
  explicit PrefixSameAsStartIterator(const SliceTransform* extractor)
      : extractor_(extractor) {}

  bool Valid() const override { return valid_; }
  std::string_view key() const override { return inner_->key(); }
  std::string_view value() const override { return inner_->value(); }
  absl::Status status() const override {
    return inner_ != nullptr ? inner_->status() : absl::OkStatus();
  }
  void Seek(std::string_view target) override;
  void SeekToFirst() override;
  void SeekToLast() override;
  void Next() override;
  void Prev() override;

 protected:
  // False only when no key at or after the user key `target` whose prefix
  // is `prefix` (target's own) is visible to the inner iterator. Must
  // never answer false wrongly.
  virtual bool SourcesMayHoldPrefix(std::string_view target,
                                    std::string_view prefix) = 0;
  // The inner iterator (never null). Called at most once.
  virtual std::unique_ptr<Iterator> NewInner() = 0;
  // Destroys the inner iterator (a subclass's destructor calls it before
  // releasing what the inner iterator reads).
  void DropInner() {
    inner_.reset();
    valid_ = false;
  }

 private:
  Iterator* Inner() {
    if (inner_ == nullptr) inner_ = NewInner();
    return inner_.get();
  }
  // Valid while the inner iterator is, and (when limited) on a key of the
  // seek's prefix. Once past the prefix the iterator stays invalid until
  // the next seek: the inner one is not moved further.
  void Check();

  const SliceTransform* const extractor_;
  std::unique_ptr<Iterator> inner_;  // null until first needed
  std::string prefix_;               // the last Seek's prefix, when limited_
  bool limited_ = false;  // the last positioning was a Seek in the domain
  bool valid_ = false;
};

}  // namespace siftdb

#endif  // SIFTDB_DB_PREFIX_ITERATOR_H_
