// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Env::Default(): the POSIX implementation of include/siftdb/env.h.
//
// What callers may rely on:
// - WritableFile keeps up to 64 KiB in a user-space buffer; Append() of a
//   piece larger than the buffer goes straight to write(2). After Flush()
//   returns OK every byte appended so far is in the OS (a process crash
//   loses nothing flushed); Sync() = Flush() + fdatasync(2). Destroying an
//   unclosed file flushes and closes it, ignoring errors.
// - NewWalFile appends through a preallocated shared mapping
//   (util/posix_mmap_log_file.h): the file ends in zeros until Close; it
//   falls back to the buffered file where fallocate is not supported.
// - NewRandomAccessFile maps the file read-only (mmap(2)) while fewer than
//   kMaxMappedFiles files are mapped, else falls back to pread(2). A mapped
//   file answers Read with pointers into the mapping (valid until the file
//   object is destroyed; IsMemoryMapped() is true) and sees the length the
//   file had when opened: bytes appended later are not visible. The engine
//   maps only complete, immutable tables. Truncating a file while another
//   process has it mapped makes reads of the lost pages fault (SIGBUS), as
//   with any mmap reader (LevelDB's included); siftdb never does that to a
//   live table. Both kinds are safe from many threads.
// - LockFile uses flock(2) on a file opened O_RDWR|O_CREAT. flock locks
//   belong to the open file description, so a second LockFile of the same
//   path fails both in this process and in any other one.
// - Every descriptor is opened O_CLOEXEC.
// - Errors: ENOENT -> NotFound, ENOSPC -> ResourceExhausted, anything else
//   -> Internal, with the message "<call> <path>: <strerror>". A lock held
//   elsewhere is Unavailable.

#include <dirent.h>
#include <fcntl.h>
#include <pthread.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "siftdb/env.h"
#include "util/mutex.h"
#include "util/posix_error.h"
#include "util/posix_mmap_log_file.h"

namespace siftdb {
namespace {

constexpr size_t kWritableBufferSize = 64 * 1024;

// Retries on EINTR; returns -1 with errno set on other errors.
ssize_t RetryRead(int fd, char* buf, size_t n) {
  ssize_t r;
  do {
    r = ::read(fd, buf, n);
  } while (r < 0 && errno == EINTR);
  return r;
}

class PosixSequentialFile final : public SequentialFile {
 public:
  PosixSequentialFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}
  ~PosixSequentialFile() override { ::close(fd_); }

  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    // Fill as much of n as the file has: a short result means EOF.
    size_t got = 0;
    while (got < n) {
      const ssize_t r = RetryRead(fd_, scratch + got, n - got);
      if (r < 0) {
        *result = std::string_view(scratch, got);
        return PosixError("read", fname_, errno);
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, got);
    return absl::OkStatus();
  }

  absl::Status Skip(uint64_t n) override {
    const off_t cur = ::lseek(fd_, 0, SEEK_CUR);
    if (cur < 0) return PosixError("lseek", fname_, errno);
    struct stat st;
    if (::fstat(fd_, &st) != 0) return PosixError("fstat", fname_, errno);
    // Stop at the end rather than seeking past it.
    const uint64_t remaining =
        st.st_size > cur ? static_cast<uint64_t>(st.st_size - cur) : 0;
    const off_t target = cur + static_cast<off_t>(std::min(n, remaining));
    if (::lseek(fd_, target, SEEK_SET) < 0) {
      return PosixError("lseek", fname_, errno);
    }
    return absl::OkStatus();
  }

 private:
  const std::string fname_;
  const int fd_;
};

class PosixRandomAccessFile final : public RandomAccessFile {
 public:
  PosixRandomAccessFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}
  ~PosixRandomAccessFile() override { ::close(fd_); }

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    size_t got = 0;
    while (got < n) {
      const ssize_t r = ::pread(fd_, scratch + got, n - got,
                                static_cast<off_t>(offset + got));
      if (r < 0) {
        if (errno == EINTR) continue;
        *result = std::string_view(scratch, got);
        return PosixError("pread", fname_, errno);
      }
      if (r == 0) break;
      got += static_cast<size_t>(r);
    }
    *result = std::string_view(scratch, got);
    return absl::OkStatus();
  }

  // POSIX_FADV_RANDOM: the kernel reads only what each pread asks for.
  void AdviseRandomAccess() const override {
    ::posix_fadvise(fd_, 0, 0, POSIX_FADV_RANDOM);
  }

  // Starts the kernel's read of the range into the page cache; the pread
  // that follows finds it there.
  void WillRead(uint64_t offset, uint64_t n) const override {
    if (n == 0 || offset > static_cast<uint64_t>(INT64_MAX)) return;
    ::posix_fadvise(fd_, static_cast<off_t>(offset),
                    static_cast<off_t>(std::min<uint64_t>(n, INT64_MAX)),
                    POSIX_FADV_WILLNEED);
  }

 private:
  const std::string fname_;
  const int fd_;
};

