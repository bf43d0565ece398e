// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// TableCache: keeps recently used tables open (file handle, index, filter),
// bounded by Options.max_open_files, and routes reads to them.
//
// Thread safety: every method is safe to call concurrently (the underlying
// cache is internally synchronized).

#ifndef SIFTDB_DB_TABLE_CACHE_H_
#define SIFTDB_DB_TABLE_CACHE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "siftdb/env.h"
#include "siftdb/iterator.h"
#include "siftdb/options.h"
#include "table/table.h"
#include "table/table_options.h"
#include "util/cache.h"

namespace siftdb {

class TableCache {
 public:
  // The level argument of the methods below: the level the caller found
  // the table in, or kUnknownLevel.
  static constexpr int kUnknownLevel = -1;

  // table_options is copied; its pointers must outlive the cache. Without
  // table_options' heap_filter_bytes and cached_filter_bytes counters the
  // cache makes its own. With pin_level0_filters (and cache_filter), a
  // table reached at level 0 has its filter pinned in the block cache
  // (Table::PinFilter) until it closes, even after it moves down unchanged.
  TableCache(std::string dbname, Env* env, const TableOptions& table_options,
             int entries, bool pin_level0_filters = false);
  TableCache(const TableCache&) = delete;
  TableCache& operator=(const TableCache&) = delete;
  ~TableCache() = default;

  // An iterator over table `file_number` (of `file_size` bytes). The table
  // stays open while the iterator lives. When table_out is non-null it is
  // set to the table (valid while the iterator lives), or to null when the
  // table could not be opened (the iterator then reports why).
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options,
                                        uint64_t file_number,
                                        uint64_t file_size,
                                        const Table** table_out = nullptr,
                                        int level = kUnknownLevel);

  // As NewIterator, but the table's own iterator (index iterator, block
  // opener) is built only when the result is first positioned; the table
  // is opened, and stays open, from now on. For a merge whose filter probes
  // leave most children unpositioned (a seek with level-0 tables).
  std::unique_ptr<Iterator> NewLazyIterator(const ReadOptions& options,
                                            uint64_t file_number,
                                            uint64_t file_size,
                                            const Table** table_out = nullptr,
                                            int level = kUnknownLevel);

  // Point lookup in one table; see Table::InternalGet.
  absl::Status Get(
      const ReadOptions& options, uint64_t file_number, uint64_t file_size,
      std::string_view internal_key, const uint64_t* user_key_hash,
      absl::FunctionRef<void(std::string_view, std::string_view)> found,
      int level = kUnknownLevel, Table::FilterOutcome* outcome = nullptr);

  // Runs fn with the open table (opening it when needed); the table is
  // pinned for the duration of the call.
  absl::Status WithTable(uint64_t file_number, uint64_t file_size,
                         absl::FunctionRef<void(const Table&)> fn,
                         int level = kUnknownLevel);

  // The open table (opened when needed), pinned until Unpin(handle): for
  // a caller that works on several tables at once.
  absl::StatusOr<ShardedCache::Handle*> Pin(uint64_t file_number,
                                            uint64_t file_size,
                                            int level = kUnknownLevel) {
    return FindTable(file_number, file_size, level);
  }
  // Starts loading the cache entry Pin(file_number, ...) reads first.
  void PrefetchTable(uint64_t file_number);
  const Table& TableOf(ShardedCache::Handle* handle) const;
  void Unpin(ShardedCache::Handle* handle) { cache_->Release(handle); }

  // Drops the table from the cache (after it was deleted).
  void Evict(uint64_t file_number);

  // Bytes of the filters held on the heap by the tables open now: those in
  // this cache and those evicted but still pinned by an iterator (a
  // table's bytes count until it closes). Filters kept in the block cache
  // (TableOptions::cache_filter) are not among them: see
  // CachedFilterMemoryUsage.
  uint64_t FilterMemoryUsage() const {
    return table_options_.heap_filter_bytes->load(std::memory_order_relaxed);
  }
  // Bytes of the index blocks and their search fingerprints held by the
  // tables open now (counted as FilterMemoryUsage is).
  uint64_t IndexMemoryUsage() const {
    return table_options_.heap_index_bytes->load(std::memory_order_relaxed);
  }
  // Bytes of the filters of these tables in the block cache now (pinned or
  // not), part of the block cache's usage.
  uint64_t CachedFilterMemoryUsage() const {
    return table_options_.cached_filter_bytes->load(std::memory_order_relaxed);
  }

  // Tables open now (in the cache, pinned or not) and the most it keeps.
  size_t OpenTables() const { return cache_->TotalCharge(); }
  int capacity() const { return entries_; }

  // Where the tables record their counters (may be null).
  Statistics* statistics() const { return table_options_.statistics; }

 private:
  // An iterator make(table) builds over the open table, which stays open
  // (pinned) while the iterator lives; NewIterator's contract otherwise.
  std::unique_ptr<Iterator> NewPinningIterator(
      uint64_t file_number, uint64_t file_size, const Table** table_out,
      int level,
      absl::FunctionRef<std::unique_ptr<Iterator>(const Table*)> make);
  absl::StatusOr<ShardedCache::Handle*> FindTable(uint64_t file_number,
                                                  uint64_t file_size,
                                                  int level);

  const std::string dbname_;
  Env* const env_;
  // With both filter-byte counters set.
  const TableOptions table_options_;
  const int entries_;
  const bool pin_level0_filters_;
  std::unique_ptr<ShardedCache> cache_;
};

}  // namespace siftdb

#endif  // SIFTDB_DB_TABLE_CACHE_H_
