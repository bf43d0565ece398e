// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/block_builder.h"

#include <algorithm>

#include "util/coding.h"

namespace siftdb {

BlockBuilder::BlockBuilder(int restart_interval)
    : restart_interval_(std::max(restart_interval, 1)) {
  restarts_.push_back(0);
}

void BlockBuilder::Reset() {
  buffer_.clear();
  restarts_.clear();
  restarts_.push_back(0);
  counter_ = 0;
  counter_total_ = 0;
  finished_ = false;
  last_key_.clear();
}

size_t BlockBuilder::CurrentSizeEstimate() const {
  return buffer_.size() + restarts_.size() * sizeof(uint32_t) +
         sizeof(uint32_t);
}

std::string_view BlockBuilder::Finish() {
  for (uint32_t r : restarts_) PutFixed32(&buffer_, r);
  PutFixed32(&buffer_, static_cast<uint32_t>(restarts_.size()));
  finished_ = true;
  return buffer_;
}

void BlockBuilder::Add(std::string_view key, std::string_view value) {
  size_t shared = 0;
  if (counter_ < restart_interval_) {
    const size_t limit = std::min(last_key_.size(), key.size());
    while (shared < limit && last_key_[shared] == key[shared]) shared++;
  } else {
    // Start a new restart point: the full key is stored.
    restarts_.push_back(static_cast<uint32_t>(buffer_.size()));
    counter_ = 0;
  }
  const size_t non_shared = key.size() - shared;
  const auto shared32 = static_cast<uint32_t>(shared);
  const auto non_shared32 = static_cast<uint32_t>(non_shared);
  const auto value_size32 = static_cast<uint32_t>(value.size());
  // The three lengths, encoded into one append. Usually each fits one
  // byte, which needs no varint loop.
  char header[3 * kMaxVarint32Bytes];
  char* p = header;
  if ((shared32 | non_shared32 | value_size32) < 0x80) {
    *p++ = static_cast<char>(shared32);
    *p++ = static_cast<char>(non_shared32);
    *p++ = static_cast<char>(value_size32);
  } else {
    p = EncodeVarint32(p, shared32);
    p = EncodeVarint32(p, non_shared32);
    p = EncodeVarint32(p, value_size32);
  }
  buffer_.append(header, static_cast<size_t>(p - header));
  buffer_.append(key.data() + shared, non_shared);
  buffer_.append(value.data(), value.size());

  last_key_.resize(shared);
  last_key_.append(key.data() + shared, non_shared);
  counter_++;
  counter_total_++;
}

}  // namespace siftdb
