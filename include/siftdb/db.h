// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DB: an embedded, persistent, ordered key-value store (an LSM tree whose
// tables each carry a Bloom filter).
//
// Including this header alone gives everything a user needs.
//
// Thread safety: a DB is safe for concurrent use by many threads without
// external locking. Iterators and snapshots must be released before the DB
// is destroyed.
// Durability: a write acknowledged with WriteOptions.sync = true survives
// any crash; without sync it survives a process crash but may be lost when
// the machine crashes. A write made with WriteOptions.disable_wal survives
// only once its MemTable is flushed (Flush, Close, or a full MemTable).
// Errors: absl::Status everywhere. Get of an absent key is NotFound; bad
// input (oversized keys, nonsense options, bad paths) is InvalidArgument
// with a message naming the problem; damaged files are DataLoss naming the
// file and offset.

#ifndef SIFTDB_INCLUDE_DB_H_
#define SIFTDB_INCLUDE_DB_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "siftdb/comparator.h"
#include "siftdb/env.h"
#include "siftdb/export.h"
#include "siftdb/filter_policy.h"
#include "siftdb/iterator.h"
#include "siftdb/options.h"
#include "siftdb/write_batch.h"

namespace siftdb {

// An immutable view of the database at one sequence number.
class SIFTDB_EXPORT Snapshot {
 protected:
  virtual ~Snapshot() = default;
};

// A range of user keys [start, limit).
struct SIFTDB_EXPORT Range {
  std::string_view start;
  std::string_view limit;
};

class SIFTDB_EXPORT DB {
 public:
  // Opens (or with create_if_missing creates) the database in directory
  // `path`, recovering any writes not yet flushed to tables.
  static absl::StatusOr<std::unique_ptr<DB>> Open(const Options& options,
                                                  const std::string& path);

  // Opens the database in `path` for reading only. Takes no lock and
  // writes nothing to the directory: the logs not yet flushed are replayed
  // into memory, no LOG is created unless options.info_log is set, and the
  // Redis mirror writer is never started (options.remote_filter is ignored,
  // and the info log says so). Reads see the state as of the open, even
  // beside a live writer in another process; a table that writer deletes
  // later makes the reads that need it fail with an error naming it.
  // Writes, Flush, CompactRange, CreateCheckpoint and the file-deletion
  // calls return FailedPrecondition. A MANIFEST, table or log that
  // disappears during the open (the writer moved on) is retried a few
  // times before the error is returned.
  static absl::StatusOr<std::unique_ptr<DB>> OpenForReadOnly(
      const Options& options, const std::string& path);

  DB() = default;
  DB(const DB&) = delete;
  DB& operator=(const DB&) = delete;
  // Closes: waits for background work; nothing acknowledged is lost.
  virtual ~DB();

