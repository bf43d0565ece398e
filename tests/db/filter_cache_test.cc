// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Options::cache_filter_blocks and the per-level filter lines of
// siftdb.stats.
// - With the option, the filters are in the block cache: siftdb.filter-memory
//   equals siftdb.filter-memory-in-cache and the live tables' filter bytes,
//   and none is on the heap; without it, nothing is in the cache.
// - Under a block cache smaller than the filters, with puts, deletes,
//   flushes and compactions, every Get and MultiGet agrees with a std::map
//   model over several seeds (filters evicted and read again, counted by
//   filter.cache_misses); reopening with the option flipped agrees too.
// - Level-0 filters are pinned by default: probes of level-0 tables make no
//   filter cache lookups; with pin_l0_filter_blocks_in_cache = false they do.
// - Readers on four threads, while a writer flushes and compacts under a
//   tiny cache, find every key they wrote (TSan in CI).
// - siftdb.stats' filter lines count each level's checks and negatives
//   (absent keys all probe the one level), and the false-positive rate seen
//   there is near the expected one.

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/filter_policy.h"
#include "table/table.h"
#include "tests/db/live_tables.h"
#include "tests/support/temp_dir.h"
#include "util/absl_compat.h"

namespace siftdb {
namespace filter_cache_test {

std::string Key(int i) { return absl::StrFormat("key%07d", i); }

uint64_t Prop(DB* db, const std::string& name) {
  std::string v;
  EXPECT_TRUE(db->GetProperty(name, &v)) << name;
  uint64_t n = 0;
  EXPECT_TRUE(absl::SimpleAtoi(v, &n)) << name << " = " << v;
  return n;
}

Options CachedFilterOptions(size_t cache_bytes) {
  Options o;
  o.create_if_missing = true;
  o.cache_filter_blocks = true;
  o.block_cache_size = cache_bytes;
  o.write_buffer_size = 64 << 10;
  o.target_file_size_base = 64 << 10;
  return o;
}

TEST(FilterCacheTest, FiltersAreChargedToTheBlockCache) {
  for (const bool cached : {false, true}) {
    SCOPED_TRACE(cached ? "cache_filter_blocks" : "heap filters");
    test::TempDir dir;
    const std::string path = dir.Join("db");
    Options o = CachedFilterOptions(8 << 20);
    o.cache_filter_blocks = cached;
    o.disable_auto_compactions = true;
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    DB* d = db->get();
    for (int t = 0; t < 4; t++) {
      for (int i = 0; i < 2000; i++) {
        ASSERT_TRUE(d->Put(WriteOptions(), Key(t * 2000 + i), "v").ok());
      }
      ASSERT_TRUE(d->Flush(FlushOptions()).ok());
    }
    size_t live_bytes = 0;
    for (const OpenedLiveTable& t : OpenLiveTables(d, path)) {
      live_bytes += t.table->filter_data().size();
    }
    ASSERT_GT(live_bytes, 4 * 2000u);
    EXPECT_EQ(Prop(d, "siftdb.filter-memory"), live_bytes);
    EXPECT_EQ(Prop(d, "siftdb.filter-memory-in-cache"),
              cached ? live_bytes : 0);
    EXPECT_GE(Prop(d, "siftdb.approximate-memory-usage"), live_bytes);
    std::string v;
    EXPECT_TRUE(d->Get(ReadOptions(), Key(4321), &v).ok());
  }
}

// A model test under a block cache far smaller than the filters.
void RunModel(uint64_t seed, size_t cache_bytes, bool pin_l0) {
  SCOPED_TRACE(
      absl::StrFormat("seed %d cache %d pin %d", seed, cache_bytes, pin_l0));
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = CachedFilterOptions(cache_bytes);
  o.pin_l0_filter_blocks_in_cache = pin_l0;
  std::mt19937_64 rnd(seed);
  std::map<std::string, std::string> model;
  constexpr int kKeySpace = 20000;
  auto check = [&](DB* d) {
    std::vector<std::string> batch;
    for (int i = 0; i < kKeySpace; i += 1 + static_cast<int>(rnd() % 5)) {
      const std::string k = Key(i);
      std::string v;
      const absl::Status s = d->Get(ReadOptions(), k, &v);
      auto it = model.find(k);
      if (it == model.end()) {
        ASSERT_TRUE(absl::IsNotFound(s)) << k << ": " << s;
      } else {
        ASSERT_TRUE(s.ok()) << k << ": " << s;
        ASSERT_EQ(v, it->second) << k;
      }
      batch.push_back(k);
      if (batch.size() == 16) {
        std::vector<std::string_view> keys(batch.begin(), batch.end());
        std::vector<std::string> values;
        auto statuses = d->MultiGet(ReadOptions(), keys, &values);
        for (size_t j = 0; j < keys.size(); j++) {
          auto m = model.find(batch[j]);
          if (m == model.end()) {
            ASSERT_TRUE(absl::IsNotFound(statuses[j])) << batch[j];
          } else {
            ASSERT_TRUE(statuses[j].ok()) << batch[j] << statuses[j];
            ASSERT_EQ(values[j], m->second) << batch[j];
          }
        }
        batch.clear();
      }
    }
  };
  {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int op = 0; op < 30000; op++) {
      const std::string k = Key(static_cast<int>(rnd() % kKeySpace));
      if (rnd() % 8 == 0) {
        ASSERT_TRUE((*db)->Delete(WriteOptions(), k).ok());
        model.erase(k);
      } else {
        const std::string v =
            absl::StrFormat("v%d-%s", op, std::string(40, 'x'));
        ASSERT_TRUE((*db)->Put(WriteOptions(), k, v).ok());
        model[k] = v;
      }
    }
    ASSERT_NO_FATAL_FAILURE(check(db->get()));
    ASSERT_TRUE(static_cast<DBImpl*>(db->get())->WaitForBackgroundWork().ok());
    ASSERT_NO_FATAL_FAILURE(check(db->get()));
    // The filters did not all fit: some were read again.
    EXPECT_GT(Prop(db->get(), "siftdb.counter.filter.cache_misses"), 0u);
    EXPECT_EQ(Prop(db->get(), "siftdb.counter.filter.load_errors"), 0u);
  }
  // Reopened with the filters on the heap, then in the cache again.
  for (const bool cached : {false, true}) {
    o.cache_filter_blocks = cached;
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_NO_FATAL_FAILURE(check(db->get()));
    // 1 KiB per cache shard holds no filter: each probe read its filter.
    EXPECT_EQ(Prop(db->get(), "siftdb.counter.filter.cache_misses") > 0,
              cached);
    if (cached) {
      EXPECT_EQ(Prop(db->get(), "siftdb.filter-memory"),
                Prop(db->get(), "siftdb.filter-memory-in-cache"));
    } else {
      EXPECT_EQ(Prop(db->get(), "siftdb.filter-memory-in-cache"), 0u);
    }
  }
}

TEST(FilterCacheTest, ModelUnderATinyCache) {
  for (uint64_t seed : {1, 2, 3}) {
    ASSERT_NO_FATAL_FAILURE(RunModel(seed, 16 << 10, seed % 2 == 1));
  }
}

// Filter cache lookups so far (hits and misses).
uint64_t FilterLookups(DB* db) {
  return Prop(db, "siftdb.counter.filter.cache_hits") +
         Prop(db, "siftdb.counter.filter.cache_misses");
}

// A DB with filters in the block cache and three level-0 tables over the
// even keys below Key(2000).
std::unique_ptr<DB> OpenWithThreeLevel0Tables(const std::string& path,
                                              bool pin_l0) {
  Options o = CachedFilterOptions(8 << 20);
  o.pin_l0_filter_blocks_in_cache = pin_l0;
  o.disable_auto_compactions = true;
  auto db = DB::Open(o, path);
  EXPECT_TRUE(db.ok()) << db.status();
  if (!db.ok()) return nullptr;
  for (int t = 0; t < 3; t++) {
    for (int i = 0; i < 1000; i++) {
      EXPECT_TRUE((*db)->Put(WriteOptions(), Key(2 * i), "v").ok());
    }
    EXPECT_TRUE((*db)->Flush(FlushOptions()).ok());
  }
  return std::move(*db);
}

// Filter cache lookups made by 500 Gets of absent keys in level 0's range.
uint64_t FilterLookupsOfLevel0Reads(bool pin_l0) {
  test::TempDir dir;
  std::unique_ptr<DB> db = OpenWithThreeLevel0Tables(dir.Join("db"), pin_l0);
  if (db == nullptr) return 0;
  const uint64_t before = FilterLookups(db.get());
  for (int i = 0; i < 500; i++) {
    std::string v;
    EXPECT_TRUE(absl::IsNotFound(db->Get(ReadOptions(), Key(2 * i + 1), &v)));
  }
  EXPECT_GT(Prop(db.get(), "siftdb.counter.filter.negatives"), 1000u);
  return FilterLookups(db.get()) - before;
}

// A MultiGet looks each cached filter up once for its whole batch: 32
// absent keys over three level-0 tables make three lookups, not 96.
TEST(FilterCacheTest, MultiGetLooksUpAFilterOncePerBatch) {
  test::TempDir dir;
  std::unique_ptr<DB> db = OpenWithThreeLevel0Tables(dir.Join("db"), false);
  ASSERT_NE(db, nullptr);
  std::vector<std::string> absent;
  for (int i = 0; i < 32; i++) absent.push_back(Key(60 * i + 1));
  std::vector<std::string_view> keys(absent.begin(), absent.end());
  const uint64_t before = FilterLookups(db.get());
  std::vector<std::string> values;
  for (const absl::Status& s : db->MultiGet(ReadOptions(), keys, &values)) {
    EXPECT_TRUE(absl::IsNotFound(s)) << s;
  }
  EXPECT_EQ(FilterLookups(db.get()) - before, 3u);
}

TEST(FilterCacheTest, Level0FiltersArePinned) {
  EXPECT_EQ(FilterLookupsOfLevel0Reads(true), 0u);
  EXPECT_GE(FilterLookupsOfLevel0Reads(false), 1500u);  // 3 tables x 500
}

TEST(FilterCacheTest, ConcurrentReadersWhileCompacting) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = CachedFilterOptions(24 << 10);
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  constexpr int kBase = 5000;
  for (int i = 0; i < kBase; i++) {
    ASSERT_TRUE(d->Put(WriteOptions(), Key(i), "base").ok());
  }
  ASSERT_TRUE(d->Flush(FlushOptions()).ok());
  std::atomic<bool> done{false};
  std::atomic<int> wrong{0};
  std::vector<std::thread> readers;
  for (int t = 0; t < 4; t++) {
    readers.emplace_back([&, t] {
      std::mt19937 rnd(t);
      while (!done.load()) {
        std::string v;
        const int i = static_cast<int>(rnd() % kBase);
        if (!d->Get(ReadOptions(), Key(i), &v).ok()) wrong++;
        if (d->Get(ReadOptions(), Key(kBase * 10 + i), &v).ok()) wrong++;
      }
    });
  }
  // New versions of other keys: flushes and compactions under the readers.
  for (int i = 0; i < 20000; i++) {
    ASSERT_TRUE(d->Put(WriteOptions(), Key(kBase + i % 7000), "new").ok());
  }
  ASSERT_TRUE(static_cast<DBImpl*>(d)->WaitForBackgroundWork().ok());
  done = true;
  for (auto& r : readers) r.join();
  EXPECT_EQ(wrong.load(), 0);
}

