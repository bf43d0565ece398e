// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteMirrorImpl: the RemoteMirror DBImpl talks to (db/remote_mirror.h).
// DBImpl's calls only queue events (hashing a write group's keys on the way)
// and, for writes, wait as the mode says; one mirror thread owns everything
// that talks to Redis (a RedisMirrorWriter) and the local copies of the
// MemTable filters (LiveFilter), and keeps the invariants:
//
//  * Ordering. Events are applied in the order DBImpl made them: a write
//    group of MemTable M precedes SwitchMemTable(M, N), which precedes the
//    VersionInstalled that retires M. A live filter is listed (whole, by the
//    commit of the pipeline that creates it) before any write to it is
//    acknowledged, and stays listed until a manifest lists the tables that
//    hold its data (the same commit removes it).
//  * Sync writes. AddWriteGroup returns once applied_seq_ covers the group
//    (its bits were written in a pipeline whose checks passed while the
//    lease was held), or once the steady clock passes lease_bound_ms_, the
//    time by which every lease this engine may have extended has certainly
//    lapsed (so readers fail open). lease_bound_ms_ is raised BEFORE any
//    lease-extending commit is sent, so a waiter can never be released by an
//    old bound while a renewal that lacks its keys is in flight.
//  * After a failure the lease is not renewed; the mirror thread republishes
//    every filter (the MemTable filters from their local copies, which hold
//    every key applied so far, including groups acknowledged while the
//    lease was lapsed) and only then takes the lease again, in one pipeline.
//    From the moment it decides to send that pipeline, writers wait again.
//  * A new replication history (the lease taken on another server than the
//    previous one: a failover), or an earlier acquisition whose outcome is
//    unknown, sets ack_hold_ms_ to the bound of every earlier lease: until
//    then no sync write is acknowledged, even once its keys are in Redis,
//    because the old server may still be a master whose readers trust our
//    old lease over filters lacking those keys (RedisMirrorWriter::
//    ack_hold_ms()). The writer also treats a silent reconnect (Sentinel
//    named a new master) as a failure, so the move is always noticed.
//  * Async writes return after queuing, unless the oldest unapplied group is
//    older than async_max_lag_ms while a lease may be live: then they wait
//    (bounded by the lease) — the lag bound. The manifest's complete_seq /
//    complete_ms say up to where the mirror is complete.
//  * Every pipeline ends in one checked commit (fencing, lease with the
//    server's replication id, generation / version / writes); the bits and
//    the watermark it carries count only if it passes. A commit that only
//    checks the lease does not extend it, so only renewals raise the bound.
//  * Fenced (a later engine open publishes this mirror name): the thread
//    stops publishing for good, drops the queue, and says so in the LOG and
//    in DebugString (state=fenced); writers no longer wait.
//  * Close revokes the lease (best effort), so readers stop trusting at
//    once rather than after its TTL.
//  * Before the first lease is taken, lease_bound_ms_ is creation time +
//    lease_ttl_ms: a previous process of this DB may still hold a lease over
//    a manifest that lacks this process's writes. Where that lease lived is
//    in MIRROR-HISTORY (mirror_history.h): unless the DB was created by
//    this open, the first acquisition holds acknowledgements (and the open)
//    until that bound when the record is missing, unsettled, or names
//    another history than the one the lease lands on. The record is made
//    unsettled, durably, before every acquisition.
//
// Thread safety: the RemoteMirror methods may be called from any thread;
// mu_ guards the queue and what writers wait on; everything else belongs
// to the mirror thread.

#ifndef SIFTDB_DB_MIRROR_REMOTE_MIRROR_IMPL_H_
#define SIFTDB_DB_MIRROR_REMOTE_MIRROR_IMPL_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "db/mirror/mirror_history.h"
#include "db/remote_mirror.h"
#include "redis/mirror/redis_mirror_live_filter.h"
#include "redis/mirror/redis_mirror_writer.h"
#include "siftdb/env.h"
#include "util/mutex.h"

namespace siftdb {

class RemoteMirrorImpl final : public RemoteMirror {
 public:
  // history_on_disk: the MIRROR-HISTORY record as read at open (nullopt:
  // none, or unreadable).
  RemoteMirrorImpl(const Options& options, const std::string& dbname,
                   TableCache* table_cache,
                   RedisMirrorWriterOptions writer_options,
                   LiveFilterOptions live_options,
                   std::optional<MirrorHistory> history_on_disk);
  ~RemoteMirrorImpl() override;

  void Start(std::vector<MirrorTable> tables, uint64_t memtable_id) override;
  void WaitUntilRecoveredDataIsCovered() override;
  void AddWriteGroup(uint64_t memtable_id, const WriteBatch& group,
                     SequenceNumber last_sequence) override;
  void SwitchMemTable(uint64_t old_id, uint64_t new_id) override;
  void VersionInstalled(std::vector<MirrorTable> tables,
                        std::vector<uint64_t> retired_memtables) override;
  std::string DebugString() override;

 private:
  struct Event {
    enum class Kind { kStart, kWrites, kSwitch, kVersion };
    Kind kind = Kind::kWrites;
    uint64_t memtable_id = 0;          // kStart, kWrites, kSwitch (the old one)
    uint64_t new_id = 0;               // kSwitch
    std::vector<uint64_t> hashes;      // kWrites: FilterKeyHash of each Put key
    SequenceNumber last_sequence = 0;  // kWrites
    int64_t enqueue_ms = 0;            // steady
    std::vector<MirrorTable> tables;   // kStart, kVersion
    std::vector<uint64_t> retired;     // kVersion
  };
  // The table set to publish, merged from VersionInstalled events.
  struct PendingVersion {
    std::vector<MirrorTable> tables;
    std::vector<uint64_t> retired;
  };
  // A table's filter facts, read once.
  struct TableFilterInfo {
    MirrorImmutableEntry entry;  // level / range as first seen
    uint64_t num_keys = 0;
  };

