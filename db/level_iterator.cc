// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/level_iterator.h"

#include <string_view>

#include "db/table_cache.h"
#include "db/version.h"
#include "table/two_level_iterator.h"
#include "util/coding.h"

namespace siftdb {

namespace {

// Iterates the tables of one level: key() is a table's largest key, value()
// its number and size (fixed64 each).
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
    EncodeFixed64(value_buf_, (*files_)[index_]->number);
    EncodeFixed64(value_buf_ + 8, (*files_)[index_]->file_size);
    return std::string_view(value_buf_, sizeof(value_buf_));
  }
  absl::Status status() const override { return absl::OkStatus(); }

 private:
  const InternalKeyComparator icmp_;
  const std::vector<FileMetaData*>* const files_;
  size_t index_;
  mutable char value_buf_[16];
};

}  // namespace

std::unique_ptr<Iterator> NewLevelIterator(
    const InternalKeyComparator& icmp, TableCache* cache,
    const ReadOptions& options, const std::vector<FileMetaData*>* files) {
  return NewTwoLevelIterator(
      std::make_unique<LevelFileIterator>(icmp, files),
      [cache, options](std::string_view value) -> std::unique_ptr<Iterator> {
        if (value.size() != 16) {
          return NewErrorIterator(
              absl::InternalError("level iterator: bad table reference"));
        }
        return cache->NewIterator(options, DecodeFixed64(value.data()),
                                  DecodeFixed64(value.data() + 8));
      });
}

}  // namespace siftdb