// At most this many files are mapped at once (the default max_open_files;
// mappings cost address space and kernel mapping structures, not memory).
constexpr int kMaxMappedFiles = 1000;
std::atomic<int> g_mapped_files{0};

// A RandomAccessFile over a read-only mapping of the whole file: Read
// returns a view of the mapping, with no system call and no copy.
class PosixMmapRandomAccessFile final : public RandomAccessFile {
 public:
  // Takes over a mapping of `length` bytes at `base` (length > 0) and one
  // unit of g_mapped_files.
  PosixMmapRandomAccessFile(const char* base, size_t length)
      : base_(base), length_(length) {}
  ~PosixMmapRandomAccessFile() override {
    ::munmap(const_cast<char*>(base_), length_);
    g_mapped_files.fetch_sub(1, std::memory_order_relaxed);
  }

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    // As pread at end of file: a short (possibly empty) read, not an error.
    if (offset >= length_) {
      *result = std::string_view();
      return absl::OkStatus();
    }
    *result = std::string_view(base_ + offset,
                               std::min<uint64_t>(n, length_ - offset));
    return absl::OkStatus();
  }

  bool IsMemoryMapped() const override { return true; }

  // MADV_DONTNEED on a read-only shared file mapping only unmaps the pages
  // from this process; the page cache keeps them and the next access
  // faults them back in with the file's bytes.
  void ReleaseResidentBytes(uint64_t offset, uint64_t n) const override {
    if (offset >= length_) return;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    // Whole pages inside the range only: a page shared with bytes
    // outside it stays.
    const uint64_t begin = (offset + page - 1) / page * page;
    const uint64_t end = std::min<uint64_t>(offset + n, length_) / page * page;
    if (begin >= end) return;
    ::madvise(const_cast<char*>(base_) + begin, end - begin, MADV_DONTNEED);
  }

  // MADV_RANDOM: a page fault reads only its own page (no read-around).
  // Resident neighbouring pages are still mapped in on a fault.
  void AdviseRandomAccess() const override {
    ::madvise(const_cast<char*>(base_), length_, MADV_RANDOM);
  }

  // MADV_WILLNEED on a file mapping starts reading the range's pages into
  // the page cache without waiting; touching them later is a minor fault.
  // Every page the range touches is hinted.
  void WillRead(uint64_t offset, uint64_t n) const override {
    if (offset >= length_ || n == 0) return;
    const uint64_t page = static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
    const uint64_t begin = offset / page * page;
    const uint64_t end =
        std::min<uint64_t>(offset + std::min(n, length_), length_);
    ::madvise(const_cast<char*>(base_) + begin, end - begin, MADV_WILLNEED);
  }

 private:
  const char* const base_;
  const size_t length_;
};

