// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// VersionSet: the chain of Versions, the MANIFEST that records how they
// came to be, and the file-number and sequence counters.
//
// MANIFEST: a log (WAL record format) of VersionEdits; the first record is
// a full snapshot, each later one a delta. CURRENT names the live MANIFEST
// and is replaced atomically (see SetCurrentFile). Recovery replays the
// MANIFEST named by CURRENT.
//
// Thread safety: REQUIRES the DB mutex for every method, except that
// LogAndApply releases it while it writes to the MANIFEST (only one
// LogAndApply runs at a time: the DB serializes them).

#ifndef SIFTDB_DB_VERSION_SET_H_
#define SIFTDB_DB_VERSION_SET_H_

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "db/version.h"
#include "db/version_edit.h"
#include "siftdb/env.h"
#include "siftdb/options.h"
#include "table/internal_key.h"
#include "util/mutex.h"
#include "wal/log_writer.h"

namespace siftdb {

class Compaction;
class TableCache;
class VersionBuilder;

class VersionSet {
 public:
  VersionSet(std::string dbname, const Options* options,
             TableCache* table_cache, const InternalKeyComparator* icmp);
  VersionSet(const VersionSet&) = delete;
  VersionSet& operator=(const VersionSet&) = delete;
  ~VersionSet();

  // Applies *edit to the current version, records it in the MANIFEST
  // (creating a new MANIFEST when none is open) and installs the result as
  // current. On error the current version is unchanged.
  // REQUIRES: *mu held on entry; it is released during the file I/O.
  absl::Status LogAndApply(VersionEdit* edit, Mutex* mu)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu);

  // Rebuilds the state from CURRENT and its MANIFEST. *save_manifest is set
  // when the caller should write a new MANIFEST (the old one is not reused).
  absl::Status Recover(bool* save_manifest);

  Version* current() const { return current_; }

  // MANIFESTs numbered below this are obsolete; the one CURRENT names is at
  // or above it. After a failed switch CURRENT may name the old MANIFEST or
  // the new one (the rename may have happened), so both stay.
  uint64_t OldestLiveManifestNumber() const { return live_manifest_floor_; }
  uint64_t NewFileNumber() { return next_file_number_++; }
  // The MANIFEST written by the last successful LogAndApply, and its length
  // then: that prefix describes current() exactly. 0 and 0 before the first
  // LogAndApply after Recover.
  uint64_t ManifestFileNumber() const {
    return manifest_file_size_ == 0 ? 0 : manifest_file_number_;
  }
  uint64_t ManifestFileSize() const { return manifest_file_size_; }
  // Gives back a number from NewFileNumber() that went unused.
  // The number NewFileNumber would return next (for the LOG).
  uint64_t PeekNextFileNumber() const { return next_file_number_; }
  void ReuseFileNumber(uint64_t file_number) {
    if (next_file_number_ == file_number + 1) {
      next_file_number_ = file_number;
    }
  }
  void MarkFileNumberUsed(uint64_t number) {
    if (next_file_number_ <= number) next_file_number_ = number + 1;
  }

  SequenceNumber LastSequence() const { return last_sequence_; }
  void SetLastSequence(SequenceNumber s) { last_sequence_ = s; }

  // Logs with numbers below LogNumber() are fully in tables.
  uint64_t LogNumber() const { return log_number_; }
  uint64_t PrevLogNumber() const { return prev_log_number_; }

  int NumLevelFiles(int level) const;
  int64_t NumLevelBytes(int level) const;

  // Every table number referenced by any live Version, with one exception
  // for a compaction that frees its inputs early: when `compaction_version`
  // (the Version a running compaction reads) is referenced by that
  // compaction alone, its tables listed in `released` do not count, since
  // the compaction has finished reading them and no newer Version holds
  // them. Any other reader of that Version keeps them all alive.
  void AddLiveFiles(std::set<uint64_t>* live,
                    const Version* compaction_version = nullptr,
                    const std::set<uint64_t>* released = nullptr) const;

  // Approximate byte offset of internal key `key` in the data of version v.
  uint64_t ApproximateOffsetOf(Version* v, std::string_view key);

