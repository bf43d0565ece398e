// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Leveled compaction: tables move down the levels, overwritten and deleted
// entries disappear unless a snapshot still sees them, every output table
// has its filter, and recovery after compactions keeps everything.

#include <string>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace compaction_test {

class CompactionTest : public ::testing::Test {
 protected:
  CompactionTest() {
    options_.create_if_missing = true;
    options_.write_buffer_size = 16 << 10;
    options_.max_file_size = 16 << 10;
    options_.max_bytes_for_level_base = 64 << 10;
    path_ = dir_.Join("db");
    Reopen();
  }
  void Reopen() {
    db_.reset();
    auto db = DB::Open(options_, path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }
  DBImpl* impl() { return static_cast<DBImpl*>(db_.get()); }
  int FilesAtLevel(int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(
        absl::StrFormat("siftdb.num-files-at-level%d", level), &v));
    return std::stoi(v);
  }
  int SstFilesOnDisk() {
    auto children = Env::Default()->GetChildren(path_);
    EXPECT_TRUE(children.ok());
    int sst = 0;
    for (const auto& name : *children) {
      if (name.ends_with(".sst")) sst++;
    }
    return sst;
  }
  int TotalFiles() {
    int n = 0;
    for (int l = 0; l < 7; l++) n += FilesAtLevel(l);
    return n;
  }
  std::string Get(std::string_view key, const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::string value;
    absl::Status s = db_->Get(ro, key, &value);
    if (absl::IsNotFound(s)) return "NOT_FOUND";
    if (!s.ok()) return s.ToString();
    return value;
  }
  // Counts entries (including tombstones and old versions) in all tables.
  uint64_t TableEntries() {
    std::string stats;
    EXPECT_TRUE(db_->GetProperty("siftdb.sstables", &stats));
    return stats.size();
  }

  test::TempDir dir_;
  Options options_;
  std::string path_;
  std::unique_ptr<DB> db_;
};

TEST_F(CompactionTest, LevelZeroCompactsIntoDeeperLevels) {
  const std::string value(100, 'v');
  for (int i = 0; i < 20000; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(),
                         absl::StrFormat("key%08d", i * 7919 % 20000), value)
                    .ok());
  }
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  EXPECT_LT(FilesAtLevel(0), options_.level0_file_num_compaction_trigger);
  int deeper = 0;
  for (int l = 1; l < 7; l++) deeper += FilesAtLevel(l);
  EXPECT_GT(deeper, 0);
  for (int i = 0; i < 20000; i += 13) {
    ASSERT_EQ(value, Get(absl::StrFormat("key%08d", i))) << i;
  }
  std::string stats;
  ASSERT_TRUE(db_->GetProperty("siftdb.stats", &stats));
  EXPECT_NE(std::string::npos, stats.find("write amplification")) << stats;
}

TEST_F(CompactionTest, CompactRangeDropsDeletedAndOverwrittenData) {
  const std::string big(1000, 'b');
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 500; i++) {
      ASSERT_TRUE(db_->Put(WriteOptions(), absl::StrFormat("k%05d", i),
                           big + std::to_string(round))
                      .ok());
    }
  }
  for (int i = 0; i < 500; i += 2) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), absl::StrFormat("k%05d", i)).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  uint64_t size = 0;
  Range all{"", "\xff\xff\xff"};
  db_->GetApproximateSizes(&all, 1, &size);
  // 250 live values of ~1 KB, compressed well: far below the 1.5 MB written.
  EXPECT_LT(size, 400u << 10) << size;
  EXPECT_EQ(0, FilesAtLevel(0));
  for (int i = 0; i < 500; i++) {
    ASSERT_EQ(i % 2 == 0 ? "NOT_FOUND" : big + "2",
              Get(absl::StrFormat("k%05d", i)));
  }
}

TEST_F(CompactionTest, SnapshotsKeepOldVersionsThroughCompaction) {
  ASSERT_TRUE(db_->Put(WriteOptions(), "foo", "v1").ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "gone", "g1").ok());
  const Snapshot* snap = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), "foo", "v2").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), "gone").ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ("v1", Get("foo", snap));
  EXPECT_EQ("g1", Get("gone", snap));
  EXPECT_EQ("v2", Get("foo"));
  EXPECT_EQ("NOT_FOUND", Get("gone"));
  std::unique_ptr<Iterator> it = db_->NewIterator([&] {
    ReadOptions ro;
    ro.snapshot = snap;
    return ro;
  }());
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("foo", it->key());
  EXPECT_EQ("v1", it->value());
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("gone", it->key());
  it.reset();
  db_->ReleaseSnapshot(snap);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ("v2", Get("foo"));
  EXPECT_EQ("NOT_FOUND", Get("gone"));
}

TEST_F(CompactionTest, RecoveryAfterCompactions) {
  for (int i = 0; i < 5000; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), absl::StrFormat("key%06d", i),
                         std::string(200, 'a' + i % 26))
                    .ok());
    if (i % 1000 == 999) {
      ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    }
  }
  for (int i = 0; i < 5000; i += 3) {
    ASSERT_TRUE(
        db_->Delete(WriteOptions(), absl::StrFormat("key%06d", i)).ok());
  }
  Reopen();
  Reopen();
  for (int i = 0; i < 5000; i++) {
    ASSERT_EQ(i % 3 == 0 ? "NOT_FOUND" : std::string(200, 'a' + i % 26),
              Get(absl::StrFormat("key%06d", i)))
        << i;
  }
  // Only live files remain in the directory (once a compaction the reopen
  // started has installed its outputs).
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  EXPECT_EQ(TotalFiles(), SstFilesOnDisk());
}

TEST_F(CompactionTest, TablesPinnedByAnIteratorGoWhenItDoes) {
  for (int i = 0; i < 3000; i++) {
    ASSERT_TRUE(
        db_->Put(WriteOptions(), absl::StrFormat("key%06d", i), "old").ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  for (int i = 0; i < 3000; i++) {
    ASSERT_TRUE(
        db_->Put(WriteOptions(), absl::StrFormat("key%06d", i), "new").ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  // The iterator still reads the old tables, so they stay on disk...
  EXPECT_GT(SstFilesOnDisk(), TotalFiles());
  EXPECT_EQ("old", it->value());
  // ...and go with it, with no later compaction needed to notice (the
  // background thread deletes them, not the reader).
  it.reset();
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  EXPECT_EQ(TotalFiles(), SstFilesOnDisk());
}

TEST_F(CompactionTest, FilterStillRejectsAbsentKeysAfterCompaction) {
  for (int i = 0; i < 3000; i++) {
    ASSERT_TRUE(
        db_->Put(WriteOptions(), absl::StrFormat("key%06d", i * 2), "x").ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  std::string before, after;
  ASSERT_TRUE(db_->GetProperty("siftdb.counter.filter.negatives", &before));
  for (int i = 0; i < 3000; i++) {
    ASSERT_EQ("NOT_FOUND", Get(absl::StrFormat("key%06d", i * 2 + 1)));
    ASSERT_EQ("x", Get(absl::StrFormat("key%06d", i * 2)));
  }
  ASSERT_TRUE(db_->GetProperty("siftdb.counter.filter.negatives", &after));
  EXPECT_GT(std::stoull(after) - std::stoull(before), 2800u);
}

}  // namespace compaction_test
}  // namespace siftdb
