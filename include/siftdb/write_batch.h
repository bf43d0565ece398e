// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// WriteBatch: an ordered group of updates applied atomically by DB::Write.
//
// Thread safety: const methods may be called concurrently; anything else
// needs external synchronization.
// The encoded form (Data()) is the WAL record payload; it is specified in
// docs/wal_format.md.

#ifndef SIFTDB_INCLUDE_WRITE_BATCH_H_
#define SIFTDB_INCLUDE_WRITE_BATCH_H_

#include <cstddef>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "siftdb/export.h"

namespace siftdb {

class SIFTDB_EXPORT WriteBatch {
 public:
  // Receives the updates of a batch in order.
  class Handler {
   public:
    virtual ~Handler() = default;
    virtual void Put(std::string_view key, std::string_view value) = 0;
    virtual void Delete(std::string_view key) = 0;
  };

  WriteBatch();
  WriteBatch(const WriteBatch&) = default;
  WriteBatch& operator=(const WriteBatch&) = default;
  WriteBatch(WriteBatch&&) = default;
  WriteBatch& operator=(WriteBatch&&) = default;
  ~WriteBatch() = default;

  void Put(std::string_view key, std::string_view value);
  void Delete(std::string_view key);
  // Appends every update of `source` after this batch's own.
  void Append(const WriteBatch& source);
  void Clear();

  // Number of updates.
  int Count() const;
  // Bytes of the encoded batch: a cheap measure of its size.
  size_t ApproximateSize() const;

  // Calls handler for each update in order. Corruption when the encoding
  // is damaged (only possible for a batch decoded from bytes).
  absl::Status Iterate(Handler* handler) const;

 private:
  friend class WriteBatchInternal;
  std::string rep_;  // see docs/wal_format.md, "Write batch"
};

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_WRITE_BATCH_H_
