// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl: construction, the write path (group commit) and the read path.

#include "db/db_impl.h"

#include <algorithm>
#include <chrono>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/info_log.h"
#include "db/write_batch_internal.h"
#include "filter/filter_hash.h"
#include "siftdb/filter_policy.h"
#include "siftdb/slice_transform.h"

namespace siftdb {

// A writer waiting in writers_.
struct DBImpl::Writer {
  Writer(WriteBatch* b, const WriteOptions& o)
      : batch(b), sync(o.sync), disable_wal(o.disable_wal) {}
  absl::Status status;
  WriteBatch* batch;
  bool sync;
  bool disable_wal;
  bool done = false;
  CondVar cv;
};

DB::~DB() = default;

namespace {

std::shared_ptr<const FilterPolicy> MakeFilterPolicy(const Options& o) {
  if (o.filter_policy != nullptr) return o.filter_policy;
  if (!o.filter_bits_per_key_per_level.empty()) {
    // Filters on some level: the policy every level's is resized from
    // (db/filter_budget.h), at the first level's size.
    for (double bits : o.filter_bits_per_key_per_level) {
      if (bits > 0) return NewBloomFilterPolicy(bits);
    }
    return nullptr;
  }
  if (o.filter_bits_per_key <= 0) return nullptr;
  return NewBloomFilterPolicy(o.filter_bits_per_key);
}

Options WithInfoLog(Options o, const std::string& dbname,
                    std::unique_ptr<Logger>* owned, bool read_only) {
  // A read-only open writes nothing to the directory, not even the LOG.
  if (o.info_log == nullptr && !read_only) {
    o.env->CreateDir(dbname).IgnoreError();
    // The previous LOG becomes LOG.old.<micros>; the oldest beyond
    // keep_log_file_num go.
    auto logger =
        InfoLog::Open(o.env, dbname, o.max_log_file_size, o.keep_log_file_num);
    if (logger.ok()) {
      *owned = std::move(*logger);
      o.info_log = owned->get();
    }
  }
  return o;
}

}  // namespace

absl::Status DBImpl::KeyTooLarge(std::string_view key) {
  return absl::InvalidArgumentError(absl::StrFormat(
      "key of %d bytes exceeds the limit of %d bytes (kMaxKeySize)", key.size(),
      kMaxKeySize));
}

DBImpl::DBImpl(const Options& options, const std::string& dbname,
               bool read_only)
    : env_(options.env),
      read_only_(read_only),
      internal_comparator_(options.comparator),
      owned_info_log_(),
      options_(WithInfoLog(options, dbname, &owned_info_log_, read_only)),
      dbname_(dbname),
      filter_policy_(MakeFilterPolicy(options)) {
  if (options_.block_cache != nullptr) {
    block_cache_ = options_.block_cache;  // shared; block_cache_size ignored
  } else if (options_.block_cache_size > 0) {
    block_cache_ = NewLRUCache(options_.block_cache_size);
  }
  table_options_.user_comparator = options_.comparator;
  table_options_.block_size = options_.block_size;
  table_options_.block_restart_interval = options_.block_restart_interval;
  // Writers override the type per output level (OutputTableOptions).
  table_options_.compression = options_.compression;
  table_options_.compression_level = options_.compression_opts.level;
  table_options_.compression_max_dict_bytes =
      options_.compression_opts.max_dict_bytes;
  table_options_.compression_zstd_max_train_bytes =
      options_.compression_opts.zstd_max_train_bytes;
  table_options_.filter_policy = filter_policy_;
  table_options_.prefix_extractor = options_.prefix_extractor;
  table_options_.whole_key_filtering = options_.whole_key_filtering;
  table_options_.block_cache =
      block_cache_ != nullptr ? CacheAccess::Get(*block_cache_) : nullptr;
  table_options_.statistics = &stats_;
  table_options_.paranoid_checks = options_.paranoid_checks;
  table_options_.advise_random = options_.advise_random_on_open;
  table_options_.cache_filter = options_.cache_filter_blocks;
  table_options_.partition_filters = options_.partition_filters;
  table_options_.filter_partition_size = options_.filter_partition_size;
  // Keep a few descriptors for logs, the MANIFEST and the LOG.
  table_cache_ = std::make_unique<TableCache>(
      dbname_, env_, table_options_, std::max(options_.max_open_files - 10, 6),
      options_.pin_l0_filter_blocks_in_cache);
  versions_ = std::make_unique<VersionSet>(
      dbname_, &options_, table_cache_.get(), &internal_comparator_);
}

absl::Status DBImpl::CheckWritable(const char* call) const {
  mutex_.AssertHeld();
  if (read_only_) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: %s refused: the DB was opened read-only "
                        "(DB::OpenForReadOnly)",
                        dbname_, call));
  }
  if (closed_ && !(flushing_for_close_ && std::string_view(call) == "Flush")) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: %s refused: the DB is closed", dbname_, call));
  }
  return absl::OkStatus();
}

