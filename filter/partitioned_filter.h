// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Partitioned table filters (FilterKind 'P', docs/filter_format.md section
// 7): a large table's filter cut into partitions over consecutive key
// ranges, each a complete filter of the inner policy with its own CRC, and
// a small index of (last key, offset, size) per partition, so that a
// lookup needs one partition only. Keys are ordered bytewise.
//
// Serialized:
//   partition 0 | crc 0 | ... | partition P-1 | crc P-1 |
//   index entries | index_size (u32) | index crc (u32) | trailer (8)
// where crc i is the masked crc32c of partition i's bytes, an index entry
// is offset (u32) | size (u32) | key length (u32) | last key bytes, the
// index crc is the masked crc32c of the index entries, and the trailer is
// the common one with kind 'P' and param = P (k = 0).
//
// Contract: no false negatives. A key k is looked up in the first
// partition whose last key >= k; past the last partition no added key (nor
// a prefix of one) can match, so the answer is "no". Anything inconsistent
// (sizes, offsets, order, CRCs) makes the reader answer "may match".
//
// Thread safety: the builder is used by one thread at a time; the index and
// reader are immutable after construction and may be shared.
// Ownership: the builder borrows its policy; PartitionedFilterReader
// borrows the policy and the filter bytes (both must outlive it); a
// FilterPartitionIndex owns its copy of the index.

#ifndef SIFTDB_FILTER_PARTITIONED_FILTER_H_
#define SIFTDB_FILTER_PARTITIONED_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "filter/filter_reader.h"
#include "siftdb/filter_policy.h"

namespace siftdb {

// Persisted (never change).
inline constexpr uint8_t kPartitionedFilterKind = 0x50;  // 'P'
inline constexpr size_t kPartitionCrcSize = 4;
inline constexpr size_t kPartitionEntryFixedSize = 12;
// index_size (4) + index crc (4) + common trailer (8).
inline constexpr size_t kPartitionedFooterSize = 16;

// True when `filter`'s trailer names kind 'P' (it may still be invalid).
bool IsPartitionedFilter(std::string_view filter);

// Builds one table's filter from its user keys, given in strictly
// increasing bytewise order, each once. Cuts a partition once the current
// one holds about partition_bytes of filter; a prefix is added to every
// partition holding a key with that prefix. When one partition suffices,
// Finish writes the inner policy's ordinary filter instead.
class PartitionedFilterBuilder {
 public:
  PartitionedFilterBuilder(const FilterPolicy* policy, size_t partition_bytes);
  PartitionedFilterBuilder(const PartitionedFilterBuilder&) = delete;
  PartitionedFilterBuilder& operator=(const PartitionedFilterBuilder&) = delete;

  // Adds a table key's filter entries: the key itself when add_whole_key,
  // and `prefix` (which must be a bytewise prefix of user_key, from a
  // prefix-closed extractor) when non-null.
  void Add(std::string_view user_key, bool add_whole_key,
           const std::string_view* prefix);
  // Entries (keys and prefixes) added so far.
  size_t NumAdded() const { return num_added_; }
  // Partitions cut so far, plus the open one.
  size_t NumPartitions() const { return entries_.size() + 1; }
  // Appends the filter to *dst.
  void Finish(std::string* dst);

 private:
  void CutPartition();

  const FilterPolicy* const policy_;
  const size_t keys_per_partition_;  // entries per partition, >= 1
  std::unique_ptr<FilterBitsBuilder> inner_;
  std::string parts_;  // finished partitions with their CRCs
  struct Entry {
    std::string last_key;
    uint32_t offset = 0;
    uint32_t size = 0;
  };
  std::vector<Entry> entries_;  // finished partitions
  std::string last_key_;        // of the open partition
  std::string last_prefix_;     // added to the open partition
  bool have_last_prefix_ = false;
  size_t open_entries_ = 0;  // added to the open partition
  size_t num_added_ = 0;
};

// The decoded index of a 'P' filter (owns a copy of the last keys).
class FilterPartitionIndex {
 public:
  struct Entry {
    std::string last_key;
    uint32_t offset = 0;  // from the start of the filter block
    uint32_t size = 0;    // of the inner filter, without its CRC
  };
  // Decodes and checks the index of `filter` (the whole block): false when
  // it is not a consistent 'P' filter (partition CRCs are not checked).
  static bool Parse(std::string_view filter, FilterPartitionIndex* out);
  size_t size() const { return entries_.size(); }
  const Entry& entry(size_t i) const { return entries_[i]; }
  // The first partition whose last key >= key; size() when none.
  size_t Find(std::string_view key) const;
  // Approximate heap bytes held.
  size_t MemoryUsage() const;

  // Checks a partition read alone: `stored` is its size + 4 bytes (inner
  // filter then masked crc32c). Sets *inner and returns true when they
  // agree.
  static bool VerifyPartition(std::string_view stored, std::string_view* inner);

 private:
  std::vector<Entry> entries_;
};

// Probes a whole 'P' filter held in memory: the index and one FilterReader
// per partition (a partition whose CRC fails answers "may match").
class PartitionedFilterReader {
 public:
  PartitionedFilterReader(const FilterPolicy* policy, std::string_view filter);
  bool valid() const { return valid_; }
  const FilterPartitionIndex& index() const { return index_; }
  // The partition reader for `key`, or null when no partition can hold it
  // (the key is past the last partition). Only when valid().
  const FilterReader* ReaderFor(std::string_view key) const {
    const size_t i = index_.Find(key);
    return i < readers_.size() ? &readers_[i] : nullptr;
  }
  // False only when `key` (a whole key or prefix) was certainly not added.
  bool KeyMayMatch(std::string_view key) const;

 private:
  bool valid_ = false;
  FilterPartitionIndex index_;
  std::vector<FilterReader> readers_;
};

}  // namespace siftdb

#endif  // SIFTDB_FILTER_PARTITIONED_FILTER_H_