  // Sets v's base level and level targets from the options and, with
  // level_compaction_dynamic_level_bytes, from v's level sizes.
  void SetLevelTargets(Version* v) const;
  // Version::pending_compaction_bytes() of v (its files set).
  uint64_t EstimatePendingCompactionBytes(const Version& v) const;
  // True when some level's score calls for a compaction, or lookups have
  // used up some table's seek budget (see Version::ChargeSeek).
  bool NeedsCompaction() const {
    return current_->compaction_score_ >= 1 ||
           current_->seek_compaction_.load(std::memory_order_relaxed) >= 0;
  }

  const InternalKeyComparator* icmp() const { return icmp_; }
  const Options* options() const { return options_; }
  TableCache* table_cache() const { return table_cache_; }

  // The compaction the current version's scores call for, or null.
  // The caller owns the result.
  std::unique_ptr<Compaction> PickCompaction();
  // Why PickCompaction would compact now: "level0-files" (level 0 reached
  // its file trigger), "level-size" (a level passed its target size),
  // "seek" (lookups kept passing over a table), or "" when it would not.
  const char* CompactionReason() const;
  // A compaction of the tables of `level` overlapping [begin, end] (user
  // keys; null: unbounded), or null when none overlap.
  std::unique_ptr<Compaction> CompactRange(int level,
                                           const std::string_view* begin,
                                           const std::string_view* end);
  // An iterator over every input entry of c, in internal key order.
  std::unique_ptr<Iterator> MakeInputIterator(Compaction* c);

  // The key where the next compaction of `level` starts (round robin).
  std::string* compact_pointer(int level) { return &compact_pointer_[level]; }

  // "files[ n0 n1 ... ]" per level.
  std::string LevelSummary() const;

 private:
  friend class Compaction;
  friend class Version;
  friend class VersionBuilder;

  // Adds level + 1 inputs (and grows level inputs when that is free) and
  // fills in the grandparents.
  void SetupOtherInputs(Compaction* c);
  // Smallest and largest internal keys of inputs.
  void GetRange(const std::vector<FileMetaData*>& inputs, std::string* smallest,
                std::string* largest);

  // The counters a MANIFEST replay recovered (defined in version_set.cc).
  struct RecoveredCounters;

  // Replays every record of the MANIFEST `file` into *builder, noting in
  // *counters the counters the edits set. Stops at the first error: a
  // corrupt record, an undecodable edit or another comparator.
  absl::Status ReplayManifest(SequentialFile* file, VersionBuilder* builder,
                              RecoveredCounters* counters);
  // Decodes one MANIFEST record, applies it to *builder unless it is
  // malformed or names another comparator (that error is returned), and
  // notes the counters it sets in *counters.
  absl::Status ApplyManifestRecord(std::string_view record,
                                   VersionBuilder* builder,
                                   RecoveredCounters* counters);
  // Installs builder's version and the recovered counters as the current
  // state; manifest_number is the MANIFEST CURRENT named.
  void InstallRecoveredState(VersionBuilder* builder,
                             const RecoveredCounters& counters,
                             uint64_t manifest_number);

  // Computes the best level to compact and its score for v.
  void Finalize(Version* v);
  void AppendVersion(Version* v);
  // Writes a snapshot of the current state as the first record of log.
  absl::Status WriteSnapshot(log::Writer* log);

  Env* const env_;
  const std::string dbname_;
  const Options* const options_;
  TableCache* const table_cache_;
  const InternalKeyComparator* const icmp_;

  uint64_t next_file_number_ = 2;
  uint64_t manifest_file_number_ = 0;
  uint64_t manifest_file_size_ = 0;  // see ManifestFileSize()
  // The MANIFEST CURRENT was last known to name (see
  // OldestLiveManifestNumber).
  uint64_t live_manifest_floor_ = 0;
  SequenceNumber last_sequence_ = 0;
  uint64_t log_number_ = 0;
  uint64_t prev_log_number_ = 0;

  std::unique_ptr<WritableFile> descriptor_file_;
  std::unique_ptr<log::Writer> descriptor_log_;
  Version dummy_versions_;  // head of the circular list of live versions
  Version* current_ = nullptr;
  std::string compact_pointer_[kNumLevels];
};

}  // namespace siftdb

#endif  // SIFTDB_DB_VERSION_SET_H_
