// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Table reads beyond round trips: the filter's effect on reads and its
// statistics, foreign and unknown filter policies, the block cache, and
// many threads reading one table.

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "table/format.h"
#include "table/table.h"
#include "tests/table/table_test_util.h"
#include "util/cache.h"
#include "util/statistics.h"

namespace siftdb {
namespace table_read_test {

using test::BuildTable;
using test::CheckScan;
using test::Get;
using test::GetResult;
using test::IKey;
using test::KVList;
using test::MakeEntries;
using test::OpenTable;
using test::TestRandom;

// --- Filters and statistics ---

TEST(TableFilterTest, AbsentKeyRejectedByFilterReadsNoDataBlock) {
  Statistics stats;
  TableOptions options;
  options.filter_policy = NewBloomFilterPolicy(10);
  options.statistics = &stats;
  const KVList entries = MakeEntries(2000, true, 11);
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto source = std::make_unique<test::StringSource>(*contents);
  const test::StringSource* src = source.get();
  auto table =
      Table::Open(options, "000001.sst", std::move(source), contents->size());
  ASSERT_TRUE(table.ok()) << table.status();
  const Table& t = **table;
  stats.Reset();
  const uint64_t reads_before = src->reads();

  int negatives = 0;
  for (int i = 0; i < 1000; i++) {
    const std::string user_key = "absent" + std::to_string(i);
    const uint64_t data_reads = stats.Get(Ticker::kDataBlockReads);
    const uint64_t file_reads = src->reads();
    const uint64_t neg = stats.Get(Ticker::kFilterNegatives);
    GetResult r = Get(t, IKey(user_key, kMaxSequenceNumber, kValueTypeForSeek));
    if (stats.Get(Ticker::kFilterNegatives) > neg) {
      negatives++;
      EXPECT_FALSE(r.called);
      EXPECT_EQ(stats.Get(Ticker::kDataBlockReads), data_reads);
      EXPECT_EQ(src->reads(), file_reads);
      EXPECT_FALSE(t.UserKeyMayMatch(user_key, nullptr));
    }
  }
  EXPECT_GT(negatives, 950);  // ~1% false positives at 10 bits per key
  EXPECT_EQ(stats.Get(Ticker::kFilterChecks), 1000u);
  EXPECT_EQ(stats.Get(Ticker::kFilterPositives), 1000u - negatives);
  // Every positive for an absent key is a false positive.
  EXPECT_EQ(stats.Get(Ticker::kFilterFalsePositives), 1000u - negatives);
  EXPECT_EQ(stats.Get(Ticker::kDataBlockReads), 1000u - negatives);
  EXPECT_EQ(src->reads() - reads_before, 1000u - negatives);

  // Present keys: positives, not false positives, one data block each.
  stats.Reset();
  for (size_t i = 0; i < 100; i++) {
    GetResult r = Get(t, entries[i * 13].first);
    ASSERT_TRUE(r.called);
  }
  EXPECT_EQ(stats.Get(Ticker::kFilterPositives), 100u);
  EXPECT_EQ(stats.Get(Ticker::kFilterFalsePositives), 0u);
  EXPECT_EQ(stats.Get(Ticker::kDataBlockReads), 100u);
  EXPECT_GT(stats.Get(Ticker::kBytesRead), 0u);
}

TEST(TableFilterTest, FalsePositiveCountedWhenKeyAbsentButFilterSaysMaybe) {
  // A filter that always says "maybe" makes every absent key a false
  // positive.
  class MaybePolicy final : public FilterPolicy {
   public:
    class Builder final : public FilterBitsBuilder {
     public:
      void AddKey(std::string_view) override { n_++; }
      size_t NumAdded() const override { return n_; }
      void Finish(std::string* dst) override {
        dst->append("maybe");
        n_ = 0;
      }

     private:
      size_t n_ = 0;
    };
    const char* Name() const override { return "test.Maybe"; }
    double BitsPerKey() const override { return 1; }
    std::unique_ptr<FilterBitsBuilder> NewBuilder() const override {
      return std::make_unique<Builder>();
    }
    bool KeyMayMatch(std::string_view, std::string_view) const override {
      return true;
    }
    uint64_t HashKey(std::string_view) const override { return 0; }
    bool HashMayMatch(uint64_t, std::string_view) const override {
      return true;
    }
  };
  Statistics stats;
  TableOptions options;
  options.filter_policy = std::make_shared<MaybePolicy>();
  options.statistics = &stats;
  const KVList entries = MakeEntries(100, true, 1);
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ((*table)->filter_data(), "maybe");
  EXPECT_EQ((*table)->filter_policy_name(), "test.Maybe");
  Get(**table, IKey("key000005", kMaxSequenceNumber));   // present
  Get(**table, IKey("key000005a", kMaxSequenceNumber));  // absent, in range
  Get(**table, IKey("zzz", kMaxSequenceNumber));         // absent, past the end
  EXPECT_EQ(stats.Get(Ticker::kFilterChecks), 3u);
  EXPECT_EQ(stats.Get(Ticker::kFilterPositives), 3u);
  EXPECT_EQ(stats.Get(Ticker::kFilterNegatives), 0u);
  EXPECT_EQ(stats.Get(Ticker::kFilterFalsePositives), 2u);

  // Read back without that policy: its name is unknown, so every probe is
  // "maybe" (never a false "no").
  TableOptions plain;
  auto table2 = OpenTable(plain, *contents);
  ASSERT_TRUE(table2.ok()) << table2.status();
  EXPECT_EQ((*table2)->filter_policy(), nullptr);
  EXPECT_TRUE((*table2)->UserKeyMayMatch("anything", nullptr));
  EXPECT_TRUE(Get(**table2, IKey("key000005", kMaxSequenceNumber)).called);
}

TEST(TableFilterTest, PrecomputedHashAndForeignPolicies) {
  auto blocked = NewBloomFilterPolicy(10);
  auto classic = NewClassicBloomFilterPolicy(10);
  const KVList entries = MakeEntries(3000, true, 21);

  TableOptions write_options;
  write_options.filter_policy = classic;
  auto contents = BuildTable(write_options, entries);
  ASSERT_TRUE(contents.ok());

  // Read with the same policy: the caller's hash is used.
  {
    auto table = OpenTable(write_options, *contents);
    ASSERT_TRUE(table.ok());
    EXPECT_EQ((*table)->filter_policy_name(), "siftdb.ClassicBloom");
    for (size_t i = 0; i < entries.size(); i += 7) {
      const std::string_view user_key = ExtractUserKey(entries[i].first);
      const uint64_t hash = classic->HashKey(user_key);
      EXPECT_TRUE((*table)->UserKeyMayMatch(user_key, &hash));
      GetResult r = Get(**table, entries[i].first, &hash);
      EXPECT_TRUE(r.called);
      EXPECT_EQ(r.key, entries[i].first);
    }
  }
  // Read with another policy configured: the table's own policy is found
  // by name and the caller's hash (made by the other policy) is ignored.
  {
    TableOptions read_options;
    read_options.filter_policy = blocked;
    auto table = OpenTable(read_options, *contents);
    ASSERT_TRUE(table.ok());
    ASSERT_NE((*table)->filter_policy(), nullptr);
    EXPECT_STREQ((*table)->filter_policy()->Name(), "siftdb.ClassicBloom");
    int negatives = 0;
    for (size_t i = 0; i < entries.size(); i += 7) {
      const std::string_view user_key = ExtractUserKey(entries[i].first);
      const uint64_t bogus = 12345;
      EXPECT_TRUE((*table)->UserKeyMayMatch(user_key, &bogus));
      EXPECT_TRUE(Get(**table, entries[i].first, &bogus).called);
    }
    for (int i = 0; i < 500; i++) {
      const uint64_t bogus = 12345;
      negatives +=
          !(*table)->UserKeyMayMatch("nope" + std::to_string(i), &bogus);
    }
    EXPECT_GT(negatives, 450);
  }
}

TEST(TableCacheTest, BlockCacheHitsAndFillCache) {
  std::unique_ptr<ShardedCache> cache = NewShardedLRUCache(1 << 20);
  Statistics stats;
  TableOptions options;
  options.block_cache = cache.get();
  options.statistics = &stats;
  const KVList entries = MakeEntries(1000, true, 4);
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok());
  const uint64_t blocks = (*table)->properties().num_data_blocks;
  ASSERT_GT(blocks, 3u);
  stats.Reset();

