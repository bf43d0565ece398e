// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ReadaheadFile: a RandomAccessFile view that turns a run of adjacent reads
// (a table iterator walking its data blocks forward or backward, or a
// compaction reading its inputs) into a few large reads. Block-at-a-time
// scans otherwise spend a system call per 4 KiB block; with readahead they
// spend one per window (16 KiB doubling up to 256 KiB, the growth RocksDB's
// iterators use as well).
//
// Policy: the first two reads, and any read that does not continue the
// previous one, go straight to the underlying file; a read that starts
// where the previous one ended (forward) or ends where it started
// (backward) for the second time in a row fills the window in that
// direction, and later reads inside the window are served from memory.
// Reads past `limit` are never issued (the window is clipped to it).
//
// Over a memory-mapped file (IsMemoryMapped) nothing is copied: every
// read is answered by the mapping, and a scan keeps the next window of the
// file hinted (WillRead) ahead of it, so the reads from storage run ahead
// of the scan. The engine advises its table mappings for
// random access (a page fault reads only its page, so point lookups read
// no more than they need), and these hints are what reads ahead for scans.
//
// Thread safety: NOT thread-safe (Read mutates the window although it is
// const, as the interface requires): one per iterator, used by one thread.
// Ownership: borrows `base`, which must outlive this object.
// Results served from the window point into it and stay valid until the
// next Read; callers that keep bytes copy them (ReadBlock does).

#ifndef SIFTDB_TABLE_READAHEAD_FILE_H_
#define SIFTDB_TABLE_READAHEAD_FILE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "absl/status/status.h"
#include "siftdb/env.h"

namespace siftdb {

class ReadaheadFile final : public RandomAccessFile {
 public:
  static constexpr size_t kInitialWindow = size_t{16} << 10;
  static constexpr size_t kMaxWindow = size_t{256} << 10;

  ReadaheadFile(const RandomAccessFile* base, uint64_t limit)
      : base_(base), limit_(limit), mapped_(base->IsMemoryMapped()) {}

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override;
  bool IsMemoryMapped() const override { return mapped_; }
  // Passes the hint on unless the scan in progress already hinted all of
  // [offset, offset + n) (a block read's own hint, Table::PinDataBlock,
  // inside the window HintAhead keeps ahead).
  void WillRead(uint64_t offset, uint64_t n) const override {
    if (mapped_ && offset >= hinted_begin_ && offset + n <= hinted_end_ &&
        hinted_end_ > hinted_begin_) {
      return;
    }
    base_->WillRead(offset, n);
  }

  // Underlying reads issued so far, and hints issued (over a mapping),
  // for tests.
  uint64_t base_reads() const { return base_reads_; }
  uint64_t hints() const { return hints_; }

 private:
  // Fills the window with [start, end) (end <= limit_, end - start <=
  // kMaxWindow).
  absl::Status Fill(uint64_t start, uint64_t end) const;
  // Over a mapping: after a read of [offset, end), hints what the scan in
  // progress will read next.
  void HintAhead(uint64_t offset, uint64_t end) const;

  const RandomAccessFile* const base_;
  const uint64_t limit_;
  const bool mapped_;

  mutable std::unique_ptr<char[]> buf_;  // kMaxWindow bytes once used
  mutable uint64_t buf_start_ = 0;       // the window: [buf_start_,
  mutable size_t buf_len_ = 0;           //   buf_start_ + buf_len_)
  mutable uint64_t last_start_ = 0;      // the previous request
  mutable uint64_t last_end_ = 0;
  mutable bool have_last_ = false;
  mutable int forward_run_ = 0;   // consecutive adjacent forward requests
  mutable int backward_run_ = 0;  // consecutive adjacent backward requests
  mutable size_t window_ = kInitialWindow;
  mutable uint64_t base_reads_ = 0;
  mutable uint64_t hints_ = 0;
  mutable uint64_t hinted_begin_ = 0;  // over a mapping: the range hinted
  mutable uint64_t hinted_end_ = 0;    //   by the scan in progress
};

}  // namespace siftdb

#endif  // SIFTDB_TABLE_READAHEAD_FILE_H_
