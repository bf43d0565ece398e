// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Filter memory and Options::optimize_filters_for_hits.
// - siftdb.filter-memory equals the filter bytes of the tables open in the
//   table cache: it grows with each flushed table, falls when a compaction
//   replaces overlapping tables by one, stays within the table cache's
//   capacity, and is part of siftdb.approximate-memory-usage; so is
//   siftdb.index-memory, the open tables' index blocks and fingerprints.
// - With optimize_filters_for_hits, a compaction writing the bottommost
//   level writes tables without a filter, level-0 tables keep theirs, and
//   every Get still agrees with a std::map model (present, deleted and
//   absent keys), over a few seeds; without the option every table has a
//   filter (the control).

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "db/output_compression.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "siftdb/filter_policy.h"
#include "table/table.h"
#include "tests/db/live_tables.h"
#include "tests/support/temp_dir.h"
#include "util/absl_compat.h"

namespace siftdb {
namespace filter_memory_test {

std::string Key(int i) { return absl::StrFormat("key%06d", i); }

uint64_t Prop(DB* db, const std::string& name) {
  std::string v;
  EXPECT_TRUE(db->GetProperty(name, &v)) << name;
  uint64_t n = 0;
  EXPECT_TRUE(absl::SimpleAtoi(v, &n)) << name << " = " << v;
  return n;
}

struct LiveTable {
  int level;
  size_t filter_bytes;
};

// Every live table (from siftdb.sstables) with its level and the size of
// its filter, read from the file itself.
std::vector<LiveTable> LiveTables(DB* db, const std::string& path) {
  std::vector<LiveTable> out;
  for (const OpenedLiveTable& t : OpenLiveTables(db, path)) {
    out.push_back({t.level, t.table->filter_data().size()});
  }
  return out;
}

size_t TotalFilterBytes(const std::vector<LiveTable>& tables) {
  size_t total = 0;
  for (const LiveTable& t : tables) total += t.filter_bytes;
  return total;
}

// Opens every live table (a full scan goes through all of them).
void TouchAllTables(DB* db) {
  auto it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
}

TEST(FilterMemoryTest, FollowsTheOpenTables) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o;
  o.create_if_missing = true;
  o.disable_auto_compactions = true;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  EXPECT_EQ(Prop(d, "siftdb.filter-memory"), 0u);