  // fill_cache = false: misses, reads, nothing cached.
  ReadOptions no_fill;
  no_fill.fill_cache = false;
  {
    auto it = (*table)->NewIterator(no_fill);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
    }
  }
  EXPECT_EQ(stats.Get(Ticker::kBlockCacheMisses), blocks);
  EXPECT_EQ(stats.Get(Ticker::kDataBlockReads), blocks);
  EXPECT_EQ(cache->TotalCharge(), 0u);

  // First full scan fills the cache, the second hits it every time.
  stats.Reset();
  CheckScan(**table, entries);
  const uint64_t reads_after_first = stats.Get(Ticker::kDataBlockReads);
  EXPECT_EQ(reads_after_first, blocks);
  EXPECT_GT(cache->TotalCharge(), 0u);
  stats.Reset();
  CheckScan(**table, entries);
  EXPECT_EQ(stats.Get(Ticker::kDataBlockReads), 0u);
  EXPECT_GT(stats.Get(Ticker::kBlockCacheHits), 0u);
  EXPECT_EQ(stats.Get(Ticker::kBlockCacheMisses), 0u);
  // Point lookups hit too.
  stats.Reset();
  for (size_t i = 0; i < entries.size(); i += 50) {
    EXPECT_TRUE(Get(**table, entries[i].first).called);
  }
  EXPECT_EQ(stats.Get(Ticker::kDataBlockReads), 0u);
  EXPECT_EQ(stats.Get(Ticker::kBlockCacheHits), 20u);

