// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// log::Writer appends records to a write-ahead log (format: log_format.h,
// docs/wal_format.md).
//
// What a caller may assume:
// - AddRecord(r) returns OK only once every byte of r's physical records
//   has been appended and the file Flush()ed, i.e. handed to the OS: a
//   process crash after it returns loses nothing. Making the record
//   survive a machine crash is the caller's job (WritableFile::Sync).
// - Records of any size, including empty ones, are accepted.
// - Errors are sticky: after a failed AddRecord the log may end in a
//   partial record, so every later AddRecord fails with the same status
//   without writing. The caller must switch to a new log file.
// - Appending to an existing log (dest_length > 0) is only correct when
//   that log ends cleanly (no torn tail); otherwise a torn record would
//   end up in the middle of the log and be reported as damage.
//
// Thread safety: none; one writer at a time (the DB serializes writes).
// Ownership: dest is not owned and must outlive the Writer.

#ifndef SIFTDB_WAL_LOG_WRITER_H_
#define SIFTDB_WAL_LOG_WRITER_H_

#include <cstdint>
#include <string_view>

#include "absl/status/status.h"
#include "siftdb/env.h"
#include "wal/log_format.h"

namespace siftdb::log {

class Writer {
 public:
  // Appends to dest, which already holds dest_length bytes of log.
  explicit Writer(WritableFile* dest, uint64_t dest_length = 0);
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;
  ~Writer() = default;

  absl::Status AddRecord(std::string_view record);

 private:
  absl::Status EmitPhysicalRecord(RecordType type, const char* data,
                                  size_t length);

  WritableFile* const dest_;
  size_t block_offset_;  // bytes of the current block already written
  absl::Status status_;  // first error; sticky
  // CRC32C of each type byte, precomputed: the CRC covers type + payload.
  uint32_t type_crc_[kMaxRecordType + 1];
};

}  // namespace siftdb::log

#endif  // SIFTDB_WAL_LOG_WRITER_H_