// The numbers of one level's filter line in siftdb.stats: checks,
// negatives, and the seen and expected FP rates (percent; -1 for "-").
struct FilterLine {
  uint64_t checks = 0, negatives = 0;
  double seen = -1, expected = -1;
};

FilterLine FilterLineOf(DB* db, int level) {
  std::string stats;
  EXPECT_TRUE(db->GetProperty("siftdb.stats", &stats));
  bool in_filters = false;
  for (absl::string_view line : absl::StrSplit(AsAbsl(stats), '\n')) {
    if (absl::StrContains(line, "(filters)")) {
      in_filters = true;
      continue;
    }
    if (!in_filters) continue;
    std::vector<absl::string_view> f =
        absl::StrSplit(line, ' ', absl::SkipEmpty());
    int n = -1;
    if (f.size() < 9 || !absl::SimpleAtoi(f[0], &n)) break;
    if (n != level) continue;
    FilterLine out;
    EXPECT_TRUE(absl::SimpleAtoi(f[5], &out.checks)) << line;
    EXPECT_TRUE(absl::SimpleAtoi(f[6], &out.negatives)) << line;
    auto percent = [](absl::string_view s) {
      double v = -1;
      if (!s.empty() && s.back() == '%') s.remove_suffix(1);
      if (!absl::SimpleAtod(s, &v)) return -1.0;
      return v;
    };
    out.seen = percent(f[7]);
    out.expected = percent(f[8]);
    return out;
  }
  ADD_FAILURE() << "no filter line for level " << level << " in\n" << stats;
  return {};
}

