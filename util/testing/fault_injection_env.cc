// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/testing/fault_injection_env.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "util/testing/fault_injection_files.h"

namespace siftdb {
namespace {

// "/a/b/" -> "/a/b"; "/" stays.
std::string StripTrailingSlashes(std::string path) {
  while (path.size() > 1 && path.back() == '/') path.pop_back();
  return path;
}

// The directory holding path: "/a/b/c" -> "/a/b", "c" -> ".", "/c" -> "/".
std::string Dirname(const std::string& path) {
  const std::string p = StripTrailingSlashes(path);
  const size_t slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return StripTrailingSlashes(p.substr(0, slash));
}

// The errno name a test would expect for the classic codes.
std::string CodeName(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kResourceExhausted:
      return "ENOSPC";
    case absl::StatusCode::kInternal:
      return "EIO";
    case absl::StatusCode::kNotFound:
      return "ENOENT";
    default:
      return absl::StatusCodeToString(code);
  }
}

}  // namespace

const char* FaultOpName(FaultOp op) {
  switch (op) {
    case FaultOp::kAppend:
      return "append";
    case FaultOp::kSync:
      return "sync";
    case FaultOp::kRename:
      return "rename";
    case FaultOp::kRead:
      return "read";
    case FaultOp::kSyncDir:
      return "syncdir";
    case FaultOp::kCreate:
      return "create";
    case FaultOp::kRemove:
      return "remove";
    case FaultOp::kLock:
      return "lock";
    default:
      return "?";
  }
}

FaultInjectionEnv::FaultInjectionEnv(Env* base) : base_(base) {}

FaultInjectionEnv::~FaultInjectionEnv() = default;

// --- Error injection ---

void FaultInjectionEnv::InjectError(FaultOp ops, std::string path_substring,
                                    absl::StatusCode code, int skip_first_n,
                                    int times) {
  MutexLock lock(&mu_);
  rules_.push_back(ErrorRule{ops, std::move(path_substring), code,
                             std::max(skip_first_n, 0),
                             times < 0 ? -1 : times});
}

void FaultInjectionEnv::ClearErrors() {
  MutexLock lock(&mu_);
  rules_.clear();
}

uint64_t FaultInjectionEnv::InjectedErrorCount() const {
  MutexLock lock(&mu_);
  return injected_count_;
}

void FaultInjectionEnv::SetFilesystemActive(bool active) {
  MutexLock lock(&mu_);
  active_ = active;
}

bool FaultInjectionEnv::IsFilesystemActive() const {
  MutexLock lock(&mu_);
  return active_;
}

absl::Status FaultInjectionEnv::Injected(FaultOp op, std::string_view path) {
  for (ErrorRule& rule : rules_) {
    if (!Contains(rule.ops, op) || rule.remaining == 0 ||
        path.find(rule.path_substring) == std::string_view::npos) {
      continue;
    }
    if (rule.skip > 0) {
      rule.skip--;
      continue;
    }
    if (rule.remaining > 0) rule.remaining--;
    injected_count_++;
    return absl::Status(
        rule.code, absl::StrFormat("injected %s: %s %s", CodeName(rule.code),
                                   FaultOpName(op), path));
  }
  return absl::OkStatus();
}

absl::Status FaultInjectionEnv::CheckWrite(FaultOp op, std::string_view path) {
  MutexLock lock(&mu_);
  if (!active_) {
    return absl::InternalError(
        absl::StrFormat("filesystem inactive (simulated dead disk): %s %s",
                        FaultOpName(op), path));
  }
  return Injected(op, path);
}

absl::Status FaultInjectionEnv::CheckRead(std::string_view path) {
  MutexLock lock(&mu_);
  return Injected(FaultOp::kRead, path);
}

// --- Tracking ---

void FaultInjectionEnv::RecordSync(const std::string& fname, uint64_t gen,
                                   uint64_t size) {
  MutexLock lock(&mu_);
  if (gen != generation_) return;  // a file from before a power loss
  auto it = files_.find(fname);
  if (it != files_.end()) it->second.synced_size = size;
}

void FaultInjectionEnv::ForgetOpenFile(OpenFile* file) {
  MutexLock lock(&mu_);
  open_files_.erase(file);
}

