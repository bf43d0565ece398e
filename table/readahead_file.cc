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

void ReadaheadFile::HintAhead(uint64_t offset, uint64_t end) const {
  if (offset < hinted_begin_ || end > hinted_end_) {
    // Outside what was hinted: start over from this read.
    hinted_begin_ = offset;
    hinted_end_ = end;
  }
  // Keep the hinted range a window ahead of the scan, extending it once
  // the scan has used half a window of it (or the rest reaches the end),
  // so that the reads of the next blocks are under way before the scan
  // gets there.
  if (forward_run_ >= 1) {
    const uint64_t target = std::min<uint64_t>(limit_, end + window_);
    if (target > hinted_end_ &&
        (target - hinted_end_ >= window_ / 2 || target == limit_)) {
      base_->WillRead(hinted_end_, target - hinted_end_);
      hints_++;
      hinted_end_ = target;
      window_ = std::min(kMaxWindow, 2 * window_);
    }
  } else if (backward_run_ >= 1) {
    const uint64_t target = offset > window_ ? offset - window_ : 0;
    if (target < hinted_begin_ &&
        (hinted_begin_ - target >= window_ / 2 || target == 0)) {
      base_->WillRead(target, hinted_begin_ - target);
      hints_++;
      hinted_begin_ = target;
      window_ = std::min(kMaxWindow, 2 * window_);
    }
  }
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
  if (mapped_) {
    HintAhead(offset, end);
    base_reads_++;
    return base_->Read(offset, n, result, scratch);
  }

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
