// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl: the DB implementation.
//
// Concurrency model:
//  - mutex_ guards the state marked ABSL_GUARDED_BY below.
//  - Writers queue in writers_; the one at the front (the leader) merges the
//    queued batches into one group, appends it to the log as one record and
//    inserts it into mem_ with mutex_ released, then wakes the followers.
//    Only the leader touches log_ and inserts into mem_.
//  - Readers take references to mem_, imm_ and the current Version under
//    mutex_, then read without it (MemTables and Versions are safe for
//    concurrent reads).
//  - One background thread flushes imm_ to a level-0 table and runs
//    compactions. background_work_cv_ signals it; background_done_cv_
//    signals waiters when a piece of background work completes.
// Durability: a write group is in the OS before any member returns (the log
// writer flushes each record); with sync it is also fdatasync'ed.

#ifndef SIFTDB_DB_DB_IMPL_H_
#define SIFTDB_DB_DB_IMPL_H_

#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "db/compaction.h"
#include "db/db_iter.h"
#include "db/memtable.h"
#include "db/remote_mirror.h"
#include "db/snapshot.h"
#include "db/table_cache.h"
#include "db/version_set.h"
#include "db/write_controller.h"
#include "siftdb/db.h"
#include "table/internal_key.h"
#include "table/table_options.h"
#include "util/cache.h"
#include "util/mutex.h"
#include "util/statistics.h"
#include "wal/log_writer.h"

namespace siftdb {

class DBImpl : public DB {
 public:
  // read_only: for DB::OpenForReadOnly (no LOG is created, writes refused).
  DBImpl(const Options& sanitized_options, const std::string& dbname,
         bool read_only = false);
  DBImpl(const DBImpl&) = delete;
  DBImpl& operator=(const DBImpl&) = delete;
  ~DBImpl() override;

  absl::Status Put(const WriteOptions& options, std::string_view key,
                   std::string_view value) override;
  absl::Status Delete(const WriteOptions& options,
                      std::string_view key) override;
  absl::Status Write(const WriteOptions& options, WriteBatch* updates) override;
  absl::Status Get(const ReadOptions& options, std::string_view key,
                   std::string* value) override;
  std::vector<absl::Status> MultiGet(const ReadOptions& options,
                                     std::span<const std::string_view> keys,
                                     std::vector<std::string>* values) override;
  bool KeyMayExist(const ReadOptions& options, std::string_view key,
                   std::string* value, bool* value_found) override;
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) override;
  const Snapshot* GetSnapshot() override;
  void ReleaseSnapshot(const Snapshot* snapshot) override;
  bool GetProperty(std::string_view name, std::string* value) override;
  void GetApproximateSizes(const Range* ranges, int n,
                           uint64_t* sizes) override;
  absl::Status CompactRange(const std::string_view* begin,
                            const std::string_view* end) override;
  absl::Status Flush(const FlushOptions& options) override;
  absl::Status Close() override;
  absl::Status CreateCheckpoint(const std::string& dir) override;
  absl::Status GetLiveFiles(std::vector<std::string>* files,
                            uint64_t* manifest_file_size,
                            bool flush_memtable) override;
  absl::Status DisableFileDeletions() override;
  absl::Status EnableFileDeletions(bool force) override;

  // Freezes the MemTable and waits until it is a level-0 table.
  absl::Status FlushMemTable();
  // Waits until no flush or compaction is pending or running.
  absl::Status WaitForBackgroundWork();
  Statistics* statistics() { return &stats_; }

 private:
  friend class DB;
  struct Writer;

  // The prefix every entry an iterator with these options reads after a
  // Seek has (for NewProbingMergingIterator), or null when its seeks are
  // total-order (db_impl_iter.cc).
  SeekPrefix PrefixOfSeeks(const ReadOptions& options) const;

