// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/posix_mmap_log_file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "util/posix_error.h"

namespace siftdb {
namespace {

class PosixMmapLogFile final : public WritableFile {
 public:
  PosixMmapLogFile(std::string fname, int fd)
      : fname_(std::move(fname)), fd_(fd) {}

  ~PosixMmapLogFile() override {
    if (fd_ >= 0) Close().IgnoreError();
  }

  // Preallocates and maps the next window (the first one when none is
  // mapped yet).
  absl::Status MapNextWindow() {
    const uint64_t offset = window_ == nullptr
                                ? window_offset_
                                : window_offset_ + kMmapLogWindowBytes;
    absl::Status s = Unmap();
    // Even on error: the full window is never mapped again.
    window_offset_ = offset;
    window_used_ = 0;
    if (!s.ok()) return s;
    int r;
    do {
      r = ::fallocate(fd_, 0, static_cast<off_t>(offset), kMmapLogWindowBytes);
    } while (r != 0 && errno == EINTR);
    if (r != 0) {
      if (errno == EOPNOTSUPP) {
        return absl::UnimplementedError(absl::StrFormat(
            "fallocate %s: the file system cannot preallocate", fname_));
      }
      return PosixError("fallocate", fname_, errno);
    }
    void* base = ::mmap(nullptr, kMmapLogWindowBytes, PROT_READ | PROT_WRITE,
                        MAP_SHARED, fd_, static_cast<off_t>(offset));
    if (base == MAP_FAILED) return PosixError("mmap", fname_, errno);
    window_ = static_cast<char*>(base);
    return absl::OkStatus();
  }

  absl::Status Append(std::string_view data) override {
    if (fd_ < 0) return ClosedFileError("append", fname_);
    while (!data.empty()) {
      if (window_used_ == kMmapLogWindowBytes || window_ == nullptr) {
        absl::Status s = MapNextWindow();
        if (!s.ok()) return s;
      }
      const size_t n =
          std::min(data.size(), kMmapLogWindowBytes - window_used_);
      std::memcpy(window_ + window_used_, data.data(), n);
      window_used_ += n;
      data.remove_prefix(n);
    }
    return absl::OkStatus();
  }

  // Appended bytes are already in the page cache.
  absl::Status Flush() override {
    if (fd_ < 0) return ClosedFileError("flush", fname_);
    return absl::OkStatus();
  }

  absl::Status Sync() override {
    if (fd_ < 0) return ClosedFileError("sync", fname_);
    if (::fdatasync(fd_) != 0) return PosixError("fdatasync", fname_, errno);
    return absl::OkStatus();
  }

  absl::Status Close() override {
    if (fd_ < 0) return absl::OkStatus();
    absl::Status s = Unmap();
    // Drop the preallocated zeros past the last append.
    const uint64_t size = window_offset_ + window_used_;
    if (::ftruncate(fd_, static_cast<off_t>(size)) != 0 && s.ok()) {
      s = PosixError("ftruncate", fname_, errno);
    }
    if (::close(fd_) != 0 && s.ok()) s = PosixError("close", fname_, errno);
    fd_ = -1;
    return s;
  }

 private:
  absl::Status Unmap() {
    if (window_ == nullptr) return absl::OkStatus();
    const int r = ::munmap(window_, kMmapLogWindowBytes);
    window_ = nullptr;
    if (r != 0) return PosixError("munmap", fname_, errno);
    return absl::OkStatus();
  }

  const std::string fname_;
  int fd_;                      // -1 once closed
  char* window_ = nullptr;      // the mapped window, or null
  uint64_t window_offset_ = 0;  // file offset of the window
  size_t window_used_ = 0;      // bytes appended into the window
};

}  // namespace

absl::StatusOr<std::unique_ptr<WritableFile>> OpenPosixMmapLogFile(
    const std::string& fname) {
  const int fd =
      ::open(fname.c_str(), O_TRUNC | O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return PosixError("open", fname, errno);
  auto file = std::make_unique<PosixMmapLogFile>(fname, fd);
  // Map the first window now: a file system that cannot preallocate is
  // found here, before any byte is appended.
  absl::Status s = file->MapNextWindow();
  if (!s.ok()) {
    file->Close().IgnoreError();
    return s;
  }
  return file;
}

}  // namespace siftdb
