// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Env: the engine's only door to the operating system (files, directories,
// locks, time). Tests substitute their own Env to simulate power loss and
// inject I/O errors (see util/testing/fault_injection_env.h).
//
// Thread safety: every Env method may be called from many threads at once.
// A file object may be used by one thread at a time, except RandomAccessFile,
// whose Read() is safe to call concurrently.
// Ownership: Env::Default() is a process-wide singleton; never delete it.
// Files are returned as std::unique_ptr and closed when destroyed.
// Errors: every failure is an absl::Status whose message names the file and
// the failing call; NotFound for a missing file, IOError-like codes
// (absl::StatusCode::kInternal for EIO, kResourceExhausted for ENOSPC)
// otherwise.

#ifndef SIFTDB_INCLUDE_ENV_H_
#define SIFTDB_INCLUDE_ENV_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "siftdb/export.h"

namespace siftdb {

// Reads a file from start to end.
class SIFTDB_EXPORT SequentialFile {
 public:
  SequentialFile() = default;
  SequentialFile(const SequentialFile&) = delete;
  SequentialFile& operator=(const SequentialFile&) = delete;
  virtual ~SequentialFile() = default;

  // Reads up to n bytes. *result points into scratch (which must hold n
  // bytes) or into other memory valid until the next call. A short read
  // (result->size() < n) means end of file.
  virtual absl::Status Read(size_t n, std::string_view* result,
                            char* scratch) = 0;
  // Skips n bytes; skipping past the end stops at the end.
  virtual absl::Status Skip(uint64_t n) = 0;
};

// Reads a file at arbitrary offsets. Read() is safe from many threads.
class SIFTDB_EXPORT RandomAccessFile {
 public:
  RandomAccessFile() = default;
  RandomAccessFile(const RandomAccessFile&) = delete;
  RandomAccessFile& operator=(const RandomAccessFile&) = delete;
  virtual ~RandomAccessFile() = default;

  // Reads up to n bytes at offset. A short read means end of file.
  // *result points into scratch (n bytes, owned by the caller) or, for a
  // memory-mapped file, into the mapping.
  virtual absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                            char* scratch) const = 0;

  // True when Read answers from a memory mapping that stays valid while
  // this object lives (no system call, no copy): readers need no readahead
  // window in front of it.
  virtual bool IsMemoryMapped() const { return false; }

  // A hint that the bytes in [offset, offset + n) will not be read again
  // soon: a mapped file drops them from this process's resident set (the
  // OS may keep them cached; a later Read maps them back). Safe beside
  // concurrent reads. The default does nothing.
  virtual void ReleaseResidentBytes(uint64_t offset, uint64_t n) const {
    (void)offset;
    (void)n;
  }

  // A hint that the bytes in [offset, offset + n) will be read soon: the OS
  // may start reading them from storage now and return at once, so that the
  // reads of many ranges proceed together (MultiGet hints each data block
  // it will read before reading any). No effect on what Read returns; safe
  // beside concurrent reads; out-of-range bytes are ignored. The default
  // does nothing.
  virtual void WillRead(uint64_t offset, uint64_t n) const {
    (void)offset;
    (void)n;
  }

  // A hint that reads will come at random offsets, so the OS need not read
  // ahead or around them (a mapped file reads only the page a fault
  // touches). Reads that do run in order should then say so with
  // WillRead. No effect on what Read returns. The default does nothing.
  virtual void AdviseRandomAccess() const {}
};

// Appends to a file. Append() may buffer in user space; after Flush() the
// bytes are in the OS, so a process crash loses nothing flushed (the WAL
// writer flushes every record); Sync() makes them survive a machine crash
// too.
class SIFTDB_EXPORT WritableFile {
 public:
  WritableFile() = default;
  WritableFile(const WritableFile&) = delete;
  WritableFile& operator=(const WritableFile&) = delete;
  virtual ~WritableFile() = default;