// Maps fd's whole file when the limit allows and the file is not empty;
// null otherwise (the caller reads with pread). Closes nothing.
std::unique_ptr<RandomAccessFile> TryMapFile(int fd) {
  struct stat st;
  if (::fstat(fd, &st) != 0 || st.st_size <= 0) return nullptr;
  if (g_mapped_files.fetch_add(1, std::memory_order_relaxed) >=
      kMaxMappedFiles) {
    g_mapped_files.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  const size_t length = static_cast<size_t>(st.st_size);
  void* base = ::mmap(nullptr, length, PROT_READ, MAP_SHARED, fd, 0);
  if (base == MAP_FAILED) {
    g_mapped_files.fetch_sub(1, std::memory_order_relaxed);
    return nullptr;
  }
  return std::make_unique<PosixMmapRandomAccessFile>(static_cast<char*>(base),
                                                     length);
}

class PosixWritableFile final : public WritableFile {
 public:
  PosixWritableFile(std::string fname, int fd)
      : fname_(std::move(fname)),
        fd_(fd),
        buf_(std::make_unique<char[]>(kWritableBufferSize)) {}

  ~PosixWritableFile() override {
    if (fd_ >= 0) Close().IgnoreError();
  }

  absl::Status Append(std::string_view data) override {
    if (fd_ < 0) return ClosedFileError("append", fname_);
    if (data.empty()) return absl::OkStatus();  // data() may be null
    const size_t fits = std::min(data.size(), kWritableBufferSize - pos_);
    std::memcpy(buf_.get() + pos_, data.data(), fits);
    pos_ += fits;
    data.remove_prefix(fits);
    if (data.empty()) return absl::OkStatus();

    // The buffer is full and more remains.
    absl::Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (data.size() < kWritableBufferSize) {
      std::memcpy(buf_.get(), data.data(), data.size());
      pos_ = data.size();
      return absl::OkStatus();
    }
    return WriteAll(data);
  }

  absl::Status Flush() override {
    if (fd_ < 0) return ClosedFileError("flush", fname_);
    return FlushBuffer();
  }

  absl::Status Sync() override {
    if (fd_ < 0) return ClosedFileError("sync", fname_);
    absl::Status s = FlushBuffer();
    if (!s.ok()) return s;
    if (::fdatasync(fd_) != 0) return PosixError("fdatasync", fname_, errno);
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return absl::OkStatus();
    absl::Status s = FlushBuffer();
    if (::close(fd_) != 0 && s.ok()) s = PosixError("close", fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  absl::Status FlushBuffer() {
    absl::Status s = WriteAll(std::string_view(buf_.get(), pos_));
    pos_ = 0;  // on error the buffered bytes are dropped, never rewritten
    return s;
  }

  absl::Status WriteAll(std::string_view data) {
    while (!data.empty()) {
      const ssize_t r = ::write(fd_, data.data(), data.size());
      if (r < 0) {
        if (errno == EINTR) continue;
        return PosixError("write", fname_, errno);
      }
      data.remove_prefix(static_cast<size_t>(r));
    }
    return absl::OkStatus();
  }

  const std::string fname_;
  int fd_;  // -1 once closed
  std::unique_ptr<char[]> buf_;
  size_t pos_ = 0;  // bytes of buf_ in use
};

class PosixFileLock final : public FileLock {
 public:
  explicit PosixFileLock(int fd) : fd_(fd) {}
  ~PosixFileLock() override {
    ::flock(fd_, LOCK_UN);
    ::close(fd_);
  }

 private:
  const int fd_;
};

// One line per Log() call: "YYYY/MM/DD-HH:MM:SS.uuuuuu <thread> message",
// written with a single write(2) so a process crash never tears a line
// that Log() has returned from.
class PosixLogger final : public Logger {
 public:
  PosixLogger(std::string fname, int fd) : fname_(std::move(fname)), fd_(fd) {}
  ~PosixLogger() override { ::close(fd_); }

  void Log(std::string_view message) override {
    // localtime_r rather than absl::FormatTime: Abseil loads its time zone
    // data on first use behind synchronization that ThreadSanitizer cannot
    // see (Debian's libabsl is not instrumented), so two threads logging
    // for the first time at once were reported as a race.
    struct timespec now;
    ::clock_gettime(CLOCK_REALTIME, &now);
    struct tm local;
    ::localtime_r(&now.tv_sec, &local);
    std::string line = absl::StrFormat(
        "%04d/%02d/%02d-%02d:%02d:%02d.%06d %x %s", local.tm_year + 1900,
        local.tm_mon + 1, local.tm_mday, local.tm_hour, local.tm_min,
        local.tm_sec, now.tv_nsec / 1000,
        static_cast<uint64_t>(::pthread_self()), message);
    if (line.empty() || line.back() != '\n') line.push_back('\n');
    MutexLock lock(&mu_);
    std::string_view rest = line;
    while (!rest.empty()) {
      const ssize_t r = ::write(fd_, rest.data(), rest.size());
      if (r < 0) {
        if (errno == EINTR) continue;
        return;  // nowhere to report a failure to log
      }
      rest.remove_prefix(static_cast<size_t>(r));
    }
  }

 private:
  const std::string fname_;
  Mutex mu_;
  const int fd_ ABSL_GUARDED_BY(mu_);
};

class PosixEnv final : public Env {
 public:
  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& fname) override {
    const int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError("open", fname, errno);
    return std::make_unique<PosixSequentialFile>(fname, fd);
  }

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& fname) override {
    const int fd = ::open(fname.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return PosixError("open", fname, errno);
    if (std::unique_ptr<RandomAccessFile> mapped = TryMapFile(fd)) {
      ::close(fd);  // the mapping stays valid without the descriptor
      return mapped;
    }
    return std::make_unique<PosixRandomAccessFile>(fname, fd);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& fname) override {
    const int fd =
        ::open(fname.c_str(), O_TRUNC | O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError("open", fname, errno);
    return std::make_unique<PosixWritableFile>(fname, fd);
  }

  // Mapped appends, or buffered ones where the file system cannot
  // preallocate.
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWalFile(
      const std::string& fname) override {
    auto mapped = OpenPosixMmapLogFile(fname);
    if (absl::IsUnimplemented(mapped.status())) return NewWritableFile(fname);
    return mapped;
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& fname) override {
    const int fd =
        ::open(fname.c_str(), O_APPEND | O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError("open", fname, errno);
    return std::make_unique<PosixWritableFile>(fname, fd);
  }

  bool FileExists(const std::string& fname) override {
    return ::access(fname.c_str(), F_OK) == 0;
  }

  absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& dir) override {
    DIR* d = ::opendir(dir.c_str());
    if (d == nullptr) return PosixError("opendir", dir, errno);
    std::vector<std::string> result;
    errno = 0;
    while (struct dirent* entry = ::readdir(d)) {
      const std::string_view name = entry->d_name;
      if (name != "." && name != "..") result.emplace_back(name);
      errno = 0;
    }
    const int err = errno;
    ::closedir(d);
    if (err != 0) return PosixError("readdir", dir, err);
    return result;
  }

  absl::Status RemoveFile(const std::string& fname) override {
    if (::unlink(fname.c_str()) != 0) return PosixError("unlink", fname, errno);
    return absl::OkStatus();
  }

  absl::Status CreateDir(const std::string& dirname) override {
    if (::mkdir(dirname.c_str(), 0755) != 0) {
      if (errno == EEXIST && IsDirectory(dirname)) return absl::OkStatus();
      return PosixError("mkdir", dirname, errno);
    }
    return absl::OkStatus();
  }

  absl::Status RemoveDir(const std::string& dirname) override {
    if (::rmdir(dirname.c_str()) != 0) {
      return PosixError("rmdir", dirname, errno);
    }
    return absl::OkStatus();
  }

  absl::StatusOr<uint64_t> GetFileSize(const std::string& fname) override {
    struct stat st;
    if (::stat(fname.c_str(), &st) != 0) {
      return PosixError("stat", fname, errno);
    }
    return static_cast<uint64_t>(st.st_size);
  }

  absl::Status RenameFile(const std::string& src,
                          const std::string& target) override {
    if (::rename(src.c_str(), target.c_str()) != 0) {
      return PosixError("rename", absl::StrFormat("%s -> %s", src, target),
                        errno);
    }
    return absl::OkStatus();
  }

  absl::Status LinkFile(const std::string& src,
                        const std::string& target) override {
    if (::link(src.c_str(), target.c_str()) != 0) {
      const int err = errno;
      const std::string what = absl::StrFormat("%s -> %s", src, target);
      // Another file system, or one without hard links: callers copy.
      if (err == EXDEV || err == EPERM || err == EMLINK || err == ENOTSUP) {
        return absl::UnimplementedError(
            absl::StrFormat("link %s: %s", what, std::strerror(err)));
      }
      return PosixError("link", what, err);
    }
    return absl::OkStatus();
  }

  absl::Status SyncDir(const std::string& dirname) override {
    const int fd = ::open(dirname.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0) return PosixError("open", dirname, errno);
    absl::Status s;
    if (::fsync(fd) != 0) s = PosixError("fsync", dirname, errno);
    ::close(fd);
    return s;
  }

  bool IsDirectory(const std::string& path) override {
    struct stat st;
    return ::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
  }

  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& fname) override {
    const int fd = ::open(fname.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError("open", fname, errno);
    if (::flock(fd, LOCK_EX | LOCK_NB) != 0) {
      const int err = errno;
      ::close(fd);
      if (err == EWOULDBLOCK) {
        return absl::UnavailableError(absl::StrFormat(
            "lock %s: already held by this or another process (is the DB "
            "open elsewhere?)",
            fname));
      }
      return PosixError("lock", fname, err);
    }
    return std::make_unique<PosixFileLock>(fd);
  }

  absl::StatusOr<std::unique_ptr<Logger>> NewLogger(
      const std::string& fname) override {
    const int fd =
        ::open(fname.c_str(), O_TRUNC | O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0) return PosixError("open", fname, errno);
    return std::make_unique<PosixLogger>(fname, fd);
  }

  uint64_t NowMicros() override {
    struct timespec ts;
    ::clock_gettime(CLOCK_MONOTONIC, &ts);
    return static_cast<uint64_t>(ts.tv_sec) * 1000000u +
           static_cast<uint64_t>(ts.tv_nsec) / 1000u;
  }

  void SleepForMicroseconds(int64_t micros) override {
    if (micros > 0) absl::SleepFor(absl::Microseconds(micros));
  }
};

}  // namespace

Env* Env::Default() {
  static Env* const env = new PosixEnv();
  return env;
}

}  // namespace siftdb