  // --- Open and recovery (db_impl_open.cc) ---
  absl::Status NewDB();
  // DataLoss if the directory holds tables, logs or a later MANIFEST
  // although CURRENT is missing (a damaged database, not an empty one).
  absl::Status CheckNoOrphanedData();
  absl::Status Recover(VersionEdit* edit, bool* save_manifest)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Checks that every table the recovered MANIFEST names exists, and
  // lists the logs it does not cover yet, oldest first.
  absl::Status FindLogsToReplay(std::vector<uint64_t>* logs)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Replays one log. With `into` null, into MemTables flushed to level-0
  // tables (recorded in edit); otherwise every record goes into `into`
  // and nothing is written (read-only open).
  absl::Status RecoverLogFile(uint64_t log_number, bool last_log,
                              bool* save_manifest, VersionEdit* edit,
                              SequenceNumber* max_sequence, MemTable* into)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // A new, empty MemTable (unreferenced) with this DB's filter size.
  MemTable* NewMemTable() const;
  // Creates log file `number` and a fresh MemTable. The directory entry is
  // synced now, or with defer_dir_sync left to SyncSwitchedLog.
  absl::Status NewLogFile(uint64_t number, bool defer_dir_sync = false)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // Read-only open (db_impl_readonly.cc): recovery that writes nothing.
  absl::Status RecoverReadOnly() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // OK, or why writes and other changes are refused: the DB is read-only
  // or closed. The name of the call goes into the message.
  absl::Status CheckWritable(const char* call) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Close's step before stopping the background thread: when mem_ holds
  // writes made with WriteOptions::disable_wal, flush it (no log holds
  // them). OK when there is nothing to do.
  absl::Status FlushUnloggedWritesForClose() ABSL_LOCKS_EXCLUDED(mutex_);

  // --- Checkpoints (db_impl_checkpoint.cc) ---
  // What a checkpoint copies, captured under the mutex.
  struct CheckpointPlan;
  absl::Status CopyCheckpointFiles(const CheckpointPlan& plan,
                                   const std::string& dir)
      ABSL_LOCKS_EXCLUDED(mutex_);

  // --- Read path (db_impl.cc) ---
  // What a read sees: the sequence it reads at and referenced MemTables and
  // Version, released by ReleaseReadState.
  struct ReadState {
    SequenceNumber sequence = 0;
    MemTable* mem = nullptr;
    MemTable* imm = nullptr;  // may stay null
    Version* current = nullptr;
  };
  ReadState AcquireReadState(const ReadOptions& options)
      ABSL_LOCKS_EXCLUDED(mutex_);
  void ReleaseReadState(const ReadState& state) ABSL_LOCKS_EXCLUDED(mutex_);
  // The merge of every MemTable and table `state` references, newest
  // first, for a DBIter (db_impl_iter.cc). The caller keeps `state` until
  // the result is gone.
  std::unique_ptr<Iterator> NewInternalIterator(const ReadOptions& options,
                                                const ReadState& state);
  // What a DBIter over `state` samples its reads into (db/db_iter.h).
  static ReadSampler ReadSamplerOf(const ReadState& state);
  // A new DBIter's sample seed: every iterator gets its own.
  uint64_t NextReadSampleSeed() {
    return next_read_sample_seed_.fetch_add(1, std::memory_order_relaxed);
  }
  // NewIterator's for prefix_same_as_start (db_impl_iter.cc).
  class PrefixSeekIterator;
  // One key's lookup in what `state` references (no lock held).
  absl::Status GetFromState(const ReadOptions& options, const ReadState& state,
                            std::string_view key, std::string* value);
  // MultiGet of two or more keys in what `state` references (no lock held;
  // db_impl_multiget.cc). statuses and values are keys.size() long.
  void MultiGetFromState(const ReadOptions& options, const ReadState& state,
                         std::span<const std::string_view> keys,
                         std::vector<std::string>* values,
                         std::vector<absl::Status>* statuses);
  // InvalidArgument for a key past kMaxKeySize, naming its size.
  static absl::Status KeyTooLarge(std::string_view key);
  // KeyMayExist's answer from what `state` references (no lock held).
  bool KeyMayExistInState(const ReadState& state, std::string_view key,
                          std::string* value, bool* value_found);