  // Four tables over the same 2000 keys: four filters of about 2.5 KB.
  uint64_t last = 0;
  for (int t = 0; t < 4; t++) {
    for (int i = 0; i < 2000; i++) {
      ASSERT_TRUE(
          d->Put(WriteOptions(), Key(i), absl::StrFormat("v%d", t)).ok());
    }
    ASSERT_TRUE(d->Flush(FlushOptions()).ok());
    ASSERT_NO_FATAL_FAILURE(TouchAllTables(d));
    const uint64_t now = Prop(d, "siftdb.filter-memory");
    EXPECT_EQ(now, TotalFilterBytes(LiveTables(d, path))) << "table " << t;
    EXPECT_GT(now, last + 2000) << "table " << t;
    EXPECT_GE(Prop(d, "siftdb.approximate-memory-usage"), now);
    last = now;
  }
  // One table replaces the four: a quarter of the filter bytes.
  ASSERT_TRUE(d->CompactRange(nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(TouchAllTables(d));
  const uint64_t compacted = Prop(d, "siftdb.filter-memory");
  ASSERT_EQ(LiveTables(d, path).size(), 1u);
  EXPECT_EQ(compacted, TotalFilterBytes(LiveTables(d, path)));
  EXPECT_LT(compacted, last / 3);
  EXPECT_GT(compacted, 0u);
  std::string v;
  EXPECT_TRUE(d->Get(ReadOptions(), Key(7), &v).ok());
  EXPECT_EQ(v, "v3");
}

// siftdb.index-memory is the open tables' index blocks and fingerprints,
// and part of siftdb.approximate-memory-usage.
TEST(FilterMemoryTest, IndexMemoryFollowsTheOpenTables) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o;
  o.create_if_missing = true;
  o.disable_auto_compactions = true;
  o.block_cache_size = 0;  // tables, MemTables and nothing else
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  EXPECT_EQ(Prop(d, "siftdb.index-memory"), 0u);
  // An empty MemTable and its filter; each flush leaves a fresh one.
  const uint64_t empty = Prop(d, "siftdb.approximate-memory-usage");
  for (int t = 0; t < 3; t++) {
    for (int i = 0; i < 3000; i++) {
      ASSERT_TRUE(
          d->Put(WriteOptions(), Key(i), std::string(100, 'a' + t)).ok());
    }
    ASSERT_TRUE(d->Flush(FlushOptions()).ok());
    ASSERT_NO_FATAL_FAILURE(TouchAllTables(d));
    size_t expected = 0;
    for (const OpenedLiveTable& live : OpenLiveTables(d, path)) {
      EXPECT_GT(live.table->index_memory(), live.table->properties().index_size)
          << "no fingerprints in table " << t;
      expected += live.table->index_memory();
    }
    const uint64_t now = Prop(d, "siftdb.index-memory");
    EXPECT_EQ(now, expected) << "table " << t;
    EXPECT_EQ(Prop(d, "siftdb.approximate-memory-usage"),
              empty + now + Prop(d, "siftdb.filter-memory"));
  }
}

// The table cache holds max_open_files - 10 tables (at least 6), spread
// over 16 shards of at least one table each: 16 tables open at most. Past
// that, evicted tables close and their filters stop counting.
TEST(FilterMemoryTest, BoundedByTheTableCache) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o;
  o.create_if_missing = true;
  o.disable_auto_compactions = true;
  o.max_open_files = 16;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  constexpr int kTables = 40;  // disjoint tables of 250 keys
  for (int t = 0; t < kTables; t++) {
    for (int i = 0; i < 250; i++) {
      ASSERT_TRUE(d->Put(WriteOptions(), Key(t * 250 + i), "v").ok());
    }
    ASSERT_TRUE(d->Flush(FlushOptions()).ok());
  }
  const std::vector<LiveTable> tables = LiveTables(d, path);
  ASSERT_EQ(tables.size(), static_cast<size_t>(kTables));
  size_t largest = 0;
  for (const LiveTable& t : tables) largest = std::max(largest, t.filter_bytes);
  ASSERT_GT(largest, 0u);
  for (int t = 0; t < kTables; t++) {
    std::string v;
    ASSERT_TRUE(d->Get(ReadOptions(), Key(t * 250 + 3), &v).ok());
    const uint64_t now = Prop(d, "siftdb.filter-memory");
    EXPECT_GT(now, 0u);
    EXPECT_LE(now, 16 * largest) << "after table " << t;
  }
  EXPECT_LT(Prop(d, "siftdb.filter-memory"), TotalFilterBytes(tables));
}

TEST(OptimizeFiltersForHitsTest, RuleOfTheOutputOptions) {
  TableOptions base;
  base.filter_policy = NewBloomFilterPolicy(10);
  Options o;
  EXPECT_NE(OutputTableOptions(base, o, 3, 3, true).filter_policy, nullptr);
  o.optimize_filters_for_hits = true;
  EXPECT_EQ(OutputTableOptions(base, o, 3, 3, true).filter_policy, nullptr);
  EXPECT_NE(OutputTableOptions(base, o, 3, 4, false).filter_policy, nullptr);
  EXPECT_NE(OutputTableOptions(base, o, 0, 3, false).filter_policy, nullptr);
}

// Random puts and deletes against a std::map, flushed in small tables and
// compacted to the bottom twice, more level-0 tables on top at the end.
void RunModel(bool optimize, uint32_t seed) {
  SCOPED_TRACE(absl::StrFormat("optimize %d seed %u", optimize, seed));
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o;
  o.create_if_missing = true;
  o.disable_auto_compactions = true;
  o.write_buffer_size = 64 << 10;
  o.max_file_size = 16 << 10;  // with 100-byte values: several tables
  o.compression = kNoCompression;
  o.optimize_filters_for_hits = optimize;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  std::map<std::string, std::string> model;
  std::mt19937 rng(seed);
  constexpr int kKeys = 3000;  // even keys only: odd ones stay absent
  auto write = [&](int ops) {
    for (int n = 0; n < ops; n++) {
      const std::string key = Key(2 * static_cast<int>(rng() % (kKeys / 2)));
      if (rng() % 4 == 0) {
        ASSERT_TRUE(d->Delete(WriteOptions(), key).ok());
        model.erase(key);
      } else {
        const std::string v =
            absl::StrFormat("v%u-%d-", seed, n) + std::string(100, 'v');
        ASSERT_TRUE(d->Put(WriteOptions(), key, v).ok());
        model[key] = v;
      }
      if (n % 700 == 699) {
        ASSERT_TRUE(d->Flush(FlushOptions()).ok());
      }
    }
    ASSERT_TRUE(d->Flush(FlushOptions()).ok());
  };
  auto check = [&] {
    for (int k = 0; k < kKeys + 10; k++) {
      std::string v;
      absl::Status s = d->Get(ReadOptions(), Key(k), &v);
      auto it = model.find(Key(k));
      if (it == model.end()) {
        ASSERT_TRUE(absl::IsNotFound(s)) << Key(k) << ": " << s;
      } else {
        ASSERT_TRUE(s.ok()) << Key(k) << ": " << s;
        ASSERT_EQ(v, it->second) << Key(k);
      }
      ASSERT_TRUE(absl::IsNotFound(d->Get(ReadOptions(), Key(k) + "x", &v)));
    }
  };
  ASSERT_NO_FATAL_FAILURE(write(3000));
  ASSERT_TRUE(d->CompactRange(nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(write(2000));
  ASSERT_TRUE(d->CompactRange(nullptr, nullptr).ok());
  // Everything is at one level now, the bottommost, written by compaction.
  std::vector<LiveTable> tables = LiveTables(d, path);
  ASSERT_GT(tables.size(), 1u);
  for (const LiveTable& t : tables) {
    EXPECT_GE(t.level, 1);
    EXPECT_EQ(t.filter_bytes == 0, optimize) << "level " << t.level;
  }
  ASSERT_NO_FATAL_FAILURE(check());
  ASSERT_NO_FATAL_FAILURE(TouchAllTables(d));
  EXPECT_EQ(Prop(d, "siftdb.filter-memory") == 0, optimize);
  // Level-0 tables on top keep their filters.
  ASSERT_NO_FATAL_FAILURE(write(1500));
  tables = LiveTables(d, path);
  int level0 = 0;
  for (const LiveTable& t : tables) {
    if (t.level != 0) continue;
    level0++;
    EXPECT_GT(t.filter_bytes, 0u);
  }
  EXPECT_GT(level0, 0);
  ASSERT_NO_FATAL_FAILURE(check());
  // And the answers survive a reopen.
  db->reset();
  db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  d = db->get();
  ASSERT_NO_FATAL_FAILURE(check());
}

TEST(OptimizeFiltersForHitsTest, BottomTablesHaveNoFilterAndReadsAgree) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    ASSERT_NO_FATAL_FAILURE(RunModel(/*optimize=*/true, seed));
  }
}

TEST(OptimizeFiltersForHitsTest, OffByDefaultEveryTableHasAFilter) {
  EXPECT_FALSE(Options().optimize_filters_for_hits);
  ASSERT_NO_FATAL_FAILURE(RunModel(/*optimize=*/false, 1));
}

}  // namespace filter_memory_test
}  // namespace siftdb