  virtual absl::Status Put(const WriteOptions& options, std::string_view key,
                           std::string_view value) = 0;
  virtual absl::Status Delete(const WriteOptions& options,
                              std::string_view key) = 0;
  // Applies every update of `updates` atomically.
  virtual absl::Status Write(const WriteOptions& options,
                             WriteBatch* updates) = 0;
  // absl::IsNotFound(status) when the key is absent.
  virtual absl::Status Get(const ReadOptions& options, std::string_view key,
                           std::string* value) = 0;
  // Reads every key at one point in time: one sequence number (the
  // options' snapshot, else the latest) and one set of MemTables and tables
  // for the whole batch, so the answers are consistent with each other.
  // Returns one status per key, in order: OK with (*values)[i] set,
  // NotFound, or that key's own error (an oversized key is InvalidArgument,
  // a damaged block DataLoss) without failing the others. *values is
  // resized to keys.size(); entries of keys that were not found are empty.
  virtual std::vector<absl::Status> MultiGet(
      const ReadOptions& options, std::span<const std::string_view> keys,
      std::vector<std::string>* values) = 0;
  // False only when the key certainly does not exist (MemTables and
  // filters, no data I/O). When the value is found in a MemTable it is
  // returned and *value_found is set.
  //
  // Reads at the options' snapshot, else the latest sequence. Where the
  // newest entry for the key visible there is in a MemTable, the answer is
  // certain: a value returns true, copies it into *value (when value is
  // non-null) and sets *value_found; a deletion returns false. Otherwise
  // the tables that could hold the key are asked by their Bloom filters
  // alone, the way Get walks them (the level-0 tables whose key range
  // holds it, newest first, then the one table per deeper level whose
  // range does): true as soon as one filter says "maybe", false when none
  // does. No data block is ever read; a table not open yet is opened
  // through the table cache, which reads its footer, index and filter.
  // Any doubt answers true: a table without a filter, whose filter was
  // built by a policy this build cannot read, or that cannot be opened (a
  // Get of the key then reports the error). So there are no false
  // negatives, and a false positive is as likely as in Get (about 1% of
  // absent keys at the default 10 bits per key). A table's filter knows
  // no sequence numbers: under a snapshot, a key written later and
  // already flushed may still answer true.
  // *value_found (when non-null) is set to false whenever the value is not
  // returned, i.e. on every path but a MemTable hit with a non-null value;
  // *value is written only when *value_found becomes true. A key longer
  // than kMaxKeySize returns false (no write accepts one; Get of it is
  // InvalidArgument). Works after Close and on a read-only DB. Counted in
  // key_may_exist.checks and key_may_exist.negatives (GetProperty).
  virtual bool KeyMayExist(const ReadOptions& options, std::string_view key,
                           std::string* value = nullptr,
                           bool* value_found = nullptr) = 0;
  virtual std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) = 0;

  virtual const Snapshot* GetSnapshot() = 0;
  virtual void ReleaseSnapshot(const Snapshot* snapshot) = 0;

  // Properties (false for an unknown name); docs/operations.md,
  // "Properties", defines each:
  //   "siftdb.stats"                    levels, compactions, stalls, counters
  //   "siftdb.levelstats"               table: level, files, size MB,
  //       compaction MB read / written, seconds and count per level
  //   "siftdb.num-files-at-level<N>"    table count at level N
  //   "siftdb.sstables"                 every live table with its key range
  //   "siftdb.approximate-memory-usage" MemTables + block cache + the
  //       filters and index blocks on the heap, in bytes
  //   "siftdb.filter-memory"            bytes of the tables' filters held
  //       now, on the heap and (Options::cache_filter_blocks) in the cache
  //   "siftdb.filter-memory-in-cache"   of those, the bytes in the block
  //       cache
  //   "siftdb.index-memory"             bytes of the open tables' index
  //       blocks and their search fingerprints (on the heap)
  //   "siftdb.block-cache-capacity"     block cache capacity in bytes (0:
  //       none); with Options::block_cache, the shared cache's
  //   "siftdb.block-cache-usage"        bytes in the block cache (a shared
  //       cache: every DB's blocks)
  //   "siftdb.compaction-pending"       "1" when a compaction is due now
  //   "siftdb.estimate-pending-compaction-bytes"  bytes the compactions
  //       bringing every level under its target would rewrite (RocksDB's
  //       estimate)
  //   "siftdb.num-running-compactions"  compactions merging now (0 or 1)
  //   "siftdb.estimate-num-keys"        entries in MemTables and tables; an
  //       over-estimate after overwrites and deletes (each version counts)
  //   "siftdb.background-error"         "OK" or the error that stopped writes
  //   "siftdb.rate-limiter-bytes"       bytes Options::rate_limiter has let
  //       through (every DB sharing it counts); "0" without one
  //   "siftdb.remote-filter"            the Redis mirror's state, or "off"
  //   "siftdb.counter.<name>"           one counter, e.g. filter.negatives
  //       (data-block reads the filters saved), filter.checks,
  //       filter.positives, filter.false_positives, block.data_reads,
  //       block_cache.hits, block_cache.misses, bytes.read, bytes.written,
  //       key_may_exist.checks (KeyMayExist calls), key_may_exist.negatives
  //       (of those, answered false), iter.bounds_skipped_tables and
  //       iter.bounds_skipped_blocks (tables and data blocks an iterator
  //       with bounds left unread), prefix_filter.checks and
  //       prefix_filter.negatives (tables a prefix seek probed and skipped)
  virtual bool GetProperty(std::string_view name, std::string* value) = 0;

