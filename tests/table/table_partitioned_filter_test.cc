// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Tables with partitioned filters (TableOptions::partition_filters):
// - the filter block is kind 'P' only for a filter larger than a partition
//   and a table the readers can handle (bytewise, siftdb policy,
//   prefix-closed extractor);
// - heap and cached (one block-cache entry per partition) tables answer
//   alike, never "no" for a present key or prefix, and only the index is on
//   the heap in cache mode; CopyFilter returns the block's exact bytes;
// - partitions evicted from a tiny cache are read again, also with 4
//   threads probing at once (run under TSan in CI);
// - a partition damaged after Open answers "may match" (filter.load_errors)
//   while the other partitions still answer; damage at Open fails it.

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/partitioned_filter.h"
#include "gtest/gtest.h"
#include "siftdb/filter_policy.h"
#include "siftdb/slice_transform.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "tests/table/table_test_util.h"
#include "util/cache.h"
#include "util/mutex.h"
#include "util/statistics.h"

namespace siftdb {
namespace table_partitioned_filter_test {

using test::IKey;
using test::KVList;

constexpr int kKeys = 4000;

std::string UserKey(int i) { return absl::StrFormat("key%06d", i); }
// Absent, and inside the table's key range.
std::string AbsentKey(int i) { return absl::StrFormat("key%06dx", i); }

class TablePartitionedFilterCacheTest : public testing::Test {
 protected:
  void SetUp() override {
    build_.filter_policy = NewBloomFilterPolicy(10);
    build_.partition_filters = true;
    build_.filter_partition_size = 256;
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
    ASSERT_TRUE(IsPartitionedFilter(heap_->filter_data()));
    ASSERT_TRUE(FilterPartitionIndex::Parse(heap_->filter_data(), &index_));
    ASSERT_GT(index_.size(), 10u);
  }

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
        Table::Open(options, "000009.sst", std::move(file), file_.size());
    EXPECT_TRUE(table.ok()) << table.status();
    return table.ok() ? std::move(*table) : nullptr;
  }

  void ExpectSameAnswers(const Table& t, int step = 7) {
    for (int i = 0; i < kKeys; i += step) {
      ASSERT_TRUE(t.UserKeyMayMatch(UserKey(i), nullptr)) << i;
      ASSERT_EQ(t.UserKeyMayMatch(AbsentKey(i), nullptr),
                heap_->UserKeyMayMatch(AbsentKey(i), nullptr))
          << AbsentKey(i);
    }
  }

  size_t FilterOffset() const {
    const size_t at = file_.find(heap_->filter_data());
    EXPECT_NE(at, std::string::npos);
    return at;
  }

  TableOptions build_;
  std::string file_;
  std::unique_ptr<Table> heap_;
  FilterPartitionIndex index_;
  Statistics stats_;
  std::shared_ptr<std::atomic<uint64_t>> heap_bytes_ =
      std::make_shared<std::atomic<uint64_t>>(0);
  std::shared_ptr<std::atomic<uint64_t>> cached_bytes_ =
      std::make_shared<std::atomic<uint64_t>>(0);
};

TEST_F(TablePartitionedFilterCacheTest, HeapFilterRulesOutAbsentKeys) {
  int negatives = 0;
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE(heap_->UserKeyMayMatch(UserKey(i), nullptr)) << i;
    negatives += heap_->UserKeyMayMatch(AbsentKey(i), nullptr) ? 0 : 1;
  }
  EXPECT_GT(negatives, kKeys * 95 / 100);
  // Past the table's last key: no.
  EXPECT_FALSE(heap_->UserKeyMayMatch("zzz", nullptr));
  // Lookups through the data blocks find every key.
  for (int i = 0; i < kKeys; i += 101) {
    EXPECT_TRUE(test::Get(*heap_, IKey(UserKey(i), 1u << 30)).called) << i;
  }
}

