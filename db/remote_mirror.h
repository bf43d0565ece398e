// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteMirror: the db layer's side of the Redis mirror. DBImpl reports
// what happens to its MemTables and tables; RemoteMirror hands the filter
// bytes and keys to the Redis filter mirror
// (redis/mirror/redis_mirror_writer.h) and keeps the mirror's invariants
// (docs/redis_mirror.md):
//   - a table's filter is in Redis before the Redis manifest lists it;
//   - a MemTable's live filter stays listed until the table holding its
//     data is listed;
//   - nothing is deleted from Redis while a manifest version in a reader's
//     grace window still lists it;
//   - Redis being unreachable never blocks the DB longer than the lease.
//
// Identifiers: a MemTable is named by the number of its log file.
//
// Thread safety: every method may be called from any thread. Methods marked
// "may be called with the DB mutex held" never block on Redis; they queue
// work for the mirror's own thread.

#ifndef SIFTDB_DB_REMOTE_MIRROR_H_
#define SIFTDB_DB_REMOTE_MIRROR_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "siftdb/options.h"
#include "siftdb/write_batch.h"
#include "table/internal_key.h"

namespace siftdb {

class TableCache;
class Statistics;

// A live table as the mirror needs it.
struct MirrorTable {
  uint64_t number = 0;
  int level = 0;
  uint64_t file_size = 0;
  std::string smallest_user_key;
  std::string largest_user_key;
};

class RemoteMirror {
 public:
  // options.remote_filter.mode must not be kOff. table_cache (not owned)
  // gives access to each table's filter bytes; it must outlive the mirror.
  // Fails only on bad configuration (InvalidArgument); an unreachable
  // Redis is not an error (the mirror retries in the background).
  // InvalidArgument ("invalid option: Options.remote_filter...") naming the
  // first bad field; OK otherwise. r.mode must not be kOff.
  static absl::Status ValidateOptions(const RemoteFilterOptions& r);

  // db_created: this open created the DB, so no earlier process of it can
  // hold a lease (otherwise MIRROR-HISTORY says where one may live).
  static absl::StatusOr<std::unique_ptr<RemoteMirror>> Create(
      const Options& options, const std::string& dbname,
      TableCache* table_cache, Statistics* statistics, bool db_created);

  RemoteMirror() = default;
  RemoteMirror(const RemoteMirror&) = delete;
  RemoteMirror& operator=(const RemoteMirror&) = delete;
  // Stops the mirror's thread. Leaves the Redis state as it is; the lease
  // lapses on its own.
  virtual ~RemoteMirror() = default;

  // Once, after recovery: the live tables and the (empty) MemTable that
  // takes the next writes. May be called with the DB mutex held.
  virtual void Start(std::vector<MirrorTable> tables, uint64_t memtable_id) = 0;

  // After Start, before the DB serves reads. Sync mode: returns once the
  // tables given to Start are in Redis under this engine's lease, or once
  // every lease a previous process of this DB may still hold has certainly
  // lapsed. Until then a reader may trust that process's manifest, which
  // lacks the writes it applied to its log but never mirrored (they were
  // in flight when it died, and recovery made them readable). Async mode:
  // returns at once (such writes are past the old manifest's watermark).
  // Must not be called with the DB mutex held.
  virtual void WaitUntilRecoveredDataIsCovered() = 0;

  // By the leader of a write group after the group is in MemTable
  // memtable_id, without the DB mutex. Sync mode: returns once the keys are
  // in Redis, or once the lease has certainly lapsed. Async mode: queues.
  virtual void AddWriteGroup(uint64_t memtable_id, const WriteBatch& group,
                             SequenceNumber last_sequence) = 0;

  // MemTable old_id became immutable and new_id takes the writes. May be
  // called with the DB mutex held.
  virtual void SwitchMemTable(uint64_t old_id, uint64_t new_id) = 0;

  // A new set of live tables was installed; the data of the MemTables in
  // retired_memtables is now in those tables. May be called with the DB
  // mutex held.
  virtual void VersionInstalled(std::vector<MirrorTable> tables,
                                std::vector<uint64_t> retired_memtables) = 0;

  // One line of state for GetProperty("siftdb.remote-filter").
  virtual std::string DebugString() = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_DB_REMOTE_MIRROR_H_
