// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/testing/fault_injection_files.h"

#include <utility>

#include "absl/strings/str_format.h"

namespace siftdb {

void FaultInjectionEnv::OpenFile::Kill() {
  MutexLock lock(&mu);
  killed = true;
  if (base == nullptr) return;
  base->Flush().IgnoreError();
  base->Close().IgnoreError();
  base.reset();
}

namespace {

class FaultWritableFile final : public WritableFile {
 public:
  FaultWritableFile(FaultInjectionEnv* env,
                    std::shared_ptr<FaultInjectionEnv::OpenFile> file)
      : env_(env), file_(std::move(file)) {}

  ~FaultWritableFile() override {
    Close().IgnoreError();
    env_->ForgetOpenFile(file_.get());
  }

  absl::Status Append(std::string_view data) override {
    MutexLock lock(&file_->mu);
    absl::Status s = Usable("append");
    if (s.ok()) s = env_->CheckWrite(FaultOp::kAppend, file_->fname);
    if (s.ok()) s = file_->base->Append(data);
    if (s.ok()) file_->size += data.size();
    return s;
  }

  absl::Status Flush() override {
    MutexLock lock(&file_->mu);
    absl::Status s = Usable("flush");
    if (s.ok()) s = env_->CheckWrite(FaultOp::kAppend, file_->fname);
    if (s.ok()) s = file_->base->Flush();
    return s;
  }

  absl::Status Sync() override {
    MutexLock lock(&file_->mu);
    absl::Status s = Usable("sync");
    if (s.ok()) s = env_->CheckWrite(FaultOp::kSync, file_->fname);
    if (s.ok()) s = file_->base->Sync();
    if (s.ok()) env_->RecordSync(file_->fname, file_->gen, file_->size);
    return s;
  }

  // Passes through even on a dead disk: the bytes it flushes were
  // accepted by earlier Appends.
  absl::Status Close() override {
    MutexLock lock(&file_->mu);
    if (file_->base == nullptr) return absl::OkStatus();
    absl::Status s = file_->base->Close();
    file_->base.reset();
    return s;
  }

 private:
  absl::Status Usable(const char* op) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(file_->mu) {
    if (file_->killed) {
      return absl::FailedPreconditionError(
          absl::StrFormat("%s %s: file opened before a simulated power loss",
                          op, file_->fname));
    }
    if (file_->base == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrFormat("%s %s: file already closed", op, file_->fname));
    }
    return absl::OkStatus();
  }

  FaultInjectionEnv* const env_;
  const std::shared_ptr<FaultInjectionEnv::OpenFile> file_;
};

class FaultSequentialFile final : public SequentialFile {
 public:
  FaultSequentialFile(FaultInjectionEnv* env, std::string fname,
                      std::unique_ptr<SequentialFile> base)
      : env_(env), fname_(std::move(fname)), base_(std::move(base)) {}

  absl::Status Read(size_t n, std::string_view* result,
                    char* scratch) override {
    absl::Status s = env_->CheckRead(fname_);
    if (!s.ok()) {
      *result = {};
      return s;
    }
    return base_->Read(n, result, scratch);
  }

  absl::Status Skip(uint64_t n) override {
    absl::Status s = env_->CheckRead(fname_);
    if (!s.ok()) return s;
    return base_->Skip(n);
  }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<SequentialFile> base_;
};

class FaultRandomAccessFile final : public RandomAccessFile {
 public:
  FaultRandomAccessFile(FaultInjectionEnv* env, std::string fname,
                        std::unique_ptr<RandomAccessFile> base)
      : env_(env), fname_(std::move(fname)), base_(std::move(base)) {}

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    absl::Status s = env_->CheckRead(fname_);
    if (!s.ok()) {
      *result = {};
      return s;
    }
    return base_->Read(offset, n, result, scratch);
  }

  // A hint reads nothing, so it passes through whatever faults are set.
  void WillRead(uint64_t offset, uint64_t n) const override {
    base_->WillRead(offset, n);
  }
  void AdviseRandomAccess() const override { base_->AdviseRandomAccess(); }

 private:
  FaultInjectionEnv* const env_;
  const std::string fname_;
  const std::unique_ptr<RandomAccessFile> base_;
};

}  // namespace

std::unique_ptr<WritableFile> NewFaultWritableFile(
    FaultInjectionEnv* env, std::shared_ptr<FaultInjectionEnv::OpenFile> file) {
  return std::make_unique<FaultWritableFile>(env, std::move(file));
}

std::unique_ptr<SequentialFile> NewFaultSequentialFile(
    FaultInjectionEnv* env, std::string fname,
    std::unique_ptr<SequentialFile> base) {
  return std::make_unique<FaultSequentialFile>(env, std::move(fname),
                                               std::move(base));
}

std::unique_ptr<RandomAccessFile> NewFaultRandomAccessFile(
    FaultInjectionEnv* env, std::string fname,
    std::unique_ptr<RandomAccessFile> base) {
  return std::make_unique<FaultRandomAccessFile>(env, std::move(fname),
                                                 std::move(base));
}

}  // namespace siftdb
