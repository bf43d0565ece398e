// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// log::Reader reads the records of a write-ahead log (format:
// log_format.h, docs/wal_format.md) and tells a crash's torn tail apart
// from damage inside the log.
//
// Recovery semantics (the DB builds on these):
// - Torn tail: the end of the log as a crash can leave it ends reading
//   cleanly, with NO report to the Reporter. That is, after the last
//   intact record:
//     * fewer than kHeaderSize bytes (a header cut short);
//     * a header whose length reaches past the end of the file (the
//       payload was cut short);
//     * a physical record whose checksum fails and after whose claimed
//       end the file holds nothing or only zero bytes (partly written,
//       and the file may have been extended with zeros);
//     * a header with an impossible length followed by nothing but zero
//       bytes;
//     * zero bytes to the end of the file (extended but never written);
//     * a kFirstType and possibly kMiddleType fragments with no kLastType
//       before any of the above.
//   A record torn this way is dropped whole; everything before it is read.
// - Damage: anything else the reader cannot use is reported through
//   Reporter::Corruption(bytes_dropped, status) with a DataLoss status
//   whose message names the file offset of the damaged physical record,
//   e.g. "log record at offset 12345: checksum mismatch". Reasons:
//   "checksum mismatch", "bad record length" (a fragment would cross its
//   block's end), "unknown record type N", "missing start of fragmented
//   record" (bytes = the orphan's payload), "partial record without end"
//   (bytes = what was assembled), "zero-filled region" (a block tail of
//   zeros where a record should be, followed by data). After a bad
//   checksum or a bad length the rest of the block is dropped (the length
//   cannot be trusted); reading resumes at the next block, which always
//   starts with a header. Every other kind drops just the affected
//   record. Damage followed only by zeros is reported once non-zero data
//   shows up after those zeros, with the zeros counted as dropped.
// - I/O errors reading the file are reported with the file's status (not
//   DataLoss) and end reading.
// - Limits: a damaged length that reaches past the end of the file looks
//   exactly like a torn payload and is treated as one; with checksum ==
//   false a partly written record at the tail is returned as is.
// - Whether damage is fatal is the caller's choice (the DB stops with
//   DataLoss when paranoid_checks is set).
//
// initial_offset: records whose first fragment starts before it are
// skipped; reading begins with the first record starting at or after it.
// Damage wholly before initial_offset is not reported.
//
// Thread safety: none. Ownership: file and reporter are not owned and
// must outlive the Reader; reporter may be null.

#ifndef SIFTDB_WAL_LOG_READER_H_
#define SIFTDB_WAL_LOG_READER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "siftdb/env.h"
#include "wal/log_format.h"

namespace siftdb::log {

class Reader {
 public:
  // Receives the damage found while reading.
  class Reporter {
   public:
    virtual ~Reporter() = default;
    // bytes_dropped bytes of log were skipped for the reason in status.
    virtual void Corruption(size_t bytes_dropped, absl::Status status) = 0;
  };

  Reader(SequentialFile* file, Reporter* reporter, bool checksum,
         uint64_t initial_offset);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;
  ~Reader() = default;

  // Reads the next record into *record and returns true, or returns false
  // at the end of the log (including a torn tail). *record points into
  // *scratch or into the Reader's buffer, valid until the next call or
  // until *scratch changes.
  bool ReadRecord(std::string_view* record, std::string* scratch);

  // File offset of the first physical record of the record last returned
  // by ReadRecord. Undefined before the first successful ReadRecord.
  uint64_t LastRecordOffset() const { return last_record_offset_; }

 private:
  // Results of ReadPhysicalRecord besides the RecordType values.
  enum : int {
    kEof = kMaxRecordType + 1,
    // Dropped as damage (already reported).
    kBadRecord = kMaxRecordType + 2,
    // A record before initial_offset_, skipped silently.
    kSkipped = kMaxRecordType + 3,
  };

  // Positions the file at the block holding initial_offset_.
  bool SkipToInitialBlock();
  // Reads the next physical record; its payload goes to *result and the
  // file offset of its header to *offset. Returns its type, kEof,
  // kBadRecord or kSkipped.
  int ReadPhysicalRecord(std::string_view* result, uint64_t* offset);
  // Reads the next block into buffer_. False when nothing could be read.
  bool ReadNextBlock();
  // Drops the rest of buffer_ and reads on; true when the file has no
  // byte after the dropped ones.
  bool DropRestOfBlockAtEof();
  // Damage that is a torn tail if nothing but zeros follows it to the end
  // of the file, and is reported (by FlushDeferredDamage, which returns
  // whether there was any) as soon as anything else does. Consecutive
  // deferrals merge into the first.
  void DeferDamage(uint64_t offset, size_t bytes, std::string_view reason);
  bool FlushDeferredDamage();
  void ReportDamage(uint64_t offset, size_t bytes, std::string_view reason);
  void ReportDrop(uint64_t offset, size_t bytes, absl::Status status);

  SequentialFile* const file_;
  Reporter* const reporter_;
  const bool checksum_;
  const uint64_t initial_offset_;
  const std::unique_ptr<char[]> backing_store_;  // kBlockSize bytes
  std::string_view buffer_;  // unread part of the current block
  bool eof_ = false;         // the last read came up short: file ended
  // File offset just past the end of buffer_.
  uint64_t end_of_buffer_offset_ = 0;
  uint64_t last_record_offset_ = 0;
  bool started_ = false;  // SkipToInitialBlock done
  // Skipping the tail fragments of a record cut by initial_offset_.
  bool resyncing_;
  // Deferred damage (see DeferDamage).
  bool has_deferred_ = false;
  uint64_t deferred_offset_ = 0;
  uint64_t deferred_bytes_ = 0;
  std::string deferred_reason_;
};

}  // namespace siftdb::log

#endif  // SIFTDB_WAL_LOG_READER_H_
