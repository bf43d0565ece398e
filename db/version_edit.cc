// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/version_edit.h"

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "util/coding.h"

namespace siftdb {
namespace {

// Persisted tags: never change or reuse these numbers.
enum Tag : uint32_t {
  kComparator = 1,
  kLogNumber = 2,
  kNextFileNumber = 3,
  kLastSequence = 4,
  kCompactPointer = 5,
  kDeletedFile = 6,
  kNewFile = 7,
  // 8 is unused.
  kPrevLogNumber = 9,
};

// A file number as siftdb writes them: at most kMaxFileNumber. A larger
// one would wrap the file-number counter when counted in.
bool GetFileNumber(std::string_view* input, uint64_t* number) {
  return GetVarint64(input, number) && *number <= kMaxFileNumber;
}

bool GetLevel(std::string_view* input, int* level) {
  uint32_t v;
  if (GetVarint32(input, &v) && v < kNumLevels) {
    *level = static_cast<int>(v);
    return true;
  }
  return false;
}

bool GetInternalKey(std::string_view* input, std::string* dst) {
  std::string_view str;
  if (!GetLengthPrefixedSlice(input, &str) ||
      str.size() < kInternalKeyTrailerSize) {
    return false;
  }
  dst->assign(str.data(), str.size());
  return true;
}

}  // namespace

void VersionEdit::AddFile(int level, uint64_t number, uint64_t file_size,
                          std::string_view smallest, std::string_view largest) {
  FileMetaData f;
  f.number = number;
  f.file_size = file_size;
  f.smallest = std::string(smallest);
  f.largest = std::string(largest);
  new_files_.emplace_back(level, std::move(f));
}

void VersionEdit::EncodeTo(std::string* dst) const {
  if (has_comparator_) {
    PutVarint32(dst, kComparator);
    PutLengthPrefixedSlice(dst, comparator_);
  }
  if (has_log_number_) {
    PutVarint32(dst, kLogNumber);
    PutVarint64(dst, log_number_);
  }
  if (has_prev_log_number_) {
    PutVarint32(dst, kPrevLogNumber);
    PutVarint64(dst, prev_log_number_);
  }
  if (has_next_file_number_) {
    PutVarint32(dst, kNextFileNumber);
    PutVarint64(dst, next_file_number_);
  }
  if (has_last_sequence_) {
    PutVarint32(dst, kLastSequence);
    PutVarint64(dst, last_sequence_);
  }
  for (const auto& [level, key] : compact_pointers_) {
    PutVarint32(dst, kCompactPointer);
    PutVarint32(dst, level);
    PutLengthPrefixedSlice(dst, key);
  }
  for (const auto& [level, number] : deleted_files_) {
    PutVarint32(dst, kDeletedFile);
    PutVarint32(dst, level);
    PutVarint64(dst, number);
  }
  for (const auto& [level, f] : new_files_) {
    PutVarint32(dst, kNewFile);
    PutVarint32(dst, level);
    PutVarint64(dst, f.number);
    PutVarint64(dst, f.file_size);
    PutLengthPrefixedSlice(dst, f.smallest);
    PutLengthPrefixedSlice(dst, f.largest);
  }
}

absl::Status VersionEdit::DecodeFrom(std::string_view src) {
  Clear();
  std::string_view input = src;
  const char* msg = nullptr;
  uint32_t tag;
  int level;
  uint64_t number;
  FileMetaData f;
  std::string_view str;
  std::string key;

  while (msg == nullptr && GetVarint32(&input, &tag)) {
    switch (tag) {
      case kComparator:
        if (GetLengthPrefixedSlice(&input, &str)) {
          comparator_ = std::string(str);
          has_comparator_ = true;
        } else {
          msg = "comparator name";
        }
        break;
      case kLogNumber:
        if (GetFileNumber(&input, &log_number_)) {
          has_log_number_ = true;
        } else {
          msg = "log number (truncated, or above 2^62)";
        }
        break;
      case kPrevLogNumber:
        if (GetFileNumber(&input, &prev_log_number_)) {
          has_prev_log_number_ = true;
        } else {
          msg = "previous log number (truncated, or above 2^62)";
        }
        break;
      case kNextFileNumber:
        if (GetFileNumber(&input, &next_file_number_)) {
          has_next_file_number_ = true;
        } else {
          msg = "next file number (truncated, or above 2^62)";
        }
        break;
      case kLastSequence:
        if (GetVarint64(&input, &last_sequence_) &&
            last_sequence_ <= kMaxSequenceNumber) {
          has_last_sequence_ = true;
        } else {
          msg = "last sequence number (truncated, or above 2^56-1)";
        }
        break;
      case kCompactPointer:
        if (GetLevel(&input, &level) && GetInternalKey(&input, &key)) {
          compact_pointers_.emplace_back(level, key);
        } else {
          msg = "compaction pointer";
        }
        break;
      case kDeletedFile:
        if (GetLevel(&input, &level) && GetFileNumber(&input, &number)) {
          deleted_files_.insert({level, number});
        } else {
          msg = "deleted file";
        }
        break;
      case kNewFile:
        if (GetLevel(&input, &level) && GetFileNumber(&input, &f.number) &&
            GetVarint64(&input, &f.file_size) &&
            GetInternalKey(&input, &f.smallest) &&
            GetInternalKey(&input, &f.largest)) {
          new_files_.emplace_back(level, f);
        } else {
          msg = "new-file entry";
        }
        break;
      default:
        return absl::DataLossError(
            absl::StrFormat("version edit: unknown tag %d at byte %d", tag,
                            src.size() - input.size()));
    }
  }
  if (msg == nullptr && !input.empty()) msg = "trailing bytes";
  if (msg != nullptr) {
    return absl::DataLossError(absl::StrFormat(
        "version edit: bad %s at byte %d", msg, src.size() - input.size()));
  }
  return absl::OkStatus();
}

std::string VersionEdit::DebugString() const {
  std::string r = "VersionEdit {";
  if (has_comparator_)
    absl::StrAppendFormat(&r, "\n  Comparator: %s", comparator_);
  if (has_log_number_)
    absl::StrAppendFormat(&r, "\n  LogNumber: %d", log_number_);
  if (has_prev_log_number_)
    absl::StrAppendFormat(&r, "\n  PrevLogNumber: %d", prev_log_number_);
  if (has_next_file_number_)
    absl::StrAppendFormat(&r, "\n  NextFile: %d", next_file_number_);
  if (has_last_sequence_)
    absl::StrAppendFormat(&r, "\n  LastSeq: %d", last_sequence_);
  for (const auto& [level, key] : compact_pointers_) {
    absl::StrAppendFormat(&r, "\n  CompactPointer: %d %s", level,
                          InternalKeyDebugString(key, false));
  }
  for (const auto& [level, number] : deleted_files_) {
    absl::StrAppendFormat(&r, "\n  RemoveFile: %d %d", level, number);
  }
  for (const auto& [level, f] : new_files_) {
    absl::StrAppendFormat(&r, "\n  AddFile: %d %d %d %s .. %s", level, f.number,
                          f.file_size,
                          InternalKeyDebugString(f.smallest, false),
                          InternalKeyDebugString(f.largest, false));
  }
  r.append("\n}\n");
  return r;
}

}  // namespace siftdb