std::optional<uint64_t> FaultInjectionEnv::SyncedSize(
    const std::string& fname) const {
  MutexLock lock(&mu_);
  auto it = files_.find(fname);
  if (it == files_.end()) return std::nullopt;
  return it->second.synced_size;
}

absl::StatusOr<std::unique_ptr<WritableFile>> FaultInjectionEnv::OpenForWrite(
    const std::string& fname, bool append) {
  absl::Status s = CheckWrite(FaultOp::kCreate, fname);
  if (!s.ok()) return s;
  const bool existed = base_->FileExists(fname);
  auto file =
      append ? base_->NewAppendableFile(fname) : base_->NewWritableFile(fname);
  if (!file.ok()) return file.status();
  uint64_t size = 0;
  if (append && existed) {
    auto current = base_->GetFileSize(fname);
    if (!current.ok()) return current.status();
    size = *current;
  }

  MutexLock lock(&mu_);
  auto it = files_.find(fname);
  if (!append || it == files_.end()) {
    // Truncated, or untracked so far: what is there now counts as durable.
    files_[fname] = FileState{size};
  }
  if (!existed) new_files_.insert(fname);
  auto open =
      std::make_shared<OpenFile>(fname, generation_, size, std::move(*file));
  open_files_[open.get()] = open;
  return NewFaultWritableFile(this, std::move(open));
}

// --- Env ---

absl::StatusOr<std::unique_ptr<SequentialFile>>
FaultInjectionEnv::NewSequentialFile(const std::string& fname) {
  absl::Status s = CheckRead(fname);
  if (!s.ok()) return s;
  auto file = base_->NewSequentialFile(fname);
  if (!file.ok()) return file.status();
  return NewFaultSequentialFile(this, fname, std::move(*file));
}

absl::StatusOr<std::unique_ptr<RandomAccessFile>>
FaultInjectionEnv::NewRandomAccessFile(const std::string& fname) {
  absl::Status s = CheckRead(fname);
  if (!s.ok()) return s;
  auto file = base_->NewRandomAccessFile(fname);
  if (!file.ok()) return file.status();
  return NewFaultRandomAccessFile(this, fname, std::move(*file));
}

absl::StatusOr<std::unique_ptr<WritableFile>>
FaultInjectionEnv::NewWritableFile(const std::string& fname) {
  return OpenForWrite(fname, /*append=*/false);
}

absl::StatusOr<std::unique_ptr<WritableFile>>
FaultInjectionEnv::NewAppendableFile(const std::string& fname) {
  return OpenForWrite(fname, /*append=*/true);
}

bool FaultInjectionEnv::FileExists(const std::string& fname) {
  return base_->FileExists(fname);
}

absl::StatusOr<std::vector<std::string>> FaultInjectionEnv::GetChildren(
    const std::string& dir) {
  return base_->GetChildren(dir);
}

absl::Status FaultInjectionEnv::RemoveFile(const std::string& fname) {
  absl::Status s = CheckWrite(FaultOp::kRemove, fname);
  if (s.ok()) s = base_->RemoveFile(fname);
  if (s.ok()) {
    MutexLock lock(&mu_);
    files_.erase(fname);
    new_files_.erase(fname);
  }
  return s;
}

absl::Status FaultInjectionEnv::CreateDir(const std::string& dirname) {
  absl::Status s = CheckWrite(FaultOp::kCreate, dirname);
  if (!s.ok()) return s;
  return base_->CreateDir(dirname);
}

absl::Status FaultInjectionEnv::RemoveDir(const std::string& dirname) {
  absl::Status s = CheckWrite(FaultOp::kRemove, dirname);
  if (!s.ok()) return s;
  return base_->RemoveDir(dirname);
}

absl::StatusOr<uint64_t> FaultInjectionEnv::GetFileSize(
    const std::string& fname) {
  return base_->GetFileSize(fname);
}

absl::Status FaultInjectionEnv::RenameFile(const std::string& src,
                                           const std::string& target) {
  absl::Status s =
      CheckWrite(FaultOp::kRename, absl::StrFormat("%s -> %s", src, target));
  if (!s.ok()) return s;

  // Keep what a power loss would bring back of a replaced target.
  std::optional<std::string> old_contents;
  if (base_->FileExists(target)) {
    auto contents = ReadFileToString(base_, target);
    if (!contents.ok()) return contents.status();
    old_contents = std::move(*contents);
    const std::optional<uint64_t> synced = SyncedSize(target);
    if (synced.has_value() && *synced < old_contents->size()) {
      old_contents->resize(*synced);
    }
  }
  s = base_->RenameFile(src, target);
  if (!s.ok()) return s;

  MutexLock lock(&mu_);
  auto node = files_.extract(src);
  files_.erase(target);
  if (!node.empty()) files_[target] = node.mapped();
  renames_.push_back(PendingRename{src, target, std::move(old_contents)});
  return absl::OkStatus();
}

