// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Compaction: one unit of leveled compaction — the tables of `level` and the
// overlapping tables of the output level that are merged into new tables at
// the output level: `level + 1`, except that level 0 compacts into the base
// level (Version::base_level(): 1, or deeper under
// Options::level_compaction_dynamic_level_bytes, where every level between
// 0 and the base level is empty).
//
// Picking (VersionSet::PickCompaction) follows the scores computed by
// VersionSet::Finalize: level 0 by file count, deeper levels by bytes over
// their target. Within a level, compactions start after the key where the
// previous one ended (round robin), so every key range gets its turn.
//
// A compaction may be merged as several parts over disjoint user-key ranges
// (SplitPoints), each by its own thread. Each part walks its keys in order
// with its own Cursor.
//
// Thread safety: a Compaction is owned by the background thread. Its inputs
// and its Version do not change while it lives, so the const methods may be
// called from several threads at once (each with its own Cursor). The
// destructor requires the DB mutex.

#ifndef SIFTDB_DB_COMPACTION_H_
#define SIFTDB_DB_COMPACTION_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "db/version.h"
#include "db/version_edit.h"
#include "siftdb/options.h"

namespace siftdb {

class VersionSet;

// Target size of the tables written into `level` (a sanitized Options):
// target_file_size_base for levels 0 and 1, times
// target_file_size_multiplier for each level below 1.
uint64_t TargetFileSize(const Options& options, int level);

class Compaction {
 public:
  // Writes into output_level (> level), with tables of
  // TargetFileSize(*options, output_level).
  Compaction(const Options* options, int level, int output_level,
             Version* input_version);
  Compaction(const Compaction&) = delete;
  Compaction& operator=(const Compaction&) = delete;
  // REQUIRES: the DB mutex (releases the input version).
  ~Compaction();

  int level() const { return level_; }
  int output_level() const { return output_level_; }
  VersionEdit* edit() { return &edit_; }
  // which: 0 = tables of level(), 1 = tables of output_level().
  int num_input_files(int which) const {
    return static_cast<int>(inputs_[which].size());
  }
  FileMetaData* input(int which, int i) const { return inputs_[which][i]; }
  uint64_t MaxOutputFileSize() const { return max_output_file_size_; }

  // Where one in-order walk over (part of) the compaction's keys stands in
  // the deeper levels. Starts at the beginning; only moves forward.
  struct Cursor {
    size_t grandparent_index = 0;
    bool seen_key = false;
    int64_t overlapped_bytes = 0;
    // Position in each deeper level for IsBaseLevelForKey.
    size_t level_ptrs[kNumLevels] = {};
  };

  // How far an in-order walk has merged the input tables whose keys do not
  // overlap (output_level() always, level() too when it is >= 1): inputs
  // before next[which] have been released. Starts at the beginning.
  struct ReleaseCursor {
    size_t next[2] = {0, 0};
  };

  // For freeing inputs early, at the first entry of `user_key` in the
  // walk (every entry of smaller user keys has been merged): sets
  // consumed[which] to the number of input tables from cursor.next[which]
  // on whose keys all precede user_key (always 0 for level 0, whose tables
  // overlap). True when at least one table is consumed and the outputs
  // finished so far (all before user_key) can join output_level() now, i.e.
  // no unconsumed table of output_level() begins before user_key. A user key
  // split
  // over neighbouring tables of level() >= 1 is consumed whole, never in
  // part: consumed[0] stops before such a chain until all of it is merged.
  bool ReleasableBefore(std::string_view user_key, const ReleaseCursor& cursor,
                        size_t consumed[2]) const;

  // The Version the inputs were picked from (referenced until the
  // Compaction is destroyed).
  const Version* input_version() const { return input_version_; }

  // True when the single input table can move down a level unchanged.
  bool IsTrivialMove() const;
  // True when no level below output_level() holds user_key, so a deletion
  // of it can be dropped. Calls with one cursor must come in increasing key
  // order.
  bool IsBaseLevelForKey(std::string_view user_key, Cursor* cursor) const;
  // True when the current output table should end before internal_key
  // because it would overlap too many grandparent bytes. Calls with one
  // cursor must come in increasing key order.
  bool ShouldStopBefore(std::string_view internal_key, Cursor* cursor) const;
  // At most max_parts - 1 strictly increasing user keys that cut the
  // compaction into parts of similar size: part i holds the user keys in
  // [split[i-1], split[i]). The cuts fall where output_level() tables begin,
  // and each part gets at least MaxOutputFileSize() of input. Empty when
  // the compaction is too small to split or max_parts <= 1.
  std::vector<std::string> SplitPoints(int max_parts) const;

  // Bytes of input at each side.
  int64_t InputBytes(int which) const;

 private:
  friend class VersionSet;

  const int level_;
  const int output_level_;
  const uint64_t max_output_file_size_;
  const int64_t max_grandparent_overlap_bytes_;
  Version* input_version_;
  VersionEdit edit_;
  std::vector<FileMetaData*> inputs_[2];
  // Tables of output_level() + 1 overlapping the compaction's range.
  std::vector<FileMetaData*> grandparents_;
  const InternalKeyComparator* icmp_ = nullptr;
};

}  // namespace siftdb

#endif  // SIFTDB_DB_COMPACTION_H_
