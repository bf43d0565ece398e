// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "wal/log_reader.h"

#include <algorithm>

#include "absl/strings/str_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace siftdb::log {
namespace {

bool AllZero(std::string_view bytes) {
  return std::all_of(bytes.begin(), bytes.end(), [](char c) { return c == 0; });
}

}  // namespace

Reader::Reader(SequentialFile* file, Reporter* reporter, bool checksum,
               uint64_t initial_offset)
    : file_(file),
      reporter_(reporter),
      checksum_(checksum),
      initial_offset_(initial_offset),
      backing_store_(std::make_unique<char[]>(kBlockSize)),
      resyncing_(initial_offset > 0) {}

bool Reader::SkipToInitialBlock() {
  const uint64_t offset_in_block = initial_offset_ % kBlockSize;
  uint64_t block_start = initial_offset_ - offset_in_block;
  // No record starts in a block's last kHeaderSize - 1 bytes.
  if (offset_in_block > kBlockSize - kHeaderSize) block_start += kBlockSize;
  end_of_buffer_offset_ = block_start;
  if (block_start > 0) {
    absl::Status s = file_->Skip(block_start);
    if (!s.ok()) {
      ReportDrop(block_start, block_start, s);
      eof_ = true;
      return false;
    }
  }
  return true;
}

bool Reader::ReadRecord(std::string_view* record, std::string* scratch) {
  if (!started_) {
    started_ = true;
    if (!SkipToInitialBlock()) return false;
  }
  scratch->clear();
  *record = {};
  bool in_fragmented_record = false;
  uint64_t record_offset = 0;  // of the record being assembled

  // Drops the record being assembled, as damage.
  auto drop_partial = [&]() {
    if (in_fragmented_record) {
      ReportDamage(record_offset, scratch->size(),
                   "partial record without end");
      in_fragmented_record = false;
      scratch->clear();
    }
  };

  while (true) {
    std::string_view fragment;
    uint64_t physical_offset = 0;
    const int type = ReadPhysicalRecord(&fragment, &physical_offset);

    if (resyncing_) {
      // Skip the rest of a record that began before initial_offset_.
      if (type == kMiddleType || type == kSkipped) continue;
      if (type == kLastType) {
        resyncing_ = false;
        continue;
      }
      resyncing_ = false;
    }

    switch (type) {
      case kFullType:
        drop_partial();
        *record = fragment;
        last_record_offset_ = physical_offset;
        return true;

      case kFirstType:
        drop_partial();
        record_offset = physical_offset;
        scratch->assign(fragment.data(), fragment.size());
        in_fragmented_record = true;
        break;

      case kMiddleType:
        if (!in_fragmented_record) {
          ReportDamage(physical_offset, fragment.size(),
                       "missing start of fragmented record");
        } else {
          scratch->append(fragment.data(), fragment.size());
        }
        break;

      case kLastType:
        if (!in_fragmented_record) {
          ReportDamage(physical_offset, fragment.size(),
                       "missing start of fragmented record");
          break;
        }
        scratch->append(fragment.data(), fragment.size());
        *record = *scratch;
        last_record_offset_ = record_offset;
        return true;

      case kEof:
        // A record still being assembled was torn by a crash: not damage.
        scratch->clear();
        return false;

      case kBadRecord:
        drop_partial();
        break;

      case kSkipped:
        break;

      default:
        drop_partial();
        ReportDamage(physical_offset, kHeaderSize + fragment.size(),
                     absl::StrFormat("unknown record type %d", type));
        break;
    }
  }
}

bool Reader::ReadNextBlock() {
  buffer_ = {};
  if (eof_) return false;
  absl::Status s = file_->Read(kBlockSize, &buffer_, backing_store_.get());
  if (!s.ok()) {
    ReportDrop(end_of_buffer_offset_, kBlockSize, s);
    buffer_ = {};
    eof_ = true;
    return false;
  }
  end_of_buffer_offset_ += buffer_.size();
  if (buffer_.size() < kBlockSize) eof_ = true;
  return !buffer_.empty();
}

