// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Opening a DB: option checks, creating a new DB, and recovery from the
// MANIFEST plus the logs not yet flushed.

#include <algorithm>
#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "db/compaction.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/filter_budget.h"
#include "db/output_compression.h"
#include "db/write_batch_internal.h"
#include "siftdb/rate_limiter.h"
#include "util/absl_compat.h"
#include "wal/log_reader.h"

namespace siftdb {
namespace {

absl::Status BadOption(const std::string& what) {
  return absl::InvalidArgumentError("invalid option: " + what);
}

}  // namespace

namespace {

// target_file_size_base and its alias max_file_size (see options.h).
absl::Status ResolveTargetFileSize(Options* o) {
  static const uint64_t kDefaultBase = Options().target_file_size_base;
  if (o->max_file_size != 0) {
    if (o->target_file_size_base != kDefaultBase &&
        o->target_file_size_base != o->max_file_size) {
      return BadOption(absl::StrFormat(
          "max_file_size = %d and target_file_size_base = %d disagree "
          "(max_file_size is the old name of target_file_size_base: set one)",
          o->max_file_size, o->target_file_size_base));
    }
    if (o->max_file_size < 4096) {
      return BadOption(absl::StrFormat("max_file_size = %d (must be >= 4 KiB)",
                                       o->max_file_size));
    }
    o->target_file_size_base = o->max_file_size;
  }
  if (o->target_file_size_base < 4096) {
    return BadOption(
        absl::StrFormat("target_file_size_base = %d (must be >= 4 KiB)",
                        o->target_file_size_base));
  }
  if (o->target_file_size_multiplier < 1 ||
      o->target_file_size_multiplier > 100) {
    return BadOption(
        absl::StrFormat("target_file_size_multiplier = %d (must be in [1, "
                        "100])",
                        o->target_file_size_multiplier));
  }
  if (TargetFileSize(*o, kNumLevels - 1) > (uint64_t{1} << 40)) {
    return BadOption(absl::StrFormat(
        "target_file_size_base = %d with target_file_size_multiplier = %d "
        "(level %d's tables would pass 1 TiB)",
        o->target_file_size_base, o->target_file_size_multiplier,
        kNumLevels - 1));
  }
  o->max_file_size = o->target_file_size_base;
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Options> SanitizeOptions(const Options& in) {
  Options o = in;
  if (o.comparator == nullptr) o.comparator = BytewiseComparator();
  if (o.env == nullptr) o.env = Env::Default();
  if (o.max_log_file_size != 0 && o.max_log_file_size < 4096) {
    return BadOption(absl::StrFormat(
        "max_log_file_size = %d (must be 0, for no limit, or >= 4 KiB)",
        o.max_log_file_size));
  }
  if (o.keep_log_file_num < 1 || o.keep_log_file_num > 1000000) {
    return BadOption(
        absl::StrFormat("keep_log_file_num = %d (must be in [1, 1000000])",
                        o.keep_log_file_num));
  }
  if (o.write_buffer_size < 4096 || o.write_buffer_size > (size_t{4} << 30)) {
    return BadOption(
        absl::StrFormat("write_buffer_size = %d (must be in [4 KiB, 4 GiB])",
                        o.write_buffer_size));
  }
  if (!(o.memtable_filter_ratio >= 0 && o.memtable_filter_ratio <= 0.25)) {
    return BadOption(absl::StrFormat(
        "memtable_filter_ratio = %g (must be in [0, 0.25]; 0 disables)",
        o.memtable_filter_ratio));
  }
  if (o.max_subcompactions < 1 || o.max_subcompactions > 64) {
    return BadOption(absl::StrFormat(
        "max_subcompactions = %d (must be in [1, 64])", o.max_subcompactions));
  }
  if (o.max_open_files < 16) {
    return BadOption(absl::StrFormat("max_open_files = %d (must be >= 16)",
                                     o.max_open_files));
  }
  if (o.block_size < 256 || o.block_size > (size_t{64} << 20)) {
    return BadOption(absl::StrFormat(
        "block_size = %d (must be in [256, 64 MiB])", o.block_size));
  }
  if (o.block_restart_interval < 1) {
    return BadOption(
        absl::StrFormat("block_restart_interval = %d (must be >= 1)",
                        o.block_restart_interval));
  }
  if (absl::Status s = ValidateCompressionOptions(o); !s.ok()) return s;
  if (!(o.filter_bits_per_key >= 0 && o.filter_bits_per_key <= 100)) {
    return BadOption(absl::StrFormat(
        "filter_bits_per_key = %g (must be in [0, 100]; 0 disables)",
        o.filter_bits_per_key));
  }
  if (absl::Status s = ResolveTargetFileSize(&o); !s.ok()) return s;
  if (o.level0_file_num_compaction_trigger < 1 ||
      o.level0_slowdown_writes_trigger < o.level0_file_num_compaction_trigger ||
      o.level0_stop_writes_trigger < o.level0_slowdown_writes_trigger) {
    return BadOption(absl::StrFormat(
        "level0 triggers compaction=%d slowdown=%d stop=%d (need 1 <= "
        "compaction <= slowdown <= stop)",
        o.level0_file_num_compaction_trigger, o.level0_slowdown_writes_trigger,
        o.level0_stop_writes_trigger));
  }
  if (o.soft_pending_compaction_bytes_limit != 0 &&
      o.hard_pending_compaction_bytes_limit != 0 &&
      o.soft_pending_compaction_bytes_limit >
          o.hard_pending_compaction_bytes_limit) {
    return BadOption(absl::StrFormat(
        "soft_pending_compaction_bytes_limit = %d is above "
        "hard_pending_compaction_bytes_limit = %d (0 turns either off)",
        o.soft_pending_compaction_bytes_limit,
        o.hard_pending_compaction_bytes_limit));
  }
  if (o.delayed_write_rate == 0) o.delayed_write_rate = uint64_t{16} << 20;
  if (o.rate_limiter != nullptr &&
      (o.rate_limiter->GetBytesPerSecond() <= 0 ||
       o.rate_limiter->GetSingleBurstBytes() <= 0)) {
    return BadOption(absl::StrFormat(
        "rate_limiter of %d bytes/s, %d bytes per refill (the rate and the "
        "refill period must be > 0)",
        o.rate_limiter->GetBytesPerSecond(),
        o.rate_limiter->GetSingleBurstBytes()));
  }
  if (o.max_bytes_for_level_base < 4096) {
    return BadOption(
        absl::StrFormat("max_bytes_for_level_base = %d (must be >= 4 KiB)",
                        o.max_bytes_for_level_base));
  }
  if (!(o.max_bytes_for_level_multiplier > 1 &&
        o.max_bytes_for_level_multiplier <= 1000)) {
    return BadOption(absl::StrFormat(
        "max_bytes_for_level_multiplier = %g (must be in (1, 1000])",
        o.max_bytes_for_level_multiplier));
  }
  if (o.optimize_filters_for_hits &&
      o.remote_filter.mode != RemoteFilterOptions::Mode::kOff) {
    // Checked first, so a build without Redis says the same.
    return BadOption(
        "optimize_filters_for_hits = true with Options.remote_filter on "
        "(the Redis mirror needs a filter in every table; turn one off)");
  }
  // Checked before the mirror's own options, as above.
  if (absl::Status s = ValidateFilterBudgetOptions(o); !s.ok()) return s;
  if (o.remote_filter.mode != RemoteFilterOptions::Mode::kOff) {
    absl::Status s = RemoteMirror::ValidateOptions(o.remote_filter);
    if (!s.ok()) return s;
  }
  return o;
}

absl::StatusOr<std::unique_ptr<DB>> DB::Open(const Options& options,
                                             const std::string& dbname) {
  if (dbname.empty()) {
    return absl::InvalidArgumentError("DB path is empty");
  }
  auto sanitized = SanitizeOptions(options);
  if (!sanitized.ok()) return sanitized.status();
  Env* env = sanitized->env;
  if (env->FileExists(dbname) && !env->IsDirectory(dbname)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: exists and is not a directory", dbname));
  }
  if (!env->FileExists(dbname)) {
    if (!sanitized->create_if_missing) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "%s: does not exist (create_if_missing is false)", dbname));
    }
    absl::Status s = env->CreateDir(dbname);
    if (!s.ok()) return s;
    // The new directory's entry in its parent must survive a crash too.
    s = env->SyncDir(ParentDirectory(dbname));
    if (!s.ok()) {
      return absl::Status(
          s.code(), absl::StrFormat("%s: syncing the parent directory of the "
                                    "new database: %s",
                                    dbname, s.message()));
    }
  }
  // Taken before DBImpl rotates the LOG: a second Open of a live database
  // must fail without touching the running instance's files.
  auto lock = env->LockFile(LockFileName(dbname));
  if (!lock.ok()) return lock.status();

