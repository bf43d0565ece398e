// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Hot copies of a live DB: CreateCheckpoint, and GetLiveFiles with
// Disable/EnableFileDeletions for users who copy files themselves.
//
// Why a checkpoint is consistent: under the mutex it captures the current
// Version (its tables), the log numbers that Version does not cover, and
// the last sequence, and it disables file deletions, so every file it
// names stays on disk until it is copied. Tables never change once
// written. Logs older than the newest are complete; the newest is copied
// as it is at that moment, a prefix of the writes (a record torn at its
// end is what a crash leaves, and recovery drops it without loss of
// anything acknowledged before the call). The checkpoint's own MANIFEST
// (one snapshot record) names exactly the captured tables, with the log
// number and last sequence of the captured Version, so opening it replays
// the copied logs on top of those tables: the state of the live DB at some
// moment during the call.

#include <algorithm>
#include <memory>
#include <optional>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "wal/log_writer.h"

namespace siftdb {

struct DBImpl::CheckpointPlan {
  struct Table {
    uint64_t number;
    uint64_t size;
  };
  std::vector<Table> tables;
  std::vector<uint64_t> logs;
  uint64_t log_number = 0, prev_log_number = 0;  // of the captured Version
  VersionEdit snapshot;  // the checkpoint MANIFEST's only record
  uint64_t manifest_number = 0;
};

namespace {

// Copies the first `size` bytes of src (all of it when size is nullopt)
// to a new file target, synced.
absl::Status CopyFilePrefix(Env* env, const std::string& src,
                            const std::string& target,
                            std::optional<uint64_t> size) {
  auto in = env->NewSequentialFile(src);
  if (!in.ok()) return in.status();
  auto out = env->NewWritableFile(target);
  if (!out.ok()) return out.status();
  constexpr size_t kChunk = 1 << 20;
  std::unique_ptr<char[]> buffer(new char[kChunk]);
  uint64_t copied = 0;
  absl::Status s;
  while (!size.has_value() || copied < *size) {
    size_t want = kChunk;
    if (size.has_value()) want = std::min<uint64_t>(kChunk, *size - copied);
    std::string_view chunk;
    s = (*in)->Read(want, &chunk, buffer.get());
    if (!s.ok() || chunk.empty()) break;
    s = (*out)->Append(chunk);
    if (!s.ok()) break;
    copied += chunk.size();
  }
  if (s.ok() && size.has_value() && copied < *size) {
    s = absl::DataLossError(absl::StrFormat(
        "%s: %d bytes expected, the file holds %d", src, *size, copied));
  }
  if (s.ok()) s = (*out)->Sync();
  absl::Status close = (*out)->Close();
  if (s.ok()) s = close;
  return s;
}

// Removes dir and the siftdb files in it (what a failed checkpoint left).
void RemoveCheckpointDir(Env* env, const std::string& dir) {
  auto children = env->GetChildren(dir);
  if (children.ok()) {
    for (const std::string& name : *children) {
      uint64_t number;
      FileType type;
      if (ParseFileName(name, &number, &type)) {
        env->RemoveFile(dir + "/" + name).IgnoreError();
      }
    }
  }
  env->RemoveDir(dir).IgnoreError();
}

}  // namespace

absl::Status DBImpl::DisableFileDeletions() {
  MutexLock l(&mutex_);
  absl::Status s = CheckWritable("DisableFileDeletions");
  if (!s.ok()) return s;
  file_deletions_disabled_++;
  return absl::OkStatus();
}

absl::Status DBImpl::EnableFileDeletions(bool force) {
  MutexLock l(&mutex_);
  absl::Status s = CheckWritable("EnableFileDeletions");
  if (!s.ok()) return s;
  if (force) {
    file_deletions_disabled_ = 0;
  } else if (file_deletions_disabled_ > 0) {
    file_deletions_disabled_--;
  }
  if (file_deletions_disabled_ == 0) RemoveObsoleteFiles();
  return absl::OkStatus();
}

absl::Status DBImpl::GetLiveFiles(std::vector<std::string>* files,
                                  uint64_t* manifest_file_size,
                                  bool flush_memtable) {
  if (flush_memtable) {
    absl::Status s = FlushMemTable();
    if (!s.ok()) return s;
  }
  MutexLock l(&mutex_);
  absl::Status s = CheckWritable("GetLiveFiles");
  if (!s.ok()) return s;
  if (!bg_error_.ok()) return bg_error_;
  if (versions_->ManifestFileNumber() == 0) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: GetLiveFiles: no MANIFEST written yet", dbname_));
  }
  files->clear();
  const Version* v = versions_->current();
  for (int level = 0; level < kNumLevels; level++) {
    for (const FileMetaData* f : v->files(level)) {
      files->push_back(TableFileName("", f->number));
    }
  }
  files->push_back(CurrentFileName(""));
  files->push_back(DescriptorFileName("", versions_->ManifestFileNumber()));
  *manifest_file_size = versions_->ManifestFileSize();
  return absl::OkStatus();
}