  // --- Write path (db_impl.cc) ---
  absl::Status MakeRoomForWrite(bool force)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Freezes mem_ as imm_ (for the background thread to flush) behind a
  // new log and MemTable. forced: by Flush/CompactRange, not a full
  // MemTable.
  absl::Status SwitchMemTable(bool forced)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Makes what the last SwitchMemTable left unsynced durable: the old log
  // (synced, then closed) and the new log's directory entry. A synced
  // write calls it before its own sync, so durability stays a prefix;
  // Close calls it before closing. Waits for a call already running on
  // another thread. May release mutex_ while syncing. A failure is
  // recorded as the background error.
  absl::Status SyncSwitchedLog() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Once imm_'s flush is installed its log is obsolete (every entry is in
  // a synced table): closes it unsynced, unless a SyncSwitchedLog has it.
  void DropSwitchedLog() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  bool SwitchedLogUnsynced() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_) {
    return unsynced_old_log_ != nullptr || log_dir_unsynced_ ||
           switched_log_sync_running_;
  }
  WriteBatch* BuildBatchGroup(Writer** last_writer, bool* sync)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // --- Compaction (db_impl_compaction.cc) ---
  struct CompactionOutput;
  struct CompactionPart;
  struct CompactionState;
  struct ManualCompaction {
    int level = 0;
    bool done = false;
    // Set while the background thread works on it (with mutex_ released);
    // the requester waits for it to clear before the struct goes away.
    bool in_progress = false;
    bool has_begin = false, has_end = false;
    std::string begin, end;  // user keys
  };
  // Per-level figures for "siftdb.stats".
  struct LevelStats {
    int64_t micros = 0;
    int64_t bytes_read = 0;
    int64_t bytes_written = 0;
    int64_t count = 0;
  };
  void BackgroundCompaction() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  absl::Status DoCompactionWork(CompactionState* compact)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Merges one part's key range into its output tables. Unless imm_micros
  // is null, also flushes each full MemTable as it appears and adds the
  // time spent to *imm_micros (only the background thread does this).
  absl::Status MergeCompactionPart(const CompactionState& compact,
                                   CompactionPart* part, int64_t* imm_micros)
      ABSL_LOCKS_EXCLUDED(mutex_);
  absl::Status OpenCompactionOutputFile(const CompactionState& compact,
                                        CompactionPart* part)
      ABSL_LOCKS_EXCLUDED(mutex_);
  // Finishes, syncs and checks the part's current output; records in it
  // (siftdb.input.files) the inputs it completes (see MergedInputsUpTo).
  absl::Status FinishCompactionOutputFile(const Compaction& c,
                                          CompactionPart* part, Iterator* input)
      ABSL_LOCKS_EXCLUDED(mutex_);
  // Frees inputs early (Options::free_compaction_inputs_early): installs
  // the part's finished, not yet installed outputs into level + 1, removes
  // the consumed[which] input tables from part->release.next[which] on from
  // the Version, and deletes them if nobody else reads them. REQUIRES: the
  // part's current output is finished, and Compaction::ReleasableBefore
  // said yes for the key the merge stands at.
  absl::Status ReleaseMergedInputs(const CompactionState& compact,
                                   CompactionPart* part,
                                   const size_t consumed[2])
      ABSL_LOCKS_EXCLUDED(mutex_);
  absl::Status InstallCompactionResults(CompactionState* compact)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void CleanupCompaction(CompactionState* compact)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Compacts the tables of `level` overlapping [begin, end] into level + 1,
  // through the background thread; waits for it.
  absl::Status ManualCompactLevel(int level, const std::string_view* begin,
                                  const std::string_view* end);

  // --- LOG lines (db_impl_events.cc) ---
  // Every field of options_, one "Options.<name>: <value>" line each.
  void LogOptions();
  // "L0 2 files 1234 bytes, L1 ..." for the current Version.
  std::string LevelSummary() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void LogCompactionStart(int job, const char* reason, const Compaction& c,
                          size_t parts) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // A writer is about to wait for `cause` ("memtable-full",
  // "level0-slowdown", "level0-stop", "pending-compaction-bytes-slowdown",
  // "pending-compaction-bytes-stop"): logs the start of a stall, with
  // detail(), unless one with that cause is under way (detail is then not
  // called). The waiting code sets stall_last_micros_ when the wait ends.
  void NoteWriteStall(const char* cause,
                      absl::FunctionRef<std::string()> detail)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // The compaction debt against Options' soft and hard limits.
  WritePressure CurrentWritePressure() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // For the LOG: the debt and its limits (and, delayed, the write rate).
  std::string DescribeWritePressure(bool delayed)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Logs the end of the stall under way, if any: a write went through
  // without waiting, or the DB closes.
  void EndWriteStall() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // --- Properties (db_impl_properties.cc) ---
  // Of the table cache's lookups since open, the percentage that found the
  // table open.
  double TableCacheHitPercent() const;
  // "siftdb.estimate-num-keys"; opens tables as needed, without the mutex.
  uint64_t EstimateNumKeys() ABSL_LOCKS_EXCLUDED(mutex_);
  // siftdb.stats's filter lines: per level, the bits/key of the filters
  // in its tables and the bits/key a table written there now gets.
  // Opens tables as needed, without the mutex.
  std::string FilterLevelStats() ABSL_LOCKS_EXCLUDED(mutex_);
  // "siftdb.levelstats".
  void AppendLevelStats(std::string* value) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // --- Background work (db_impl_background.cc) ---
  void BackgroundThreadMain();
  // True when the background thread has something to do.
  bool HasBackgroundWork() const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void CompactMemTable() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Writes mem to a new level-0 table and records it in edit. The table is
  // in no Version until edit is applied, so RemoveObsoleteFiles (which any
  // reader may run) would delete it: unless kept_pending is null, its number
  // stays in pending_outputs_ and is stored in *kept_pending, and the caller
  // erases it once the edit is applied (or has failed). With null, the
  // caller must not let RemoveObsoleteFiles run before applying the edit
  // (recovery in Open).
  // emptied_log: the log whose whole content mem holds (recorded in the
  // table's siftdb.input.files), or 0 when mem holds only part of a log.
  // reason: why mem is flushed, for the LOG ("recovery", "manual", ...).
  absl::Status WriteLevel0Table(MemTable* mem, uint64_t emptied_log,
                                const char* reason, VersionEdit* edit,
                                uint64_t* kept_pending = nullptr)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  // Deletes the files no live Version, pending output, log or MANIFEST
  // needs. Releases mutex_ while it lists the directory and deletes. Does
  // nothing after a background error or while file deletions are disabled.
  void RemoveObsoleteFiles() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void RecordBackgroundError(const absl::Status& s)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);
  void LogMessage(const std::string& message);
  // The live tables of the current version, for the Redis mirror.
  std::vector<MirrorTable> LiveTablesForMirror()
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mutex_);

  // Constant after construction.
  Env* const env_;
  const bool read_only_;
  const InternalKeyComparator internal_comparator_;
  // Declared before options_, whose initializer may fill it.
  std::unique_ptr<Logger> owned_info_log_;
  const Options options_;  // sanitized; comparator/env/info_log set
  const std::string dbname_;
  std::shared_ptr<const FilterPolicy> filter_policy_;  // null: no filters
  // Options::block_cache, or a private cache of block_cache_size; null:
  // none. table_options_.block_cache points into it.
  std::shared_ptr<Cache> block_cache_;
  Statistics stats_;
  TableOptions table_options_;
  std::unique_ptr<TableCache> table_cache_;
  std::unique_ptr<FileLock> db_lock_;

  Mutex mutex_;
  CondVar background_work_cv_;
  CondVar background_done_cv_;
  // Written under mutex_; compaction threads read it without.
  std::atomic<bool> shutting_down_{false};
  std::thread background_thread_;
  bool background_busy_ ABSL_GUARDED_BY(mutex_) = false;
  bool flush_requested_ ABSL_GUARDED_BY(mutex_) = false;
  // A read released a Version that is no longer current: the background
  // thread runs RemoveObsoleteFiles (readers never list the directory).
  bool obsolete_files_pending_ ABSL_GUARDED_BY(mutex_) = false;
  // DisableFileDeletions calls not yet matched by EnableFileDeletions.
  int file_deletions_disabled_ ABSL_GUARDED_BY(mutex_) = 0;
  // Set by Close; close_status_ is what it returned.
  bool closed_ ABSL_GUARDED_BY(mutex_) = false;
  absl::Status close_status_ ABSL_GUARDED_BY(mutex_);
  // mem_ holds writes made with WriteOptions::disable_wal. No log can bring
  // them back, so Close flushes mem_ when this is set; SwitchMemTable
  // clears it (the background thread always finishes flushing imm_).
  bool mem_has_unlogged_writes_ ABSL_GUARDED_BY(mutex_) = false;
  // Close is flushing mem_: its own forced flush passes CheckWritable.
  bool flushing_for_close_ ABSL_GUARDED_BY(mutex_) = false;

  MemTable* mem_ ABSL_GUARDED_BY(mutex_) = nullptr;
  MemTable* imm_ ABSL_GUARDED_BY(mutex_) = nullptr;
  // imm_ != nullptr, readable without the mutex (compaction polls it).
  std::atomic<bool> has_imm_{false};
  std::atomic<uint64_t> next_read_sample_seed_{0};
  ManualCompaction* manual_compaction_ ABSL_GUARDED_BY(mutex_) = nullptr;
  // Compactions (not flushes) being merged now: 0 or 1, as one background
  // thread runs them ("siftdb.num-running-compactions").
  int running_compactions_ ABSL_GUARDED_BY(mutex_) = 0;
  LevelStats level_stats_[kNumLevels] ABSL_GUARDED_BY(mutex_);
  std::unique_ptr<WritableFile> logfile_;  // leader only, or under mutex_
  uint64_t logfile_number_ ABSL_GUARDED_BY(mutex_) = 0;
  // Left by SwitchMemTable for SyncSwitchedLog: the previous log, written
  // completely but not yet synced (null: none; dropped unsynced once its
  // MemTable's flush is installed), and whether the current log's
  // directory entry is not yet synced. Syncing them in the writer that
  // switched cost every write-buffer's worth of writes an fdatasync of
  // the whole old log and a directory sync.
  std::unique_ptr<WritableFile> unsynced_old_log_ ABSL_GUARDED_BY(mutex_);
  bool log_dir_unsynced_ ABSL_GUARDED_BY(mutex_) = false;
  // A SyncSwitchedLog is syncing (with mutex_ released); others wait on
  // switched_log_synced_cv_.
  bool switched_log_sync_running_ ABSL_GUARDED_BY(mutex_) = false;
  CondVar switched_log_synced_cv_;
  // Log number of imm_ (its MemTable id for the mirror).
  uint64_t imm_logfile_number_ ABSL_GUARDED_BY(mutex_) = 0;
  // The Redis mirror of the filters; null when Options.remote_filter is off.
  std::unique_ptr<RemoteMirror> mirror_;
  // Recover created the DB (NewDB): no earlier process of it existed.
  bool created_db_ = false;
  std::unique_ptr<log::Writer> log_;

  std::deque<Writer*> writers_ ABSL_GUARDED_BY(mutex_);
  WriteBatch tmp_batch_ ABSL_GUARDED_BY(mutex_);

  SnapshotList snapshots_ ABSL_GUARDED_BY(mutex_);
  // Tables being written: not live yet, but must not be deleted.
  std::set<uint64_t> pending_outputs_ ABSL_GUARDED_BY(mutex_);
  std::unique_ptr<VersionSet> versions_ ABSL_GUARDED_BY(mutex_);

  // Sticky: once set, writes fail with it.
  absl::Status bg_error_ ABSL_GUARDED_BY(mutex_);

  // Ids of flushes and compactions in the LOG ("[job N]").
  int next_job_id_ ABSL_GUARDED_BY(mutex_) = 0;
  // Why imm_ was frozen, for its flush's LOG line.
  const char* imm_flush_reason_ ABSL_GUARDED_BY(mutex_) = "write-buffer-full";
  // The write stall under way (null: none): its cause, when it began, when
  // its last wait ended, and how many waits it has had.
  const char* stall_cause_ ABSL_GUARDED_BY(mutex_) = nullptr;
  uint64_t stall_start_micros_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t stall_last_micros_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t stall_waits_ ABSL_GUARDED_BY(mutex_) = 0;

  // Statistics about stalls and flushes.
  uint64_t stall_micros_ ABSL_GUARDED_BY(mutex_) = 0;
  WriteController write_controller_ ABSL_GUARDED_BY(mutex_){
      options_.delayed_write_rate};
  uint64_t flushes_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t flush_micros_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t flush_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  // Compactions merged as more than one part, and their parts; of those,
  // the ones that failed or were stopped by Close (nothing installed).
  uint64_t split_compactions_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t split_compaction_parts_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t split_compactions_failed_ ABSL_GUARDED_BY(mutex_) = 0;

  // Freeing compaction inputs early: the Version the running compaction
  // reads, and its input tables already removed from the current Version
  // (RemoveObsoleteFiles may delete them while only the compaction holds
  // that Version). Null and empty between compactions.
  const Version* early_release_version_ ABSL_GUARDED_BY(mutex_) = nullptr;
  std::set<uint64_t> early_released_ ABSL_GUARDED_BY(mutex_);
  // Totals: release steps, tables released and their bytes.
  uint64_t early_release_steps_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t early_released_tables_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t early_released_bytes_ ABSL_GUARDED_BY(mutex_) = 0;
  uint64_t early_release_micros_ ABSL_GUARDED_BY(mutex_) = 0;
};

// Validates and completes user options: InvalidArgument naming the first
// bad field.
absl::StatusOr<Options> SanitizeOptions(const Options& options);

}  // namespace siftdb

#endif  // SIFTDB_DB_DB_IMPL_H_
