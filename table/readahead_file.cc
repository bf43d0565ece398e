// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/readahead_file.h"

#include <algorithm>

namespace siftdb {

absl::Status ReadaheadFile::Fill(uint64_t start, uint64_t end) const {
  if (buf_ == nullptr)
    buf_ = std::make_unique_for_overwrite<char[]>(kMaxWindow);
  buf_len_ = 0;
  std::string_view got;
  base_reads_++;
  absl::Status s =
      base_->Read(start, static_cast<size_t>(end - start), &got, buf_.get());
  if (!s.ok()) return s;
  if (got.data() != buf_.get()) {
    std::copy(got.data(), got.data() + got.size(), buf_.get());
  }
  buf_start_ = start;
  buf_len_ = got.size();
  return absl::OkStatus();
}

absl::Status ReadaheadFile::Read(uint64_t offset, size_t n,
                                 std::string_view* result,
                                 char* scratch) const {
  const uint64_t end = offset + n;
  const bool forward = have_last_ && offset == last_end_;
  const bool backward = have_last_ && end == last_start_;
  forward_run_ = forward ? forward_run_ + 1 : 0;
  backward_run_ = backward ? backward_run_ + 1 : 0;
  if (!forward && !backward) window_ = kInitialWindow;
  have_last_ = true;
  last_start_ = offset;
  last_end_ = end;

  const auto in_window = [&] {
    return offset >= buf_start_ && end <= buf_start_ + buf_len_;
  };
  if (!in_window() && n < kMaxWindow && end <= limit_) {
    if (forward_run_ >= 1) {
      const uint64_t fill_end =
          std::min<uint64_t>(limit_, offset + std::max<uint64_t>(n, window_));
      absl::Status s = Fill(offset, fill_end);
      if (!s.ok()) return s;
      window_ = std::min(kMaxWindow, 2 * window_);
    } else if (backward_run_ >= 1) {
      const uint64_t span = std::max<uint64_t>(n, window_);
      const uint64_t fill_start = end > span ? end - span : 0;
      absl::Status s = Fill(fill_start, end);
      if (!s.ok()) return s;
      window_ = std::min(kMaxWindow, 2 * window_);
    }
  }
  if (buf_len_ > 0 && in_window()) {
    *result = std::string_view(buf_.get() + (offset - buf_start_), n);
    return absl::OkStatus();
  }
  base_reads_++;
  return base_->Read(offset, n, result, scratch);
}

}  // namespace siftdb
