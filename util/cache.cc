// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// NewShardedLRUCache: up to 16 shards (fewer for a small capacity), chosen
// by the top bits of the key's hash (XXH3-64, which each shard's hash table
// also uses, so a lookup hashes its key once), each with its own mutex,
// hash table and LRU list; their capacities sum to the cache's. An entry
// records its shard, so a release hashes nothing.
//
// Per entry invariants (REQUIRES: the shard's mutex for every field but
// key, value, shard, deleter and charge, which never change):
// - refs counts the cache's own reference (while in_cache) plus one per
//   outstanding Handle. The entry is freed when refs drops to 0, and only
//   then: an entry with handles is never freed.
// - An entry is on the shard's LRU list iff in_cache && refs == 1, i.e.
//   nobody outside holds it; only those entries can be evicted.
// - usage_ is the sum of the charges of the entries in_cache.
// Deleters run after the shard's mutex is released, so a deleter may call
// back into the cache.

#include "util/cache.h"

#include <array>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "util/mutex.h"

// Inlined: the cache hashes short keys (8-byte table numbers, 16-byte block
// ids), where a call into the library would cost as much as the hash.
#define XXH_INLINE_ALL
#include <xxhash.h>

namespace siftdb {
namespace {

// The fields a lookup touches come first (the key it compares, the count
// it bumps, the value it returns, whether it is cached, its list links),
// and keys of up to kInlineKey bytes (the engine's: 8-byte table numbers,
// 16-byte block ids) live in the entry itself, so a hit reads one or two
// adjacent cache lines. Not aligned to a line on purpose: glibc serves an
// over-aligned allocation through memalign, which between the 4 KiB block
// buffers that come and go with the entries cost 300-400 ns per entry more
// than a plain one (a loop of both on the 2-core VM), several percent of a
// scan that reads every block once.
struct Entry : ShardedCache::Handle {
  static constexpr size_t kInlineKey = 16;

  Entry(std::string_view k, void* v, size_t c, ShardedCache::Deleter d,
        uint8_t s)
      : key_size(static_cast<uint32_t>(k.size())),
        value(v),
        shard(s),
        charge(c),
        deleter(d) {
    char* dst = inline_key;
    if (k.size() > kInlineKey) {
      heap_key.reset(new char[k.size()]);
      dst = heap_key.get();
    }
    if (!k.empty()) std::memcpy(dst, k.data(), k.size());
  }

  // The table's key views point into it.
  std::string_view key() const {
    return {key_size > kInlineKey ? heap_key.get() : inline_key, key_size};
  }

  char inline_key[kInlineKey];
  const uint32_t key_size;
  uint32_t refs = 0;
  void* const value;
  bool in_cache = false;
  const uint8_t shard;    // which of its cache's shards holds it
  Entry* prev = nullptr;  // LRU list links, while on the list
  Entry* next = nullptr;
  const size_t charge;
  const ShardedCache::Deleter deleter;
  std::unique_ptr<char[]> heap_key;  // keys longer than kInlineKey
};

// The hash of a cache key: fixed (absl::Hash is seeded per process), so
// which keys share a shard, and so eviction, is the same on every run.
struct KeyHash {
  size_t operator()(std::string_view key) const {
    return XXH3_64bits(key.data(), key.size());
  }
};

// Entries to free once the shard's mutex is released; an insert or a
// release evicts a few at most, so this stays off the heap.
using Garbage = absl::InlinedVector<Entry*, 8>;

class LRUShard {
 public:
  LRUShard() {
    lru_.next = &lru_;
    lru_.prev = &lru_;
  }
  LRUShard(const LRUShard&) = delete;
  LRUShard& operator=(const LRUShard&) = delete;

  ~LRUShard() {
    // Every handle must have been released by now, so every entry left is
    // on the LRU list with only the cache's reference.
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      for (auto& [key, e] : table_) {
        e->in_cache = false;
        if (e->refs == 1) ListRemove(e);
        if (Unref(e)) garbage.push_back(e);
      }
      table_.clear();
    }
    Free(garbage);
  }

  void SetCapacity(size_t capacity) { capacity_ = capacity; }
  void SetIndex(uint8_t index) { index_ = index; }

