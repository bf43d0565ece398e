// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl's end: Close, and the destructor that calls it. Close lets queued
// writes finish, flushes writes no log holds (WriteOptions::disable_wal),
// stops the background thread and the mirror, and syncs the log.

#include <chrono>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/version_set.h"

namespace siftdb {

DBImpl::~DBImpl() {
  Close().IgnoreError();
  MutexLock l(&mutex_);
  if (mem_ != nullptr) mem_->Unref();
  if (imm_ != nullptr) imm_->Unref();
  versions_.reset();
  db_lock_.reset();
}

absl::Status DBImpl::Close() {
  {
    MutexLock l(&mutex_);
    if (closed_) return close_status_;
    closed_ = true;  // from here on writes are refused
    // Let writes already queued finish: their callers were not refused.
    while (!writers_.empty())
      background_done_cv_.WaitFor(&mutex_, std::chrono::milliseconds(10));
  }
  absl::Status unlogged_flush = FlushUnloggedWritesForClose();
  {
    MutexLock l(&mutex_);
    shutting_down_ = true;
    background_work_cv_.SignalAll();
  }
  // The background thread finishes a pending MemTable flush, stops any
  // compaction, and records a failure of either as the background error.
  if (background_thread_.joinable()) background_thread_.join();
  mirror_.reset();  // revokes its lease; before the table cache it reads
  MutexLock l(&mutex_);
  absl::Status s = bg_error_;
  if (s.ok()) s = unlogged_flush;
  // A switched log whose MemTable's flush was installed is gone; one
  // whose flush failed, or a pending directory sync, is synced here.
  if (SwitchedLogUnsynced()) {
    absl::Status synced = SyncSwitchedLog();
    if (s.ok()) s = synced;
  }
  if (log_ != nullptr) {
    log_.reset();
    absl::Status sync = logfile_->Sync();
    absl::Status close = logfile_->Close();
    if (s.ok()) s = sync;
    if (s.ok()) s = close;
    logfile_.reset();
  }
  EndWriteStall();
  if (!read_only_) {
    LogMessage(absl::StrFormat(
        "close: %s; last sequence %d; levels: %s; write stalls %.3f sec in "
        "total",
        s.ToString(), versions_->LastSequence(), LevelSummary(),
        stall_micros_ / 1e6));
  } else if (!s.ok()) {
    LogMessage("close: " + s.ToString());
  }
  close_status_ = s;
  return s;
}

absl::Status DBImpl::FlushUnloggedWritesForClose() {
  {
    MutexLock l(&mutex_);
    if (!mem_has_unlogged_writes_ || read_only_) return absl::OkStatus();
    flushing_for_close_ = true;
  }
  absl::Status s = FlushMemTable();
  MutexLock l(&mutex_);
  flushing_for_close_ = false;
  if (!s.ok()) {
    // The writes made without the log are lost with the process: say so.
    s = absl::Status(
        s.code(),
        absl::StrCat(dbname_,
                     ": close could not flush writes made with "
                     "WriteOptions::disable_wal, which no log holds: ",
                     s.message()));
    LogMessage(s.ToString());
  }
  return s;
}

}  // namespace siftdb