  // For each range, the approximate file-system bytes its keys use.
  virtual void GetApproximateSizes(const Range* ranges, int n,
                                   uint64_t* sizes) = 0;

  // Compacts the key range [*begin, *end] (null: unbounded) down the tree.
  virtual absl::Status CompactRange(const std::string_view* begin,
                                    const std::string_view* end) = 0;

  // Writes the MemTable to a level-0 table (see FlushOptions::wait). After
  // it the logs written so far are no longer needed for recovery.
  virtual absl::Status Flush(const FlushOptions& options) = 0;

  // Closes the DB: waits for background work (a pending MemTable flush is
  // finished, a running compaction is stopped), stops the Redis mirror
  // (revoking its lease), syncs and closes the log. Returns the first
  // error of those steps, or the background error that stopped writes
  // (including a compaction that failed while closing). Afterwards writes,
  // Flush, CompactRange and CreateCheckpoint return FailedPrecondition;
  // reads still work until the DB is destroyed. Calling it again returns
  // the same status. The destructor closes a DB not closed yet.
  virtual absl::Status Close() = 0;

  // Makes an openable, consistent copy of the live DB in directory `dir`
  // (which must not exist; its parent must), while writes and compactions
  // go on: tables are hard-linked when the file system allows and copied
  // otherwise, a new MANIFEST and CURRENT name exactly those tables, and
  // the logs not yet flushed are copied. The copy holds every write
  // acknowledged before the call and a prefix of the writes made during
  // it. Built in `dir`.tmp and renamed, so `dir` appears complete or not
  // at all. A copy opened with the Redis mirror on is a second writer of
  // the mirror: give it its own remote_filter.name.
  virtual absl::Status CreateCheckpoint(const std::string& dir) = 0;

  // For users who copy the files themselves: the live table files, CURRENT
  // and the MANIFEST, as names relative to the DB directory ("/000012.sst",
  // "/CURRENT", "/MANIFEST-000005"), and in *manifest_file_size the length
  // of the MANIFEST prefix that describes exactly those tables (copy only
  // that much). Logs are not listed: with flush_memtable every write
  // acknowledged before the call is in the listed tables. Call
  // DisableFileDeletions first so the files stay until they are copied.
  virtual absl::Status GetLiveFiles(std::vector<std::string>* files,
                                    uint64_t* manifest_file_size,
                                    bool flush_memtable) = 0;
  // Obsolete files are kept, not deleted, until EnableFileDeletions has
  // been called as often as DisableFileDeletions (or once with force).
  virtual absl::Status DisableFileDeletions() = 0;
  virtual absl::Status EnableFileDeletions(bool force) = 0;
};

// Removes the database at `path` and its files. OK when it does not exist.
SIFTDB_EXPORT absl::Status DestroyDB(const std::string& path,
                                     const Options& options);

// Rebuilds the database at `path` from whatever of its logs and tables is
// still readable, when its MANIFEST or tables are damaged: the newest
// readable version of every key survives; entries in damaged log regions
// and table blocks are lost, and unreadable tables are moved to
// <path>/lost/. The DB must not be open. A summary goes to
// options.info_log when set.
SIFTDB_EXPORT absl::Status RepairDB(const std::string& path,
                                    const Options& options);

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_DB_H_