bool Reader::DropRestOfBlockAtEof() {
  buffer_ = {};
  return !ReadNextBlock();
}

int Reader::ReadPhysicalRecord(std::string_view* result, uint64_t* offset) {
  while (true) {
    if (buffer_.size() < kHeaderSize) {
      // A block trailer (skip it), or at the end of the file the start of
      // a header that was never finished: a torn tail.
      if (!ReadNextBlock()) {
        // Only zeros after any deferred damage: a torn tail.
        has_deferred_ = false;
        deferred_bytes_ = 0;
        return kEof;
      }
      continue;
    }

    const uint64_t record_offset = end_of_buffer_offset_ - buffer_.size();
    *offset = record_offset;
    const uint8_t* header = reinterpret_cast<const uint8_t*>(buffer_.data());
    const size_t length = header[4] | (static_cast<size_t>(header[5]) << 8);
    const int type = header[6];

    if (type == kZeroType && length == 0 && AllZero(buffer_)) {
      // Zeros to the end of the block: damage if data follows, a torn
      // tail if only zeros do. Decided later.
      DeferDamage(record_offset, buffer_.size(), "zero-filled region");
      buffer_ = {};
      continue;
    }
    // Non-zero data follows deferred damage: it was damage after all. The
    // record in assembly is dropped before this one is read.
    if (FlushDeferredDamage()) return kBadRecord;

    if (kHeaderSize + length > buffer_.size()) {
      const size_t dropped = buffer_.size();
      if (AllZero(buffer_.substr(kHeaderSize))) {
        // A header then zeros: torn if only zeros follow; decided later.
        buffer_ = {};
        DeferDamage(record_offset, dropped, "bad record length");
        continue;
      }
      // Reaching past the end of the file: the payload was cut off.
      if (DropRestOfBlockAtEof()) return kEof;
      ReportDamage(record_offset, dropped, "bad record length");
      return kBadRecord;
    }

    const size_t record_size = kHeaderSize + length;
    if (checksum_) {
      const uint32_t expected = crc32c::Unmask(DecodeFixed32(buffer_.data()));
      const uint32_t actual =
          crc32c::Value(buffer_.data() + kHeaderSize - 1, 1 + length);
      if (actual != expected) {
        // The length may be what is damaged, so nothing more in this block
        // can be trusted: drop it all.
        const size_t dropped = buffer_.size();
        const bool zeros_after = AllZero(buffer_.substr(record_size));
        buffer_ = {};
        if (zeros_after) {
          // Torn by a crash if nothing but zeros follows to the end of the
          // file; decided later.
          DeferDamage(record_offset, dropped, "checksum mismatch");
          continue;
        }
        ReportDamage(record_offset, dropped, "checksum mismatch");
        return kBadRecord;
      }
    }

    *result = buffer_.substr(kHeaderSize, length);
    buffer_.remove_prefix(record_size);
    if (record_offset < initial_offset_) return kSkipped;
    return type;
  }
}

void Reader::DeferDamage(uint64_t offset, size_t bytes,
                         std::string_view reason) {
  if (!has_deferred_) {
    has_deferred_ = true;
    deferred_offset_ = offset;
    deferred_reason_ = std::string(reason);
  }
  deferred_bytes_ += bytes;
}

bool Reader::FlushDeferredDamage() {
  if (!has_deferred_) return false;
  has_deferred_ = false;
  ReportDamage(deferred_offset_, deferred_bytes_, deferred_reason_);
  deferred_bytes_ = 0;
  return true;
}

void Reader::ReportDamage(uint64_t offset, size_t bytes,
                          std::string_view reason) {
  ReportDrop(offset, bytes,
             absl::DataLossError(absl::StrFormat("log record at offset %d: %s",
                                                 offset, reason)));
}

void Reader::ReportDrop(uint64_t offset, size_t bytes, absl::Status status) {
  if (reporter_ == nullptr) return;
  // Damage wholly before initial_offset_ is none of the caller's business.
  if (initial_offset_ > 0 && offset + bytes <= initial_offset_) return;
  reporter_->Corruption(bytes, std::move(status));
}

}  // namespace siftdb::log