absl::Status DBImpl::Flush(const FlushOptions& options) {
  if (options.wait) return FlushMemTable();
  return Write(WriteOptions(), nullptr);
}

std::vector<MirrorTable> DBImpl::LiveTablesForMirror() {
  mutex_.AssertHeld();
  std::vector<MirrorTable> tables;
  Version* v = versions_->current();
  for (int level = 0; level < kNumLevels; level++) {
    for (const FileMetaData* f : v->files(level)) {
      tables.push_back({f->number, level, f->file_size,
                        std::string(ExtractUserKey(f->smallest)),
                        std::string(ExtractUserKey(f->largest))});
    }
  }
  return tables;
}

void DBImpl::LogMessage(const std::string& message) {
  if (options_.info_log != nullptr) options_.info_log->Log(message);
}

absl::Status DBImpl::Put(const WriteOptions& o, std::string_view key,
                         std::string_view value) {
  WriteBatch batch;
  batch.Put(key, value);
  return Write(o, &batch);
}

absl::Status DBImpl::Delete(const WriteOptions& o, std::string_view key) {
  WriteBatch batch;
  batch.Delete(key);
  return Write(o, &batch);
}

absl::Status DBImpl::Write(const WriteOptions& options, WriteBatch* updates) {
  if (updates != nullptr) {
    absl::Status valid = WriteBatchInternal::Validate(updates);
    if (!valid.ok()) return valid;
    if (WriteBatchInternal::Count(updates) == 0) return absl::OkStatus();
  }
  if (options.sync && options.disable_wal) {
    return absl::InvalidArgumentError(absl::StrCat(
        dbname_,
        ": WriteOptions with both sync and disable_wal: a synced write "
        "needs the log"));
  }
  Writer w(updates, options);
  MutexLock l(&mutex_);
  {
    absl::Status writable =
        CheckWritable(updates == nullptr ? "Flush" : "Write");
    if (!writable.ok()) return writable;
  }
  writers_.push_back(&w);
  while (!w.done && &w != writers_.front()) w.cv.Wait(&mutex_);
  if (w.done) return w.status;

  // This writer leads a group.
  absl::Status status = MakeRoomForWrite(updates == nullptr);
  SequenceNumber last_sequence = versions_->LastSequence();
  Writer* last_writer = &w;
  if (status.ok() && updates != nullptr) {
    bool sync = false;
    WriteBatch* group = BuildBatchGroup(&last_writer, &sync);
    WriteBatchInternal::SetSequence(group, last_sequence + 1);
    last_sequence += WriteBatchInternal::Count(group);

    // Followers wait in writers_ until woken, so the log and mem_ can be
    // written without the mutex.
    bool log_error = false;
    // A synced group is acknowledged only once every earlier write is
    // durable, including those in the log SwitchMemTable left unsynced.
    if (sync && SwitchedLogUnsynced()) status = SyncSwitchedLog();
    const uint64_t memtable_id = logfile_number_;
    // Only a group's leader switches mem_ (in MakeRoomForWrite, above), so
    // the MemTable read here stays the one taking writes until this leader
    // retakes the mutex.
    MemTable* const mem = mem_;
    if (status.ok()) {
      mutex_.Unlock();
      if (!w.disable_wal) {
        status = log_->AddRecord(WriteBatchInternal::Contents(group));
        if (status.ok() && sync) status = logfile_->Sync();
      }
      log_error = !status.ok();
      if (status.ok()) status = WriteBatchInternal::InsertInto(group, mem);
      if (status.ok() && mirror_ != nullptr) {
        mirror_->AddWriteGroup(memtable_id, *group, last_sequence);
      }
      mutex_.Lock();
    }
    stats_.Record(Ticker::kBytesWritten, WriteBatchInternal::ByteSize(group));
    if (write_controller_.delayed()) {
      write_controller_.Charge(env_->NowMicros(),
                               WriteBatchInternal::ByteSize(group));
    }
    if (log_error) {
      // The log may now end in a partial record, and the group's fate after
      // a crash is unknown: stop accepting writes.
      RecordBackgroundError(status);
    }
    if (group == &tmp_batch_) tmp_batch_.Clear();
    if (status.ok()) versions_->SetLastSequence(last_sequence);
    if (w.disable_wal) mem_has_unlogged_writes_ = true;
  }

  while (true) {
    Writer* ready = writers_.front();
    writers_.pop_front();
    if (ready != &w) {
      ready->status = status;
      ready->done = true;
      ready->cv.Signal();
    }
    if (ready == last_writer) break;
  }
  if (!writers_.empty()) writers_.front()->cv.Signal();
  return status;
}

