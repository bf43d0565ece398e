// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Seek-triggered compaction: a table that lookups keep consulting before
// finding their key deeper down is merged into the next level by the
// background thread (without any write to wake it), and every key keeps
// its newest value across that compaction. Iterators sample what they read
// (about once per MiB) and charge such tables too.

#include <map>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace seek_compaction_test {

class SeekCompactionTest : public ::testing::Test {
 protected:
  SeekCompactionTest() {
    options_.create_if_missing = true;
    options_.write_buffer_size = 64 << 10;
    options_.max_file_size = 64 << 10;
    options_.filter_bits_per_key = 10;
    path_ = dir_.Join("db");
    auto db = DB::Open(options_, path_);
    EXPECT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }
  DBImpl* impl() { return static_cast<DBImpl*>(db_.get()); }
  int FilesAtLevel(int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(
        absl::StrFormat("siftdb.num-files-at-level%d", level), &v));
    return std::stoi(v);
  }
  static std::string Key(int i) { return absl::StrFormat("key%06d", i); }
  std::string Get(const std::string& key) {
    std::string value;
    absl::Status s = db_->Get(ReadOptions(), key, &value);
    if (absl::IsNotFound(s)) return "NOT_FOUND";
    if (!s.ok()) return s.ToString();
    return value;
  }

  // kSpanKeys keys "old..." compacted into one deeper level, then one
  // level-0 table spanning the whole key range that holds every 100th key
  // ("new..."): lookups of the other keys consult it and then go deeper.
  static constexpr int kSpanKeys = 2000;
  static std::string SpanValue(int i) {
    return (i % 100 == 0 ? "new" : "old") + Key(i);
  }
  void MakeSpanningLevel0Table() {
    for (int i = 0; i < kSpanKeys; i++) {
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "old" + Key(i)).ok());
    }
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
    ASSERT_EQ(FilesAtLevel(0), 0);
    for (int i = 0; i < kSpanKeys; i += 100) {
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "new" + Key(i)).ok());
    }
    ASSERT_TRUE(impl()->FlushMemTable().ok());
    ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
    ASSERT_EQ(FilesAtLevel(0), 1);
  }

  test::TempDir dir_;
  Options options_;
  std::string path_;
  std::unique_ptr<DB> db_;
};

TEST_F(SeekCompactionTest, TablePassedOverByLookupsMovesDown) {
  MakeSpanningLevel0Table();

  // Budget: at least 100 seeks per table; spend several times that.
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < kSpanKeys; i += 7) {
      ASSERT_EQ(Get(Key(i)), SpanValue(i));
    }
  }
  // No write follows: the background thread notices by itself.
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  EXPECT_EQ(FilesAtLevel(0), 0);

  for (int i = 0; i < kSpanKeys; i++) {
    ASSERT_EQ(Get(Key(i)), SpanValue(i));
  }
}

TEST_F(SeekCompactionTest, BudgetSurvivesNewVersions) {
  MakeSpanningLevel0Table();

  // The spanning table's budget is 100 seeks. Spend 70 of them, then let a
  // flush of an unrelated key (past the range) install new Versions, then
  // spend 70 more: the table has been passed over 140 times in all.
  auto spend = [&](int seeks, int from) {
    for (int n = 0, i = from; n < seeks; n++, i++) {
      if (i % 100 == 0) i++;  // keys the spanning table holds charge nothing
      ASSERT_EQ(Get(Key(i)), "old" + Key(i));
    }
  };
  spend(70, 1);
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  ASSERT_GE(FilesAtLevel(0), 1);
  ASSERT_TRUE(db_->Put(WriteOptions(), "zzz", "unrelated").ok());
  ASSERT_TRUE(impl()->FlushMemTable().ok());
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  const int before = FilesAtLevel(0);
  spend(70, 1001);
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  EXPECT_LT(FilesAtLevel(0), before) << "the spanning table never moved down";
  for (int i = 0; i < kSpanKeys; i++) {
    ASSERT_EQ(Get(Key(i)), SpanValue(i));
  }
  ASSERT_EQ(Get("zzz"), "unrelated");
}

