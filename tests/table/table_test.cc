// Copyright (c) siftdb authors.
//
// Table round trips: TableBuilder -> Table over many sizes and settings,
// point lookups, the filter's effect on reads, properties, approximate
// offsets.

#include "table/table.h"

#include <atomic>
#include <map>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/filter_format.h"
#include "gtest/gtest.h"
#include "table/format.h"
#include "tests/table/table_test_util.h"
#include "util/cache.h"
#include "util/statistics.h"

namespace siftdb {
namespace {

using test::BuildTable;
using test::IKey;
using test::KVList;
using test::OpenTable;
using test::TestRandom;

// Entries for user keys "key000000".."keyNNNNNN" (one version each, every
// seventh a deletion) with values of the given kind.
KVList MakeEntries(size_t n, bool compressible, uint64_t seed,
                   size_t value_size = 100) {
  TestRandom rnd(seed);
  KVList entries;
  for (size_t i = 0; i < n; i++) {
    char user_key[32];
    std::snprintf(user_key, sizeof(user_key), "key%06zu", i);
    const ValueType type = i % 7 == 3 ? kTypeDeletion : kTypeValue;
    std::string value = type == kTypeDeletion
                            ? std::string()
                            : (compressible ? rnd.Compressible(value_size)
                                            : rnd.Bytes(value_size));
    entries.emplace_back(IKey(user_key, 1000 + i, type), std::move(value));
  }
  return entries;
}

void CheckScan(const Table& table, const KVList& entries, bool verify = false) {
  ReadOptions ro;
  ro.verify_checksums = verify;
  auto it = table.NewIterator(ro);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
    ASSERT_LT(i, entries.size());
    ASSERT_EQ(it->key(), entries[i].first);
    ASSERT_EQ(it->value(), entries[i].second);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(i, entries.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_GT(i, 0u);
    i--;
    ASSERT_EQ(it->key(), entries[i].first);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(i, 0u);
}

struct GetResult {
  bool called = false;
  std::string key, value;
};

GetResult Get(const Table& table, std::string_view ikey,
              const uint64_t* hash = nullptr, absl::Status* status = nullptr) {
  GetResult r;
  absl::Status s = table.InternalGet(
      ReadOptions(), ikey, hash, [&](std::string_view k, std::string_view v) {
        EXPECT_FALSE(r.called);
        r.called = true;
        r.key = k;
        r.value = v;
      });
  if (status != nullptr) {
    *status = s;
  } else {
    EXPECT_TRUE(s.ok()) << s;
  }
  return r;
}

struct RoundTripParam {
  size_t n;
  CompressionType compression;
  bool compressible;
  bool filter;
};

class TableRoundTrip : public testing::TestWithParam<RoundTripParam> {};

TEST_P(TableRoundTrip, ScanGetAndProperties) {
  const RoundTripParam p = GetParam();
  TableOptions options;
  options.compression = p.compression;
  if (p.filter) options.filter_policy = NewBloomFilterPolicy(10);
  const KVList entries = MakeEntries(p.n, p.compressible, p.n);
  TableProperties written;
  auto contents = BuildTable(options, entries, &written);
  ASSERT_TRUE(contents.ok()) << contents.status();
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  const Table& t = **table;

  CheckScan(t, entries, /*verify=*/true);

  // Properties: what the builder reported is what the reader decodes.
  const TableProperties& props = t.properties();
  EXPECT_EQ(props.num_entries, p.n);
  EXPECT_EQ(props.num_entries, written.num_entries);
  EXPECT_EQ(props.num_deletions, (p.n + 3) / 7);
  uint64_t raw_keys = 0, raw_values = 0;
  for (const auto& [k, v] : entries) {
    raw_keys += k.size();
    raw_values += v.size();
  }
  EXPECT_EQ(props.raw_key_size, raw_keys);
  EXPECT_EQ(props.raw_value_size, raw_values);
  EXPECT_EQ(props.num_data_blocks, written.num_data_blocks);
  EXPECT_EQ(props.data_size, written.data_size);
  EXPECT_EQ(props.data_size, t.data_end());
  EXPECT_EQ(props.index_size, t.footer().index_handle.size());
  EXPECT_EQ(props.smallest_key, p.n ? entries.front().first : "");
  EXPECT_EQ(props.largest_key, p.n ? entries.back().first : "");
  EXPECT_EQ(props.format_version, kTableFormatVersion);
  EXPECT_EQ(props.comparator_name, BytewiseComparator()->Name());
  EXPECT_GT(props.creation_time, 1600000000u);
  EXPECT_TRUE(props.unknown.empty());
  if (p.filter) {
    EXPECT_EQ(props.filter_policy_name, "siftdb.BlockedBloom");
    EXPECT_EQ(t.filter_policy_name(), "siftdb.BlockedBloom");
    EXPECT_DOUBLE_EQ(props.filter_bits_per_key, 10);
    EXPECT_EQ(props.filter_num_keys, p.n);
    EXPECT_EQ(props.filter_size, t.filter_data().size());
    EXPECT_GT(t.filter_data().size(), kFilterTrailerSize);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.filter_data().data()) % 64, 0u);
  } else {
    EXPECT_EQ(props.filter_policy_name, "");
    EXPECT_TRUE(t.filter_data().empty());
    EXPECT_EQ(props.filter_size, 0u);
  }
  if (p.compression == kNoCompression || !p.compressible) {
    // Raw (incompressible data is stored raw too): only the keys shrink,
    // by prefix compression.
    EXPECT_GE(props.data_size, raw_values);
  } else if (p.n >= 100) {
    EXPECT_LT(props.data_size, (raw_keys + raw_values) / 2);
  }