TEST_F(TablePartitionedFilterCacheTest, CachedPartitionsAnswerAsTheHeap) {
  auto cache = NewShardedLRUCache(8 << 20);
  auto table = OpenCached(cache.get());
  ASSERT_NE(table, nullptr);
  EXPECT_TRUE(table->filter_data().empty());
  EXPECT_FALSE(table->filter_resident());
  // Only the index is on the heap; nothing is cached before a probe.
  EXPECT_GT(heap_bytes_->load(), 0u);
  EXPECT_LT(heap_bytes_->load(), heap_->filter_data().size() / 4);
  EXPECT_EQ(cached_bytes_->load(), 0u);
  ExpectSameAnswers(*table, 1);
  // Every partition was loaded once, and then found in the cache (plus
  // Open's read of the whole block).
  EXPECT_EQ(stats_.Get(Ticker::kFilterCacheMisses), index_.size() + 1);
  EXPECT_GT(stats_.Get(Ticker::kFilterCacheHits), 7000u);
  EXPECT_GT(cached_bytes_->load(), heap_->filter_data().size() / 2);
  std::string bytes;
  ASSERT_TRUE(table->CopyFilter(&bytes).ok());
  EXPECT_EQ(bytes, heap_->filter_data());
  // PinFilter has nothing to pin.
  table->PinFilter();
  EXPECT_FALSE(table->filter_resident());
  table.reset();
  EXPECT_EQ(heap_bytes_->load(), 0u);
}

TEST_F(TablePartitionedFilterCacheTest, EvictedPartitionsAreReadAgain) {
  auto cache = NewShardedLRUCache(64);  // holds no partition
  auto table = OpenCached(cache.get());
  ASSERT_NE(table, nullptr);
  ExpectSameAnswers(*table, 13);
  EXPECT_GT(stats_.Get(Ticker::kFilterCacheMisses), 500u);
  EXPECT_EQ(stats_.Get(Ticker::kFilterLoadErrors), 0u);
  EXPECT_EQ(cached_bytes_->load(), 0u);
}

TEST_F(TablePartitionedFilterCacheTest, DamagedPartitionAnswersMayMatch) {
  auto cache = NewShardedLRUCache(64);
  test::DamageableSource* source = nullptr;
  auto table = OpenCached(cache.get(), &source);
  ASSERT_NE(table, nullptr);
  const FilterPartitionIndex::Entry& damaged = index_.entry(3);
  source->Flip(FilterOffset() + damaged.offset + 5);
  int load_errors = 0, negatives_elsewhere = 0;
  for (int i = 0; i < kKeys; i++) {
    const std::string absent = AbsentKey(i);
    const bool in_damaged = index_.Find(absent) == 3;
    const bool may = table->UserKeyMayMatch(absent, nullptr);
    if (in_damaged) {
      ASSERT_TRUE(may) << absent;
      load_errors++;
    } else if (!may) {
      negatives_elsewhere++;
    }
    ASSERT_TRUE(table->UserKeyMayMatch(UserKey(i), nullptr)) << i;
  }
  EXPECT_GT(load_errors, 0);
  EXPECT_GE(stats_.Get(Ticker::kFilterLoadErrors),
            static_cast<uint64_t>(load_errors));
  EXPECT_GT(negatives_elsewhere, kKeys * 9 / 10);
  std::string bytes;
  const absl::Status s = table->CopyFilter(&bytes);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
}

TEST_F(TablePartitionedFilterCacheTest, DamageAtOpenFailsTheOpen) {
  for (bool cached : {false, true}) {
    std::string damaged = file_;
    damaged[FilterOffset() + index_.entry(2).offset + 1] ^= 1;
    auto cache = NewShardedLRUCache(8 << 20);
    TableOptions options = build_;
    options.block_cache = cache.get();
    options.cache_filter = cached;
    auto table = test::OpenTable(options, damaged);
    ASSERT_FALSE(table.ok());
    EXPECT_TRUE(absl::IsDataLoss(table.status())) << table.status();
  }
}

