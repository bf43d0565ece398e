// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Seek-triggered compaction's charges (docs/compaction.md): Version::
// ChargeSeek, which lookups call, and Version::RecordReadSample, through
// which iterators take their share.

#include <atomic>
#include <string>

#include "db/version.h"
#include "table/internal_key.h"

namespace siftdb {

void Version::ChargeSeek(int level, size_t index) {
  if (level >= kNumLevels - 1) return;  // the last level has no budget
  std::atomic<int32_t>& seeks = files_[level][index]->seek_budget.seeks;
  if (seeks.load(std::memory_order_relaxed) ==
      FileMetaData::SeekBudget::kUnset) {
    return;  // not finalized
  }
  if (seeks.fetch_sub(1, std::memory_order_relaxed) > 1) return;
  int64_t none = -1;
  seek_compaction_.compare_exchange_strong(
      none, (int64_t{level} << 32) | static_cast<int64_t>(index),
      std::memory_order_relaxed);
}

void Version::RecordReadSample(std::string_view internal_key) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(internal_key, &parsed)) return;
  const Comparator* ucmp = icmp_->user_comparator();
  const std::string_view user_key = parsed.user_key;
  auto holds = [&](const FileMetaData* f) {
    return ucmp->Compare(user_key, ExtractUserKey(f->smallest)) >= 0 &&
           ucmp->Compare(user_key, ExtractUserKey(f->largest)) <= 0;
  };

  int first_level = -1;
  size_t first_index = 0;
  int holders = 0;
  // Level 0: a lookup consults its tables newest first.
  const std::vector<FileMetaData*>& level0 = files_[0];
  for (size_t i = 0; i < level0.size(); i++) {
    if (!holds(level0[i])) continue;
    holders++;
    if (first_level < 0 || level0[i]->number > level0[first_index]->number) {
      first_level = 0;
      first_index = i;
    }
  }
  // Deeper levels: at most one table each, the first whose largest user
  // key is at or after user_key (the newest entry of it sorts first).
  std::string newest;
  AppendInternalKey(&newest, user_key, kMaxSequenceNumber, kValueTypeForSeek);
  for (int level = 1; level < kNumLevels && holders < 2; level++) {
    const std::vector<FileMetaData*>& files = files_[level];
    const size_t index = static_cast<size_t>(FindFile(*icmp_, files, newest));
    if (index >= files.size() || !holds(files[index])) continue;
    holders++;
    if (first_level < 0) {
      first_level = level;
      first_index = index;
    }
  }
  if (holders >= 2) ChargeSeek(first_level, first_index);
}

}  // namespace siftdb