  auto impl = std::make_unique<DBImpl>(*sanitized, dbname);  // read-write
  impl->db_lock_ = std::move(*lock);
  impl->LogMessage("opening " + dbname);
  impl->LogOptions();
  absl::Status s;
  {
    MutexLock l(&impl->mutex_);
    VersionEdit edit;
    bool save_manifest = false;
    s = impl->Recover(&edit, &save_manifest);
    if (s.ok() && impl->mem_ == nullptr) {
      // No log was reused: start a new one.
      const uint64_t number = impl->versions_->NewFileNumber();
      s = impl->NewLogFile(number);
      if (s.ok()) {
        edit.SetLogNumber(number);
        save_manifest = true;
      }
    }
    if (s.ok() && save_manifest) {
      edit.SetPrevLogNumber(0);  // no older logs are needed after recovery
      edit.SetLogNumber(impl->logfile_number_);
      s = impl->versions_->LogAndApply(&edit, &impl->mutex_);
    }
    if (s.ok()) impl->RemoveObsoleteFiles();
    if (s.ok() &&
        impl->options_.remote_filter.mode != RemoteFilterOptions::Mode::kOff) {
      auto mirror =
          RemoteMirror::Create(impl->options_, dbname, impl->table_cache_.get(),
                               &impl->stats_, impl->created_db_);
      if (mirror.ok()) {
        impl->mirror_ = std::move(*mirror);
        impl->mirror_->Start(impl->LiveTablesForMirror(),
                             impl->logfile_number_);
      } else {
        s = mirror.status();
      }
    }
  }
  if (!s.ok()) {
    impl->LogMessage("open failed: " + s.ToString());
    return s;
  }
  {
    MutexLock l(&impl->mutex_);
    impl->LogMessage(absl::StrFormat("open done: log %06d; levels: %s",
                                     impl->logfile_number_,
                                     impl->LevelSummary()));
  }
  // Recovery made writes readable that a killed process may never have
  // mirrored; readers must not trust its manifest any more.
  if (impl->mirror_ != nullptr)
    impl->mirror_->WaitUntilRecoveredDataIsCovered();
  impl->background_thread_ =
      std::thread([db = impl.get()] { db->BackgroundThreadMain(); });
  return std::unique_ptr<DB>(std::move(impl));
}

