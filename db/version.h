// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Version: one immutable snapshot of which tables are live at each level.
//
// Level 0 tables come from MemTable flushes and may overlap each other; a
// newer (higher-numbered) level-0 table holds newer data. Tables of a level
// >= 1 are disjoint and sorted by key.
//
// Thread safety: a Version is immutable once installed, so Get and the
// accessors may run without locks while the caller holds a reference.
// Ref() / Unref() REQUIRE the DB mutex.

#ifndef SIFTDB_DB_VERSION_H_
#define SIFTDB_DB_VERSION_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "db/lookup_key.h"
#include "db/version_edit.h"
#include "siftdb/iterator.h"
#include "siftdb/options.h"
#include "siftdb/slice_transform.h"
#include "table/merging_iterator.h"

namespace siftdb {

class Table;
class TableCache;
class VersionSet;

class Version {
 public:
  Version(const Version&) = delete;
  Version& operator=(const Version&) = delete;

  // Looks key up in the tables, newest first. OK with *value set when found;
  // NotFound when absent or deleted; another error when a table is damaged.
  // user_key_hash is the filter hash of key.user_key() (hash once, probe
  // every table), or null.
  absl::Status Get(const ReadOptions& options, const LookupKey& key,
                   const uint64_t* user_key_hash, std::string* value);

  // One key of a MultiGet: the lookup (in) and its answer (out).
  struct MultiGetKey {
    enum class State { kSearching, kFound, kDeleted, kFailed };
    const LookupKey* key = nullptr;
    const uint64_t* user_key_hash = nullptr;  // as for Get
    std::string* value = nullptr;             // set when kFound
    State state = State::kSearching;
    absl::Status status;  // why, when kFailed
    // The first table consulted and whether it was charged a seek (as Get
    // charges them).
    int first_level = -1;
    size_t first_index = 0;
    bool charged = false;
  };

  // Get for many keys. REQUIRES: keys sorted by user key, ascending (equal
  // keys allowed), all of one sequence. Reads each level once for the whole
  // batch: the level-0 tables newest first, then each deeper level, where
  // consecutive keys that fall in the same table are looked up together
  // (Table::MultiGet). Leaves each key kFound, kDeleted, kFailed, or
  // kSearching when no table holds it.
  void MultiGet(const ReadOptions& options, std::span<MultiGetKey> keys);

  // False only when no table that could hold key.user_key() has it in its
  // filter: the level-0 tables whose range holds the key (newest first),
  // then the one table per deeper level whose range does. Consults filters
  // only, never a data block, and stops at the first table that says
  // "maybe". A table without a usable filter, or that cannot be opened,
  // says "maybe". user_key_hash is as for Get. The sequence of key plays
  // no part: a filter covers every version of a key.
  bool KeyMayExist(const LookupKey& key, const uint64_t* user_key_hash);

  // An iterator's sample of what it read (a DBIter calls this about once
  // per MiB of keys and values it passes over): when two or more tables'
  // ranges hold internal_key's user key, a lookup of it would consult the
  // first (the newest) and continue, so that table is charged one seek, as
  // Get charges it (see FileMetaData::seek_budget). Scans and seeks thereby
  // merge overlapping levels down just as lookups do. Lock-free; safe
  // beside reads and other samples.
  void RecordReadSample(std::string_view internal_key);

  // Appends one iterator per level-0 table and one per non-empty deeper
  // level; together they yield every entry of this version. When probes is
  // non-null, also appends one ChildProbe per iterator (each table's
  // filter; for a deeper level, the filter of the one table that could
  // hold the key), for NewProbingMergingIterator. The probes use this
  // Version: the caller's reference must outlive them.
  // When prefix_probes is non-null too, also appends one ChildPrefixProbe
  // per iterator (each table's prefix filter under `extractor`; for a
  // deeper level, LevelMayHoldPrefix).
  void AddIterators(const ReadOptions& options,
                    std::vector<std::unique_ptr<Iterator>>* iters,
                    std::vector<ChildProbe>* probes = nullptr,
                    std::vector<ChildPrefixProbe>* prefix_probes = nullptr,
                    const SliceTransform* extractor = nullptr);

  // False only when no table holds an entry at or after the internal key
  // target whose user key has `prefix` (target's own under extractor):
  // every level-0 table whose range may hold such a key has a prefix
  // filter that rejects it, and so does each deeper level
  // (LevelMayHoldPrefix). Stops at the first "maybe". Reads filters only;
  // a table that cannot be opened says "maybe".
  bool MayHoldPrefix(std::string_view target, std::string_view prefix,
                     const SliceTransform* extractor);

  void Ref();
  void Unref();

  // Tables at `level` overlapping the user-key range [begin, end] (null:
  // unbounded). For level 0 the range is widened to cover overlapping
  // tables transitively, since they overlap each other.
  void GetOverlappingInputs(int level, const std::string_view* begin,
                            const std::string_view* end,
                            std::vector<FileMetaData*>* inputs);

