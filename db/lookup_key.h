// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// LookupKey: the key a point read searches for, in the three forms the
// read path needs:
//   memtable_key()  varint32(len(internal key)) . internal key
//   internal_key()  user key . fixed64(seq << 8 | kValueTypeForSeek)
//   user_key()      user key
// The sequence is the read's snapshot: the lookup finds the newest entry
// with sequence <= it. Not copyable (it may point into its own buffer).

#ifndef SIFTDB_DB_LOOKUP_KEY_H_
#define SIFTDB_DB_LOOKUP_KEY_H_

#include <string_view>

#include "absl/status/status.h"
#include "table/internal_key.h"

namespace siftdb {

class LookupKey {
 public:
  LookupKey(std::string_view user_key, SequenceNumber sequence);
  LookupKey(const LookupKey&) = delete;
  LookupKey& operator=(const LookupKey&) = delete;
  ~LookupKey();

  std::string_view memtable_key() const {
    return std::string_view(start_, end_ - start_);
  }
  std::string_view internal_key() const {
    return std::string_view(kstart_, end_ - kstart_);
  }
  std::string_view user_key() const {
    return std::string_view(kstart_, end_ - kstart_ - kInternalKeyTrailerSize);
  }

 private:
  const char* start_;
  const char* kstart_;
  const char* end_;
  char* heap_;       // non-null when the key did not fit in space_
  char space_[200];  // avoids an allocation for short keys
};

// What a point read answers for an absent (or deleted) key: NotFound with
// no message, as RocksDB's Get answers. A message would cost every miss a
// heap allocation and its free (absl::Status keeps only an empty message
// inline), about a tenth of the CPU of a read the filters answer.
inline absl::Status KeyNotFound() {
  return absl::Status(absl::StatusCode::kNotFound, "");
}

}  // namespace siftdb

#endif  // SIFTDB_DB_LOOKUP_KEY_H_
