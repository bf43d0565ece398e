// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/internal_key.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "util/absl_compat.h"
#include "util/coding.h"
#include "util/compare_bytes.h"

namespace siftdb {

void AppendInternalKey(std::string* dst, std::string_view user_key,
                       SequenceNumber seq, ValueType type) {
  dst->append(user_key.data(), user_key.size());
  PutFixed64(dst, PackSequenceAndType(seq, type));
}

bool ParseInternalKey(std::string_view internal_key,
                      ParsedInternalKey* result) {
  if (internal_key.size() < kInternalKeyTrailerSize) return false;
  const uint64_t num = DecodeFixed64(internal_key.data() + internal_key.size() -
                                     kInternalKeyTrailerSize);
  const uint8_t type = num & 0xff;
  if (type > kTypeValue) return false;
  result->user_key = ExtractUserKey(internal_key);
  result->sequence = num >> 8;
  result->type = static_cast<ValueType>(type);
  return true;
}

std::string InternalKeyDebugString(std::string_view internal_key, bool hex) {
  ParsedInternalKey parsed;
  if (!ParseInternalKey(internal_key, &parsed)) {
    return absl::StrFormat("(bad internal key: %s)",
                           absl::BytesToHexString(AsAbsl(internal_key)));
  }
  const std::string user = hex ? absl::BytesToHexString(AsAbsl(parsed.user_key))
                               : absl::CHexEscape(AsAbsl(parsed.user_key));
  return absl::StrFormat("'%s' @ %d : %s", user, parsed.sequence,
                         parsed.type == kTypeValue ? "put" : "del");
}

int InternalKeyComparator::CompareMalformed(std::string_view a,
                                            std::string_view b) {
  // Damaged bytes (a key too short to hold its trailer, e.g. from a data
  // block that passed its checksum): never read outside them. They sort
  // bytewise among themselves and before every well-formed key, so the
  // order stays total; readers report them as damage.
  if (a.size() >= kInternalKeyTrailerSize) return +1;
  if (b.size() >= kInternalKeyTrailerSize) return -1;
  return a.compare(b);
}

const char* InternalKeyComparator::Name() const {
  return "siftdb.InternalKeyComparator";
}

void InternalKeyComparator::FindShortestSeparator(
    std::string* start, std::string_view limit) const {
  // Shorten the user key part, then append the earliest possible trailer so
  // the result still sorts at or after *start.
  std::string_view user_start = ExtractUserKey(*start);
  std::string_view user_limit = ExtractUserKey(limit);
  std::string tmp(user_start);
  user_comparator_->FindShortestSeparator(&tmp, user_limit);
  if (tmp.size() < user_start.size() &&
      user_comparator_->Compare(user_start, tmp) < 0) {
    PutFixed64(&tmp,
               PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek));
    start->swap(tmp);
  }
}

void InternalKeyComparator::FindShortSuccessor(std::string* key) const {
  std::string_view user_key = ExtractUserKey(*key);
  std::string tmp(user_key);
  user_comparator_->FindShortSuccessor(&tmp);
  if (tmp.size() < user_key.size() &&
      user_comparator_->Compare(user_key, tmp) < 0) {
    PutFixed64(&tmp,
               PackSequenceAndType(kMaxSequenceNumber, kValueTypeForSeek));
    key->swap(tmp);
  }
}

}  // namespace siftdb
