// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Table's partitioned filters (FilterKind 'P', filter/partitioned_filter.h).
// Heap mode keeps the whole filter block, as for any filter, and probes the
// partition the index names. Cache mode (TableOptions::cache_filter) keeps
// the index on the heap (counted in heap_filter_bytes) and each partition
// as a block-cache entry of its own, read from its sub-range of the filter
// block and verified with its CRC when missing. Anything that goes wrong
// after Open answers "may match" (a failed load counts kFilterLoadErrors).

#include <memory>
#include <string_view>

#include "absl/strings/str_format.h"
#include "table/table.h"
#include "util/coding.h"
#include "util/statistics.h"

namespace siftdb {

void Table::LoadPartitionedFilter(std::string_view contents) {
  filter_partitioned_ = true;
  if (heap_filter_ != nullptr) {
    heap_partitions_ = std::make_unique<PartitionedFilterReader>(
        filter_policy_.get(), heap_filter_->bytes());
    partition_index_bytes_ = heap_partitions_->index().MemoryUsage();
  } else {
    auto index = std::make_unique<FilterPartitionIndex>();
    // An index that does not decode leaves partition_index_ null.
    if (!FilterPartitionIndex::Parse(contents, index.get())) return;
    partition_index_bytes_ = index->MemoryUsage();
    partition_index_ = std::move(index);
  }
  if (options_.heap_filter_bytes != nullptr) {
    options_.heap_filter_bytes->fetch_add(partition_index_bytes_,
                                          std::memory_order_relaxed);
  }
}

absl::StatusOr<ShardedCache::Handle*> Table::CachedPartitionHandle(
    size_t i) const {
  ShardedCache* const cache = options_.block_cache;
  const FilterPartitionIndex::Entry& e = partition_index_->entry(i);
  // Inside the filter block, past its first byte: the whole block's key
  // (its offset) and data blocks' keys never collide with these.
  const uint64_t offset = filter_handle_.offset() + e.offset;
  const CacheKey cache_key = CacheKeyAt(offset + 1);
  const std::string_view key = cache_key.view();
  ShardedCache::Handle* handle = cache->Lookup(key);
  if (handle != nullptr) {
    Record(options_.statistics, Ticker::kFilterCacheHits);
    return handle;
  }
  Record(options_.statistics, Ticker::kFilterCacheMisses);
  const size_t n = size_t{e.size} + kPartitionCrcSize;
  std::unique_ptr<char[]> scratch(new char[n]);
  std::string_view stored;
  absl::Status s = file_->Read(offset, n, &stored, scratch.get());
  if (!s.ok()) return s;
  std::string_view inner;
  if (stored.size() != n ||
      !FilterPartitionIndex::VerifyPartition(stored, &inner)) {
    return absl::DataLossError(absl::StrFormat(
        "%s: filter partition %d at offset %d: %s", file_name_, i, offset,
        stored.size() != n ? "truncated" : "checksum mismatch"));
  }
  auto loaded = std::make_unique<LoadedFilter>(inner, filter_policy_,
                                               options_.cached_filter_bytes);
  const size_t charge = loaded->allocated + sizeof(LoadedFilter);
  return cache->Insert(key, loaded.release(), charge,
                       [](std::string_view, void* value) {
                         delete static_cast<LoadedFilter*>(value);
                       });
}

template <typename Probe>
bool Table::ProbePartition(std::string_view locate_key,
                           const Probe& probe) const {
  if (heap_partitions_ != nullptr) {
    if (!heap_partitions_->valid()) return true;
    const FilterReader* reader = heap_partitions_->ReaderFor(locate_key);
    return reader != nullptr && probe(*reader);
  }
  if (partition_index_ == nullptr || options_.block_cache == nullptr) {
    return true;
  }
  const size_t i = partition_index_->Find(locate_key);
  if (i == partition_index_->size()) return false;  // past the last key
  return ProbeCached(CachedPartitionHandle(i), probe);
}

bool Table::PartitionedUserKeyMayMatch(std::string_view user_key,
                                       const uint64_t* user_key_hash) const {
  if (!filter_whole_keys_) {
    // Prefixes only: the key's prefix, in the prefix's partition.
    const SliceTransform* extractor = options_.prefix_extractor.get();
    if (!filter_prefixes_usable_ || !extractor->InDomain(user_key)) {
      return true;
    }
    return PartitionedPrefixMayMatch(extractor->Transform(user_key));
  }
  return ProbePartition(user_key, [&](const FilterReader& reader) {
    return UserKeyMayMatchIn(reader, user_key, user_key_hash);
  });
}

bool Table::PartitionedPrefixMayMatch(std::string_view prefix) const {
  return ProbePartition(prefix, [&](const FilterReader& reader) {
    return reader.KeyMayMatch(prefix);
  });
}

}  // namespace siftdb