absl::Status DBImpl::CreateCheckpoint(const std::string& dir) {
  if (dir.empty()) {
    return absl::InvalidArgumentError("CreateCheckpoint: directory is empty");
  }
  if (env_->FileExists(dir)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "CreateCheckpoint: %s already exists (the checkpoint directory must "
        "not)",
        dir));
  }
  const std::string tmp = dir + ".tmp";
  CheckpointPlan plan;
  {
    MutexLock l(&mutex_);
    absl::Status s = CheckWritable("CreateCheckpoint");
    if (!s.ok()) return s;
    if (!bg_error_.ok()) return bg_error_;
    file_deletions_disabled_++;
    const Version* v = versions_->current();
    VersionEdit& edit = plan.snapshot;
    edit.SetComparatorName(options_.comparator->Name());
    plan.log_number = versions_->LogNumber();
    plan.prev_log_number = versions_->PrevLogNumber();
    edit.SetLogNumber(plan.log_number);
    edit.SetPrevLogNumber(plan.prev_log_number);
    edit.SetLastSequence(versions_->LastSequence());
    for (int level = 0; level < kNumLevels; level++) {
      for (const FileMetaData* f : v->files(level)) {
        plan.tables.push_back({f->number, f->file_size});
        edit.AddFile(level, f->number, f->file_size, f->smallest, f->largest);
      }
    }
    // Numbered above every file of the live DB now, so above every file
    // the checkpoint may hold.
    plan.manifest_number = versions_->NewFileNumber();
  }
  // Deletions are off, so the logs the captured Version needs are still
  // here; logs newer than the capture are copied too (a longer prefix).
  absl::Status s;
  auto children = env_->GetChildren(dbname_);
  if (!children.ok()) s = children.status();
  uint64_t max_number = plan.manifest_number;
  if (s.ok()) {
    for (const std::string& name : *children) {
      uint64_t number;
      FileType type;
      if (!ParseFileName(name, &number, &type)) continue;
      if (type == FileType::kLogFile &&
          (number >= plan.log_number || number == plan.prev_log_number)) {
        plan.logs.push_back(number);
        max_number = std::max(max_number, number);
      }
    }
    std::sort(plan.logs.begin(), plan.logs.end());
    plan.snapshot.SetNextFile(max_number + 1);
  }
  if (s.ok()) {
    RemoveCheckpointDir(env_, tmp);  // left by an earlier failed attempt
    s = env_->CreateDir(tmp);
  }
  if (s.ok()) s = CopyCheckpointFiles(plan, tmp);
  if (s.ok()) s = env_->RenameFile(tmp, dir);
  if (s.ok()) s = env_->SyncDir(ParentDirectory(dir));
  if (!s.ok()) RemoveCheckpointDir(env_, tmp);
  {
    MutexLock l(&mutex_);
    file_deletions_disabled_--;
    if (file_deletions_disabled_ == 0) RemoveObsoleteFiles();
  }
  LogMessage(absl::StrFormat("checkpoint %s: %d tables, %d logs: %s", dir,
                             plan.tables.size(), plan.logs.size(),
                             s.ToString()));
  return s;
}

absl::Status DBImpl::CopyCheckpointFiles(const CheckpointPlan& plan,
                                         const std::string& dir) {
  absl::Status s;
  for (const CheckpointPlan::Table& t : plan.tables) {
    const std::string src = TableFileName(dbname_, t.number);
    const std::string target = TableFileName(dir, t.number);
    s = env_->LinkFile(src, target);
    if (absl::IsUnimplemented(s)) s = CopyFilePrefix(env_, src, target, t.size);
    if (!s.ok()) return s;
  }
  for (uint64_t number : plan.logs) {
    s = CopyFilePrefix(env_, LogFileName(dbname_, number),
                       LogFileName(dir, number), std::nullopt);
    if (!s.ok()) return s;
  }
  {
    auto file =
        env_->NewWritableFile(DescriptorFileName(dir, plan.manifest_number));
    if (!file.ok()) return file.status();
    log::Writer writer(file->get());
    std::string record;
    plan.snapshot.EncodeTo(&record);
    s = writer.AddRecord(record);
    if (s.ok()) s = (*file)->Sync();
    absl::Status close = (*file)->Close();
    if (s.ok()) s = close;
    if (!s.ok()) return s;
  }
  // SetCurrentFile syncs the directory, making every entry above durable.
  return SetCurrentFile(env_, dir, plan.manifest_number);
}

}  // namespace siftdb
