// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/prefix_iterator.h"

#include <string>
#include <utility>

namespace siftdb {
namespace {

class PrefixSameAsStartIterator final : public Iterator {
 public:
  PrefixSameAsStartIterator(const SliceTransform* extractor,
                            std::unique_ptr<Iterator> inner)
      : extractor_(extractor), inner_(std::move(inner)) {}

  bool Valid() const override { return valid_; }
  std::string_view key() const override { return inner_->key(); }
  std::string_view value() const override { return inner_->value(); }
  absl::Status status() const override { return inner_->status(); }

  void Seek(std::string_view target) override {
    limited_ = extractor_->InDomain(target);
    if (limited_) prefix_.assign(extractor_->Transform(target));
    inner_->Seek(target);
    Check();
  }
  void SeekToFirst() override {
    limited_ = false;
    inner_->SeekToFirst();
    Check();
  }
  void SeekToLast() override {
    limited_ = false;
    inner_->SeekToLast();
    Check();
  }
  void Next() override {
    if (!valid_) return;
    inner_->Next();
    Check();
  }
  void Prev() override {
    if (!valid_) return;
    inner_->Prev();
    Check();
  }

 private:
  // Valid while the inner iterator is, and (when limited) on a key of the
  // seek's prefix. Once past the prefix the iterator stays invalid until
  // the next seek: the inner one is not moved further.
  void Check() {
    valid_ = inner_->Valid();
    if (!valid_ || !limited_) return;
    const std::string_view k = inner_->key();
    valid_ = extractor_->InDomain(k) && extractor_->Transform(k) == prefix_;
  }

  const SliceTransform* const extractor_;
  const std::unique_ptr<Iterator> inner_;
  std::string prefix_;    // the last Seek's prefix, when limited_
  bool limited_ = false;  // the last positioning was a Seek in the domain
  bool valid_ = false;
};

}  // namespace

std::unique_ptr<Iterator> NewPrefixSameAsStartIterator(
    const SliceTransform* extractor, std::unique_ptr<Iterator> inner) {
  return std::make_unique<PrefixSameAsStartIterator>(extractor,
                                                     std::move(inner));
}

}  // namespace siftdb
