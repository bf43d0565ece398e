// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Table filters kept in the block cache (TableOptions::cache_filter):
// - a cached filter answers exactly as the same table's heap filter, for
//   present and absent keys, and its bytes (CopyFilter) are the heap copy's;
//   its bytes are counted as cached, not heap, filter memory;
// - a filter evicted from a too-small cache is read again on the next probe
//   (filter.cache_misses), answering the same;
// - a reload that meets damaged bytes answers "may match" for every key
//   (filter.load_errors), never "absent", and CopyFilter reports DataLoss
//   naming the file; the damage is never taken as a filter;
// - PinFilter keeps the filter resident (probes skip the cache) and counts
//   nothing twice; many threads probing while the cache evicts and one pins
//   agree with the heap filter (run under TSan in CI);
// - Open fails, as before, on a filter damaged at open.

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/filter_policy.h"
#include "table/table.h"
#include "tests/table/table_test_util.h"
#include "util/cache.h"
#include "util/mutex.h"
#include "util/statistics.h"

namespace siftdb {
namespace table_filter_cache_test {

using test::IKey;
using test::KVList;

constexpr int kKeys = 4000;

std::string UserKey(int i) { return absl::StrFormat("key%06d", i); }
std::string AbsentKey(int i) { return absl::StrFormat("absent%06d", i); }

class TableFilterCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    build_.filter_policy = NewBloomFilterPolicy(10);
    KVList entries;
    for (int i = 0; i < kKeys; i++) {
      entries.emplace_back(IKey(UserKey(i), 100 + i), "value");
    }
    auto bytes = test::BuildTable(build_, entries);
    ASSERT_TRUE(bytes.ok()) << bytes.status();
    file_ = *bytes;
    auto heap = test::OpenTable(build_, file_);
    ASSERT_TRUE(heap.ok()) << heap.status();
    heap_ = std::move(*heap);
    ASSERT_FALSE(heap_->filter_data().empty());
  }

  // Opens the table with its filter in `cache`; *source (when non-null)
  // is set to the file it reads, for damaging.
  std::unique_ptr<Table> OpenCached(ShardedCache* cache,
                                    test::DamageableSource** source = nullptr) {
    TableOptions options = build_;
    options.block_cache = cache;
    options.cache_filter = true;
    options.statistics = &stats_;
    options.heap_filter_bytes = heap_bytes_;
    options.cached_filter_bytes = cached_bytes_;
    auto file = std::make_unique<test::DamageableSource>(file_);
    if (source != nullptr) *source = file.get();
    auto table =
        Table::Open(options, "000007.sst", std::move(file), file_.size());
    EXPECT_TRUE(table.ok()) << table.status();
    return table.ok() ? std::move(*table) : nullptr;
  }

  // Every present key "may match" and every absent key answers as the heap
  // filter does.
  void ExpectSameAnswers(const Table& cached, int absent = 2000) {
    for (int i = 0; i < kKeys; i += 7) {
      ASSERT_TRUE(cached.UserKeyMayMatch(UserKey(i), nullptr)) << i;
    }
    for (int i = 0; i < absent; i++) {
      ASSERT_EQ(cached.UserKeyMayMatch(AbsentKey(i), nullptr),
                heap_->UserKeyMayMatch(AbsentKey(i), nullptr))
          << AbsentKey(i);
    }
  }

  // Offset of the filter block in the file (its bytes are the heap copy's).
  size_t FilterOffset() const {
    const size_t at = file_.find(heap_->filter_data());
    EXPECT_NE(at, std::string::npos);
    return at;
  }

  TableOptions build_;
  std::string file_;
  std::unique_ptr<Table> heap_;
  Statistics stats_;
  std::shared_ptr<std::atomic<uint64_t>> heap_bytes_ =
      std::make_shared<std::atomic<uint64_t>>(0);
  std::shared_ptr<std::atomic<uint64_t>> cached_bytes_ =
      std::make_shared<std::atomic<uint64_t>>(0);
};

TEST_F(TableFilterCacheTest, AnswersAsTheHeapFilterAndIsCountedAsCached) {
  auto cache = NewShardedLRUCache(8 << 20);
  auto table = OpenCached(cache.get());
  ASSERT_NE(table, nullptr);
  EXPECT_TRUE(table->filter_data().empty());
  EXPECT_FALSE(table->filter_resident());
  EXPECT_EQ(table->filter_size(), heap_->filter_data().size());
  EXPECT_EQ(heap_bytes_->load(), 0u);
  EXPECT_EQ(cached_bytes_->load(), heap_->filter_data().size());
  EXPECT_GE(cache->TotalCharge(), heap_->filter_data().size());

  ExpectSameAnswers(*table);
  std::string bytes;
  ASSERT_TRUE(table->CopyFilter(&bytes).ok());
  EXPECT_EQ(bytes, heap_->filter_data());
  // Open read it in; every probe after found it there.
  EXPECT_EQ(stats_.Get(Ticker::kFilterCacheMisses), 1u);
  EXPECT_GT(stats_.Get(Ticker::kFilterCacheHits), 2000u);
  // Some absent keys were ruled out (the filter works through the cache).
  int negatives = 0;
  for (int i = 0; i < 1000; i++) {
    negatives += table->UserKeyMayMatch(AbsentKey(i), nullptr) ? 0 : 1;
  }
  EXPECT_GT(negatives, 950);

  // The cache keeps the bytes counted after the table closes, until it
  // drops them.
  table.reset();
  EXPECT_EQ(cached_bytes_->load(), heap_->filter_data().size());
  cache.reset();
  EXPECT_EQ(cached_bytes_->load(), 0u);
}

