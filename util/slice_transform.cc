// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The two built-in prefix transforms (siftdb/slice_transform.h).

#include "siftdb/slice_transform.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"

namespace siftdb {
namespace {

class FixedPrefixTransform final : public SliceTransform {
 public:
  explicit FixedPrefixTransform(size_t n)
      : n_(n), name_(absl::StrCat("siftdb.FixedPrefix.", n)) {}
  const char* Name() const override { return name_.c_str(); }
  std::string_view Transform(std::string_view key) const override {
    return key.substr(0, n_);
  }
  bool InDomain(std::string_view key) const override {
    return key.size() >= n_;
  }
  bool SameResultWhenAppended(std::string_view prefix) const override {
    return prefix.size() == n_;
  }

 private:
  const size_t n_;
  const std::string name_;
};

class CappedPrefixTransform final : public SliceTransform {
 public:
  explicit CappedPrefixTransform(size_t n)
      : n_(n), name_(absl::StrCat("siftdb.CappedPrefix.", n)) {}
  const char* Name() const override { return name_.c_str(); }
  std::string_view Transform(std::string_view key) const override {
    return key.substr(0, std::min(n_, key.size()));
  }
  bool InDomain(std::string_view) const override { return true; }
  // A prefix shorter than n_ came from a shorter key: longer keys that
  // begin with it have longer prefixes.
  bool SameResultWhenAppended(std::string_view prefix) const override {
    return prefix.size() >= n_;
  }

 private:
  const size_t n_;
  const std::string name_;
};

}  // namespace

std::shared_ptr<const SliceTransform> NewFixedPrefixTransform(size_t n) {
  return std::make_shared<FixedPrefixTransform>(n);
}

std::shared_ptr<const SliceTransform> NewCappedPrefixTransform(size_t n) {
  return std::make_shared<CappedPrefixTransform>(n);
}

}  // namespace siftdb