absl::Status FaultInjectionEnv::SyncDir(const std::string& dirname) {
  absl::Status s = CheckWrite(FaultOp::kSyncDir, dirname);
  if (s.ok()) s = base_->SyncDir(dirname);
  if (!s.ok()) return s;
  const std::string dir = StripTrailingSlashes(dirname);
  MutexLock lock(&mu_);
  absl::erase_if(new_files_,
                 [&](const std::string& f) { return Dirname(f) == dir; });
  renames_.erase(std::remove_if(renames_.begin(), renames_.end(),
                                [&](const PendingRename& r) {
                                  return Dirname(r.target) == dir;
                                }),
                 renames_.end());
  return absl::OkStatus();
}

bool FaultInjectionEnv::IsDirectory(const std::string& path) {
  return base_->IsDirectory(path);
}

absl::StatusOr<std::unique_ptr<FileLock>> FaultInjectionEnv::LockFile(
    const std::string& fname) {
  {
    MutexLock lock(&mu_);
    absl::Status s = Injected(FaultOp::kLock, fname);
    if (!s.ok()) return s;
  }
  return base_->LockFile(fname);
}

absl::StatusOr<std::unique_ptr<Logger>> FaultInjectionEnv::NewLogger(
    const std::string& fname) {
  return base_->NewLogger(fname);
}

uint64_t FaultInjectionEnv::NowMicros() { return base_->NowMicros(); }

void FaultInjectionEnv::SleepForMicroseconds(int64_t micros) {
  base_->SleepForMicroseconds(micros);
}

// --- Power loss ---

absl::Status FaultInjectionEnv::TruncateTo(const std::string& fname,
                                           uint64_t size) {
  auto contents = ReadFileToString(base_, fname);
  if (!contents.ok()) return contents.status();
  if (contents->size() <= size) return absl::OkStatus();
  contents->resize(size);
  return WriteStringToFile(base_, *contents, fname, /*sync=*/true);
}

absl::Status FaultInjectionEnv::SimulatePowerLoss() {
  // Kill the open writers first (outside mu_: lock order is file, then
  // Env). Bumping the generation first makes any Sync that races with this
  // leave no trace.
  std::vector<std::shared_ptr<OpenFile>> open;
  {
    MutexLock lock(&mu_);
    generation_++;
    for (auto& entry : open_files_) open.push_back(entry.second);
    open_files_.clear();
  }
  for (auto& file : open) file->Kill();

  MutexLock lock(&mu_);
  absl::Status first_error;
  auto note = [&first_error](const absl::Status& s) {
    if (first_error.ok() && !s.ok()) first_error = s;
  };

  // 1. Undo renames not made durable, newest first.
  for (auto r = renames_.rbegin(); r != renames_.rend(); ++r) {
    if (base_->FileExists(r->target)) {
      note(base_->RenameFile(r->target, r->src));
    }
    auto node = files_.extract(r->target);
    files_.erase(r->src);
    if (!node.empty()) files_[r->src] = node.mapped();
    if (r->old_contents.has_value()) {
      note(WriteStringToFile(base_, *r->old_contents, r->target, true));
    }
  }
  // 2. Drop files whose directory entry never became durable.
  for (const std::string& fname : new_files_) {
    if (base_->FileExists(fname)) note(base_->RemoveFile(fname));
    files_.erase(fname);
  }
  // 3. Cut every tracked file back to its last synced size.
  for (const auto& [fname, state] : files_) {
    if (!base_->FileExists(fname)) continue;
    auto size = base_->GetFileSize(fname);
    if (!size.ok()) {
      note(size.status());
    } else if (*size > state.synced_size) {
      note(TruncateTo(fname, state.synced_size));
    }
  }
  // What is left is durable.
  renames_.clear();
  new_files_.clear();
  files_.clear();
  return first_error;
}

}  // namespace siftdb