WriteBatch* DBImpl::BuildBatchGroup(Writer** last_writer, bool* sync) {
  mutex_.AssertHeld();
  Writer* first = writers_.front();
  WriteBatch* result = first->batch;
  *sync = first->sync;
  // Bound the group so a small write is not delayed by a huge group.
  size_t size = WriteBatchInternal::ByteSize(first->batch);
  size_t max_size = size_t{1} << 20;
  if (size <= (size_t{128} << 10)) max_size = size + (size_t{128} << 10);

  *last_writer = first;
  for (auto it = writers_.begin() + 1; it != writers_.end(); ++it) {
    Writer* w = *it;
    if (w->batch == nullptr) break;  // a forced flush: handle it alone
    // A logged write never rides in a group that skips the log, and an
    // unlogged one is not logged on another's behalf.
    if (w->disable_wal != first->disable_wal) break;
    size += WriteBatchInternal::ByteSize(w->batch);
    if (size > max_size) break;
    if (result == first->batch) {
      // Merge into tmp_batch_ rather than the caller's batch.
      result = &tmp_batch_;
      tmp_batch_.Clear();
      tmp_batch_.Append(*first->batch);
    }
    tmp_batch_.Append(*w->batch);
    *sync = *sync || w->sync;
    *last_writer = w;
  }
  return result;
}

namespace {

bool IsLevel0(const WritePressure& p) {
  return p.cause != nullptr && std::string_view(p.cause) == "level0";
}

}  // namespace

