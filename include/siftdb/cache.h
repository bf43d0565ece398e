// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Cache: a block cache that several DBs of one process can share
// (Options::block_cache), so that a memory budget holds for all of them
// together. It keeps uncompressed data blocks, evicting the least recently
// used once the charges of the blocks it holds pass its capacity.
//
// Thread safety: every method is safe to call concurrently, and the cache
// may serve any number of DBs at once.
// Ownership: shared. Each DB opened with the cache holds a reference
// until it is destroyed; the blocks go with the last reference.
// Keys: each table a DB opens takes a fresh id from the cache and prefixes
// its block keys with it, so blocks of different tables and DBs never
// collide.
// Capacity: a block in use by a read stays in the cache while it is read,
// so usage may pass the capacity by the blocks pinned at that moment.

#ifndef SIFTDB_INCLUDE_CACHE_H_
#define SIFTDB_INCLUDE_CACHE_H_

#include <cstddef>
#include <memory>

#include "siftdb/export.h"

namespace siftdb {

class ShardedCache;  // the implementation (internal)
struct CacheAccess;  // the engine's way in (internal)

class SIFTDB_EXPORT Cache {
 public:
  Cache(const Cache&) = delete;
  Cache& operator=(const Cache&) = delete;
  ~Cache();

  // The capacity in bytes given to NewLRUCache.
  size_t Capacity() const;
  // Bytes (the charges of the blocks) held now.
  size_t Usage() const;

 private:
  friend struct CacheAccess;
  friend SIFTDB_EXPORT std::shared_ptr<Cache> NewLRUCache(size_t);
  explicit Cache(std::unique_ptr<ShardedCache> impl);

  const std::unique_ptr<ShardedCache> impl_;
};

// A least-recently-used cache of capacity_bytes (split into 16 shards by
// key hash, each holding 1/16 of the capacity). 0 is a valid capacity:
// nothing stays cached beyond its use.
SIFTDB_EXPORT std::shared_ptr<Cache> NewLRUCache(size_t capacity_bytes);

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_CACHE_H_