  // True when some table at `level` overlaps the user-key range.
  bool OverlapInLevel(int level, const std::string_view* smallest_user_key,
                      const std::string_view* largest_user_key);

  // Bytes compactions would rewrite to bring every level within its
  // target (an estimate; db/version_set.cc, docs/compaction.md): the write
  // controller's "pending compaction bytes" (RocksDB's name).
  uint64_t pending_compaction_bytes() const {
    return pending_compaction_bytes_;
  }

  // Where level-0 tables are compacted to: 1, or under
  // Options::level_compaction_dynamic_level_bytes the level the last
  // level's size calls for (every level between 0 and it is empty). Set by
  // VersionSet::Finalize.
  int base_level() const { return base_level_; }
  // The level a compaction of `level` (< kNumLevels - 1) writes into.
  int OutputLevel(int level) const {
    return level == 0 ? base_level_ : level + 1;
  }
  // Target bytes of a level >= 1 (set by VersionSet::Finalize); levels
  // above the base level have none (0): they stay empty.
  double level_target_bytes(int level) const {
    return level_target_bytes_[level];
  }

  int NumFiles(int level) const {
    return static_cast<int>(files_[level].size());
  }
  const std::vector<FileMetaData*>& files(int level) const {
    return files_[level];
  }

  std::string DebugString() const;

 private:
  // False only when no table at `level` (>= 1) holds an entry with the
  // user key of internal_key: the key is outside every table's range or
  // the filter of the table whose range holds it says no.
  bool LevelMayHoldUserKey(int level, std::string_view internal_key);
  // probe(table f), or true when f cannot be opened (no evidence of
  // absence). Opening reads the footer, index and filter, no data block.
  bool TableMayMatch(const FileMetaData& f,
                     absl::FunctionRef<bool(const Table&)> probe);
  // Calls fn for each table that may hold k's user key, in the order a
  // lookup reads them (level-0 tables covering it newest first, then at
  // most one per deeper level), until fn returns true. index: the table's
  // position in its level.
  void ForEachTableHoldingKey(
      const LookupKey& k,
      absl::FunctionRef<bool(FileMetaData* f, int level, size_t index)> fn);
  // Keys of a MultiGet that one table may hold: members[begin, end).
  struct TableBatch {
    FileMetaData* file;
    size_t index;  // the table's position in its level
    size_t begin, end;
  };
  // Looks up each batch's keys (members holds indexes into keys, each
  // batch's ascending) in its table at `level`, charging seeks as Get does.
  // The tables hold disjoint keys, so their lookups run in phases across
  // all of them: filter lines loaded, then blocks pinned and loaded, then
  // blocks searched, so the memory misses of the whole batch overlap.
  void MultiGetInTables(const ReadOptions& options, int level,
                        std::span<const TableBatch> tables,
                        std::span<const size_t> members,
                        std::span<MultiGetKey> keys);
  // False only when no table of `level` holds an entry at or after the
  // internal key target whose user key has `prefix` (target's own prefix
  // under extractor).
  bool LevelMayHoldPrefix(int level, std::string_view target,
                          std::string_view prefix,
                          const SliceTransform* extractor);

  friend class Compaction;
  friend class VersionSet;
  friend class VersionBuilder;

  Version(const InternalKeyComparator* icmp, TableCache* table_cache)
      : icmp_(icmp), table_cache_(table_cache) {}
  ~Version();

  const InternalKeyComparator* const icmp_;
  TableCache* const table_cache_;
  Version* next_ = this;  // circular list of the VersionSet's live versions
  Version* prev_ = this;
  int refs_ = 0;

  std::vector<FileMetaData*> files_[kNumLevels];

  // Level most in need of compaction and its score (>= 1 means needed);
  // set by VersionSet::Finalize.
  double compaction_score_ = -1;
  uint64_t pending_compaction_bytes_ = 0;
  int compaction_level_ = -1;
  int base_level_ = 1;
  double level_target_bytes_[kNumLevels] = {};

  // Seek-triggered compaction (LevelDB's idea): a lookup that consults a
  // table and then has to continue below it charges that table one
  // "seek"; a table whose budget (FileMetaData::seek_budget, set by
  // VersionSet::Finalize) runs out is worth merging into the next level,
  // since reads keep paying for the overlap. The first such table is
  // recorded in seek_compaction_ as (level << 32) | index, or -1. Atomic
  // because Get runs without the DB mutex.
  void ChargeSeek(int level, size_t index);
  std::atomic<int64_t> seek_compaction_{-1};
};

// Index of the first table in `files` (sorted, disjoint) whose largest key
// is >= internal_key; files.size() when none.
int FindFile(const InternalKeyComparator& icmp,
             const std::vector<FileMetaData*>& files,
             std::string_view internal_key);

}  // namespace siftdb

#endif  // SIFTDB_DB_VERSION_H_