absl::Status DBImpl::NewDB() {
  VersionEdit edit;
  edit.SetComparatorName(options_.comparator->Name());
  edit.SetLogNumber(0);
  edit.SetNextFile(2);
  edit.SetLastSequence(0);

  const std::string manifest = DescriptorFileName(dbname_, 1);
  auto file = env_->NewWritableFile(manifest);
  if (!file.ok()) return file.status();
  absl::Status s;
  {
    log::Writer log(file->get());
    std::string record;
    edit.EncodeTo(&record);
    s = log.AddRecord(record);
    if (s.ok()) s = (*file)->Sync();
    if (s.ok()) s = (*file)->Close();
  }
  if (s.ok()) {
    s = SetCurrentFile(env_, dbname_, 1);
  } else {
    env_->RemoveFile(manifest).IgnoreError();
  }
  return s;
}

MemTable* DBImpl::NewMemTable() const {
  const double bytes = static_cast<double>(options_.write_buffer_size) *
                       options_.memtable_filter_ratio;
  return new MemTable(internal_comparator_, static_cast<size_t>(bytes),
                      options_.prefix_extractor.get());
}

absl::Status DBImpl::NewLogFile(uint64_t number, bool defer_dir_sync) {
  const std::string fname = LogFileName(dbname_, number);
  auto file = options_.wal_mmap_writes ? env_->NewWalFile(fname)
                                       : env_->NewWritableFile(fname);
  if (!file.ok()) return file.status();
  // The log's directory entry must be durable before a synced write in it
  // is acknowledged: now, or by SyncSwitchedLog before that write's sync.
  if (defer_dir_sync) {
    log_dir_unsynced_ = true;
  } else {
    absl::Status s = env_->SyncDir(dbname_);
    if (!s.ok()) return s;
  }
  logfile_ = std::move(*file);
  logfile_number_ = number;
  log_ = std::make_unique<log::Writer>(logfile_.get());
  mem_ = NewMemTable();
  mem_->Ref();
  return absl::OkStatus();
}

