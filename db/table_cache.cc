// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/table_cache.h"

#include <atomic>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "util/coding.h"

namespace siftdb {
namespace {

void DeleteTable(std::string_view /*key*/, void* value) {
  delete static_cast<Table*>(value);
}

Table* TableIn(ShardedCache* cache, ShardedCache::Handle* handle) {
  return static_cast<Table*>(cache->Value(handle));
}

TableOptions WithMemoryCounters(TableOptions options) {
  if (options.heap_filter_bytes == nullptr) {
    options.heap_filter_bytes = std::make_shared<std::atomic<uint64_t>>(0);
  }
  if (options.cached_filter_bytes == nullptr) {
    options.cached_filter_bytes = std::make_shared<std::atomic<uint64_t>>(0);
  }
  if (options.heap_index_bytes == nullptr) {
    options.heap_index_bytes = std::make_shared<std::atomic<uint64_t>>(0);
  }
  return options;
}

std::string CacheKey(uint64_t file_number) {
  std::string key;
  PutFixed64(&key, file_number);
  return key;
}

}  // namespace

TableCache::TableCache(std::string dbname, Env* env,
                       const TableOptions& table_options, int entries,
                       bool pin_level0_filters)
    : dbname_(std::move(dbname)),
      env_(env),
      table_options_(WithMemoryCounters(table_options)),
      entries_(entries),
      pin_level0_filters_(pin_level0_filters),
      // Each open table is charged 1: capacity counts tables.
      cache_(NewShardedLRUCache(entries)) {}

absl::StatusOr<ShardedCache::Handle*> TableCache::FindTable(
    uint64_t file_number, uint64_t file_size, int level) {
  const std::string key = CacheKey(file_number);
  ShardedCache::Handle* handle = cache_->Lookup(key);
  Statistics* stats = table_options_.statistics;
  const bool pin = level == 0 && pin_level0_filters_;
  if (handle != nullptr) {
    Record(stats, Ticker::kTableCacheHits);
    if (pin) TableIn(cache_.get(), handle)->PinFilter();
    return handle;
  }
  Record(stats, Ticker::kTableCacheMisses);

  const std::string fname = TableFileName(dbname_, file_number);
  auto file = env_->NewRandomAccessFile(fname);
  if (!file.ok()) {
    // A table the Version names is part of the DB: its absence is lost
    // data, never "key not found" (NotFound from Get means exactly that).
    if (absl::IsNotFound(file.status())) {
      return absl::DataLossError(
          absl::StrFormat("table %s named by the MANIFEST is missing: %s",
                          fname, file.status().message()));
    }
    return file.status();
  }
  auto table = Table::Open(table_options_, fname, std::move(*file), file_size);
  // Errors are not cached: a transient failure may clear on retry.
  if (!table.ok()) return table.status();
  Record(stats, Ticker::kTableOpenFilterBytes, (*table)->filter_size());
  if (pin) (*table)->PinFilter();
  return cache_->Insert(key, table->release(), 1, &DeleteTable);
}

namespace {

// Builds its table's iterator at the first SeekToFirst, SeekToLast or
// Seek; until then it is not Valid() and its status is OK.
class LazyTableIterator final : public Iterator {
 public:
  LazyTableIterator(const Table* table, const ReadOptions& options)
      : table_(table), options_(options) {}

  bool Valid() const override { return inner_ != nullptr && inner_->Valid(); }
  void SeekToFirst() override { Inner()->SeekToFirst(); }
  void SeekToLast() override { Inner()->SeekToLast(); }
  void Seek(std::string_view target) override { Inner()->Seek(target); }
  // Next and Prev REQUIRE Valid(), so the inner iterator exists.
  void Next() override { inner_->Next(); }
  void Prev() override { inner_->Prev(); }
  std::string_view key() const override { return inner_->key(); }
  std::string_view value() const override { return inner_->value(); }
  absl::Status status() const override {
    return inner_ != nullptr ? inner_->status() : absl::OkStatus();
  }

 private:
  Iterator* Inner() {
    if (inner_ == nullptr) inner_ = table_->NewIterator(options_);
    return inner_.get();
  }

  const Table* const table_;  // pinned by this iterator's cleanup
  const ReadOptions options_;
  // Destroyed before the cleanup (in ~Iterator) releases the table.
  std::unique_ptr<Iterator> inner_;
};

}  // namespace

std::unique_ptr<Iterator> TableCache::NewIterator(const ReadOptions& options,
                                                  uint64_t file_number,
                                                  uint64_t file_size,
                                                  const Table** table_out,
                                                  int level) {
  return NewPinningIterator(
      file_number, file_size, table_out, level,
      [&options](const Table* table) { return table->NewIterator(options); });
}

std::unique_ptr<Iterator> TableCache::NewLazyIterator(
    const ReadOptions& options, uint64_t file_number, uint64_t file_size,
    const Table** table_out, int level) {
  return NewPinningIterator(
      file_number, file_size, table_out, level,
      [&options](const Table* table) -> std::unique_ptr<Iterator> {
        return std::make_unique<LazyTableIterator>(table, options);
      });
}

std::unique_ptr<Iterator> TableCache::NewPinningIterator(
    uint64_t file_number, uint64_t file_size, const Table** table_out,
    int level,
    absl::FunctionRef<std::unique_ptr<Iterator>(const Table*)> make) {
  if (table_out != nullptr) *table_out = nullptr;
  auto handle = FindTable(file_number, file_size, level);
  if (!handle.ok()) return NewErrorIterator(handle.status());
  const Table* table = TableIn(cache_.get(), *handle);
  if (table_out != nullptr) *table_out = table;
  std::unique_ptr<Iterator> iter = make(table);
  iter->RegisterCleanup(&ReleaseCacheHandle, cache_.get(), *handle);
  return iter;
}

absl::Status TableCache::Get(
    const ReadOptions& options, uint64_t file_number, uint64_t file_size,
    std::string_view internal_key, const uint64_t* user_key_hash,
    absl::FunctionRef<void(std::string_view, std::string_view)> found,
    int level, Table::FilterOutcome* outcome) {
  if (outcome != nullptr) *outcome = Table::FilterOutcome::kNotChecked;
  auto handle = FindTable(file_number, file_size, level);
  if (!handle.ok()) return handle.status();
  Table* table = TableIn(cache_.get(), *handle);
  absl::Status s =
      table->InternalGet(options, internal_key, user_key_hash, found, outcome);
  cache_->Release(*handle);
  return s;
}

absl::Status TableCache::WithTable(uint64_t file_number, uint64_t file_size,
                                   absl::FunctionRef<void(const Table&)> fn,
                                   int level) {
  auto handle = FindTable(file_number, file_size, level);
  if (!handle.ok()) return handle.status();
  fn(*TableIn(cache_.get(), *handle));
  cache_->Release(*handle);
  return absl::OkStatus();
}

const Table& TableCache::TableOf(ShardedCache::Handle* handle) const {
  return *TableIn(cache_.get(), handle);
}

void TableCache::PrefetchTable(uint64_t file_number) {
  cache_->Prefetch(CacheKey(file_number));
}

void TableCache::Evict(uint64_t file_number) {
  cache_->Erase(CacheKey(file_number));
}

}  // namespace siftdb
