// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/prefix_iterator.h"

namespace siftdb {

void PrefixSameAsStartIterator::Seek(std::string_view target) {
  limited_ = extractor_->InDomain(target);
  if (limited_) {
    prefix_.assign(extractor_->Transform(target));
    if (!SourcesMayHoldPrefix(target, prefix_)) {
      // Nothing of the prefix from target on: the limited seek ends here.
      // An inner iterator built earlier keeps its (sticky) status.
      valid_ = false;
      return;
    }
  }
  Inner()->Seek(target);
  Check();
}

void PrefixSameAsStartIterator::SeekToFirst() {
  limited_ = false;
  Inner()->SeekToFirst();
  Check();
}

void PrefixSameAsStartIterator::SeekToLast() {
  limited_ = false;
  Inner()->SeekToLast();
  Check();
}

void PrefixSameAsStartIterator::Next() {
  if (!valid_) return;
  inner_->Next();
  Check();
}

void PrefixSameAsStartIterator::Prev() {
  if (!valid_) return;
  inner_->Prev();
  Check();
}

void PrefixSameAsStartIterator::Check() {
  valid_ = inner_->Valid();
  if (!valid_ || !limited_) return;
  const std::string_view k = inner_->key();
  valid_ = extractor_->InDomain(k) && extractor_->Transform(k) == prefix_;
}

}  // namespace siftdb