  void Enqueue(Event e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Raises the bound writers wait until (before a lease-extending send).
  void RaiseLeaseBound(int64_t bound_ms);

  // --- Mirror thread (remote_mirror_thread.cc) ---
  void ThreadMain();
  // Applies events to the local state; version events go to
  // pending_version_. Returns the highest sequence applied.
  void ApplyLocally(std::vector<Event>* events, bool defer_versions);
  // Tries to make pending_version_ the published table set: reads the new
  // tables' filters and stages their uploads. False when a table could not
  // be read (retried later).
  bool StagePendingVersion();
  // One trusted iteration: apply the queue, Flush, renew, delete.
  void RunTrusted();
  // Full republication; OK when trusted again.
  absl::Status Republish();
  absl::StatusOr<TableFilterInfo> ReadTableFilter(const MirrorTable& t,
                                                  std::string* bytes);
  absl::StatusOr<std::vector<MirrorImmutableEntry>> EntriesFor(
      const std::vector<MirrorTable>& tables);
  std::vector<MirrorLiveEntry> LiveListing() const;
  void SetApplied(SequenceNumber seq, bool failed, const absl::Status& why);
  // Brings MIRROR-HISTORY up to date with the writer: before a lease
  // acquisition (before_acquire) an unsettled record, which must be durable
  // before the acquisition is sent (an error here stops the republication);
  // otherwise settled once the lease is confirmed and no hold is pending.
  // Writes only when the record changes.
  absl::Status RecordHistory(bool before_acquire);
  void Log(const std::string& message);
  // Logs, once, that the writer was fenced by a later engine open.
  void NoteFenced();

  const Options options_;  // copy; info_log / comparator not owned
  const std::string dbname_;
  const RemoteFilterOptions::Mode mode_;
  TableCache* const table_cache_;
  const LiveFilterOptions live_options_;
  const int64_t lease_ttl_ms_;
  // Async mode: how long the mirror thread lets groups gather before a
  // pipeline (a small part of async_max_lag_ms).
  const int64_t batch_delay_ms_;

  Mutex mu_;
  CondVar work_cv_;  // the mirror thread waits here
  CondVar done_cv_;  // writers wait here
  // Events in order; the mirror thread takes them all at once (swap).
  std::vector<Event> queue_ ABSL_GUARDED_BY(mu_);
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // The mirror thread sleeps with nothing to do: an event must wake it.
  bool mirror_idle_ ABSL_GUARDED_BY(mu_) = false;
  bool started_ ABSL_GUARDED_BY(mu_) = false;
  // Every write with sequence <= applied_seq_ is in Redis.
  SequenceNumber applied_seq_ ABSL_GUARDED_BY(mu_) = 0;
  SequenceNumber enqueued_seq_ ABSL_GUARDED_BY(mu_) = 0;
  // Steady ms after which no lease of this engine can be live.
  int64_t lease_bound_ms_ ABSL_GUARDED_BY(mu_) = 0;
  // Steady ms before which no sync write is acknowledged by applied_seq_
  // (a lease on an older replication history may still be trusted).
  int64_t ack_hold_ms_ ABSL_GUARDED_BY(mu_) = 0;
  // Enqueue time of the oldest group not yet applied (in flight), or 0.
  int64_t inflight_oldest_ms_ ABSL_GUARDED_BY(mu_) = 0;
  bool trusted_ ABSL_GUARDED_BY(mu_) = false;
  bool fenced_ ABSL_GUARDED_BY(mu_) = false;
  std::string writer_state_ ABSL_GUARDED_BY(mu_);
  int64_t writer_state_ms_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Status last_error_ ABSL_GUARDED_BY(mu_);
  int64_t republishes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t waits_lapsed_ ABSL_GUARDED_BY(mu_) = 0;  // sync waits cut by lease
  int64_t groups_ ABSL_GUARDED_BY(mu_) = 0;        // write groups queued
  std::thread thread_;

  // --- Mirror thread only ---
  std::unique_ptr<RedisMirrorWriter> writer_;
  // Mirror thread only: MIRROR-HISTORY as last written or read (nullopt:
  // unknown, so the next RecordHistory writes).
  std::optional<MirrorHistory> history_on_disk_;
  std::map<uint64_t, std::unique_ptr<LiveFilter>> lives_;
  std::map<uint64_t, LiveFilter::Delta> deltas_;  // changes not yet sent
  std::vector<MirrorTable> tables_;  // the table set last staged/published
  // An empty vector with capacity, swapped in for queue_ (no regrowth of
  // the queue after every batch).
  std::vector<Event> spare_events_;
  std::optional<PendingVersion> pending_version_;
  std::map<uint64_t, TableFilterInfo> table_info_;
  SequenceNumber local_seq_ = 0;  // highest sequence in lives_
  int64_t batch_unix_ms_ = 0;     // when the current batch was taken
  int64_t retry_at_ms_ = 0;
  int64_t backoff_ms_ = 0;
  int64_t version_retry_at_ms_ = 0;
  bool swept_ = false;  // orphans of earlier engines looked for
  bool fence_logged_ = false;
  // The listing (tables, live filters and their sub-filters) changed since
  // the last successful Flush.
  bool listing_dirty_ = true;
};

}  // namespace siftdb

#endif  // SIFTDB_DB_MIRROR_REMOTE_MIRROR_IMPL_H_
