// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/cache.h"

#include <cstdint>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "util/mutex.h"
#include "util/random.h"

namespace siftdb {
namespace cache_test {

// Values are integers smuggled in the pointer; the deleter records every
// (key, value) it is called with.
void* V(intptr_t v) { return reinterpret_cast<void*>(v); }
intptr_t I(void* v) { return reinterpret_cast<intptr_t>(v); }

Mutex deleted_mu;
std::vector<std::pair<std::string, intptr_t>>* deleted
    ABSL_GUARDED_BY(deleted_mu) = nullptr;

void RecordDeletion(std::string_view key, void* value) {
  MutexLock lock(&deleted_mu);
  deleted->emplace_back(std::string(key), I(value));
}

class CacheTest : public ::testing::Test {
 protected:
  static constexpr size_t kCapacity = 1000;

  CacheTest() : cache_(NewShardedLRUCache(kCapacity)) {
    MutexLock lock(&deleted_mu);
    deleted = &deletions_;
  }
  ~CacheTest() override {
    cache_.reset();
    MutexLock lock(&deleted_mu);
    deleted = nullptr;
  }

  static std::string Key(int k) { return "key" + std::to_string(k); }

  // The value for key, or -1 on a miss.
  intptr_t Lookup(int key) {
    ShardedCache::Handle* h = cache_->Lookup(Key(key));
    if (h == nullptr) return -1;
    const intptr_t v = I(cache_->Value(h));
    cache_->Release(h);
    return v;
  }
  void Insert(int key, intptr_t value, size_t charge = 1) {
    cache_->Release(cache_->Insert(Key(key), V(value), charge, RecordDeletion));
  }
  ShardedCache::Handle* InsertAndKeep(int key, intptr_t value,
                                      size_t charge = 1) {
    return cache_->Insert(Key(key), V(value), charge, RecordDeletion);
  }
  size_t Deletions() {
    MutexLock lock(&deleted_mu);
    return deletions_.size();
  }
  std::vector<std::pair<std::string, intptr_t>> DeletionsCopy() {
    MutexLock lock(&deleted_mu);
    return deletions_;
  }