// A directory without CURRENT is a new database only if it holds no data:
// NewDB would otherwise start an empty tree, and the first cleanup would
// delete every table and log as obsolete. A MANIFEST-000001 alone is what a
// crash inside NewDB leaves (the MANIFEST is written before CURRENT), so it
// does not count.
absl::Status DBImpl::CheckNoOrphanedData() {
  auto children = env_->GetChildren(dbname_);
  if (!children.ok()) return children.status();
  int orphans = 0;
  std::string example;
  for (const std::string& name : *children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    const bool data = type == FileType::kTableFile ||
                      type == FileType::kLogFile ||
                      (type == FileType::kDescriptorFile && number != 1);
    if (!data) continue;
    if (orphans++ == 0) example = name;
  }
  if (orphans == 0) return absl::OkStatus();
  return absl::DataLossError(absl::StrFormat(
      "%s: CURRENT is missing but the directory holds %d table, log or "
      "MANIFEST file(s) (e.g. %s); refusing to create a new database over "
      "them (create_if_missing): restore CURRENT or run RepairDB",
      dbname_, orphans, example));
}

absl::Status DBImpl::Recover(VersionEdit* edit, bool* save_manifest) {
  // DB::Open created the directory and took db_lock_.

  if (!env_->FileExists(CurrentFileName(dbname_))) {
    if (!options_.create_if_missing) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s: not a siftdb database (no CURRENT file) and "
                          "create_if_missing is false",
                          dbname_));
    }
    absl::Status s = CheckNoOrphanedData();
    if (!s.ok()) return s;
    s = NewDB();
    if (!s.ok()) return s;
    created_db_ = true;
  } else if (options_.error_if_exists) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: database exists (error_if_exists is true)", dbname_));
  }

  const uint64_t start_micros = env_->NowMicros();
  absl::Status s = versions_->Recover(save_manifest);
  if (!s.ok()) {
    LogMessage("recovery: reading the MANIFEST failed: " + s.ToString());
    return s;
  }
  auto current = ReadFileToString(env_, CurrentFileName(dbname_));
  LogMessage(absl::StrFormat(
      "recovery: MANIFEST %s recovered: last sequence %d, next file %d, "
      "log number %d; levels: %s",
      current.ok() ? std::string(absl::StripAsciiWhitespace(*current))
                   : current.status().ToString(),
      versions_->LastSequence(), versions_->PeekNextFileNumber(),
      versions_->LogNumber(), LevelSummary()));
  std::vector<uint64_t> logs;
  s = FindLogsToReplay(&logs);
  if (!s.ok()) return s;
  SequenceNumber max_sequence = 0;
  for (size_t i = 0; i < logs.size(); i++) {
    s = RecoverLogFile(logs[i], i == logs.size() - 1, save_manifest, edit,
                       &max_sequence, /*into=*/nullptr);
    if (!s.ok()) return s;
    // The log's number was in use even if the MANIFEST did not say so.
    versions_->MarkFileNumberUsed(logs[i]);
  }
  if (versions_->LastSequence() < max_sequence) {
    versions_->SetLastSequence(max_sequence);
  }
  LogMessage(absl::StrFormat(
      "recovery done: %d log(s) replayed, last sequence %d, %.3f sec",
      logs.size(), versions_->LastSequence(),
      (env_->NowMicros() - start_micros) / 1e6));
  return absl::OkStatus();
}

