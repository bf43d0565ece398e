// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "filter/partitioned_filter.h"

#include <algorithm>
#include <cmath>

#include "filter/filter_format.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace siftdb {

namespace {

uint32_t MaskedCrc(std::string_view bytes) {
  return crc32c::Mask(crc32c::Value(bytes.data(), bytes.size()));
}

// Entries per partition for about partition_bytes of filter at the
// policy's bits per key (an estimate: Ribbon uses fewer bits).
size_t KeysPerPartition(const FilterPolicy* policy, size_t partition_bytes) {
  const double bits = policy->BitsPerKey();
  if (!(bits > 0)) return SIZE_MAX;  // empty filters: never cut
  const double keys = static_cast<double>(partition_bytes) * 8.0 / bits;
  if (keys >= 1e15) return SIZE_MAX;
  return std::max<size_t>(1, static_cast<size_t>(keys));
}

}  // namespace

bool IsPartitionedFilter(std::string_view filter) {
  FilterTrailer t;
  return DecodeFilterTrailer(filter, &t) && t.kind == FilterKind::kPartitioned;
}

PartitionedFilterBuilder::PartitionedFilterBuilder(const FilterPolicy* policy,
                                                   size_t partition_bytes)
    : policy_(policy),
      keys_per_partition_(KeysPerPartition(policy, partition_bytes)),
      inner_(policy->NewBuilder()) {}

void PartitionedFilterBuilder::Add(std::string_view user_key,
                                   bool add_whole_key,
                                   const std::string_view* prefix) {
  if (open_entries_ >= keys_per_partition_) CutPartition();
  if (add_whole_key) {
    inner_->AddKey(user_key);
    ++open_entries_;
    ++num_added_;
  }
  if (prefix != nullptr &&
      !(have_last_prefix_ && *prefix == std::string_view(last_prefix_))) {
    inner_->AddKey(*prefix);
    last_prefix_.assign(prefix->data(), prefix->size());
    have_last_prefix_ = true;
    ++open_entries_;
    ++num_added_;
  }
  last_key_.assign(user_key.data(), user_key.size());
}

void PartitionedFilterBuilder::CutPartition() {
  Entry e;
  e.offset = static_cast<uint32_t>(parts_.size());
  inner_->Finish(&parts_);
  e.size = static_cast<uint32_t>(parts_.size() - e.offset);
  const uint32_t crc =
      MaskedCrc(std::string_view(parts_.data() + e.offset, e.size));
  PutFixed32(&parts_, crc);
  e.last_key = std::move(last_key_);
  last_key_.clear();
  entries_.push_back(std::move(e));
  // The next partition re-adds the prefix of its first key.
  have_last_prefix_ = false;
  open_entries_ = 0;
}

void PartitionedFilterBuilder::Finish(std::string* dst) {
  if (entries_.empty()) {  // one partition: the ordinary filter
    inner_->Finish(dst);
    return;
  }
  CutPartition();
  dst->append(parts_);
  std::string index;
  for (const Entry& e : entries_) {
    PutFixed32(&index, e.offset);
    PutFixed32(&index, e.size);
    PutFixed32(&index, static_cast<uint32_t>(e.last_key.size()));
    index.append(e.last_key);
  }
  dst->append(index);
  PutFixed32(dst, static_cast<uint32_t>(index.size()));
  PutFixed32(dst, MaskedCrc(index));
  FilterTrailer t;
  t.param = static_cast<uint32_t>(entries_.size());
  t.k = 0;
  t.kind = FilterKind::kPartitioned;
  char trailer[kFilterTrailerSize];
  EncodeFilterTrailer(t, trailer);
  dst->append(trailer, sizeof(trailer));
  parts_.clear();
  entries_.clear();
  num_added_ = 0;
  open_entries_ = 0;
  have_last_prefix_ = false;
}

