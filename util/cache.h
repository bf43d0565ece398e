// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ShardedCache: a sharded LRU cache with a capacity in bytes ("charge"), used
// for data blocks (block cache) and open tables (table cache). The public
// siftdb::Cache (include/siftdb/cache.h) wraps one; CacheAccess reaches it.
//
// Thread safety: every method is safe to call concurrently.
// Ownership: Insert() takes ownership of `value`; the deleter runs once the
// entry is both evicted/erased and no longer referenced by any Handle.
// Every Handle returned by Insert or Lookup must be given back with
// Release(). An entry whose handles are held is never freed, so the cache
// may transiently exceed its capacity by the charge of pinned entries.

#ifndef SIFTDB_UTIL_CACHE_H_
#define SIFTDB_UTIL_CACHE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string_view>

#include "siftdb/cache.h"

namespace siftdb {

class ShardedCache {
 public:
  // Opaque reference to an entry.
  struct Handle {};
  using Deleter = void (*)(std::string_view key, void* value);

  ShardedCache() = default;
  ShardedCache(const ShardedCache&) = delete;
  ShardedCache& operator=(const ShardedCache&) = delete;
  virtual ~ShardedCache() = default;

  // Inserts key -> value, replacing any entry with the same key, and
  // returns a handle to the new entry.
  virtual Handle* Insert(std::string_view key, void* value, size_t charge,
                         Deleter deleter) = 0;
  // A handle to the entry for key, or nullptr.
  virtual Handle* Lookup(std::string_view key) = 0;
  // Starts loading what Lookup(key) will read first into the CPU cache (a
  // hint: no effect on contents), so a batch of lookups overlaps its misses.
  virtual void Prefetch(std::string_view key) { (void)key; }
  virtual void Release(Handle* handle) = 0;
  // REQUIRES: handle not yet released.
  virtual void* Value(Handle* handle) = 0;
  virtual void Erase(std::string_view key) = 0;
  // A fresh id; clients sharing one cache prefix their keys with it.
  virtual uint64_t NewId() = 0;
  // Drops every entry not currently in use.
  virtual void Prune() = 0;
  // Sum of the charges of the entries currently held.
  virtual size_t TotalCharge() const = 0;
  virtual size_t Capacity() const = 0;
};

// A sharded LRU cache holding at most `capacity` bytes of charge.
std::unique_ptr<ShardedCache> NewShardedLRUCache(size_t capacity);

// An Iterator cleanup (Iterator::CleanupFunction): releases `handle`, a
// ShardedCache::Handle*, to `cache`, a ShardedCache*.
void ReleaseCacheHandle(void* cache, void* handle);

// The ShardedCache behind a public Cache (never null; lives as long as it).
struct CacheAccess {
  static ShardedCache* Get(const Cache& cache) { return cache.impl_.get(); }
};

}  // namespace siftdb

#endif  // SIFTDB_UTIL_CACHE_H_
