// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/level_iterator.h"

#include <string_view>

#include "db/table_cache.h"
#include "db/version.h"
#include "table/iterate_bounds.h"
#include "table/two_level_iterator.h"
#include "util/coding.h"

namespace siftdb {

namespace {

// Iterates the tables of one level: key() is a table's largest key, value()
// its position in the file list (fixed64).
class LevelFileIterator : public Iterator {
 public:
  LevelFileIterator(const InternalKeyComparator& icmp,
                    const std::vector<FileMetaData*>* files)
      : icmp_(icmp), files_(files), index_(files->size()) {}
  bool Valid() const override { return index_ < files_->size(); }
  void Seek(std::string_view target) override {
    index_ = FindFile(icmp_, *files_, target);
  }
  void SeekToFirst() override { index_ = 0; }
  void SeekToLast() override {
    index_ = files_->empty() ? 0 : files_->size() - 1;
  }
  void Next() override { index_++; }
  void Prev() override { index_ = index_ == 0 ? files_->size() : index_ - 1; }
  std::string_view key() const override { return (*files_)[index_]->largest; }
  std::string_view value() const override {
    EncodeFixed64(value_buf_, index_);
    return std::string_view(value_buf_, sizeof(value_buf_));
  }
  absl::Status status() const override { return absl::OkStatus(); }

 private:
  const InternalKeyComparator icmp_;
  const std::vector<FileMetaData*>* const files_;
  size_t index_;
  mutable char value_buf_[8];
};

// Opens the table a LevelFileIterator's value names, unless it lies wholly
// outside the bounds (then an empty iterator, counted as skipped).
class LevelTableOpener final : public BlockOpener {
 public:
  LevelTableOpener(TableCache* cache, const ReadOptions& options,
                   const std::vector<FileMetaData*>* files,
                   const TwoLevelBounds& bounds)
      : cache_(cache), options_(options), files_(files), bounds_(bounds) {}

  std::unique_ptr<Iterator> Open(std::string_view value) override {
    const uint64_t index =
        value.size() == 8 ? DecodeFixed64(value.data()) : files_->size();
    if (index >= files_->size()) {
      return NewErrorIterator(
          absl::InternalError("level iterator: bad table reference"));
    }
    const FileMetaData& f = *(*files_)[index];
    if (bounds_.bounds.active() && TableOutsideBounds(bounds_.bounds, f)) {
      if (bounds_.statistics != nullptr) {
        bounds_.statistics->Record(bounds_.skipped);
      }
      return NewEmptyIterator();
    }
    return cache_->NewIterator(options_, f.number, f.file_size);
  }

 private:
  TableCache* const cache_;
  const ReadOptions options_;
  const std::vector<FileMetaData*>* const files_;
  const TwoLevelBounds bounds_;
};

}  // namespace

bool TableOutsideBounds(const IterateBounds& bounds, const FileMetaData& f) {
  if (f.smallest.size() < kInternalKeyTrailerSize ||
      f.largest.size() < kInternalKeyTrailerSize) {
    return false;  // damaged metadata decides nothing
  }
  return bounds.AtOrAboveUpper(ExtractUserKey(f.smallest)) ||
         bounds.BelowLower(ExtractUserKey(f.largest));
}

std::unique_ptr<Iterator> NewLevelIterator(
    const InternalKeyComparator& icmp, TableCache* cache,
    const ReadOptions& options, const std::vector<FileMetaData*>* files) {
  // The file list is an index whose keys (largest keys) bound their
  // tables: the bounded two-level iterator stops before a table that
  // starts past the upper bound (backward: ends below the lower one)
  // without opening it, and the table function below declines any other
  // table wholly outside the bounds, e.g. the one a Seek lands on.
  TwoLevelBounds bounds;
  bounds.bounds = IterateBounds::From(icmp.user_comparator(), options);
  bounds.statistics = cache->statistics();
  bounds.skipped = Ticker::kBoundsSkippedTables;
  return NewBoundedTwoLevelIteratorInPlace<LevelTableOpener>(
      std::make_unique<LevelFileIterator>(icmp, files), bounds, cache, options,
      files, bounds);
}

}  // namespace siftdb
