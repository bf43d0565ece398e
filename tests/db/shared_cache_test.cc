// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Options::block_cache: one Cache (siftdb/cache.h) shared by several DBs
// stays within its capacity, keeps the DBs' blocks apart and shows its
// usage through the Cache API and each DB's properties.

#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/cache.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace shared_cache_test {

constexpr int kKeys = 3000;
constexpr size_t kBlockSize = 4096;

std::string ValueOf(char db, int i) {
  return absl::StrFormat("%c-%06d-", db, i) + std::string(150, db);
}

TEST(SharedCacheTest, TwoDbsShareOneCacheWithinItsCapacity) {
  test::TempDir dir;
  std::shared_ptr<Cache> cache = NewLRUCache(128 << 10);
  EXPECT_EQ(cache->Capacity(), size_t{128} << 10);
  EXPECT_EQ(cache->Usage(), 0u);

  Options o;
  o.create_if_missing = true;
  o.compression = kNoCompression;
  o.block_size = kBlockSize;
  o.block_cache = cache;
  o.block_cache_size = 64 << 20;  // ignored: the shared cache is used
  auto a = DB::Open(o, dir.Join("a"));
  auto b = DB::Open(o, dir.Join("b"));
  ASSERT_TRUE(a.ok() && b.ok());
  for (int i = 0; i < kKeys; i++) {
    const std::string k = absl::StrFormat("key%06d", i);
    ASSERT_TRUE((*a)->Put(WriteOptions(), k, ValueOf('a', i)).ok());
    ASSERT_TRUE((*b)->Put(WriteOptions(), k, ValueOf('b', i)).ok());
  }
  // Same keys, same table numbers, same block offsets in both DBs: only
  // the cache ids keep their blocks apart.
  ASSERT_TRUE((*a)->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE((*b)->CompactRange(nullptr, nullptr).ok());

  size_t max_usage = 0;
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < kKeys; i += 7) {
      const std::string k = absl::StrFormat("key%06d", i);
      std::string va, vb;
      ASSERT_TRUE((*a)->Get(ReadOptions(), k, &va).ok()) << k;
      ASSERT_TRUE((*b)->Get(ReadOptions(), k, &vb).ok()) << k;
      ASSERT_EQ(va, ValueOf('a', i));
      ASSERT_EQ(vb, ValueOf('b', i));
      max_usage = std::max(max_usage, cache->Usage());
    }
  }
  // The data (~1 MB per DB) is far larger than the cache: it filled up and
  // evicted, but never held more than its capacity plus one block.
  EXPECT_GT(max_usage, cache->Capacity() / 2);
  EXPECT_LE(max_usage, cache->Capacity() + kBlockSize + 1024);

  // Both DBs report the one cache.
  std::string usage_a, usage_b, capacity;
  ASSERT_TRUE((*a)->GetProperty("siftdb.block-cache-usage", &usage_a));
  ASSERT_TRUE((*b)->GetProperty("siftdb.block-cache-usage", &usage_b));
  ASSERT_TRUE((*b)->GetProperty("siftdb.block-cache-capacity", &capacity));
  EXPECT_EQ(usage_a, absl::StrFormat("%d", cache->Usage()));
  EXPECT_EQ(usage_a, usage_b);
  EXPECT_EQ(capacity, absl::StrFormat("%d", 128 << 10));

  // The cache outlives the DBs that used it.
  a->reset();
  b->reset();
  EXPECT_LE(cache->Usage(), cache->Capacity() + kBlockSize + 1024);
}

TEST(SharedCacheTest, ZeroCapacityCachesNothing) {
  test::TempDir dir;
  std::shared_ptr<Cache> cache = NewLRUCache(0);
  Options o;
  o.create_if_missing = true;
  o.block_cache = cache;
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Put(WriteOptions(), "k", "v").ok());
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  std::string v;
  ASSERT_TRUE((*db)->Get(ReadOptions(), "k", &v).ok());
  EXPECT_EQ(v, "v");
  EXPECT_EQ(cache->Usage(), 0u);
}

}  // namespace shared_cache_test
}  // namespace siftdb
