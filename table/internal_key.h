// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Internal keys: the keys stored in MemTables and tables.
//
//   internal key := user_key . fixed64_le((sequence << 8) | type)
//
// Ordered by user key ascending (through the user comparator), then by
// sequence descending, then by type descending, so the newest entry for a
// user key comes first. Tables are written and read in this order; the
// table layer uses it to build filters over user keys and to count
// deletions, the db layer for everything else.
//
// Persisted in every table and log: the type values and the trailer layout
// never change.

#ifndef SIFTDB_TABLE_INTERNAL_KEY_H_
#define SIFTDB_TABLE_INTERNAL_KEY_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "siftdb/comparator.h"
#include "util/coding.h"
#include "util/compare_bytes.h"

namespace siftdb {

using SequenceNumber = uint64_t;

// Sequence numbers use the top 56 bits of the trailer.
inline constexpr SequenceNumber kMaxSequenceNumber =
    (SequenceNumber{1} << 56) - 1;

// Persisted: never change these values.
enum ValueType : uint8_t {
  kTypeDeletion = 0x0,
  kTypeValue = 0x1,
};
// The type used when seeking: the largest, so that a seek key sorts before
// every real entry with the same user key and sequence.
inline constexpr ValueType kValueTypeForSeek = kTypeValue;

inline constexpr size_t kInternalKeyTrailerSize = 8;

struct ParsedInternalKey {
  std::string_view user_key;
  SequenceNumber sequence = 0;
  ValueType type = kTypeValue;
};

inline uint64_t PackSequenceAndType(SequenceNumber seq, ValueType t) {
  return (seq << 8) | t;
}

void AppendInternalKey(std::string* dst, std::string_view user_key,
                       SequenceNumber seq, ValueType type);

// False when `internal_key` is too short or its type byte is unknown.
bool ParseInternalKey(std::string_view internal_key, ParsedInternalKey* result);

// REQUIRES: internal_key.size() >= kInternalKeyTrailerSize.
// A key shorter than its trailer (damage) yields an empty user key.
inline std::string_view ExtractUserKey(std::string_view internal_key) {
  if (internal_key.size() < kInternalKeyTrailerSize) return {};
  return internal_key.substr(0, internal_key.size() - kInternalKeyTrailerSize);
}

// Human-readable form for tools and error messages: 'key' @ seq : type.
std::string InternalKeyDebugString(std::string_view internal_key, bool hex);

// Orders internal keys as described above. Wraps (does not own) the user
// comparator.
class InternalKeyComparator final : public Comparator {
 public:
  explicit InternalKeyComparator(const Comparator* user_comparator)
      : user_comparator_(user_comparator),
        bytewise_(user_comparator == BytewiseComparator()) {}

  int Compare(std::string_view a, std::string_view b) const override {
    return CompareInline(a, b);
  }
  // Compare, for callers that hold this class rather than a Comparator:
  // inlined, so a block search pays no call per comparison.
  int CompareInline(std::string_view a, std::string_view b) const {
    if (a.size() < kInternalKeyTrailerSize ||
        b.size() < kInternalKeyTrailerSize) [[unlikely]] {
      return CompareMalformed(a, b);
    }
    const std::string_view ua = a.substr(0, a.size() - kInternalKeyTrailerSize);
    const std::string_view ub = b.substr(0, b.size() - kInternalKeyTrailerSize);
    int r =
        bytewise_ ? CompareBytes(ua, ub) : user_comparator_->Compare(ua, ub);
    if (r == 0) {
      // Same user key: the larger sequence (and type) sorts first.
      const uint64_t anum = DecodeFixed64(a.data() + a.size() - 8);
      const uint64_t bnum = DecodeFixed64(b.data() + b.size() - 8);
      if (anum > bnum) {
        r = -1;
      } else if (anum < bnum) {
        r = +1;
      }
    }
    return r;
  }
  const char* Name() const override;
  void FindShortestSeparator(std::string* start,
                             std::string_view limit) const override;
  void FindShortSuccessor(std::string* key) const override;

  const Comparator* user_comparator() const { return user_comparator_; }

 private:
  // Keys shorter than a trailer (see internal_key.cc).
  static int CompareMalformed(std::string_view a, std::string_view b);

  const Comparator* user_comparator_;
  // The user order is plain byte order: compare without a virtual call
  // (the MemTable and block searches compare keys millions of times).
  bool bytewise_;
};

}  // namespace siftdb

#endif  // SIFTDB_TABLE_INTERNAL_KEY_H_