absl::Status DBImpl::FindLogsToReplay(std::vector<uint64_t>* logs) {
  auto children = env_->GetChildren(dbname_);
  if (!children.ok()) return children.status();
  std::set<uint64_t> expected;
  versions_->AddLiveFiles(&expected);
  const uint64_t min_log = versions_->LogNumber();
  const uint64_t prev_log = versions_->PrevLogNumber();
  for (const std::string& name : *children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    expected.erase(number);
    if (type == FileType::kLogFile &&
        (number >= min_log || number == prev_log)) {
      logs->push_back(number);
    }
  }
  if (!expected.empty()) {
    return absl::DataLossError(absl::StrFormat(
        "%s: %d table files named by the MANIFEST are missing, e.g. %s",
        dbname_, expected.size(), TableFileName(dbname_, *expected.begin())));
  }
  std::sort(logs->begin(), logs->end());
  return absl::OkStatus();
}

namespace {

struct LogReporter : public log::Reader::Reporter {
  Env* env;
  Logger* info_log;
  std::string fname;
  absl::Status* status;  // null: log and continue (paranoid_checks off)
  uint64_t dropped_bytes = 0;
  // The first failure to read the file (anything but DataLoss). Never
  // skipped, whatever paranoid_checks says: the bytes may be intact, and
  // going on would drop acknowledged writes that a later Open could read.
  absl::Status io_error;
  void Corruption(size_t bytes, absl::Status s) override {
    const std::string msg =
        absl::StrFormat("%s: %s (%d bytes dropped)", fname, s.message(), bytes);
    if (s.code() != absl::StatusCode::kDataLoss) {
      if (io_error.ok()) {
        io_error = absl::Status(
            s.code(),
            absl::StrFormat("%s: reading the log: %s", fname, s.message()));
      }
      return;
    }
    dropped_bytes += bytes;
    if (info_log != nullptr) info_log->Log(msg);
    if (status != nullptr && status->ok()) *status = absl::DataLossError(msg);
  }
};

}  // namespace