  // `hash` is always KeyHash()(key).
  ShardedCache::Handle* Insert(std::string_view key, size_t hash, void* value,
                               size_t charge, ShardedCache::Deleter deleter)
      ABSL_LOCKS_EXCLUDED(mu_) {
    Entry* e = new Entry(key, value, charge, deleter, index_);
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      e->refs = 1;  // the returned handle
      if (capacity_ > 0) {
        e->refs++;  // the cache's own
        e->in_cache = true;
        usage_ += charge;
        auto it = table_.find(key, hash);
        if (it != table_.end()) {
          // Re-keyed rather than updated: the view must point into the
          // live entry's key.
          Entry* old = it->second;
          table_.erase(it);
          Detach(old, &garbage);
        }
        table_.emplace(e->key(), e);
      }  // else caching is off: the entry lives only as long as the handle
      EvictOverCapacity(&garbage);
    }
    Free(garbage);
    return e;
  }

  void Prefetch(std::string_view key) ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    table_.prefetch(key);
  }

  ShardedCache::Handle* Lookup(std::string_view key, size_t hash)
      ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    auto it = table_.find(key, hash);
    if (it == table_.end()) return nullptr;
    Ref(it->second);
    return it->second;
  }

  void Release(Entry* e) ABSL_LOCKS_EXCLUDED(mu_) {
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      if (Unref(e)) garbage.push_back(e);
      // A pinned entry may have kept the shard over capacity.
      EvictOverCapacity(&garbage);
    }
    Free(garbage);
  }

  void Erase(std::string_view key, size_t hash) ABSL_LOCKS_EXCLUDED(mu_) {
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      auto it = table_.find(key, hash);
      if (it == table_.end()) return;
      Entry* e = it->second;
      table_.erase(it);
      Detach(e, &garbage);
    }
    Free(garbage);
  }

  void Prune() ABSL_LOCKS_EXCLUDED(mu_) {
    Garbage garbage;
    {
      MutexLock lock(&mu_);
      while (lru_.next != &lru_) {
        Entry* e = lru_.next;
        table_.erase(e->key());
        Detach(e, &garbage);
      }
    }
    Free(garbage);
  }

  size_t TotalCharge() const ABSL_LOCKS_EXCLUDED(mu_) {
    MutexLock lock(&mu_);
    return usage_;
  }

 private:
  // Takes e, already removed from table_, out of the cache and drops the
  // cache's reference; e goes to *garbage when that was the last one.
  void Detach(Entry* e, Garbage* garbage) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (e->refs == 1) ListRemove(e);
    e->in_cache = false;
    usage_ -= e->charge;
    if (Unref(e)) garbage->push_back(e);
  }

  // Evicts least recently used entries until usage fits the capacity or
  // only pinned entries remain.
  void EvictOverCapacity(Garbage* garbage) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    while (usage_ > capacity_ && lru_.next != &lru_) {
      Entry* oldest = lru_.next;
      table_.erase(oldest->key());
      Detach(oldest, garbage);
    }
  }

  void Ref(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    if (e->in_cache && e->refs == 1) ListRemove(e);  // now in use
    e->refs++;
  }

  // True when e must be freed (by the caller, outside mu_).
  bool Unref(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    e->refs--;
    if (e->refs == 0) return true;
    if (e->in_cache && e->refs == 1) ListAppend(e);  // evictable again
    return false;
  }

  // Newest at lru_.prev, oldest at lru_.next.
  void ListAppend(Entry* e) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    e->next = &lru_;
    e->prev = lru_.prev;
    e->prev->next = e;
    e->next->prev = e;
  }

  static void ListRemove(Entry* e) {
    e->next->prev = e->prev;
    e->prev->next = e->next;
    e->next = e->prev = nullptr;
  }

  static void FreeEntry(Entry* e) {
    if (e->deleter != nullptr) e->deleter(e->key(), e->value);
    delete e;
  }

  static void Free(const Garbage& garbage) {
    for (Entry* e : garbage) FreeEntry(e);
  }

  size_t capacity_ = 0;  // set once before use
  uint8_t index_ = 0;    // its place among its cache's shards
  mutable Mutex mu_;
  size_t usage_ ABSL_GUARDED_BY(mu_) = 0;
  // Dummy head of the list of evictable entries.
  Entry lru_ ABSL_GUARDED_BY(mu_){std::string_view(), nullptr, 0, nullptr, 0};
  absl::flat_hash_map<std::string_view, Entry*, KeyHash> table_
      ABSL_GUARDED_BY(mu_);
};

