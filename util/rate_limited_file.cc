// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/rate_limited_file.h"

#include <string_view>
#include <utility>

namespace siftdb {
namespace {

class RateLimitedFile final : public WritableFile {
 public:
  RateLimitedFile(std::unique_ptr<WritableFile> base, RateLimiter* limiter)
      : base_(std::move(base)), limiter_(limiter) {}

  absl::Status Append(std::string_view data) override {
    limiter_->Request(static_cast<int64_t>(data.size()));
    return base_->Append(data);
  }
  absl::Status Flush() override { return base_->Flush(); }
  absl::Status Sync() override { return base_->Sync(); }
  absl::Status Close() override { return base_->Close(); }

 private:
  const std::unique_ptr<WritableFile> base_;
  RateLimiter* const limiter_;
};

}  // namespace

std::unique_ptr<WritableFile> NewRateLimitedFile(
    std::unique_ptr<WritableFile> base, RateLimiter* limiter) {
  if (limiter == nullptr) return base;
  return std::make_unique<RateLimitedFile>(std::move(base), limiter);
}

}  // namespace siftdb
