// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The operational properties of DB::GetProperty: compaction-pending,
// estimate-pending-compaction-bytes, num-running-compactions,
// estimate-num-keys, levelstats and the block cache's usage and capacity.

#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "siftdb/cache.h"
#include "siftdb/db.h"
#include "tests/db/blocking_env.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace properties_test {

namespace fs = std::filesystem;

std::string Prop(DB* db, const std::string& name) {
  std::string v;
  EXPECT_TRUE(db->GetProperty(name, &v)) << name;
  return v;
}

uint64_t TableBytes(const std::string& dir) {
  uint64_t total = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".sst") total += fs::file_size(e.path());
  }
  return total;
}

Options BaseOptions() {
  Options o;
  o.create_if_missing = true;
  o.compression = kNoCompression;
  return o;
}

absl::Status PutRange(DB* db, int from, int to, const std::string& tag) {
  for (int i = from; i < to; i++) {
    absl::Status s = db->Put(WriteOptions(), absl::StrFormat("k%06d", i),
                             tag + std::string(100, 'v'));
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

TEST(PropertiesTest, PendingCompactionWhileACompactionIsHeldThenNone) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  test::BlockingTableEnv env;
  Options o = BaseOptions();
  o.env = &env;
  o.level0_file_num_compaction_trigger = 2;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  EXPECT_EQ(Prop(d, "siftdb.compaction-pending"), "0");
  EXPECT_EQ(Prop(d, "siftdb.estimate-pending-compaction-bytes"), "0");
  EXPECT_EQ(Prop(d, "siftdb.num-running-compactions"), "0");

  env.BlockTablesAfter(2);  // two flushes; the compaction's output waits
  for (int i = 0; i < 2; i++) {
    ASSERT_TRUE(PutRange(d, i * 100, i * 100 + 200, "a").ok());
    ASSERT_TRUE(d->Flush(FlushOptions()).ok());
  }
  // Level 0 at its trigger: its tables and all of level 1 (empty) are due.
  EXPECT_EQ(Prop(d, "siftdb.compaction-pending"), "1");
  EXPECT_EQ(Prop(d, "siftdb.estimate-pending-compaction-bytes"),
            absl::StrFormat("%d", TableBytes(path)));
  // The compaction starts on its own and waits at its first output.
  for (int i = 0; i < 500 && env.waiting() == 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(env.waiting(), 1);
  EXPECT_EQ(Prop(d, "siftdb.num-running-compactions"), "1");
  EXPECT_EQ(Prop(d, "siftdb.compaction-pending"), "1");

  env.Release();
  ASSERT_TRUE(d->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Prop(d, "siftdb.compaction-pending"), "0");
  EXPECT_EQ(Prop(d, "siftdb.estimate-pending-compaction-bytes"), "0");
  EXPECT_EQ(Prop(d, "siftdb.num-running-compactions"), "0");
}

TEST(PropertiesTest, PendingBytesCountAnOversizedLevelWithItsNextLevel) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = BaseOptions();
  o.max_bytes_for_level_base = 16 << 10;  // level 1 soon over its target
  o.max_file_size = 8 << 10;
  // Nothing automatic: level 1, over its target, would otherwise be moved
  // down by the background thread before the properties are read (a race
  // ASan's slower timing lost).
  o.disable_auto_compactions = true;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  ASSERT_TRUE(PutRange(d, 0, 1000, "a").ok());
  // Everything into level 1 (CompactRange stops at the last level with
  // data), far over its 16 KiB target; level 2 is empty: a move, no bytes.
  ASSERT_TRUE(d->CompactRange(nullptr, nullptr).ok());
  const int level1 = std::stoi(Prop(d, "siftdb.num-files-at-level1"));
  ASSERT_GT(level1, 2);
  EXPECT_EQ(Prop(d, "siftdb.compaction-pending"), "1");
  EXPECT_EQ(Prop(d, "siftdb.estimate-pending-compaction-bytes"), "0");
}

TEST(PropertiesTest, EstimateNumKeysCountsEveryEntryUntilCompacted) {
  test::TempDir dir;
  auto db = DB::Open(BaseOptions(), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  EXPECT_EQ(Prop(d, "siftdb.estimate-num-keys"), "0");
  ASSERT_TRUE(PutRange(d, 0, 100, "a").ok());
  EXPECT_EQ(Prop(d, "siftdb.estimate-num-keys"), "100");
  ASSERT_TRUE(d->Flush(FlushOptions()).ok());
  EXPECT_EQ(Prop(d, "siftdb.estimate-num-keys"), "100");
  // Overwrites and deletes count again until a compaction merges them.
  ASSERT_TRUE(PutRange(d, 0, 50, "b").ok());
  ASSERT_TRUE(d->Delete(WriteOptions(), "k000099").ok());
  EXPECT_EQ(Prop(d, "siftdb.estimate-num-keys"), "151");
  ASSERT_TRUE(d->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(Prop(d, "siftdb.estimate-num-keys"), "99");
}

TEST(PropertiesTest, LevelStatsTableShowsFilesAndCompactionBytes) {
  test::TempDir dir;
  auto db = DB::Open(BaseOptions(), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  ASSERT_TRUE(PutRange(d, 0, 500, "a").ok());
  ASSERT_TRUE(d->Flush(FlushOptions()).ok());
  ASSERT_TRUE(PutRange(d, 0, 500, "b").ok());
  ASSERT_TRUE(d->CompactRange(nullptr, nullptr).ok());
  const std::string table = Prop(d, "siftdb.levelstats");
  std::vector<std::string> lines =
      absl::StrSplit(table, '\n', absl::SkipEmpty());
  ASSERT_EQ(lines.size(), 2u + 7u) << table;
  EXPECT_TRUE(absl::StartsWith(lines[0], "Level Files Size(MB) Read(MB)"));
  std::vector<std::string> l1 =
      absl::StrSplit(lines[2 + 1], ' ', absl::SkipEmpty());
  ASSERT_EQ(l1.size(), 7u) << lines[3];
  EXPECT_EQ(l1[0], "1");
  EXPECT_EQ(l1[1], Prop(d, "siftdb.num-files-at-level1"));
  EXPECT_GT(std::stod(l1[3]), 0) << "bytes read by compactions into level 1";
  EXPECT_GT(std::stod(l1[4]), 0) << "bytes written";
  EXPECT_EQ(l1[6], "1") << "one compaction into level 1";
}

TEST(PropertiesTest, BlockCacheCapacityAndUsage) {
  test::TempDir dir;
  Options o = BaseOptions();
  o.block_cache_size = 1 << 20;
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  EXPECT_EQ(Prop(d, "siftdb.block-cache-capacity"), "1048576");
  EXPECT_EQ(Prop(d, "siftdb.block-cache-usage"), "0");
  ASSERT_TRUE(PutRange(d, 0, 100, "a").ok());
  ASSERT_TRUE(d->Flush(FlushOptions()).ok());
  std::string v;
  ASSERT_TRUE(d->Get(ReadOptions(), "k000010", &v).ok());
  EXPECT_GT(std::stoll(Prop(d, "siftdb.block-cache-usage")), 0);

  o.block_cache_size = 0;  // no cache at all
  auto none = DB::Open(o, dir.Join("none"));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_EQ(Prop(none->get(), "siftdb.block-cache-capacity"), "0");
}

}  // namespace properties_test
}  // namespace siftdb
