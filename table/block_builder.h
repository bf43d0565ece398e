// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// BlockBuilder: encodes sorted key/value pairs into one block with
// prefix-compressed keys and restart points (docs/table_format.md, "Blocks"):
//
//   entry   := varint32 shared | varint32 non_shared | varint32 value_len
//              | key[shared..] (non_shared bytes) | value (value_len bytes)
//   block   := entry* | fixed32 restart_offset * num_restarts
//              | fixed32 num_restarts
//
// Every restart_interval-th entry (starting with the first) stores its whole
// key (shared == 0) and its offset is recorded as a restart point. An empty
// block is a single restart point at 0: 8 bytes.
//
// Thread safety: one thread at a time. The builder does not own a
// comparator: the caller adds keys in the order it wants them read back.

#ifndef SIFTDB_TABLE_BLOCK_BUILDER_H_
#define SIFTDB_TABLE_BLOCK_BUILDER_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace siftdb {

class BlockBuilder {
 public:
  // restart_interval < 1 acts as 1.
  explicit BlockBuilder(int restart_interval);
  BlockBuilder(const BlockBuilder&) = delete;
  BlockBuilder& operator=(const BlockBuilder&) = delete;

  // Empties the builder, as if just constructed.
  void Reset();

  // REQUIRES: Finish() not called since the last Reset(); key greater than
  // every key added before (in the order the reader will use).
  void Add(std::string_view key, std::string_view value);

  // Appends the restart array and returns the whole block, valid until the
  // next Reset() or destruction.
  std::string_view Finish();

  // Size of the block Finish() would return now.
  size_t CurrentSizeEstimate() const;

  bool empty() const { return counter_total_ == 0; }
  size_t num_entries() const { return counter_total_; }

 private:
  const int restart_interval_;
  std::string buffer_;
  std::vector<uint32_t> restarts_;
  int counter_ = 0;  // entries since the last restart point
  size_t counter_total_ = 0;
  bool finished_ = false;
  std::string last_key_;
};

}  // namespace siftdb

#endif  // SIFTDB_TABLE_BLOCK_BUILDER_H_