absl::Status DBImpl::MakeRoomForWrite(bool force) {
  mutex_.AssertHeld();
  bool allow_delay = !force;
  bool waited = false;  // a stall under way ends at a write that never waits
  while (true) {
    if (!bg_error_.ok()) return bg_error_;
    write_controller_.SetPressure(CurrentWritePressure());
    // The clock is read only while delayed: most writes never are.
    const uint64_t delay =
        allow_delay && write_controller_.delayed()
            ? write_controller_.DelayMicros(env_->NowMicros())
            : 0;
    if (delay > 0) {
      // Compaction is behind: writes go at the controller's rate, which
      // falls as the debt nears a hard limit (db/write_controller.h).
      const bool l0 = IsLevel0(write_controller_.pressure());
      NoteWriteStall(
          l0 ? "level0-slowdown" : "pending-compaction-bytes-slowdown", [&] {
            mutex_.AssertHeld();  // the lambda runs under the caller's lock
            return DescribeWritePressure(true);
          });
      waited = true;
      mutex_.Unlock();
      const uint64_t start = env_->NowMicros();
      env_->SleepForMicroseconds(static_cast<int64_t>(delay));
      const uint64_t end = env_->NowMicros();
      mutex_.Lock();
      stall_micros_ += end - start;
      stall_last_micros_ = end;
    } else if (!force &&
               (mem_->NumEntries() == 0 ||
                mem_->ApproximateMemoryUsage() <= options_.write_buffer_size)) {
      // An empty MemTable always takes the write: its own overhead may pass
      // a small write buffer, and switching it for another empty one would
      // never end.
      if (!waited) EndWriteStall();
      return absl::OkStatus();
    } else if (imm_ != nullptr) {
      // The previous MemTable is still being flushed.
      NoteWriteStall("memtable-full", [&] {
        mutex_.AssertHeld();
        return absl::StrFormat(
            "MemTable full at %d bytes, the previous one still flushing",
            mem_->ApproximateMemoryUsage());
      });
      waited = true;
      const uint64_t start = env_->NowMicros();
      background_done_cv_.Wait(&mutex_);
      stall_last_micros_ = env_->NowMicros();
      stall_micros_ += stall_last_micros_ - start;
    } else if (write_controller_.stopped()) {
      const bool l0 = IsLevel0(write_controller_.pressure());
      NoteWriteStall(l0 ? "level0-stop" : "pending-compaction-bytes-stop", [&] {
        mutex_.AssertHeld();
        return DescribeWritePressure(false);
      });
      waited = true;
      const uint64_t start = env_->NowMicros();
      background_work_cv_.Signal();
      background_done_cv_.Wait(&mutex_);
      stall_last_micros_ = env_->NowMicros();
      stall_micros_ += stall_last_micros_ - start;
    } else {
      // Switch to a new MemTable and log; flush the old one.
      if (force && mem_->NumEntries() == 0) {
        if (!waited) EndWriteStall();
        return absl::OkStatus();
      }
      absl::Status s = SwitchMemTable(force);
      if (!s.ok()) return s;
      force = false;
    }
  }
}

std::string DBImpl::DescribeWritePressure(bool delayed) {
  mutex_.AssertHeld();
  std::string debt = absl::StrFormat(
      "%d level-0 files (slowdown %d, stop %d), %d pending compaction bytes "
      "(soft %d, hard %d)",
      versions_->NumLevelFiles(0), options_.level0_slowdown_writes_trigger,
      options_.level0_stop_writes_trigger,
      versions_->current()->pending_compaction_bytes(),
      options_.soft_pending_compaction_bytes_limit,
      options_.hard_pending_compaction_bytes_limit);
  if (!delayed) return debt;
  return absl::StrFormat("%s; writes at %d bytes/s", debt,
                         write_controller_.rate());
}

WritePressure DBImpl::CurrentWritePressure() {
  mutex_.AssertHeld();
  // Without automatic compactions nothing would ever lower the debt: the
  // limits do not apply.
  if (options_.disable_auto_compactions) return WritePressure();
  const int level0 = versions_->NumLevelFiles(0);
  return Stronger(
      PressureOf(static_cast<uint64_t>(level0),
                 static_cast<uint64_t>(options_.level0_slowdown_writes_trigger),
                 static_cast<uint64_t>(options_.level0_stop_writes_trigger),
                 "level0"),
      PressureOf(versions_->current()->pending_compaction_bytes(),
                 options_.soft_pending_compaction_bytes_limit,
                 options_.hard_pending_compaction_bytes_limit,
                 "pending-compaction-bytes"));
}