TEST_F(SeekCompactionTest, LookupsFoundInTheFirstTableChargeNothing) {
  for (int i = 0; i < 500; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), "v" + Key(i)).ok());
  }
  ASSERT_TRUE(impl()->FlushMemTable().ok());
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  const int level0 = FilesAtLevel(0);
  ASSERT_GE(level0, 1);
  for (int round = 0; round < 5; round++) {
    for (int i = 0; i < 500; i++) ASSERT_EQ(Get(Key(i)), "v" + Key(i));
  }
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  EXPECT_EQ(FilesAtLevel(0), level0);
}

// Writes kKeys keys with large values and compacts them into one deeper
// level, then flushes a level-0 table that spans the whole range but holds
// only every 100th key (newer values).
class ScanSampleTest : public SeekCompactionTest {
 protected:
  static constexpr int kKeys = 2000;
  static std::string Value(const char* tag, int i) {
    return tag + Key(i) + std::string(1000, 'v');
  }
  void FillOverlappingLevels() {
    for (int i = 0; i < kKeys; i++) {
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), Value("old", i)).ok());
      model_[Key(i)] = Value("old", i);
    }
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
    ASSERT_EQ(FilesAtLevel(0), 0);
  }
  void AddSpanningLevel0Table() {
    for (int i = 0; i < kKeys; i += 100) {
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), Value("new", i)).ok());
      model_[Key(i)] = Value("new", i);
    }
    ASSERT_TRUE(impl()->FlushMemTable().ok());
    ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
    ASSERT_EQ(FilesAtLevel(0), 1);
  }
  // `scans` full forward scans, each checked against the model.
  void Scan(int scans) {
    for (int round = 0; round < scans; round++) {
      std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
      auto want = model_.begin();
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++want) {
        ASSERT_NE(want, model_.end());
        ASSERT_EQ(it->key(), want->first);
        ASSERT_EQ(it->value(), want->second);
      }
      ASSERT_TRUE(it->status().ok()) << it->status();
      ASSERT_EQ(want, model_.end());
    }
  }
  std::map<std::string, std::string> model_;
};

TEST_F(ScanSampleTest, ScansOverOverlappingTablesMoveThemDown) {
  FillOverlappingLevels();
  AddSpanningLevel0Table();
  // A scan reads about 2 MiB, so about two samples; the level-0 table's
  // budget is 100 seeks. 150 scans: about 300 samples, each of which finds
  // its key in both levels.
  Scan(150);
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  EXPECT_EQ(FilesAtLevel(0), 0);
  Scan(1);
}

// Short scans, each in a new iterator, read about 32 KiB: one in ~64 of
// them samples. When an iterator's sample points came from its own
// address, the allocator gave every new iterator the same one, so either
// all of these scans sampled at one offset or (nearly always) none did.
TEST_F(ScanSampleTest, ShortScansInNewIteratorsAreSampledAtRandom) {
  FillOverlappingLevels();
  AddSpanningLevel0Table();
  constexpr int kScans = 12800;  // ~200 samples; the budget is 100
  constexpr int kEntries = 32;
  uint64_t state = 1;
  for (int scan = 0; scan < kScans; scan++) {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    // Starts below key 1860, so a scan stays inside the level-0 table's
    // range [key000000, key001900] and each sample finds two tables.
    const int start = static_cast<int>((state >> 33) % 1860);
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    auto want = model_.lower_bound(Key(start));
    it->Seek(Key(start));
    for (int n = 0; n < kEntries; n++, it->Next(), ++want) {
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), want->first);
    }
  }
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  EXPECT_EQ(FilesAtLevel(0), 0) << "short scans never charged the table";
  Scan(1);
}

TEST_F(ScanSampleTest, ScansOfOneSortedRunChargeNothing) {
  FillOverlappingLevels();
  int files[kNumLevels];
  for (int level = 0; level < kNumLevels; level++) {
    files[level] = FilesAtLevel(level);
  }
  Scan(150);
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  for (int level = 0; level < kNumLevels; level++) {
    EXPECT_EQ(FilesAtLevel(level), files[level]) << "level " << level;
  }
}

}  // namespace seek_compaction_test
}  // namespace siftdb