absl::Status DBImpl::RecoverLogFile(uint64_t log_number, bool last_log,
                                    bool* save_manifest, VersionEdit* edit,
                                    SequenceNumber* max_sequence,
                                    MemTable* into) {
  const std::string fname = LogFileName(dbname_, log_number);
  auto file = env_->NewSequentialFile(fname);
  if (!file.ok()) return file.status();

  absl::Status status;
  LogReporter reporter;
  reporter.env = env_;
  reporter.info_log = options_.info_log;
  reporter.fname = fname;
  reporter.status = options_.paranoid_checks ? &status : nullptr;
  log::Reader reader(file->get(), &reporter, /*checksum=*/true,
                     /*initial_offset=*/0);

  std::string scratch;
  std::string_view record;
  WriteBatch batch;
  MemTable* mem = into;  // when set, it takes every record; no tables
  int compactions = 0;
  uint64_t records = 0, entries = 0, record_bytes = 0;
  while (reader.ReadRecord(&record, &scratch) && status.ok() &&
         reporter.io_error.ok()) {
    if (record.size() < WriteBatchInternal::kHeader) {
      reporter.Corruption(
          record.size(),
          absl::DataLossError(absl::StrFormat(
              "log record at offset %d is too small for a write batch",
              reader.LastRecordOffset())));
      continue;
    }
    WriteBatchInternal::SetContents(&batch, record).IgnoreError();
    absl::Status valid = WriteBatchInternal::Validate(&batch);
    if (!valid.ok()) {
      reporter.Corruption(record.size(),
                          absl::DataLossError(absl::StrFormat(
                              "log record at offset %d: %s",
                              reader.LastRecordOffset(), valid.message())));
      continue;
    }
    const SequenceNumber first_seq = WriteBatchInternal::Sequence(&batch);
    const uint64_t count = WriteBatchInternal::Count(&batch);
    if (first_seq > kMaxSequenceNumber - count + 1) {
      // Sequence numbers past the 56 bits of an internal key's trailer
      // would wrap into the type byte.
      reporter.Corruption(
          record.size(),
          absl::DataLossError(absl::StrFormat(
              "log record at offset %d: sequence %d with %d entries exceeds "
              "the largest sequence number %d",
              reader.LastRecordOffset(), first_seq, count,
              kMaxSequenceNumber)));
      continue;
    }
    if (mem == nullptr) {
      mem = NewMemTable();
      mem->Ref();
    }
    status = WriteBatchInternal::InsertInto(&batch, mem);
    if (!status.ok()) break;
    records++;
    entries += count;
    record_bytes += record.size();
    const SequenceNumber last_seq = first_seq + count - 1;
    if (last_seq > *max_sequence) *max_sequence = last_seq;

    if (into == nullptr &&
        mem->ApproximateMemoryUsage() > options_.write_buffer_size) {
      compactions++;
      *save_manifest = true;
      // Part of the log.
      status = WriteLevel0Table(mem, /*emptied_log=*/0, "recovery", edit);
      mem->Unref();
      mem = nullptr;
      if (!status.ok()) break;
    }
  }
  if (status.ok() && !reporter.io_error.ok()) status = reporter.io_error;
  if (reporter.dropped_bytes > 0) {
    LogMessage(absl::StrFormat("recovery of %s dropped %d bytes", fname,
                               reporter.dropped_bytes));
  }
  LogMessage(absl::StrFormat(
      "recovery: replayed log %06d: %d bytes in %d records (%d entries), %d "
      "bytes dropped, %d table(s) flushed on the way: %s",
      log_number, record_bytes, records, entries, reporter.dropped_bytes,
      compactions, status.ToString()));

  // Whatever remains goes to a level-0 table; the log itself is not reused
  // and is deleted once the MANIFEST no longer needs it.
  if (into != nullptr) return status;
  if (status.ok() && mem != nullptr) {
    *save_manifest = true;
    // Names the log only when this table holds all of it that no earlier
    // table of this recovery holds.
    status = WriteLevel0Table(mem, log_number, "recovery", edit);
  }
  if (mem != nullptr) mem->Unref();
  return status;
}

absl::Status DestroyDB(const std::string& dbname, const Options& options) {
  Env* env = options.env != nullptr ? options.env : Env::Default();
  if (!env->FileExists(dbname)) return absl::OkStatus();
  auto children = env->GetChildren(dbname);
  if (!children.ok()) return children.status();
  auto lock = env->LockFile(LockFileName(dbname));
  if (!lock.ok()) return lock.status();
  absl::Status result;
  for (const std::string& name : *children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type != FileType::kDBLockFile) {
      absl::Status del = env->RemoveFile(dbname + "/" + name);
      if (result.ok() && !del.ok()) result = del;
    }
  }
  lock->reset();
  env->RemoveFile(LockFileName(dbname)).IgnoreError();
  env->RemoveDir(dbname).IgnoreError();  // fails when foreign files remain
  return result;
}

}  // namespace siftdb