class ShardedLRUCache final : public ShardedCache {
 public:
  // Shards split the capacity exactly (their capacities sum to it), and a
  // small capacity gets fewer shards so that each can hold at least
  // kMinPerShard: a table cache bounded to 6 tables must not keep 16 open
  // (one per shard), nor leave shards that cache nothing.
  explicit ShardedLRUCache(size_t capacity)
      : capacity_(capacity), shard_bits_(ShardBitsFor(capacity)) {
    const size_t shards = size_t{1} << shard_bits_;
    for (size_t i = 0; i < shards; i++) {
      shards_[i].SetCapacity(capacity / shards +
                             (i < capacity % shards ? 1 : 0));
      shards_[i].SetIndex(static_cast<uint8_t>(i));
    }
  }

  Handle* Insert(std::string_view key, void* value, size_t charge,
                 Deleter deleter) override {
    const size_t hash = KeyHash()(key);
    return ShardOf(hash).Insert(key, hash, value, charge, deleter);
  }
  void Prefetch(std::string_view key) override {
    ShardOf(KeyHash()(key)).Prefetch(key);
  }
  Handle* Lookup(std::string_view key) override {
    const size_t hash = KeyHash()(key);
    return ShardOf(hash).Lookup(key, hash);
  }
  void Release(Handle* handle) override {
    Entry* e = static_cast<Entry*>(handle);
    shards_[e->shard].Release(e);
  }
  void* Value(Handle* handle) override {
    return static_cast<Entry*>(handle)->value;
  }
  void Erase(std::string_view key) override {
    const size_t hash = KeyHash()(key);
    ShardOf(hash).Erase(key, hash);
  }
  uint64_t NewId() override {
    return next_id_.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  void Prune() override {
    for (auto& shard : shards_) shard.Prune();
  }
  size_t TotalCharge() const override {
    size_t total = 0;
    for (const auto& shard : shards_) total += shard.TotalCharge();
    return total;
  }
  size_t Capacity() const override { return capacity_; }

 private:
  static constexpr int kMaxShardBits = 4;
  static constexpr int kNumShards = 1 << kMaxShardBits;
  static constexpr size_t kMinPerShard = 2;

  static int ShardBitsFor(size_t capacity) {
    int bits = kMaxShardBits;
    while (bits > 0 && (capacity >> bits) < kMinPerShard) bits--;
    return bits;
  }

  // The top bits pick the shard; the shard's hash table uses the low ones.
  LRUShard& ShardOf(size_t hash) {
    if (shard_bits_ == 0) return shards_[0];
    return shards_[static_cast<uint64_t>(hash) >> (64 - shard_bits_)];
  }

  const size_t capacity_;
  const int shard_bits_;  // shards in use: 1 << shard_bits_
  std::array<LRUShard, kNumShards> shards_;
  std::atomic<uint64_t> next_id_{0};
};

}  // namespace

std::unique_ptr<ShardedCache> NewShardedLRUCache(size_t capacity) {
  return std::make_unique<ShardedLRUCache>(capacity);
}

Cache::Cache(std::unique_ptr<ShardedCache> impl) : impl_(std::move(impl)) {}

Cache::~Cache() = default;

size_t Cache::Capacity() const { return impl_->Capacity(); }

size_t Cache::Usage() const { return impl_->TotalCharge(); }

std::shared_ptr<Cache> NewLRUCache(size_t capacity_bytes) {
  // Not make_shared: the constructor is private to Cache.
  return std::shared_ptr<Cache>(new Cache(NewShardedLRUCache(capacity_bytes)));
}

void ReleaseCacheHandle(void* cache, void* handle) {
  static_cast<ShardedCache*>(cache)->Release(
      static_cast<ShardedCache::Handle*>(handle));
}

}  // namespace siftdb