  virtual absl::Status Append(std::string_view data) = 0;
  // Pushes any user-space buffer to the OS.
  virtual absl::Status Flush() = 0;
  // Flush, then make the file's data durable (fdatasync).
  virtual absl::Status Sync() = 0;
  virtual absl::Status Close() = 0;
};

// A held lock on a file; destroying it releases the lock.
class SIFTDB_EXPORT FileLock {
 public:
  FileLock() = default;
  FileLock(const FileLock&) = delete;
  FileLock& operator=(const FileLock&) = delete;
  virtual ~FileLock() = default;
};

// A sink for human-readable log lines (the DB's LOG file).
class SIFTDB_EXPORT Logger {
 public:
  Logger() = default;
  Logger(const Logger&) = delete;
  Logger& operator=(const Logger&) = delete;
  virtual ~Logger() = default;

  // Writes one line (a newline is appended when missing).
  virtual void Log(std::string_view message) = 0;
};

class SIFTDB_EXPORT Env {
 public:
  Env() = default;
  Env(const Env&) = delete;
  Env& operator=(const Env&) = delete;
  virtual ~Env() = default;

  // The POSIX environment.
  static Env* Default();

  virtual absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& fname) = 0;
  virtual absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname) = 0;
  // Creates or truncates.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& fname) = 0;
  // Opens for appending, creating when missing.
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& fname) = 0;
  // Creates or truncates a write-ahead log (docs/wal_format.md). Like
  // NewWritableFile, except that the file may be preallocated and end in
  // zero bytes past the last append until Close(), which log readers treat
  // as the end of the log; Append must still leave every byte in the OS
  // (a process crash loses nothing). The default is NewWritableFile; the
  // POSIX Env appends through a memory mapping (util/posix_mmap_log_file.h).
  virtual absl::StatusOr<std::unique_ptr<WritableFile>> NewWalFile(
      const std::string& fname) {
    return NewWritableFile(fname);
  }

  virtual bool FileExists(const std::string& fname) = 0;
  // Names (not paths) of the entries of dir, without "." and "..".
  virtual absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& dir) = 0;
  virtual absl::Status RemoveFile(const std::string& fname) = 0;
  // OK when the directory already exists.
  virtual absl::Status CreateDir(const std::string& dirname) = 0;
  virtual absl::Status RemoveDir(const std::string& dirname) = 0;
  virtual absl::StatusOr<uint64_t> GetFileSize(const std::string& fname) = 0;
  // Atomically replaces target when it exists.
  virtual absl::Status RenameFile(const std::string& src,
                                  const std::string& target) = 0;
  // Makes target a second name (hard link) of the existing file src.
  // Unimplemented when this Env or the file system cannot; callers then
  // copy the file instead.
  virtual absl::Status LinkFile(const std::string& src,
                                const std::string& target) {
    return absl::UnimplementedError("LinkFile: " + src + " -> " + target +
                                    ": hard links not supported by this Env");
  }
  // fsync of a directory, making creations, renames and removals in it
  // durable.
  virtual absl::Status SyncDir(const std::string& dirname) = 0;
  // True when path names an existing directory.
  virtual bool IsDirectory(const std::string& path) = 0;

  // Takes an exclusive advisory lock (flock) on fname, creating it when
  // missing. Unavailable, with a message naming the file, when another
  // holder, in this process or another, has it.
  virtual absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& fname) = 0;

  virtual absl::StatusOr<std::unique_ptr<Logger>> NewLogger(
      const std::string& fname) = 0;

  // Microseconds since some fixed point; only differences are meaningful.
  virtual uint64_t NowMicros() = 0;
  virtual void SleepForMicroseconds(int64_t micros) = 0;
};

// Convenience helpers over any Env.
SIFTDB_EXPORT absl::Status WriteStringToFile(Env* env, std::string_view data,
                                             const std::string& fname,
                                             bool sync);
SIFTDB_EXPORT absl::StatusOr<std::string> ReadFileToString(
    Env* env, const std::string& fname);

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_ENV_H_