  std::vector<std::pair<std::string, intptr_t>> deletions_;
  std::unique_ptr<ShardedCache> cache_;
};

TEST_F(CacheTest, HitAndMiss) {
  EXPECT_EQ(-1, Lookup(100));
  Insert(100, 101);
  EXPECT_EQ(101, Lookup(100));
  EXPECT_EQ(-1, Lookup(200));
  EXPECT_EQ(-1, Lookup(300));

  Insert(200, 201);
  EXPECT_EQ(101, Lookup(100));
  EXPECT_EQ(201, Lookup(200));
  EXPECT_EQ(-1, Lookup(300));

  Insert(100, 102);  // replaces
  EXPECT_EQ(102, Lookup(100));
  EXPECT_EQ(201, Lookup(200));
  ASSERT_EQ(1u, Deletions());
  EXPECT_EQ(Key(100), DeletionsCopy()[0].first);
  EXPECT_EQ(101, DeletionsCopy()[0].second);
}

TEST_F(CacheTest, Erase) {
  cache_->Erase(Key(200));  // absent: no-op
  EXPECT_EQ(0u, Deletions());
  Insert(100, 101);
  Insert(200, 201);
  cache_->Erase(Key(100));
  EXPECT_EQ(-1, Lookup(100));
  EXPECT_EQ(201, Lookup(200));
  ASSERT_EQ(1u, Deletions());
  cache_->Erase(Key(100));
  EXPECT_EQ(1u, Deletions());
}

TEST_F(CacheTest, EntriesArePinnedByHandles) {
  ShardedCache::Handle* h1 = cache_->Lookup(Key(100));
  EXPECT_EQ(nullptr, h1);
  Insert(100, 101);
  h1 = cache_->Lookup(Key(100));
  ASSERT_NE(nullptr, h1);
  EXPECT_EQ(101, I(cache_->Value(h1)));

  Insert(100, 102);  // replaced while h1 is held
  ShardedCache::Handle* h2 = cache_->Lookup(Key(100));
  EXPECT_EQ(102, I(cache_->Value(h2)));
  EXPECT_EQ(0u, Deletions());
  EXPECT_EQ(101, I(cache_->Value(h1)));  // still valid

  cache_->Release(h1);
  ASSERT_EQ(1u, Deletions());
  EXPECT_EQ(101, DeletionsCopy()[0].second);

  cache_->Erase(Key(100));  // erased while h2 is held
  EXPECT_EQ(-1, Lookup(100));
  EXPECT_EQ(1u, Deletions());
  EXPECT_EQ(102, I(cache_->Value(h2)));
  cache_->Release(h2);
  ASSERT_EQ(2u, Deletions());
  EXPECT_EQ(102, DeletionsCopy()[1].second);
}

// Over many inserts, a frequently used entry stays and an unused one goes.
TEST_F(CacheTest, EvictionPolicy) {
  Insert(100, 101);
  Insert(200, 201);
  Insert(300, 301);
  ShardedCache::Handle* pinned = cache_->Lookup(Key(300));
  // Twice the capacity: each shard evicts on its own, so 200's shard must
  // see more inserts than it holds, whichever keys the hash sends there.
  for (int i = 0; i < 2 * static_cast<int>(kCapacity); i++) {
    Insert(1000 + i, 2000 + i);
    EXPECT_EQ(2000 + i, Lookup(1000 + i));
    EXPECT_EQ(101, Lookup(100));
  }
  EXPECT_EQ(101, Lookup(100));
  EXPECT_EQ(-1, Lookup(200));
  EXPECT_EQ(301, Lookup(300));  // pinned survives
  cache_->Release(pinned);
}

TEST_F(CacheTest, UseExceedingCacheSize) {
  // Pinned entries may exceed the capacity; nothing pinned is freed.
  std::vector<ShardedCache::Handle*> handles;
  for (int i = 0; i < 100; i++) {
    handles.push_back(InsertAndKeep(1000 + i, 2000 + i, 100));
  }
  for (int i = 0; i < 100; i++) EXPECT_EQ(2000 + i, Lookup(1000 + i));
  EXPECT_EQ(0u, Deletions());
  EXPECT_GE(cache_->TotalCharge(), 100u * 100);
  for (ShardedCache::Handle* h : handles) cache_->Release(h);
  // Once released, the shards shrink back under their capacity.
  EXPECT_LE(cache_->TotalCharge(), kCapacity + 16 * 100);
}

TEST_F(CacheTest, HeavyEntriesBoundTotalCharge) {
  // Charges 1 and 10 alternate; the total weight stays near capacity.
  const int kLight = 1, kHeavy = 10;
  int added = 0, index = 0;
  while (added < 2 * static_cast<int>(kCapacity)) {
    const int weight = (index & 1) ? kLight : kHeavy;
    Insert(index, 1000 + index, weight);
    added += weight;
    index++;
  }
  size_t cached = 0;
  for (int i = 0; i < index; i++) {
    const int weight = (i & 1) ? kLight : kHeavy;
    const intptr_t r = Lookup(i);
    if (r >= 0) {
      cached += weight;
      EXPECT_EQ(1000 + i, r);
    }
  }
  EXPECT_LE(cached, kCapacity + kCapacity / 10);
  EXPECT_EQ(cached, cache_->TotalCharge());
}

// Finds keys sharing key 0's shard by probing fresh caches: with one entry
// filling a shard, inserting another evicts it exactly when they share it.
std::vector<int> KeysInShardOfZero(int count) {
  std::vector<int> keys = {0};
  for (int candidate = 1; static_cast<int>(keys.size()) < count; candidate++) {
    auto cache = NewShardedLRUCache(16 * 10);  // 10 per shard
    const std::string k0 = "key0", kc = "key" + std::to_string(candidate);
    cache->Release(cache->Insert(k0, nullptr, 10, nullptr));
    cache->Release(cache->Insert(kc, nullptr, 10, nullptr));
    ShardedCache::Handle* h = cache->Lookup(k0);
    if (h == nullptr) {
      keys.push_back(candidate);
    } else {
      cache->Release(h);
    }
  }
  return keys;
}

TEST_F(CacheTest, EvictsLeastRecentlyUsedFirst) {
  const std::vector<int> k = KeysInShardOfZero(5);
  cache_ = NewShardedLRUCache(16 * 3);  // 3 per shard
  Insert(k[0], 0);
  Insert(k[1], 1);
  Insert(k[2], 2);
  EXPECT_EQ(0, Lookup(k[0]));  // k[0] is now the most recent
  Insert(k[3], 3);             // evicts k[1], the least recent
  EXPECT_EQ(-1, Lookup(k[1]));
  EXPECT_EQ(0, Lookup(k[0]));
  EXPECT_EQ(2, Lookup(k[2]));
  EXPECT_EQ(3, Lookup(k[3]));
  Insert(k[4], 4);  // now k[0] is the least recent
  EXPECT_EQ(-1, Lookup(k[0]));
  EXPECT_EQ(2, Lookup(k[2]));
}

TEST_F(CacheTest, PruneDropsAllButPinned) {
  Insert(1, 100);
  Insert(2, 200);
  ShardedCache::Handle* h = cache_->Lookup(Key(1));
  ASSERT_NE(nullptr, h);
  cache_->Prune();
  cache_->Release(h);
  EXPECT_EQ(100, Lookup(1));
  EXPECT_EQ(-1, Lookup(2));
  EXPECT_EQ(1u, cache_->TotalCharge());
}

// The shards' capacities sum to the cache's: a table cache bounded to 6
// tables used to keep up to 16 open (one per shard, each rounded up).
TEST_F(CacheTest, CapacityIsExactForSmallAndOddSizes) {
  for (size_t capacity : {1, 2, 3, 6, 17, 31, 100, 1000}) {
    auto cache = NewShardedLRUCache(capacity);
    for (size_t i = 0; i < 20 * capacity; i++) {
      cache->Release(
          cache->Insert("key" + std::to_string(i), nullptr, 1, nullptr));
    }
    EXPECT_LE(cache->TotalCharge(), capacity) << capacity;
    // And every shard caches: the cache stays close to full.
    EXPECT_GE(cache->TotalCharge(), capacity * 3 / 4) << capacity;
  }
}

TEST_F(CacheTest, ZeroCapacityCachesNothing) {
  cache_ = NewShardedLRUCache(0);
  ShardedCache::Handle* h = InsertAndKeep(1, 100);
  EXPECT_EQ(100, I(cache_->Value(h)));
  EXPECT_EQ(-1, Lookup(1));
  EXPECT_EQ(0u, Deletions());
  cache_->Release(h);
  EXPECT_EQ(1u, Deletions());
}

TEST_F(CacheTest, NewIdIsUnique) {
  const uint64_t a = cache_->NewId();
  const uint64_t b = cache_->NewId();
  EXPECT_NE(a, b);
  EXPECT_EQ(kCapacity, cache_->Capacity());
}

TEST_F(CacheTest, EveryEntryIsDeletedExactlyOnce) {
  Random rnd(11);
  int inserted = 0;
  std::vector<ShardedCache::Handle*> held;
  for (int i = 0; i < 5000; i++) {
    const int key = static_cast<int>(rnd.Uniform(300));
    switch (rnd.Uniform(4)) {
      case 0:
        held.push_back(InsertAndKeep(key, inserted++, 1 + rnd.Uniform(20)));
        break;
      case 1:
        Insert(key, inserted++, 1 + rnd.Uniform(20));
        break;
      case 2:
        cache_->Erase(Key(key));
        break;
      case 3:
        if (!held.empty()) {
          cache_->Release(held.back());
          held.pop_back();
        }
        break;
    }
  }
  for (ShardedCache::Handle* h : held) cache_->Release(h);
  cache_.reset();
  std::vector<int> seen(inserted, 0);
  for (const auto& [key, value] : DeletionsCopy()) seen[value]++;
  for (int v = 0; v < inserted; v++) ASSERT_EQ(1, seen[v]) << "value " << v;
}

// Keys are held inline up to 16 bytes and on the heap beyond: lengths 0,
// 1, 15, 16, 17 and long ones are found, told apart (one a prefix of the
// next), evicted and erased, and the deleter gets each key's exact bytes.
TEST_F(CacheTest, KeysOfEveryLengthAroundTheInlineLimit) {
  std::vector<std::string> keys;
  for (size_t len : {0, 1, 15, 16, 17, 64, 1000}) {
    keys.push_back(std::string(len, 'k'));
    // Same length, differing only in the last byte.
    if (len > 0) keys.push_back(std::string(len - 1, 'k') + '\xff');
  }
  for (size_t i = 0; i < keys.size(); i++) {
    cache_->Prefetch(keys[i]);  // absent: a hint, no effect
    cache_->Release(cache_->Insert(keys[i], V(i), 1, RecordDeletion));
  }
  for (size_t i = 0; i < keys.size(); i++) {
    cache_->Prefetch(keys[i]);
    ShardedCache::Handle* h = cache_->Lookup(keys[i]);
    ASSERT_NE(nullptr, h) << keys[i].size();
    EXPECT_EQ(static_cast<intptr_t>(i), I(cache_->Value(h)));
    cache_->Release(h);
  }
  EXPECT_EQ(0u, Deletions());
  // Replacing an entry hands the old one's exact key to the deleter.
  cache_->Release(cache_->Insert(keys[5], V(100), 1, RecordDeletion));
  ASSERT_EQ(1u, Deletions());
  EXPECT_EQ(keys[5], DeletionsCopy()[0].first);
  EXPECT_EQ(5, DeletionsCopy()[0].second);
  // Erase, then eviction of everything else by a flood of new keys.
  cache_->Erase(keys.back());
  EXPECT_EQ(nullptr, cache_->Lookup(keys.back()));
  for (int i = 0; i < static_cast<int>(kCapacity) * 4; i++) {
    Insert(100000 + i, 100000 + i);
  }
  for (const std::string& key : keys) {
    EXPECT_EQ(nullptr, cache_->Lookup(key)) << key.size();
  }
  std::map<std::string, intptr_t> deleted_keys;
  for (const auto& [key, value] : DeletionsCopy()) {
    if (value < 100000) deleted_keys[key] = value;
  }
  ASSERT_EQ(keys.size(), deleted_keys.size());
  for (size_t i = 0; i < keys.size(); i++) {
    ASSERT_EQ(1u, deleted_keys.count(keys[i])) << keys[i].size();
    EXPECT_EQ(i == 5 ? 100 : static_cast<intptr_t>(i), deleted_keys[keys[i]]);
  }
}

// Prefetch changes nothing: no entry appears, none moves in the LRU order.
TEST_F(CacheTest, PrefetchIsOnlyAHint) {
  Insert(1, 101);
  Insert(2, 102);
  for (int k = 0; k < 100; k++) cache_->Prefetch(Key(k));
  EXPECT_EQ(-1, Lookup(3));
  EXPECT_EQ(2u, cache_->TotalCharge());
  EXPECT_EQ(101, Lookup(1));
  EXPECT_EQ(102, Lookup(2));
  EXPECT_EQ(0u, Deletions());
}

TEST_F(CacheTest, ConcurrentUseFromFourThreads) {
  constexpr int kThreads = 4;
  constexpr int kOps = 20000;
  std::atomic<int> next_value{0};
  std::atomic<int> bad{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      Random rnd(100 + t);
      for (int i = 0; i < kOps; i++) {
        const int key = static_cast<int>(rnd.Uniform(500));
        const int op = static_cast<int>(rnd.Uniform(10));
        if (op < 3) {
          // Values encode their key: value % 1000 == key.
          const int v = next_value.fetch_add(1) * 1000 + key;
          Insert(key, v, 1 + rnd.Uniform(10));
        } else if (op < 9) {
          cache_->Prefetch(Key(key));  // a hint racing with the writers
          ShardedCache::Handle* h = cache_->Lookup(Key(key));
          if (h != nullptr) {
            if (I(cache_->Value(h)) % 1000 != key) bad++;
            cache_->Release(h);
          }
        } else {
          cache_->Erase(Key(key));
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, bad.load());
  EXPECT_LE(cache_->TotalCharge(), kCapacity + 16 * 10);
  const int inserted = next_value.load();
  cache_.reset();
  const auto deletions = DeletionsCopy();
  EXPECT_EQ(static_cast<size_t>(inserted), deletions.size());
  std::vector<int> seen(inserted, 0);
  for (const auto& [key, value] : deletions) {
    EXPECT_EQ(Key(static_cast<int>(value % 1000)), key);
    seen[value / 1000]++;
  }
  for (int v = 0; v < inserted; v++) ASSERT_EQ(1, seen[v]);
}

}  // namespace cache_test
}  // namespace siftdb