TEST(FilterCacheTest, StatsCountEachLevelsFilterOutcomes) {
  for (const bool cached : {false, true}) {
    SCOPED_TRACE(cached ? "cache_filter_blocks" : "heap filters");
    test::TempDir dir;
    const std::string path = dir.Join("db");
    Options o = CachedFilterOptions(8 << 20);
    o.cache_filter_blocks = cached;
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    DB* d = db->get();
    for (int i = 0; i < 20000; i++) {
      ASSERT_TRUE(d->Put(WriteOptions(), Key(2 * i), "v").ok());
    }
    ASSERT_TRUE(d->CompactRange(nullptr, nullptr).ok());
    std::string sstables;
    ASSERT_TRUE(d->GetProperty("siftdb.sstables", &sstables));
    // Every table is on one level after the full compaction.
    int level = -1;
    for (const OpenedLiveTable& t : OpenLiveTables(d, path)) {
      if (level >= 0) {
        ASSERT_EQ(t.level, level) << sstables;
      }
      level = t.level;
    }
    ASSERT_GT(level, 0);
    const FilterLine before = FilterLineOf(d, level);
    constexpr int kAbsent = 20000, kPresent = 1000;
    for (int i = 0; i < kAbsent; i++) {
      std::string v;
      ASSERT_TRUE(absl::IsNotFound(d->Get(ReadOptions(), Key(2 * i + 1), &v)));
    }
    for (int i = 0; i < kPresent; i++) {
      std::string v;
      ASSERT_TRUE(d->Get(ReadOptions(), Key(2 * i), &v).ok());
    }
    const FilterLine after = FilterLineOf(d, level);
    // One check per read whose key falls in a table's range (absent keys
    // between two tables, or past the last, probe none).
    const uint64_t checks = after.checks - before.checks;
    EXPECT_LE(checks, uint64_t{kAbsent + kPresent});
    EXPECT_GT(checks, uint64_t{kAbsent + kPresent} * 99 / 100);
    const uint64_t negatives = after.negatives - before.negatives;
    EXPECT_GT(negatives, uint64_t{kAbsent} * 97 / 100);
    EXPECT_LE(negatives, uint64_t{kAbsent});
    // 10 bits/key: about 1% expected; the seen rate over 20,000 absent
    // keys is within a factor of three of it.
    EXPECT_GT(after.expected, 0.5);
    EXPECT_LT(after.expected, 1.5);
    EXPECT_GE(after.seen, 0.0);
    EXPECT_LT(after.seen, 3 * after.expected);
    // No reads reached level 0 (empty): its line, if shown, counts none.
    EXPECT_EQ(FilterLineOf(d, 0).checks, 0u);
  }
}

}  // namespace filter_cache_test
}  // namespace siftdb
