// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// FaultInjectionEnv: an Env wrapping a base Env (usually Env::Default())
// for crash and I/O-fault tests of the layers above. Three tools:
//
// 1. Power loss. SimulatePowerLoss() rewinds the file system to what a
//    machine crash could leave behind, according to this model:
//    - File data: for every file written through this Env (NewWritableFile,
//      NewAppendableFile) the size at its last successful Sync() is kept;
//      bytes past it are cut off. A file opened by NewWritableFile starts
//      with 0 durable bytes (even if it replaced an older file of that
//      name); one opened by NewAppendableFile starts with its existing size
//      durable.
//    - Directory entries: a file created through this Env disappears unless
//      SyncDir() of its directory succeeded after it was created.
//    - Renames: a RenameFile(src, target) not followed by a successful
//      SyncDir() of target's directory is undone: target goes back to src
//      and an older target that the rename replaced gets back its durable
//      contents (copied when the rename happened). Undone in reverse
//      order, before unsynced creations are removed.
//    Not modeled: removals (RemoveFile/RemoveDir are durable at once),
//    CreateDir (durable at once), renames across directories (the target's
//    directory sync decides), files written through other Envs or opened
//    before this Env existed (left alone), torn writes inside a sync, and
//    reordering of writes between syncs (the durable part is always a
//    prefix). Logger files (NewLogger) are passed through, untracked.
//    Afterwards every WritableFile opened before is dead (its methods fail
//    with FailedPrecondition); readers opened before see the rewound files.
//    Everything left is considered durable, so a second SimulatePowerLoss
//    with no writes in between changes nothing.
//    REQUIRES: no file operation through this Env in flight; the usual
//    sequence is SetFilesystemActive(false), close the DB,
//    SimulatePowerLoss(), SetFilesystemActive(true), reopen.
//
// 2. Error injection. InjectError(ops, path_substring, code, skip, times)
//    makes the matching operations on paths containing path_substring fail
//    with `code`, after letting the first `skip` matches through, `times`
//    times (-1: forever). An injected failure does nothing to the file
//    (an append writes no byte, a sync syncs nothing). Messages say what
//    happened, e.g. "injected ENOSPC: append /db/000005.log". Rules are
//    checked in the order added; the first that fires wins.
//
// 3. A dead disk. SetFilesystemActive(false) makes every append, flush,
//    sync, rename, create, remove and directory sync fail with Internal
//    ("filesystem inactive: ..."); reads, listing, locking and logging
//    still work.
//
// Operation classes (FaultOp): kAppend covers WritableFile Append and
// Flush; kSync WritableFile::Sync; kRename RenameFile (matching either
// name); kRead opening a file for reading and every read or skip;
// kSyncDir SyncDir; kCreate NewWritableFile, NewAppendableFile, CreateDir;
// kRemove RemoveFile, RemoveDir; kLock LockFile.
//
// Thread safety: every method may be called from many threads (subject to
// the REQUIRES of SimulatePowerLoss). Ownership: `base` is not owned and
// must outlive this Env; every file this Env returns must be destroyed
// before it.

#ifndef SIFTDB_UTIL_TESTING_FAULT_INJECTION_ENV_H_
#define SIFTDB_UTIL_TESTING_FAULT_INJECTION_ENV_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "siftdb/env.h"
#include "util/mutex.h"

namespace siftdb {

// A set of operation classes (bitmask).
enum class FaultOp : uint32_t {
  kNone = 0,
  kAppend = 1u << 0,
  kSync = 1u << 1,
  kRename = 1u << 2,
  kRead = 1u << 3,
  kSyncDir = 1u << 4,
  kCreate = 1u << 5,
  kRemove = 1u << 6,
  kLock = 1u << 7,
  kAll = (1u << 8) - 1,
};

constexpr FaultOp operator|(FaultOp a, FaultOp b) {
  return static_cast<FaultOp>(static_cast<uint32_t>(a) |
                              static_cast<uint32_t>(b));
}
// True when `set` and `op` share at least one class.
constexpr bool Contains(FaultOp set, FaultOp op) {
  return (static_cast<uint32_t>(set) & static_cast<uint32_t>(op)) != 0;
}
// "append", "sync", ... for a single class; "?" otherwise.
const char* FaultOpName(FaultOp op);

class FaultInjectionEnv final : public Env {
 public:
  explicit FaultInjectionEnv(Env* base);
  ~FaultInjectionEnv() override;

  Env* base() const { return base_; }

  // --- Power loss ---
  // Rewinds the files as described above. Returns the first error met
  // while doing so (it still tries every file).
  absl::Status SimulatePowerLoss() ABSL_LOCKS_EXCLUDED(mu_);
  // The durable size tracked for fname; nullopt when fname is untracked.
  std::optional<uint64_t> SyncedSize(const std::string& fname) const
      ABSL_LOCKS_EXCLUDED(mu_);

