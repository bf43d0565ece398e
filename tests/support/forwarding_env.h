// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ForwardingEnv: an Env that passes every call to another Env (the POSIX
// one by default). Tests derive from it and override only the calls they
// watch or change, e.g. to block a MANIFEST sync or to measure the table
// bytes on disk whenever a table file is created.
//
// Thread safety: as the base Env. Ownership: the base Env is not owned and
// must outlive this one.

#ifndef SIFTDB_TESTS_SUPPORT_FORWARDING_ENV_H_
#define SIFTDB_TESTS_SUPPORT_FORWARDING_ENV_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "siftdb/env.h"

namespace siftdb::test {

// A WritableFile that forwards every call to another; a test derives from
// it and overrides the calls it hooks, calling base_file() to go on.
class ForwardingWritableFile : public WritableFile {
 public:
  explicit ForwardingWritableFile(std::unique_ptr<WritableFile> base)
      : base_(std::move(base)) {}

  absl::Status Append(std::string_view data) override {
    return base_->Append(data);
  }
  absl::Status Flush() override { return base_->Flush(); }
  absl::Status Sync() override { return base_->Sync(); }
  absl::Status Close() override { return base_->Close(); }

 protected:
  WritableFile* base_file() const { return base_.get(); }

 private:
  const std::unique_ptr<WritableFile> base_;
};

class ForwardingEnv : public Env {
 public:
  explicit ForwardingEnv(Env* base = Env::Default()) : base_(base) {}

  absl::StatusOr<std::unique_ptr<SequentialFile>> NewSequentialFile(
      const std::string& f) override {
    return base_->NewSequentialFile(f);
  }
  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f) override {
    return base_->NewRandomAccessFile(f);
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    return base_->NewWritableFile(f);
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& f) override {
    return base_->NewAppendableFile(f);
  }
  bool FileExists(const std::string& f) override {
    return base_->FileExists(f);
  }
  absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& dir) override {
    return base_->GetChildren(dir);
  }
  absl::Status RemoveFile(const std::string& f) override {
    return base_->RemoveFile(f);
  }
  absl::Status CreateDir(const std::string& d) override {
    return base_->CreateDir(d);
  }
  absl::Status RemoveDir(const std::string& d) override {
    return base_->RemoveDir(d);
  }
  absl::StatusOr<uint64_t> GetFileSize(const std::string& f) override {
    return base_->GetFileSize(f);
  }
  absl::Status RenameFile(const std::string& src,
                          const std::string& target) override {
    return base_->RenameFile(src, target);
  }
  absl::Status LinkFile(const std::string& src,
                        const std::string& target) override {
    return base_->LinkFile(src, target);
  }
  absl::Status SyncDir(const std::string& d) override {
    return base_->SyncDir(d);
  }
  bool IsDirectory(const std::string& p) override {
    return base_->IsDirectory(p);
  }
  absl::StatusOr<std::unique_ptr<FileLock>> LockFile(
      const std::string& f) override {
    return base_->LockFile(f);
  }
  absl::StatusOr<std::unique_ptr<Logger>> NewLogger(
      const std::string& f) override {
    return base_->NewLogger(f);
  }
  uint64_t NowMicros() override { return base_->NowMicros(); }
  void SleepForMicroseconds(int64_t micros) override {
    base_->SleepForMicroseconds(micros);
  }

 protected:
  Env* base() const { return base_; }

 private:
  Env* const base_;
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_SUPPORT_FORWARDING_ENV_H_
