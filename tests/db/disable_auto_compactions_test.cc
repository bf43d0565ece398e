// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Options::disable_auto_compactions: level 0 grows past every trigger
// without a compaction and without stalling writes; CompactRange still
// merges; a reopen without the option compacts on its own again.

#include <chrono>
#include <memory>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace disable_auto_compactions_test {

int FilesAt(DB* db, int level) {
  std::string v;
  EXPECT_TRUE(db->GetProperty(
      absl::StrFormat("siftdb.num-files-at-level%d", level), &v));
  return std::stoi(v);
}

std::string Stats(DB* db) {
  std::string v;
  EXPECT_TRUE(db->GetProperty("siftdb.stats", &v));
  return v;
}

Options SmallTriggers() {
  Options o;
  o.create_if_missing = true;
  o.compression = kNoCompression;
  o.level0_file_num_compaction_trigger = 2;
  o.level0_slowdown_writes_trigger = 3;
  o.level0_stop_writes_trigger = 4;
  return o;
}

absl::Status FlushTables(DB* db, int tables, int keys_per_table) {
  for (int t = 0; t < tables; t++) {
    for (int i = 0; i < keys_per_table; i++) {
      absl::Status s =
          db->Put(WriteOptions(), absl::StrFormat("k%03d-%05d", i, t), "value");
      if (!s.ok()) return s;
    }
    absl::Status s = db->Flush(FlushOptions());
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

TEST(DisableAutoCompactionsTest, LevelZeroPassesTheStopTriggerUncompacted) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = SmallTriggers();
  o.disable_auto_compactions = true;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  DB* d = db->get();
  // Three times the stop trigger: with the triggers applied the fifth flush
  // would wait forever for a compaction that never comes.
  ASSERT_TRUE(FlushTables(d, 12, 50).ok());
  // Give a wrongly started compaction time to show.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_EQ(FilesAt(d, 0), 12);
  EXPECT_EQ(FilesAt(d, 1), 0);
  // No level-0 slowdown either (each would sleep 1 ms per write).
  EXPECT_NE(Stats(d).find("write stall: 0.000 sec"), std::string::npos)
      << Stats(d);
  std::string pending;
  ASSERT_TRUE(d->GetProperty("siftdb.compaction-pending", &pending));
  EXPECT_EQ(pending, "1") << "due, though it will not start on its own";

  // An explicit compaction still runs.
  ASSERT_TRUE(d->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(FilesAt(d, 0), 0);
  EXPECT_GT(FilesAt(d, 1), 0);
  std::string v;
  ASSERT_TRUE(d->Get(ReadOptions(), "k049-00011", &v).ok());
  EXPECT_EQ(v, "value");
}

TEST(DisableAutoCompactionsTest, ReopenWithoutItCompactsAgain) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = SmallTriggers();
  o.disable_auto_compactions = true;
  {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE(FlushTables(db->get(), 6, 50).ok());
    EXPECT_EQ(FilesAt(db->get(), 0), 6);
  }
  o.disable_auto_compactions = false;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < 1000 && FilesAt(db->get(), 0) >= 2; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_LT(FilesAt(db->get(), 0), 2);
  EXPECT_GT(FilesAt(db->get(), 1), 0);
}

}  // namespace disable_auto_compactions_test
}  // namespace siftdb