  // --- Error injection ---
  void InjectError(FaultOp ops, std::string path_substring,
                   absl::StatusCode code, int skip_first_n = 0, int times = -1)
      ABSL_LOCKS_EXCLUDED(mu_);
  // ENOSPC (ResourceExhausted).
  void InjectNoSpace(FaultOp ops, std::string path_substring,
                     int skip_first_n = 0, int times = -1) {
    InjectError(ops, std::move(path_substring),
                absl::StatusCode::kResourceExhausted, skip_first_n, times);
  }
  // EIO (Internal).
  void InjectIoError(FaultOp ops, std::string path_substring,
                     int skip_first_n = 0, int times = -1) {
    InjectError(ops, std::move(path_substring), absl::StatusCode::kInternal,
                skip_first_n, times);
  }
  void ClearErrors() ABSL_LOCKS_EXCLUDED(mu_);
  // Failures produced by injection rules so far (not by an inactive
  // filesystem).
  uint64_t InjectedErrorCount() const ABSL_LOCKS_EXCLUDED(mu_);

  // --- Dead disk ---
  void SetFilesystemActive(bool active) ABSL_LOCKS_EXCLUDED(mu_);
  bool IsFilesystemActive() const ABSL_LOCKS_EXCLUDED(mu_);

  // --- Env ---
  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& fname) override;
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& fname) override;
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& fname) override;
  bool FileExists(const std::string& fname) override;
  absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& dir) override;
  absl::Status RemoveFile(const std::string& fname) override;
  absl::Status CreateDir(const std::string& dirname) override;
  absl::Status RemoveDir(const std::string& dirname) override;
  absl::StatusOr<uint64_t> GetFileSize(const std::string& fname) override;
  absl::Status RenameFile(const std::string& src,
                          const std::string& target) override;
  absl::Status SyncDir(const std::string& dirname) override;
  bool IsDirectory(const std::string& path) override;
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& fname) override;
  absl::StatusOr<std::unique_ptr<Logger>> NewLogger(
      const std::string& fname) override;
  uint64_t NowMicros() override;
  void SleepForMicroseconds(int64_t micros) override;

  // --- Used by the file wrappers (fault_injection_files.cc) ---
  struct OpenFile;
  // OK, or the error a write-class operation `op` on path must fail with.
  absl::Status CheckWrite(FaultOp op, std::string_view path)
      ABSL_LOCKS_EXCLUDED(mu_);
  // OK, or the error a read on path must fail with.
  absl::Status CheckRead(std::string_view path) ABSL_LOCKS_EXCLUDED(mu_);
  // A Sync of fname, opened in generation gen, made `size` bytes durable.
  void RecordSync(const std::string& fname, uint64_t gen, uint64_t size)
      ABSL_LOCKS_EXCLUDED(mu_);
  void ForgetOpenFile(OpenFile* file) ABSL_LOCKS_EXCLUDED(mu_);

 private:
  struct ErrorRule {
    FaultOp ops;
    std::string path_substring;
    absl::StatusCode code;
    int skip;       // matches still to let through
    int remaining;  // failures still to produce; -1: forever
  };
  struct FileState {
    uint64_t synced_size = 0;
  };
  struct PendingRename {
    std::string src;
    std::string target;
    // Set when the rename replaced an existing target: its durable
    // contents at the time.
    std::optional<std::string> old_contents;
  };

  absl::Status Injected(FaultOp op, std::string_view path)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::StatusOr<std::unique_ptr<WritableFile>> OpenForWrite(
      const std::string& fname, bool append) ABSL_LOCKS_EXCLUDED(mu_);
  // Replaces fname's contents by their first `size` bytes.
  absl::Status TruncateTo(const std::string& fname, uint64_t size);

  Env* const base_;
  mutable Mutex mu_;
  bool active_ ABSL_GUARDED_BY(mu_) = true;
  std::vector<ErrorRule> rules_ ABSL_GUARDED_BY(mu_);
  uint64_t injected_count_ ABSL_GUARDED_BY(mu_) = 0;
  // Bumped by SimulatePowerLoss; files of older generations are dead.
  uint64_t generation_ ABSL_GUARDED_BY(mu_) = 0;
  absl::flat_hash_map<std::string, FileState> files_ ABSL_GUARDED_BY(mu_);
  // Files created whose directory has not been synced since.
  absl::flat_hash_set<std::string> new_files_ ABSL_GUARDED_BY(mu_);
  std::vector<PendingRename> renames_ ABSL_GUARDED_BY(mu_);
  // Open writable files, to be killed by a power loss.
  absl::flat_hash_map<OpenFile*, std::shared_ptr<OpenFile>> open_files_
      ABSL_GUARDED_BY(mu_);
};

}  // namespace siftdb

#endif  // SIFTDB_UTIL_TESTING_FAULT_INJECTION_ENV_H_
