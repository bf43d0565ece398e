// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// WriteBatchInternal: the engine's access to a WriteBatch's encoding
// (docs/wal_format.md, "Write batch"):
//   rep := sequence fixed64 | count fixed32 | record*
//   record := 0x01 lp(key) lp(value) | 0x00 lp(key)    (lp: varint32 length)
// The record tags are the ValueType values and never change.

#ifndef SIFTDB_DB_WRITE_BATCH_INTERNAL_H_
#define SIFTDB_DB_WRITE_BATCH_INTERNAL_H_

#include <string_view>

#include "absl/status/status.h"
#include "siftdb/write_batch.h"
#include "table/internal_key.h"

namespace siftdb {

class MemTable;

class WriteBatchInternal {
 public:
  // Bytes of the header (sequence + count).
  static constexpr size_t kHeader = 12;

  static int Count(const WriteBatch* batch);
  static void SetCount(WriteBatch* batch, int n);
  static SequenceNumber Sequence(const WriteBatch* batch);
  static void SetSequence(WriteBatch* batch, SequenceNumber seq);

  static std::string_view Contents(const WriteBatch* batch) {
    return batch->rep_;
  }
  static size_t ByteSize(const WriteBatch* batch) { return batch->rep_.size(); }

  // Replaces the batch's contents with an encoding read from a log. Fails
  // (DataLoss) when it is shorter than the header; the records themselves
  // are checked by Iterate / InsertInto.
  static absl::Status SetContents(WriteBatch* batch, std::string_view contents);

  // Applies every update to memtable, the first with Sequence(batch).
  static absl::Status InsertInto(const WriteBatch* batch, MemTable* memtable);

  // Checks every key and value against the limits in siftdb/options.h.
  static absl::Status Validate(const WriteBatch* batch);
};

}  // namespace siftdb

#endif  // SIFTDB_DB_WRITE_BATCH_INTERNAL_H_
