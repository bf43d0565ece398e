// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DB::OpenForReadOnly: recovery that writes nothing. The MANIFEST named by
// CURRENT gives the tables; the logs it does not cover yet are replayed
// into one MemTable kept in memory (never flushed). No lock, no LOG, no new
// log or MANIFEST, no background thread, no Redis mirror writer.
//
// Beside a live writer (another process) the directory changes under the
// open: CURRENT may name a MANIFEST the writer has just replaced, and a
// log or table may be deleted between the listing and the read. Each such
// miss makes the whole open start again from CURRENT, a few times.

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"

namespace siftdb {
namespace {

// Attempts before the error of the last one is returned. Each attempt
// that fails this way saw the writer move on; a DB that is really damaged
// fails every time, quickly.
constexpr int kReadOnlyOpenAttempts = 10;

// Errors that a writer moving on can cause: a file named a moment ago is
// gone, or the MANIFEST changed during the open (Aborted, below).
bool MayBeARace(const absl::Status& s) {
  return absl::IsNotFound(s) || absl::IsDataLoss(s) || absl::IsAborted(s);
}

// What CURRENT says and how long that MANIFEST is. A writer records every
// change in the MANIFEST before it deletes the files the change made
// obsolete (a flushed log, compacted tables). So when this is the same
// before the open read the MANIFEST and after it listed the directory, the
// listing holds every log that state needs: a log missing from it would
// otherwise lose writes silently. The replay that follows may run beside
// the writer: a listed log deleted before it is opened fails the attempt
// (NotFound), and one deleted after is still read whole through its open
// descriptor, so the slow part of the open is outside the window.
std::string ManifestState(Env* env, const std::string& dbname) {
  auto current = ReadFileToString(env, CurrentFileName(dbname));
  if (!current.ok()) return "?";
  std::string name = *current;
  while (!name.empty() && name.back() == '\n') name.pop_back();
  auto size = env->GetFileSize(dbname + "/" + name);
  if (!size.ok()) return "?";
  return absl::StrFormat("%s:%d", name, *size);
}

}  // namespace

absl::StatusOr<std::unique_ptr<DB>> DB::OpenForReadOnly(
    const Options& options, const std::string& dbname) {
  if (dbname.empty()) {
    return absl::InvalidArgumentError("DB path is empty");
  }
  // The mirror options are ignored, so not checked either: a read-only
  // tool may share a writer's configuration, in any build.
  const bool mirror_requested =
      options.remote_filter.mode != RemoteFilterOptions::Mode::kOff;
  Options without_mirror = options;
  without_mirror.remote_filter = RemoteFilterOptions();
  auto sanitized = SanitizeOptions(without_mirror);
  if (!sanitized.ok()) return sanitized.status();
  Env* env = sanitized->env;
  if (!env->IsDirectory(dbname)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: not a directory (a read-only open creates nothing)", dbname));
  }
  absl::Status s;
  for (int attempt = 0; attempt < kReadOnlyOpenAttempts; attempt++) {
    auto impl = std::make_unique<DBImpl>(*sanitized, dbname,
                                         /*read_only=*/true);
    {
      MutexLock l(&impl->mutex_);
      s = impl->RecoverReadOnly();
    }
    if (s.ok()) {
      if (mirror_requested) {
        impl->LogMessage(
            "read-only open: options.remote_filter ignored (a read-only DB "
            "never starts the Redis mirror writer)");
      }
      return std::unique_ptr<DB>(std::move(impl));
    }
    if (!MayBeARace(s)) break;
    env->SleepForMicroseconds(1000 * (attempt + 1));
  }
  return s;
}

absl::Status DBImpl::RecoverReadOnly() {
  mutex_.AssertHeld();
  if (!env_->FileExists(CurrentFileName(dbname_))) {
    return absl::NotFoundError(absl::StrFormat(
        "%s: not a siftdb database (no CURRENT file)", dbname_));
  }
  const std::string manifest_before = ManifestState(env_, dbname_);
  bool unused_save_manifest = false;
  absl::Status s = versions_->Recover(&unused_save_manifest);
  if (!s.ok()) return s;
  std::vector<uint64_t> logs;
  s = FindLogsToReplay(&logs);
  if (!s.ok()) return s;
  const std::string manifest_after = ManifestState(env_, dbname_);
  if (manifest_before == "?" || manifest_before != manifest_after) {
    return absl::AbortedError(absl::StrFormat(
        "%s: the MANIFEST changed during the read-only open (%s, then %s): "
        "a writer is active",
        dbname_, manifest_before, manifest_after));
  }
  mem_ = NewMemTable();
  mem_->Ref();
  VersionEdit unused_edit;
  SequenceNumber max_sequence = 0;
  for (size_t i = 0; i < logs.size(); i++) {
    s = RecoverLogFile(logs[i], i == logs.size() - 1, &unused_save_manifest,
                       &unused_edit, &max_sequence, /*into=*/mem_);
    if (!s.ok()) return s;
  }
  if (versions_->LastSequence() < max_sequence) {
    versions_->SetLastSequence(max_sequence);
  }
  LogMessage(absl::StrFormat(
      "read-only open: %d log(s) replayed into memory, last sequence %d",
      logs.size(), versions_->LastSequence()));
  return absl::OkStatus();
}

}  // namespace siftdb