  // Point lookups: every key by its own sequence, and at a newer snapshot.
  const size_t step = std::max<size_t>(1, p.n / 500);
  for (size_t i = 0; i < p.n; i += step) {
    const std::string user_key(ExtractUserKey(entries[i].first));
    GetResult r = Get(t, IKey(user_key, kMaxSequenceNumber, kValueTypeForSeek));
    ASSERT_TRUE(r.called);
    ASSERT_EQ(r.key, entries[i].first);
    ASSERT_EQ(r.value, entries[i].second);
    EXPECT_TRUE(t.UserKeyMayMatch(user_key, nullptr));
  }
  // Absent keys: found() either not called or called with another user key.
  for (size_t i = 0; i < 200; i++) {
    const std::string user_key = "key" + std::to_string(i) + "x";
    GetResult r = Get(t, IKey(user_key, kMaxSequenceNumber, kValueTypeForSeek));
    if (r.called) EXPECT_NE(ExtractUserKey(r.key), user_key);
  }
}

std::string ParamName(const testing::TestParamInfo<RoundTripParam>& info) {
  const RoundTripParam& p = info.param;
  return absl::StrFormat("n%d_%s_%s_%s", p.n,
                         p.compression == kSnappyCompression ? "snappy" : "raw",
                         p.compressible ? "compressible" : "random",
                         p.filter ? "filter" : "nofilter");
}

std::vector<RoundTripParam> RoundTripParams() {
  std::vector<RoundTripParam> out;
  for (size_t n : {1, 2, 10, 100, 1000, 20000}) {
    for (CompressionType c : {kNoCompression, kSnappyCompression}) {
      for (bool compressible : {false, true}) {
        for (bool filter : {false, true}) {
          out.push_back({n, c, compressible, filter});
        }
      }
    }
  }
  out.push_back({100000, kSnappyCompression, true, true});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, TableRoundTrip,
                         testing::ValuesIn(RoundTripParams()), ParamName);

TEST(TableTest, EmptyTable) {
  TableOptions options;
  options.filter_policy = NewBloomFilterPolicy(10);
  auto contents = BuildTable(options, {});
  ASSERT_TRUE(contents.ok()) << contents.status();
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  CheckScan(**table, {});
  EXPECT_EQ((*table)->properties().num_entries, 0u);
  EXPECT_EQ((*table)->properties().num_data_blocks, 0u);
  EXPECT_FALSE(Get(**table, IKey("a", 1)).called);
}

TEST(TableTest, ManyVersionsOfOneKeyAcrossBlocks) {
  // Versions of one user key spanning many blocks: lookups at every
  // snapshot find the newest version at or below it.
  TableOptions options;
  options.block_size = 256;
  options.filter_policy = NewBloomFilterPolicy(10);
  KVList entries;
  entries.emplace_back(IKey("a", 5), "a5");
  for (SequenceNumber seq = 1000; seq >= 10; seq -= 10) {
    entries.emplace_back(IKey("k", seq), "v" + std::to_string(seq));
  }
  entries.emplace_back(IKey("z", 1), "z1");
  TableProperties props;
  auto contents = BuildTable(options, entries, &props);
  ASSERT_TRUE(contents.ok());
  EXPECT_GT(props.num_data_blocks, 5u);
  EXPECT_EQ(props.filter_num_keys, 3u);  // distinct user keys
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  CheckScan(**table, entries);
  for (SequenceNumber snap = 5; snap <= 1005; snap += 1) {
    GetResult r = Get(**table, IKey("k", snap, kValueTypeForSeek));
    ASSERT_TRUE(r.called);
    ParsedInternalKey parsed;
    ASSERT_TRUE(ParseInternalKey(r.key, &parsed));
    if (snap < 10) {
      EXPECT_EQ(parsed.user_key, "z");
    } else {
      EXPECT_EQ(parsed.user_key, "k");
      EXPECT_EQ(parsed.sequence,
                std::min<SequenceNumber>(1000, snap / 10 * 10));
    }
  }
}

TEST(TableTest, LargeValuesAndKeys) {
  TableOptions options;
  TestRandom rnd(5);
  KVList entries;
  for (int i = 0; i < 50; i++) {
    std::string user_key = absl::StrFormat("%03d", i) + rnd.Bytes(i * 80);
    entries.emplace_back(IKey(user_key, 7), i % 2 ? rnd.Bytes(i * 1000)
                                                  : rnd.Compressible(i * 5000));
  }
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  CheckScan(**table, entries, true);
}

TEST(TableTest, BuilderRejectsOutOfOrderAndMalformedKeys) {
  test::StringSink sink;
  {
    TableBuilder builder(TableOptions(), &sink);
    builder.Add(IKey("b", 1), "");
    builder.Add(IKey("a", 1), "");
    EXPECT_EQ(builder.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(builder.Finish().code(), absl::StatusCode::kInvalidArgument);
  }
  {
    TableBuilder builder(TableOptions(), &sink);
    builder.Add(IKey("a", 1), "");
    builder.Add(IKey("a", 1), "");  // duplicate
    EXPECT_EQ(builder.status().code(), absl::StatusCode::kInvalidArgument);
    builder.Abandon();
  }
  {
    TableBuilder builder(TableOptions(), &sink);
    builder.Add("short", "");
    EXPECT_EQ(builder.status().code(), absl::StatusCode::kInvalidArgument);
    builder.Abandon();
  }
}

TEST(TableTest, CompressionOnlyWhenItSavesAnEighth) {
  // Incompressible values: every block stored raw even with snappy on.
  TableOptions options;
  const KVList entries = MakeEntries(500, /*compressible=*/false, 9);
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok());
  auto index = (*table)->NewIndexIterator();
  int blocks = 0;
  for (index->SeekToFirst(); index->Valid(); index->Next(), blocks++) {
    BlockHandle h;
    std::string_view v = index->value();
    ASSERT_TRUE(h.DecodeFrom(&v));
    EXPECT_EQ((*contents)[h.offset() + h.size()], kNoCompression);
  }
  EXPECT_GT(blocks, 1);
  // Compressible values: stored snappy.
  const KVList entries2 = MakeEntries(500, /*compressible=*/true, 9);
  contents = BuildTable(options, entries2);
  ASSERT_TRUE(contents.ok());
  table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok());
  index = (*table)->NewIndexIterator();
  index->SeekToFirst();
  ASSERT_TRUE(index->Valid());
  BlockHandle h;
  std::string_view v = index->value();
  ASSERT_TRUE(h.DecodeFrom(&v));
  EXPECT_EQ((*contents)[h.offset() + h.size()], kSnappyCompression);
}

TEST(TableTest, ApproximateOffsets) {
  TableOptions options;
  options.compression = kNoCompression;
  const KVList entries = MakeEntries(10000, false, 3, 100);
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok());
  const Table& t = **table;
  EXPECT_EQ(t.ApproximateOffsetOf(IKey("", kMaxSequenceNumber)), 0u);
  uint64_t prev = 0;
  for (size_t i = 0; i < entries.size(); i += 100) {
    const uint64_t off = t.ApproximateOffsetOf(entries[i].first);
    EXPECT_GE(off, prev);
    // ~130 bytes per entry; within one block (4 KiB) of proportional.
    const double want = static_cast<double>(i) * t.data_end() / entries.size();
    EXPECT_NEAR(static_cast<double>(off), want, 8192) << i;
    prev = off;
  }
  EXPECT_EQ(t.ApproximateOffsetOf(IKey("zzz", 1)), t.data_end());
}

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
  std::unique_ptr<Cache> cache = NewLRUCache(1 << 20);
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
  std::unique_ptr<Cache> cache =
      NewLRUCache(1 << 20);  // smaller than the table: evicts
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

}  // namespace
}  // namespace siftdb
