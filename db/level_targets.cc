// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The size each level should have: static targets or dynamic ones set from
// the largest level (Options::level_compaction_dynamic_level_bytes), and
// the compaction debt against them that the write controller watches.
// docs/compaction.md, "Levels and triggers" and "Dynamic level sizing".

#include <algorithm>

#include "db/version_set.h"

namespace siftdb {

void VersionSet::SetLevelTargets(Version* v) const {
  const double base = static_cast<double>(options_->max_bytes_for_level_base);
  const double mult = options_->max_bytes_for_level_multiplier;
  for (int level = 0; level < kNumLevels; level++) {
    v->level_target_bytes_[level] = 0;
  }
  v->base_level_ = 1;
  if (!options_->level_compaction_dynamic_level_bytes) {
    double target = base;
    for (int level = 1; level < kNumLevels; level++) {
      v->level_target_bytes_[level] = target;
      target *= mult;
    }
    return;
  }
  // Dynamic sizing (RocksDB's level_compaction_dynamic_level_bytes): the
  // largest level below 0 sets the targets of those above it, each a
  // multiplier smaller, so about (mult - 1) / mult of the data sits in the
  // last level whatever the DB's size. The base level (where level 0
  // compacts to) is the shallowest level whose target is at least
  // base / mult; the levels between 0 and it stay empty. The base level
  // never lies below the first non-empty level, so a DB grown with static
  // targets converts as compactions drain its upper levels.
  int first_non_empty = 0;
  double largest = 0;
  for (int level = 1; level < kNumLevels; level++) {
    double bytes = 0;
    for (const FileMetaData* f : v->files_[level]) bytes += f->file_size;
    if (bytes > 0 && first_non_empty == 0) first_non_empty = level;
    largest = std::max(largest, bytes);
  }
  if (first_non_empty == 0) {
    // Nothing below level 0 yet: level 0 compacts straight to the last
    // level, which holds everything.
    v->base_level_ = kNumLevels - 1;
    v->level_target_bytes_[kNumLevels - 1] = base;
    return;
  }
  // The first non-empty level's target if the last level's were `largest`.
  double size = largest;
  for (int level = kNumLevels - 2; level >= first_non_empty; level--) {
    size /= mult;
  }
  int base_level = first_non_empty;
  double base_size;
  if (size <= base / mult) {
    base_size = base / mult;  // more levels in use than the data needs
  } else {
    while (base_level > 1 && size > base) {
      base_level--;
      size /= mult;
    }
    base_size = std::min(size, base);
  }
  v->base_level_ = base_level;
  double target = base_size;
  for (int level = base_level; level < kNumLevels; level++) {
    // No target below base: a level smaller than level 0 would make level
    // scores starve level 0, which then stalls writes.
    v->level_target_bytes_[level] = std::max(target, base);
    target *= mult;
  }
}

uint64_t VersionSet::EstimatePendingCompactionBytes(const Version& v) const {
  // RocksDB's estimate: level 0, once at its trigger, is merged with all
  // of the base level; every level L >= 1 over its target passes the excess
  // down,
  // rewriting with it the overlapping part of level L + 1, taken in
  // proportion to the two levels' sizes (excess * (size(L+1) / size(L) +
  // 1)). The excess of level L is added to level L + 1's size before that
  // level is checked. A level whose next level is empty adds nothing (its
  // tables move down without a rewrite).
  uint64_t level_bytes[kNumLevels] = {};
  for (int level = 0; level < kNumLevels; level++) {
    for (const FileMetaData* f : v.files_[level]) {
      level_bytes[level] += f->file_size;
    }
  }
  uint64_t total = 0;
  uint64_t carried = 0;  // bytes the level above pushes into this one
  const bool level0_due =
      v.files_[0].size() >=
      static_cast<size_t>(options_->level0_file_num_compaction_trigger);
  if (level0_due) {
    carried = level_bytes[0];
    total += carried;
  }
  for (int level = v.base_level_; level < kNumLevels - 1; level++) {
    uint64_t bytes = level_bytes[level];
    if (level == v.base_level_ && level0_due) total += bytes;
    bytes += carried;
    carried = 0;
    const double target = v.level_target_bytes_[level];
    if (static_cast<double>(bytes) <= target) continue;
    carried = bytes - static_cast<uint64_t>(target);
    const double next = static_cast<double>(level_bytes[level + 1]);
    if (next > 0) {
      total += static_cast<uint64_t>(static_cast<double>(carried) *
                                     (next / static_cast<double>(bytes) + 1));
    }
  }
  return total;
}

}  // namespace siftdb
