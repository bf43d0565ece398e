// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The write-ahead log's physical format, shared by log::Writer and
// log::Reader and specified byte for byte in docs/wal_format.md.
//
// A log is a sequence of 32 KiB blocks (the last one may be short). Each
// block holds physical records; a record never crosses a block boundary:
//
//   physical record := checksum: fixed32 LE   masked CRC32C of type+payload
//                      length:   fixed16 LE   payload bytes
//                      type:     uint8        RecordType
//                      payload:  length bytes
//
// A block tail too short for a header (1..6 bytes) is zero-filled. A user
// record is one kFullType record, or kFirstType, any number of
// kMiddleType, then kLastType.

#ifndef SIFTDB_WAL_LOG_FORMAT_H_
#define SIFTDB_WAL_LOG_FORMAT_H_

#include <cstddef>
#include <cstdint>

namespace siftdb::log {

// Persisted in every physical record header: never change the values.
enum RecordType : uint8_t {
  // Reserved for preallocated (zero-filled) files; never written.
  kZeroType = 0,
  kFullType = 1,
  // Fragments of a record that spans blocks.
  kFirstType = 2,
  kMiddleType = 3,
  kLastType = 4,
};
inline constexpr int kMaxRecordType = kLastType;

// Persisted: never change.
inline constexpr size_t kBlockSize = 32768;
// checksum (4) + length (2) + type (1).
inline constexpr size_t kHeaderSize = 4 + 2 + 1;

}  // namespace siftdb::log

#endif  // SIFTDB_WAL_LOG_FORMAT_H_