absl::Status DBImpl::SwitchMemTable(bool forced) {
  // At most one switched log awaits its sync: imm_'s, dropped once imm_'s
  // flush is installed (and imm_ is null here). Should one remain (that
  // flush failed), sync it first. A pending directory sync needs nothing
  // now: the one for the new log will cover both entries.
  if (unsynced_old_log_ != nullptr || switched_log_sync_running_) {
    absl::Status synced = SyncSwitchedLog();
    if (!synced.ok()) return synced;
  }
  const uint64_t number = versions_->NewFileNumber();
  std::unique_ptr<WritableFile> old_file = std::move(logfile_);
  std::unique_ptr<log::Writer> old_log = std::move(log_);
  MemTable* old_mem = mem_;
  const uint64_t old_number = logfile_number_;
  absl::Status s = NewLogFile(number, /*defer_dir_sync=*/true);
  if (!s.ok()) {
    logfile_ = std::move(old_file);
    log_ = std::move(old_log);
    mem_ = old_mem;
    logfile_number_ = old_number;
    versions_->ReuseFileNumber(number);
    return s;
  }
  old_log.reset();
  imm_logfile_number_ = old_number;
  imm_flush_reason_ = forced ? "manual" : "write-buffer-full";
  if (mirror_ != nullptr) mirror_->SwitchMemTable(old_number, number);
  imm_ = old_mem;
  mem_has_unlogged_writes_ = false;  // the background thread flushes imm_
  has_imm_.store(true, std::memory_order_release);
  // The old log is synced later, off this writer's path, by the next
  // synced write (before its own sync, so a synced write in the new log
  // never survives a power loss that earlier writes in the old log do
  // not); if imm_'s flush comes first, the old log is never synced.
  unsynced_old_log_ = std::move(old_file);
  background_work_cv_.Signal();
  return absl::OkStatus();
}

void DBImpl::DropSwitchedLog() {
  mutex_.AssertHeld();
  if (unsynced_old_log_ == nullptr) return;  // none, or a sync has it
  std::unique_ptr<WritableFile> old_file = std::move(unsynced_old_log_);
  mutex_.Unlock();
  // Nothing in it is needed any more; a failure to close loses nothing.
  absl::Status s = old_file->Close();
  old_file.reset();
  mutex_.Lock();
  if (!s.ok()) LogMessage("closing an obsolete log: " + s.ToString());
}

absl::Status DBImpl::SyncSwitchedLog() {
  mutex_.AssertHeld();
  while (switched_log_sync_running_) switched_log_synced_cv_.Wait(&mutex_);
  if (unsynced_old_log_ == nullptr && !log_dir_unsynced_) return bg_error_;
  std::unique_ptr<WritableFile> old_file = std::move(unsynced_old_log_);
  const bool dir = log_dir_unsynced_;
  log_dir_unsynced_ = false;
  switched_log_sync_running_ = true;
  mutex_.Unlock();
  absl::Status s;
  if (old_file != nullptr) {
    s = old_file->Sync();
    absl::Status closed = old_file->Close();
    if (s.ok()) s = closed;
  }
  if (s.ok() && dir) s = env_->SyncDir(dbname_);
  mutex_.Lock();
  switched_log_sync_running_ = false;
  switched_log_synced_cv_.SignalAll();
  if (!s.ok()) {
    // Which writes would survive a power loss is unknown now: stop
    // accepting writes, as a failed sync of the current log does.
    RecordBackgroundError(s);
    return s;
  }
  return absl::OkStatus();
}

DBImpl::ReadState DBImpl::AcquireReadState(const ReadOptions& options) {
  MutexLock l(&mutex_);
  ReadState state;
  state.sequence =
      options.snapshot != nullptr
          ? static_cast<const SnapshotImpl*>(options.snapshot)->sequence()
          : versions_->LastSequence();
  state.mem = mem_;
  state.imm = imm_;
  state.current = versions_->current();
  state.mem->Ref();
  if (state.imm != nullptr) state.imm->Ref();
  state.current->Ref();
  return state;
}

void DBImpl::ReleaseReadState(const ReadState& state) {
  MutexLock l(&mutex_);
  state.mem->Unref();
  if (state.imm != nullptr) state.imm->Unref();
  // A read that outlived its Version kept that Version's tables alive
  // through the compaction that replaced them; the compaction could not
  // delete them then, and may have been the last one for a while.
  const bool stale = state.current != versions_->current();
  state.current->Unref();
  if (stale && !shutting_down_ && !read_only_) {
    // The background thread deletes what it kept alive: listing the
    // directory and walking every Version is no work for a reader.
    obsolete_files_pending_ = true;
    background_work_cv_.Signal();
  }
}

absl::Status DBImpl::Get(const ReadOptions& options, std::string_view key,
                         std::string* value) {
  if (key.size() > kMaxKeySize) return KeyTooLarge(key);
  const ReadState state = AcquireReadState(options);
  absl::Status s = GetFromState(options, state, key, value);
  ReleaseReadState(state);
  return s;
}