TEST_F(TableFilterCacheTest, EvictedFilterIsReadAgain) {
  // Too small to keep the filter: every probe reads it.
  auto cache = NewShardedLRUCache(64);
  auto table = OpenCached(cache.get());
  ASSERT_NE(table, nullptr);
  ExpectSameAnswers(*table, 200);
  EXPECT_GT(stats_.Get(Ticker::kFilterCacheMisses), 200u);
  EXPECT_EQ(stats_.Get(Ticker::kFilterLoadErrors), 0u);
  EXPECT_EQ(cached_bytes_->load(), 0u);  // nothing held between probes
}

TEST_F(TableFilterCacheTest, DamagedReloadAnswersMayMatch) {
  auto cache = NewShardedLRUCache(64);
  test::DamageableSource* source = nullptr;
  auto table = OpenCached(cache.get(), &source);
  ASSERT_NE(table, nullptr);
  source->Flip(FilterOffset() + 10);
  for (int i = 0; i < 500; i++) {
    ASSERT_TRUE(table->UserKeyMayMatch(AbsentKey(i), nullptr)) << i;
  }
  EXPECT_EQ(stats_.Get(Ticker::kFilterLoadErrors), 500u);
  std::string bytes;
  const absl::Status s = table->CopyFilter(&bytes);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("000007.sst"), std::string_view::npos) << s;
  // Present keys are still found through their data blocks.
  for (int i = 0; i < kKeys; i += 97) {
    std::string found;
    ASSERT_TRUE(
        table
            ->InternalGet(
                ReadOptions(), IKey(UserKey(i), 1u << 30), nullptr,
                [&](std::string_view, std::string_view v) { found.assign(v); })
            .ok());
    EXPECT_EQ(found, "value") << i;
  }
  // Pinning a damaged filter fails quietly; probes keep answering maybe.
  table->PinFilter();
  EXPECT_FALSE(table->filter_resident());
  EXPECT_TRUE(table->UserKeyMayMatch(AbsentKey(0), nullptr));
}

TEST_F(TableFilterCacheTest, DamageAtOpenFailsTheOpen) {
  std::string damaged = file_;
  damaged[FilterOffset() + 3] ^= 1;
  auto cache = NewShardedLRUCache(8 << 20);
  TableOptions options = build_;
  options.block_cache = cache.get();
  options.cache_filter = true;
  auto table = test::OpenTable(options, damaged);
  ASSERT_FALSE(table.ok());
  EXPECT_TRUE(absl::IsDataLoss(table.status())) << table.status();
}

TEST_F(TableFilterCacheTest, PinnedFilterSkipsTheCache) {
  auto cache = NewShardedLRUCache(8 << 20);
  auto table = OpenCached(cache.get());
  ASSERT_NE(table, nullptr);
  table->PinFilter();
  table->PinFilter();  // idempotent
  ASSERT_TRUE(table->filter_resident());
  EXPECT_EQ(table->filter_data(), heap_->filter_data());
  const uint64_t hits = stats_.Get(Ticker::kFilterCacheHits);
  const uint64_t misses = stats_.Get(Ticker::kFilterCacheMisses);
  ExpectSameAnswers(*table);
  EXPECT_EQ(stats_.Get(Ticker::kFilterCacheHits), hits);
  EXPECT_EQ(stats_.Get(Ticker::kFilterCacheMisses), misses);
  EXPECT_EQ(cached_bytes_->load(), heap_->filter_data().size());
  // A pinned entry is not evicted by other inserts.
  for (int i = 0; i < 100; i++) {
    cache->Release(cache->Insert(absl::StrFormat("other%d", i), nullptr,
                                 1 << 20, [](std::string_view, void*) {}));
  }
  EXPECT_EQ(cached_bytes_->load(), heap_->filter_data().size());
  ExpectSameAnswers(*table, 200);
}

TEST_F(TableFilterCacheTest, ConcurrentProbesWhileEvictingAndPinning) {
  // Room for about one filter: the threads evict and reload each other's.
  auto cache = NewShardedLRUCache(heap_->filter_data().size() + 1024);
  auto table = OpenCached(cache.get());
  auto other = OpenCached(cache.get());
  ASSERT_NE(table, nullptr);
  ASSERT_NE(other, nullptr);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      const Table& probed = t % 2 == 0 ? *table : *other;
      for (int round = 0; round < 3; round++) {
        for (int i = t; i < kKeys; i += 13) {
          if (!probed.UserKeyMayMatch(UserKey(i), nullptr)) wrong++;
          if (probed.UserKeyMayMatch(AbsentKey(i), nullptr) !=
              heap_->UserKeyMayMatch(AbsentKey(i), nullptr)) {
            wrong++;
          }
        }
        if (t == 0 && round == 1) table->PinFilter();
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_TRUE(table->filter_resident());
  EXPECT_EQ(stats_.Get(Ticker::kFilterLoadErrors), 0u);
}

}  // namespace table_filter_cache_test
}  // namespace siftdb