  // Two tables sharing one cache never see each other's blocks.
  const KVList other = MakeEntries(1000, false, 99);
  auto contents2 = BuildTable(options, other);
  ASSERT_TRUE(contents2.ok());
  auto table2 = OpenTable(options, *contents2, "000002.sst");
  ASSERT_TRUE(table2.ok());
  CheckScan(**table2, other);
  CheckScan(**table, entries);
  // Blocks pinned by an iterator survive the table's cache entries being
  // evicted.
  auto it = (*table)->NewIterator(ReadOptions());
  it->SeekToFirst();
  cache->Prune();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), entries[0].first);
}

TEST(TableConcurrencyTest, ManyThreadsReadOneTable) {
  std::unique_ptr<ShardedCache> cache =
      NewShardedLRUCache(1 << 20);  // smaller than the table: evicts
  Statistics stats;
  TableOptions options;
  options.block_cache = cache.get();
  options.statistics = &stats;
  options.filter_policy = NewBloomFilterPolicy(10);
  const KVList entries = MakeEntries(20000, true, 8);
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok());
  const Table& t = **table;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int id = 0; id < 4; id++) {
    threads.emplace_back([&, id] {
      TestRandom rnd(id + 1);
      for (int op = 0; op < 3000; op++) {
        const size_t i = rnd.Uniform(entries.size());
        bool ok = false;
        absl::Status s = t.InternalGet(
            ReadOptions(), entries[i].first, nullptr,
            [&](std::string_view k, std::string_view v) {
              ok = k == entries[i].first && v == entries[i].second;
            });
        if (!s.ok() || !ok) failures++;
        if (op % 500 == 0) {
          auto it = t.NewIterator(ReadOptions());
          size_t j = i;
          for (it->Seek(entries[i].first); it->Valid() && j < i + 300;
               it->Next(), j++) {
            if (j >= entries.size() || it->key() != entries[j].first) {
              failures++;
              break;
            }
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_GT(stats.Get(Ticker::kBlockCacheHits), 0u);
}

}  // namespace table_read_test
}  // namespace siftdb