absl::Status DBImpl::GetFromState(const ReadOptions& options,
                                  const ReadState& state, std::string_view key,
                                  std::string* value) {
  absl::Status s;
  LookupKey lkey(key, state.sequence);
  // Hashed once for both MemTables' filters.
  const uint64_t mem_hash = FilterKeyHash(key);
  if (state.mem->Get(lkey, value, &s, &mem_hash)) {
    // Found in the MemTable (a value or a deletion).
  } else if (state.imm != nullptr &&
             state.imm->Get(lkey, value, &s, &mem_hash)) {
    // Found in the MemTable being flushed.
  } else {
    uint64_t hash = 0;
    const uint64_t* hash_ptr = nullptr;
    if (filter_policy_ != nullptr) {
      hash = filter_policy_->HashKey(key);
      hash_ptr = &hash;
    }
    s = state.current->Get(options, lkey, hash_ptr, value);
  }
  return s;
}

bool DBImpl::KeyMayExist(const ReadOptions& options, std::string_view key,
                         std::string* value, bool* value_found) {
  if (value_found != nullptr) *value_found = false;
  stats_.Record(Ticker::kKeyMayExistChecks);
  // No write accepts such a key (see WriteBatchInternal::Validate), so it
  // certainly does not exist; Get of it is InvalidArgument.
  bool may_exist = false;
  if (key.size() <= kMaxKeySize) {
    const ReadState state = AcquireReadState(options);
    may_exist = KeyMayExistInState(state, key, value, value_found);
    ReleaseReadState(state);
  }
  if (!may_exist) stats_.Record(Ticker::kKeyMayExistNegatives);
  return may_exist;
}

bool DBImpl::KeyMayExistInState(const ReadState& state, std::string_view key,
                                std::string* value, bool* value_found) {
  LookupKey lkey(key, state.sequence);
  const uint64_t mem_hash = FilterKeyHash(key);
  // The MemTables answer for certain: the newest entry visible at the
  // read's sequence is a value (returned) or a deletion.
  std::string scratch;
  std::string* const out = value != nullptr ? value : &scratch;
  absl::Status s;
  for (MemTable* mem : {state.mem, state.imm}) {
    if (mem == nullptr || !mem->Get(lkey, out, &s, &mem_hash)) continue;
    if (!s.ok()) return false;  // deleted
    if (value != nullptr && value_found != nullptr) *value_found = true;
    return true;
  }
  // The tables answer from their filters alone.
  uint64_t hash = 0;
  const uint64_t* hash_ptr = nullptr;
  if (filter_policy_ != nullptr) {
    hash = filter_policy_->HashKey(key);
    hash_ptr = &hash;
  }
  return state.current->KeyMayExist(lkey, hash_ptr);
}

const Snapshot* DBImpl::GetSnapshot() {
  MutexLock l(&mutex_);
  return snapshots_.New(versions_->LastSequence());
}

void DBImpl::ReleaseSnapshot(const Snapshot* snapshot) {
  MutexLock l(&mutex_);
  snapshots_.Delete(static_cast<const SnapshotImpl*>(snapshot));
}

void DBImpl::GetApproximateSizes(const Range* ranges, int n, uint64_t* sizes) {
  Version* v;
  {
    MutexLock l(&mutex_);
    v = versions_->current();
    v->Ref();
  }
  for (int i = 0; i < n; i++) {
    std::string start, limit;
    AppendInternalKey(&start, ranges[i].start, kMaxSequenceNumber,
                      kValueTypeForSeek);
    AppendInternalKey(&limit, ranges[i].limit, kMaxSequenceNumber,
                      kValueTypeForSeek);
    MutexLock l(&mutex_);
    const uint64_t a = versions_->ApproximateOffsetOf(v, start);
    const uint64_t b = versions_->ApproximateOffsetOf(v, limit);
    sizes[i] = b >= a ? b - a : 0;
  }
  MutexLock l(&mutex_);
  v->Unref();
}

}  // namespace siftdb