bool FilterPartitionIndex::Parse(std::string_view filter,
                                 FilterPartitionIndex* out) {
  out->entries_.clear();
  FilterTrailer t;
  if (!DecodeFilterTrailer(filter, &t) || t.kind != FilterKind::kPartitioned ||
      t.version != kFilterFormatVersion || t.k != 0 || t.param == 0 ||
      filter.size() < kPartitionedFooterSize) {
    return false;
  }
  const char* footer = filter.data() + filter.size() - kPartitionedFooterSize;
  const uint64_t index_size = DecodeFixed32(footer);
  const uint32_t index_crc = DecodeFixed32(footer + 4);
  const uint64_t room = filter.size() - kPartitionedFooterSize;
  if (index_size > room) return false;
  const uint64_t parts_end = room - index_size;
  std::string_view index(filter.data() + parts_end, index_size);
  if (MaskedCrc(index) != index_crc) return false;
  // Each entry takes at least 12 bytes: bound the count before reserving.
  if (uint64_t{t.param} * kPartitionEntryFixedSize > index_size) return false;
  out->entries_.reserve(t.param);
  uint64_t expected_offset = 0;
  for (uint32_t i = 0; i < t.param; i++) {
    if (index.size() < kPartitionEntryFixedSize) return false;
    Entry e;
    e.offset = DecodeFixed32(index.data());
    e.size = DecodeFixed32(index.data() + 4);
    const uint32_t key_len = DecodeFixed32(index.data() + 8);
    index.remove_prefix(kPartitionEntryFixedSize);
    if (key_len > index.size()) return false;
    e.last_key.assign(index.data(), key_len);
    index.remove_prefix(key_len);
    // Partitions tile [0, parts_end) in order, with increasing last keys.
    if (e.offset != expected_offset) return false;
    expected_offset = uint64_t{e.offset} + e.size + kPartitionCrcSize;
    if (expected_offset > parts_end) return false;
    if (!out->entries_.empty() &&
        !(out->entries_.back().last_key < e.last_key)) {
      return false;
    }
    out->entries_.push_back(std::move(e));
  }
  if (!index.empty() || expected_offset != parts_end) {
    out->entries_.clear();
    return false;
  }
  return true;
}

size_t FilterPartitionIndex::Find(std::string_view key) const {
  auto it = std::lower_bound(
      entries_.begin(), entries_.end(), key,
      [](const Entry& e, std::string_view k) { return e.last_key < k; });
  return static_cast<size_t>(it - entries_.begin());
}

size_t FilterPartitionIndex::MemoryUsage() const {
  size_t bytes = sizeof(*this) + entries_.capacity() * sizeof(Entry);
  for (const Entry& e : entries_) {
    if (e.last_key.capacity() > 15) bytes += e.last_key.capacity() + 1;
  }
  return bytes;
}

bool FilterPartitionIndex::VerifyPartition(std::string_view stored,
                                           std::string_view* inner) {
  if (stored.size() < kPartitionCrcSize) return false;
  const std::string_view bytes(stored.data(),
                               stored.size() - kPartitionCrcSize);
  if (MaskedCrc(bytes) != DecodeFixed32(stored.data() + bytes.size())) {
    return false;
  }
  *inner = bytes;
  return true;
}

PartitionedFilterReader::PartitionedFilterReader(const FilterPolicy* policy,
                                                 std::string_view filter) {
  if (policy == nullptr || !FilterPartitionIndex::Parse(filter, &index_)) {
    return;
  }
  readers_.reserve(index_.size());
  for (size_t i = 0; i < index_.size(); i++) {
    const FilterPartitionIndex::Entry& e = index_.entry(i);
    std::string_view inner;
    if (FilterPartitionIndex::VerifyPartition(
            filter.substr(e.offset, size_t{e.size} + kPartitionCrcSize),
            &inner)) {
      readers_.emplace_back(policy, inner);
    } else {
      readers_.emplace_back();  // damaged: "may match"
    }
  }
  valid_ = true;
}

bool PartitionedFilterReader::KeyMayMatch(std::string_view key) const {
  if (!valid_) return true;
  const FilterReader* reader = ReaderFor(key);
  return reader != nullptr && reader->KeyMayMatch(key);
}

}  // namespace siftdb
