// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// VersionEdit: one change to the set of live tables, as recorded in the
// MANIFEST (each edit is one record in the WAL record format).
//
// Encoding: a sequence of (varint32 tag, fields) pairs. The tag values are
// persisted and never change; a decoder rejects an unknown tag (DataLoss),
// since skipping a file addition or removal would corrupt the tree.
// Specified in docs/manifest_format.md.

#ifndef SIFTDB_DB_VERSION_EDIT_H_
#define SIFTDB_DB_VERSION_EDIT_H_

#include <atomic>
#include <cstdint>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "table/internal_key.h"

namespace siftdb {

inline constexpr int kNumLevels = 7;

// A live table. Shared by every Version that lists it (refs counts them).
struct FileMetaData {
  // Seek-triggered compaction's budget for this table (Version::ChargeSeek,
  // docs/compaction.md). It lives here, not in a Version, so that it is
  // shared by every Version that lists the table and survives the
  // compactions of other tables; VersionSet::Finalize sets it when a
  // Version first lists the table. A copy (the table added at another
  // level) starts unset, so a moved table gets a fresh budget.
  struct SeekBudget {
    static constexpr int32_t kUnset = INT32_MIN;
    SeekBudget() = default;
    SeekBudget(const SeekBudget&) {}
    SeekBudget& operator=(const SeekBudget&) {
      seeks.store(kUnset, std::memory_order_relaxed);
      return *this;
    }
    // Seeks left; <= 0: spent. Atomic because Get charges without the DB
    // mutex.
    std::atomic<int32_t> seeks{kUnset};
  };

  int refs = 0;
  uint64_t number = 0;
  uint64_t file_size = 0;
  std::string smallest;  // smallest internal key in the table
  std::string largest;   // largest internal key in the table
  SeekBudget seek_budget;
};

class VersionEdit {
 public:
  VersionEdit() = default;

  void Clear() { *this = VersionEdit(); }

  void SetComparatorName(std::string_view name) {
    has_comparator_ = true;
    comparator_ = std::string(name);
  }
  void SetLogNumber(uint64_t num) {
    has_log_number_ = true;
    log_number_ = num;
  }
  void SetPrevLogNumber(uint64_t num) {
    has_prev_log_number_ = true;
    prev_log_number_ = num;
  }
  void SetNextFile(uint64_t num) {
    has_next_file_number_ = true;
    next_file_number_ = num;
  }
  void SetLastSequence(SequenceNumber seq) {
    has_last_sequence_ = true;
    last_sequence_ = seq;
  }
  void SetCompactPointer(int level, std::string_view internal_key) {
    compact_pointers_.emplace_back(level, std::string(internal_key));
  }
  // Adds table `number` to `level`. REQUIRES: not yet in the version.
  void AddFile(int level, uint64_t number, uint64_t file_size,
               std::string_view smallest, std::string_view largest);
  void RemoveFile(int level, uint64_t number) {
    deleted_files_.insert({level, number});
  }

  void EncodeTo(std::string* dst) const;
  // DataLoss naming the bad field when src is not a valid edit.
  absl::Status DecodeFrom(std::string_view src);

  std::string DebugString() const;

 private:
  friend class VersionSet;
  friend class VersionBuilder;

  std::string comparator_;
  uint64_t log_number_ = 0;
  uint64_t prev_log_number_ = 0;
  uint64_t next_file_number_ = 0;
  SequenceNumber last_sequence_ = 0;
  bool has_comparator_ = false;
  bool has_log_number_ = false;
  bool has_prev_log_number_ = false;
  bool has_next_file_number_ = false;
  bool has_last_sequence_ = false;

  std::vector<std::pair<int, std::string>> compact_pointers_;
  std::set<std::pair<int, uint64_t>> deleted_files_;
  std::vector<std::pair<int, FileMetaData>> new_files_;
};

}  // namespace siftdb

#endif  // SIFTDB_DB_VERSION_EDIT_H_
