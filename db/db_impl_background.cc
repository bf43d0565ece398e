// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl background work: flushing the immutable MemTable to level 0,
// deleting obsolete files, and the sticky background error.

#include <algorithm>
#include <chrono>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/builder.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/output_compression.h"

namespace siftdb {

bool DBImpl::HasBackgroundWork() const {
  if (!bg_error_.ok()) return false;
  return imm_ != nullptr || obsolete_files_pending_ ||
         (manual_compaction_ != nullptr && !manual_compaction_->done) ||
         (!options_.disable_auto_compactions && versions_->NeedsCompaction());
}

void DBImpl::BackgroundThreadMain() {
  MutexLock l(&mutex_);
  while (true) {
    while (!shutting_down_ && !HasBackgroundWork()) {
      // Lookups (which never signal this thread) may ask for a seek
      // compaction (Version::seek_compaction_): look again now and then.
      background_work_cv_.WaitFor(&mutex_, std::chrono::milliseconds(100));
    }
    // On shutdown, finish a pending flush (cheap, and it spares the next
    // Open a log replay) but start no compaction.
    if (shutting_down_ && (imm_ == nullptr || !bg_error_.ok())) break;
    background_busy_ = true;
    if (imm_ != nullptr) {
      CompactMemTable();
    } else if (obsolete_files_pending_) {
      RemoveObsoleteFiles();
    } else if (!shutting_down_) {
      BackgroundCompaction();
    }
    background_busy_ = false;
    background_done_cv_.SignalAll();
  }
  background_done_cv_.SignalAll();
}

void DBImpl::RecordBackgroundError(const absl::Status& s) {
  mutex_.AssertHeld();
  if (bg_error_.ok()) {
    bg_error_ = s;
    LogMessage(absl::StrFormat("background error: %s", s.ToString()));
    background_done_cv_.SignalAll();
  }
}

absl::Status DBImpl::WriteLevel0Table(MemTable* mem, uint64_t emptied_log,
                                      const char* reason, VersionEdit* edit,
                                      uint64_t* kept_pending) {
  const uint64_t start_micros = env_->NowMicros();
  FileMetaData meta;
  meta.number = versions_->NewFileNumber();
  pending_outputs_.insert(meta.number);
  std::unique_ptr<Iterator> iter = mem->NewIterator();
  absl::Status s;
  // The tree's shape sizes the filter (db/filter_budget.h).
  const int deepest = DeepestNonEmptyLevel(*versions_->current());
  {
    mutex_.Unlock();
    std::vector<uint64_t> inputs;
    if (emptied_log != 0) inputs.push_back(emptied_log);
    // A flush writes level 0 and is never bottommost (as in RocksDB).
    s = BuildTable(dbname_, env_,
                   OutputTableOptions(table_options_, options_, 0, deepest,
                                      /*bottommost=*/false),
                   table_cache_.get(), iter.get(), &meta, std::move(inputs),
                   options_.rate_limiter.get());
    if (s.ok() && meta.file_size > 0) {
      s = VerifyTableOutput(table_cache_.get(), &internal_comparator_,
                            meta.number, meta.file_size, mem->NumEntries(),
                            meta.smallest, meta.largest,
                            options_.paranoid_file_checks);
    }
    mutex_.Lock();
  }
  if (kept_pending != nullptr) {
    *kept_pending = meta.number;
  } else {
    pending_outputs_.erase(meta.number);
  }
  const uint64_t micros = env_->NowMicros() - start_micros;
  LogMessage(absl::StrFormat(
      "[job %d] flush (%s): MemTable of %d entries, %d bytes -> table "
      "%06d.sst at level 0, %d bytes, %.3f sec: %s",
      ++next_job_id_, reason, mem->NumEntries(), mem->ApproximateMemoryUsage(),
      meta.number, meta.file_size, micros / 1e6, s.ToString()));
  if (s.ok() && meta.file_size > 0) {
    edit->AddFile(0, meta.number, meta.file_size, meta.smallest, meta.largest);
  }
  flushes_++;
  flush_micros_ += micros;
  flush_bytes_ += meta.file_size;
  stats_.Record(Ticker::kBytesWritten, meta.file_size);
  return s;
}

void DBImpl::CompactMemTable() {
  mutex_.AssertHeld();
  VersionEdit edit;
  uint64_t table_number = 0;
  const char* reason = shutting_down_ ? "close" : imm_flush_reason_;
  absl::Status s =
      WriteLevel0Table(imm_, imm_logfile_number_, reason, &edit, &table_number);
  if (s.ok()) {
    // Logs older than the current one are no longer needed.
    edit.SetPrevLogNumber(0);
    edit.SetLogNumber(logfile_number_);
    // LogAndApply releases the mutex while it writes the MANIFEST; the
    // table stays pending until then, or a reader ending meanwhile would
    // delete it as obsolete.
    s = versions_->LogAndApply(&edit, &mutex_);
  }
  pending_outputs_.erase(table_number);
  if (s.ok()) {
    imm_->Unref();
    imm_ = nullptr;
    has_imm_.store(false, std::memory_order_release);
    if (mirror_ != nullptr) {
      mirror_->VersionInstalled(LiveTablesForMirror(), {imm_logfile_number_});
    }
    LogMessage(absl::StrFormat("[job %d] flush installed; levels: %s",
                               next_job_id_, LevelSummary()));
    DropSwitchedLog();
    RemoveObsoleteFiles();
  } else {
    RecordBackgroundError(s);
  }
}

void DBImpl::RemoveObsoleteFiles() {
  mutex_.AssertHeld();
  obsolete_files_pending_ = false;
  // After an error the state of new files is unknown: keep everything.
  if (!bg_error_.ok() || file_deletions_disabled_ > 0) return;
  // List first, without the mutex, then decide under it: a file created
  // after the listing is not in it, and one that became live meanwhile is
  // in `live` below.
  mutex_.Unlock();
  auto children = env_->GetChildren(dbname_);
  mutex_.Lock();
  if (!children.ok() || !bg_error_.ok() || file_deletions_disabled_ > 0) {
    return;
  }
  std::set<uint64_t> live = pending_outputs_;
  versions_->AddLiveFiles(&live, early_release_version_, &early_released_);
  std::vector<std::string> to_delete;
  for (const std::string& name : *children) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(name, &number, &type)) continue;
    bool keep = true;
    switch (type) {
      case FileType::kLogFile:
        keep = number >= versions_->LogNumber() ||
               number == versions_->PrevLogNumber();
        break;
      case FileType::kDescriptorFile:
        keep = number >= versions_->OldestLiveManifestNumber();
        break;
      case FileType::kTableFile:
      case FileType::kTempFile:
        keep = live.contains(number);
        break;
      case FileType::kCurrentFile:
      case FileType::kDBLockFile:
      case FileType::kInfoLogFile:
      case FileType::kMirrorHistoryFile:
        keep = true;
        break;
    }
    if (!keep) {
      to_delete.push_back(name);
      if (type == FileType::kTableFile) table_cache_->Evict(number);
    }
  }
  // Deleting needs no mutex: these files are unreachable now.
  mutex_.Unlock();
  for (const std::string& name : to_delete) {
    const std::string fname = dbname_ + "/" + name;
    absl::Status del = env_->RemoveFile(fname);
    if (del.ok()) {
      LogMessage("deleted obsolete file " + fname);
    } else {
      LogMessage(absl::StrFormat("failed to delete obsolete file %s: %s", fname,
                                 del.ToString()));
    }
  }
  mutex_.Lock();
}

absl::Status DBImpl::FlushMemTable() {
  absl::Status s = Write(WriteOptions(), nullptr);
  if (!s.ok()) return s;
  MutexLock l(&mutex_);
  while (imm_ != nullptr && bg_error_.ok()) {
    background_done_cv_.Wait(&mutex_);
  }
  return bg_error_;
}

absl::Status DBImpl::WaitForBackgroundWork() {
  MutexLock l(&mutex_);
  while ((background_busy_ || HasBackgroundWork()) && bg_error_.ok() &&
         !shutting_down_) {
    background_done_cv_.Wait(&mutex_);
  }
  return bg_error_;
}

}  // namespace siftdb
