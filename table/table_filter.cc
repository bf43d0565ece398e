// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Table's filter: loading it at Open, holding it on the heap or in the
// block cache (TableOptions::cache_filter), pinning it there, and probing
// it. Whatever goes wrong on the way to the filter bytes after Open (an
// evicted filter whose reload fails) makes a probe answer "may match":
// a filter may cost a data-block read, never a false "absent".

#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "table/table.h"
#include "util/coding.h"
#include "util/statistics.h"

namespace siftdb {
Table::LoadedFilter::LoadedFilter(
    std::string_view contents,
    std::shared_ptr<const FilterPolicy> filter_policy,
    std::shared_ptr<std::atomic<uint64_t>> bytes_counter)
    : size(contents.size()),
      policy(std::move(filter_policy)),
      counter(std::move(bytes_counter)) {
  if (size > 0) {
    allocated = (size + 63) / 64 * 64;
    data.reset(
        static_cast<char*>(::operator new[](allocated, std::align_val_t{64})));
    std::memcpy(data.get(), contents.data(), size);
    std::memset(data.get() + size, 0, allocated - size);
  }
  reader = FilterReader(policy.get(), bytes());
  if (counter != nullptr) counter->fetch_add(size, std::memory_order_relaxed);
}

Table::LoadedFilter::~LoadedFilter() {
  if (counter != nullptr) counter->fetch_sub(size, std::memory_order_relaxed);
}

absl::Status Table::LoadFilter(std::string_view name,
                               const BlockHandle& handle) {
  filter_handle_ = handle;
  filter_size_ = handle.size();
  filter_policy_name_.assign(name.data(), name.size());
  // A prefix-only filter: the same policy's encoding, under a tagged name.
  std::string_view policy_name = name;
  if (policy_name.starts_with(kPrefixOnlyFilterTag)) {
    policy_name.remove_prefix(std::strlen(kPrefixOnlyFilterTag));
    filter_whole_keys_ = false;
  }
  filter_prefixes_usable_ =
      options_.prefix_extractor != nullptr &&
      !props_.filter_prefix_extractor.empty() &&
      props_.filter_prefix_extractor == options_.prefix_extractor->Name();

  if (options_.filter_policy != nullptr &&
      policy_name == options_.filter_policy->Name()) {
    filter_policy_ = options_.filter_policy;
    hash_compatible_ = true;
  } else {
    // Readers of filters do not depend on bits per key (the filter bytes
    // describe themselves); pass a valid value when the property is absent.
    const double bits =
        props_.filter_bits_per_key > 0 ? props_.filter_bits_per_key : 10.0;
    auto policy = FilterPolicyFromName(policy_name, bits);
    // An unknown policy leaves filter_policy_ null: every probe is "maybe".
    if (policy.ok()) filter_policy_ = std::move(*policy);
  }

  filter_in_cache_ = options_.cache_filter && options_.block_cache != nullptr &&
                     filter_size_ > 0;
  if (filter_in_cache_) {
    // Read and verified now as every meta block is, and left in the cache
    // for the first probes; a partitioned filter leaves its index only.
    auto cached = CachedFilterHandle();
    if (!cached.ok()) return cached.status();
    const LoadedFilter* f =
        static_cast<const LoadedFilter*>(options_.block_cache->Value(*cached));
    const bool partitioned =
        filter_policy_ != nullptr && IsPartitionedFilter(f->bytes());
    if (partitioned) LoadPartitionedFilter(f->bytes());
    options_.block_cache->Release(*cached);
    if (partitioned) {
      // Partitions are cached one by one, under other keys.
      const CacheKey cache_key = CacheKeyAt(filter_handle_.offset());
      options_.block_cache->Erase(cache_key.view());
    }
    return absl::OkStatus();
  }
  auto loaded = ReadFilter(options_.heap_filter_bytes);
  if (!loaded.ok()) return loaded.status();
  heap_filter_ = std::move(*loaded);
  resident_filter_.store(heap_filter_.get(), std::memory_order_release);
  if (filter_policy_ != nullptr && IsPartitionedFilter(heap_filter_->bytes())) {
    LoadPartitionedFilter(heap_filter_->bytes());
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<Table::LoadedFilter>> Table::ReadFilter(
    const std::shared_ptr<std::atomic<uint64_t>>& counter) const {
  auto contents = ReadMetaBlock(filter_handle_);
  if (!contents.ok()) return contents.status();
  if (contents->stored_type != kNoCompression) {
    return absl::DataLossError(absl::StrFormat(
        "%s: filter block at offset %d: stored with compression type %d "
        "(filters are stored raw)",
        file_name_, filter_handle_.offset(),
        static_cast<int>(contents->stored_type)));
  }
  return std::make_unique<LoadedFilter>(
      std::string_view(contents->owned.get(), contents->size), filter_policy_,
      counter);
}

absl::StatusOr<ShardedCache::Handle*> Table::CachedFilterHandle() const {
  ShardedCache* const cache = options_.block_cache;
  // The filter block's offset never names a data block of this table.
  const CacheKey cache_key = CacheKeyAt(filter_handle_.offset());
  const std::string_view key = cache_key.view();
  ShardedCache::Handle* handle = cache->Lookup(key);
  if (handle != nullptr) {
    Record(options_.statistics, Ticker::kFilterCacheHits);
    return handle;
  }
  Record(options_.statistics, Ticker::kFilterCacheMisses);
  auto loaded = ReadFilter(options_.cached_filter_bytes);
  if (!loaded.ok()) return loaded.status();
  const size_t charge = (*loaded)->allocated + sizeof(LoadedFilter);
  return cache->Insert(key, loaded->release(), charge,
                       [](std::string_view, void* value) {
                         delete static_cast<LoadedFilter*>(value);
                       });
}

void Table::PinFilter() const {
  if (!filter_in_cache_ || filter_resident() || filter_partitioned_) return;
  MutexLock lock(&pin_mu_);
  if (pinned_filter_ != nullptr) return;
  auto handle = CachedFilterHandle();
  if (!handle.ok()) {
    Record(options_.statistics, Ticker::kFilterLoadErrors);
    return;  // probes go on through the cache (and reload)
  }
  pinned_filter_ = *handle;
  resident_filter_.store(
      static_cast<const LoadedFilter*>(options_.block_cache->Value(*handle)),
      std::memory_order_release);
}

void Table::ReleasePinnedFilter() {
  MutexLock lock(&pin_mu_);
  if (pinned_filter_ != nullptr) options_.block_cache->Release(pinned_filter_);
  pinned_filter_ = nullptr;
}

absl::Status Table::CopyFilter(std::string* bytes) const {
  bytes->clear();
  if (const LoadedFilter* f = resident_filter_.load(std::memory_order_acquire);
      f != nullptr) {
    bytes->assign(f->bytes());
    return absl::OkStatus();
  }
  if (!filter_in_cache_) return absl::OkStatus();  // no filter
  if (filter_partitioned_) {  // never cached whole: from the file
    auto loaded = ReadFilter(nullptr);
    if (!loaded.ok()) return loaded.status();
    bytes->assign((*loaded)->bytes());
    return absl::OkStatus();
  }
  auto handle = CachedFilterHandle();
  if (!handle.ok()) return handle.status();
  bytes->assign(
      static_cast<const LoadedFilter*>(options_.block_cache->Value(*handle))
          ->bytes());
  options_.block_cache->Release(*handle);
  return absl::OkStatus();
}

bool Table::UserKeyMayMatchIn(const FilterReader& reader,
                              std::string_view user_key,
                              const uint64_t* user_key_hash) const {
  if (!filter_whole_keys_) {
    // Prefixes only: the key's prefix stands in for the key.
    const SliceTransform* extractor = options_.prefix_extractor.get();
    if (!filter_prefixes_usable_ || !extractor->InDomain(user_key)) {
      return true;
    }
    return reader.KeyMayMatch(extractor->Transform(user_key));
  }
  if (user_key_hash != nullptr && hash_compatible_) {
    return reader.HashMayMatch(*user_key_hash);
  }
  return reader.KeyMayMatch(user_key);
}

template <typename Probe>
bool Table::ProbeFilter(const Probe& probe) const {
  if (const LoadedFilter* f = resident_filter_.load(std::memory_order_acquire);
      f != nullptr) {
    return probe(f->reader);
  }
  if (!filter_in_cache_) return true;
  return ProbeCached(CachedFilterHandle(), probe);
}

bool Table::ProbeCached(
    const absl::StatusOr<ShardedCache::Handle*>& handle,
    absl::FunctionRef<bool(const FilterReader&)> probe) const {
  if (!handle.ok()) {
    Record(options_.statistics, Ticker::kFilterLoadErrors);
    return true;  // no filter to ask: "may match"
  }
  const bool may_match = probe(
      static_cast<const LoadedFilter*>(options_.block_cache->Value(*handle))
          ->reader);
  options_.block_cache->Release(*handle);
  return may_match;
}

bool Table::UserKeyMayMatch(std::string_view user_key,
                            const uint64_t* user_key_hash) const {
  if (filter_policy_name_.empty() || filter_policy_ == nullptr) return true;
  if (filter_partitioned_) {
    return PartitionedUserKeyMayMatch(user_key, user_key_hash);
  }
  return ProbeFilter([&](const FilterReader& reader) {
    return UserKeyMayMatchIn(reader, user_key, user_key_hash);
  });
}

bool Table::PrefixMayMatch(std::string_view prefix) const {
  if (!filter_prefixes_usable_ || filter_policy_ == nullptr) return true;
  Record(options_.statistics, Ticker::kPrefixFilterChecks);
  if (filter_partitioned_ ? PartitionedPrefixMayMatch(prefix)
                          : ProbeFilter([&](const FilterReader& reader) {
                              return reader.KeyMayMatch(prefix);
                            })) {
    return true;
  }
  Record(options_.statistics, Ticker::kPrefixFilterNegatives);
  return false;
}

}  // namespace siftdb
