// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "wal/log_writer.h"

#include <algorithm>

#include "util/coding.h"
#include "util/crc32c.h"

namespace siftdb::log {

Writer::Writer(WritableFile* dest, uint64_t dest_length)
    : dest_(dest), block_offset_(dest_length % kBlockSize) {
  for (int t = 0; t <= kMaxRecordType; t++) {
    const char type_byte = static_cast<char>(t);
    type_crc_[t] = crc32c::Value(&type_byte, 1);
  }
}

absl::Status Writer::AddRecord(std::string_view record) {
  if (!status_.ok()) return status_;
  const char* ptr = record.data();
  size_t left = record.size();
  bool begin = true;
  absl::Status s;
  // An empty record still gets one (empty) kFullType physical record.
  do {
    const size_t leftover = kBlockSize - block_offset_;
    if (leftover < kHeaderSize) {
      // Too small for a header: zero-fill the block's tail.
      if (leftover > 0) {
        static constexpr char kZeros[kHeaderSize - 1] = {};
        s = dest_->Append(std::string_view(kZeros, leftover));
        if (!s.ok()) break;
      }
      block_offset_ = 0;
    }
    // May be 0: a header exactly filling the block's tail.
    const size_t avail = kBlockSize - block_offset_ - kHeaderSize;
    const size_t fragment = std::min(left, avail);
    const bool end = (fragment == left);
    RecordType type;
    if (begin && end) {
      type = kFullType;
    } else if (begin) {
      type = kFirstType;
    } else if (end) {
      type = kLastType;
    } else {
      type = kMiddleType;
    }
    s = EmitPhysicalRecord(type, ptr, fragment);
    ptr += fragment;
    left -= fragment;
    begin = false;
  } while (s.ok() && left > 0);
  if (s.ok()) s = dest_->Flush();
  if (!s.ok()) status_ = s;
  return s;
}

absl::Status Writer::EmitPhysicalRecord(RecordType type, const char* data,
                                        size_t length) {
  // length fits in 16 bits: a fragment never exceeds a block.
  char header[kHeaderSize];
  header[4] = static_cast<char>(length & 0xff);
  header[5] = static_cast<char>(length >> 8);
  header[6] = static_cast<char>(type);
  const uint32_t crc = crc32c::Extend(type_crc_[type], data, length);
  EncodeFixed32(header, crc32c::Mask(crc));

  absl::Status s = dest_->Append(std::string_view(header, kHeaderSize));
  if (s.ok()) s = dest_->Append(std::string_view(data, length));
  block_offset_ += kHeaderSize + length;
  return s;
}

}  // namespace siftdb::log