TEST_F(TablePartitionedFilterCacheTest, ConcurrentProbesWhileEvicting) {
  // Room for about two partitions: the threads evict each other's.
  auto cache = NewShardedLRUCache(2 * (index_.entry(0).size + 256));
  auto table = OpenCached(cache.get());
  ASSERT_NE(table, nullptr);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < 2; round++) {
        for (int i = t; i < kKeys; i += 11) {
          if (!table->UserKeyMayMatch(UserKey(i), nullptr)) wrong++;
          if (table->UserKeyMayMatch(AbsentKey(i), nullptr) !=
              heap_->UserKeyMayMatch(AbsentKey(i), nullptr)) {
            wrong++;
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(wrong.load(), 0);
  EXPECT_EQ(stats_.Get(Ticker::kFilterLoadErrors), 0u);
  EXPECT_GT(stats_.Get(Ticker::kFilterCacheMisses), index_.size());
}

// Prefix probes, with prefix-only and whole-key filters, cached or not.
TEST(TablePartitionedFilterPrefixTest, PrefixesInTheirPartitions) {
  for (bool whole : {true, false}) {
    for (bool cached : {false, true}) {
      TableOptions o;
      o.filter_policy = NewRibbonFilterPolicy(10);
      o.prefix_extractor = NewFixedPrefixTransform(5);
      o.whole_key_filtering = whole;
      o.partition_filters = true;
      o.filter_partition_size = 64;
      KVList entries;
      for (int i = 0; i < 3000; i++) {
        // Prefixes "p0000".."p0299", ten keys each.
        entries.emplace_back(
            IKey(absl::StrFormat("p%04d-%03d", i / 10, i % 10), 10), "v");
      }
      auto bytes = test::BuildTable(o, entries);
      ASSERT_TRUE(bytes.ok());
      auto cache = NewShardedLRUCache(4096);
      o.block_cache = cache.get();
      o.cache_filter = cached;
      auto t = test::OpenTable(o, *bytes);
      ASSERT_TRUE(t.ok()) << t.status();
      std::string filter;
      ASSERT_TRUE((*t)->CopyFilter(&filter).ok());
      ASSERT_TRUE(IsPartitionedFilter(filter));
      int negatives = 0;
      for (int p = 0; p < 300; p++) {
        ASSERT_TRUE((*t)->PrefixMayMatch(absl::StrFormat("p%04d", p))) << p;
        ASSERT_TRUE((*t)->UserKeyMayMatch(
            absl::StrFormat("p%04d-%03d", p, p % 10), nullptr));
        negatives += (*t)->PrefixMayMatch(
                         absl::StrFormat("p%04dx", p).substr(0, 4) + "z")
                         ? 0
                         : 1;
      }
      EXPECT_FALSE((*t)->PrefixMayMatch("q0000"));  // past every key
      EXPECT_GT(negatives, 250) << whole << cached;
    }
  }
}

TEST(TablePartitionedFilterPrefixTest, OnlyQualifyingTablesArePartitioned) {
  TableOptions o;
  o.filter_policy = NewBloomFilterPolicy(10);
  o.partition_filters = true;
  EXPECT_TRUE(TableBuilder::PartitionsFilters(o));
  o.prefix_extractor = NewCappedPrefixTransform(3);
  EXPECT_TRUE(TableBuilder::PartitionsFilters(o));
  class OtherTransform final : public SliceTransform {
   public:
    const char* Name() const override { return "test.Other"; }
    std::string_view Transform(std::string_view key) const override {
      return key.substr(0, 1);
    }
    bool InDomain(std::string_view) const override { return true; }
  };
  o.prefix_extractor = std::make_shared<OtherTransform>();
  EXPECT_FALSE(TableBuilder::PartitionsFilters(o));
  o.prefix_extractor = nullptr;
  class ReverseComparator final : public Comparator {
   public:
    int Compare(std::string_view a, std::string_view b) const override {
      return b.compare(a);
    }
    const char* Name() const override { return "test.Reverse"; }
    void FindShortestSeparator(std::string*, std::string_view) const override {}
    void FindShortSuccessor(std::string*) const override {}
  };
  static const ReverseComparator reverse;
  o.user_comparator = &reverse;
  EXPECT_FALSE(TableBuilder::PartitionsFilters(o));
  o.user_comparator = nullptr;
  o.partition_filters = false;
  EXPECT_FALSE(TableBuilder::PartitionsFilters(o));

  // A filter that fits one partition is the ordinary filter.
  o.partition_filters = true;
  o.filter_partition_size = 1 << 20;
  KVList entries;
  for (int i = 0; i < 1000; i++) entries.emplace_back(IKey(UserKey(i), 1), "v");
  auto bytes = test::BuildTable(o, entries);
  ASSERT_TRUE(bytes.ok());
  auto t = test::OpenTable(o, *bytes);
  ASSERT_TRUE(t.ok());
  EXPECT_FALSE(IsPartitionedFilter((*t)->filter_data()));
  EXPECT_FALSE((*t)->UserKeyMayMatch("zzz", nullptr));
}

}  // namespace table_partitioned_filter_test
}  // namespace siftdb
