// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RepairDB: salvages a database whose MANIFEST or tables are damaged.

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace repair_test {

class RepairTest : public ::testing::Test {
 protected:
  RepairTest() {
    options_.create_if_missing = true;
    options_.write_buffer_size = 32 << 10;
    options_.max_file_size = 32 << 10;
    path_ = dir_.Join("db");
  }
  void Open() {
    db_.reset();
    auto db = DB::Open(options_, path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }
  std::string Get(std::string_view key) {
    std::string value;
    absl::Status s = db_->Get(ReadOptions(), key, &value);
    if (absl::IsNotFound(s)) return "NOT_FOUND";
    if (!s.ok()) return "ERROR: " + s.ToString();
    return value;
  }
  std::vector<std::string> Files(FileType want) {
    std::vector<std::string> out;
    for (const auto& e : std::filesystem::directory_iterator(path_)) {
      uint64_t number;
      FileType type;
      if (ParseFileName(e.path().filename().string(), &number, &type) &&
          type == want) {
        out.push_back(e.path().string());
      }
    }
    return out;
  }
  static std::string Key(int i) { return absl::StrFormat("key%06d", i); }
  static std::string Value(int i, int round) {
    return absl::StrFormat("value-%d-%d-", i, round) + std::string(100, 'v');
  }

  test::TempDir dir_;
  Options options_;
  std::string path_;
  std::unique_ptr<DB> db_;
};

TEST_F(RepairTest, LostManifestIsRebuiltAndNewestVersionsWin) {
  Open();
  // Several rounds of overwrites and deletes, compacted in between, so old
  // versions sit in higher-numbered files than some newer ones.
  for (int round = 0; round < 3; round++) {
    for (int i = 0; i < 1500; i++) {
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), Value(i, round)).ok());
    }
    if (round == 1) {
      ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    }
  }
  for (int i = 0; i < 1500; i += 5) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), Key(i)).ok());
  }
  db_.reset();  // the last writes are only in the log
  for (const std::string& f : Files(FileType::kDescriptorFile)) {
    std::filesystem::remove(f);
  }
  std::filesystem::remove(path_ + "/CURRENT");
  options_.create_if_missing = false;
  ASSERT_FALSE(DB::Open(options_, path_).ok());

  ASSERT_TRUE(RepairDB(path_, options_).ok());
  Open();
  for (int i = 0; i < 1500; i++) {
    ASSERT_EQ(i % 5 == 0 ? "NOT_FOUND" : Value(i, 2), Get(Key(i))) << i;
  }
  // And it stays a normal DB.
  ASSERT_TRUE(db_->Put(WriteOptions(), "after", "repair").ok());
  Open();
  EXPECT_EQ("repair", Get("after"));
}

TEST_F(RepairTest, DamagedTableLosesOnlyItsBadBlocks) {
  Open();
  for (int i = 0; i < 3000; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), Value(i, 0)).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  db_.reset();
  std::vector<std::string> tables = Files(FileType::kTableFile);
  ASSERT_FALSE(tables.empty());
  // Flip a byte early in one table's data.
  {
    std::fstream f(tables[0], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(100);
    char c = 0x5a;
    f.write(&c, 1);
  }
  ASSERT_TRUE(RepairDB(path_, options_).ok());
  Open();
  int present = 0;
  for (int i = 0; i < 3000; i++) {
    const std::string got = Get(Key(i));
    if (got != "NOT_FOUND") {
      ASSERT_EQ(Value(i, 0), got) << i;  // never wrong data
      present++;
    }
  }
  EXPECT_GT(present, 2500);
  EXPECT_LT(present, 3000);
  std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
  int iterated = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next()) iterated++;
  EXPECT_TRUE(it->status().ok());
  EXPECT_EQ(present, iterated);
}

TEST_F(RepairTest, UnreadableTableIsSetAside) {
  Open();
  for (int i = 0; i < 100; i++) {  // fits one write buffer: one table
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(i), Value(i, 0)).ok());
  }
  ASSERT_TRUE(static_cast<DBImpl*>(db_.get())->FlushMemTable().ok());
  db_.reset();
  std::vector<std::string> tables = Files(FileType::kTableFile);
  ASSERT_EQ(1u, tables.size());
  std::filesystem::resize_file(tables[0], 10);  // footer gone
  ASSERT_TRUE(RepairDB(path_, options_).ok());
  EXPECT_TRUE(std::filesystem::exists(path_ + "/lost"));
  Open();
  EXPECT_EQ("NOT_FOUND", Get(Key(1)));
}

TEST_F(RepairTest, BadArguments) {
  EXPECT_TRUE(
      absl::IsInvalidArgument(RepairDB(dir_.Join("nothere"), options_)));
  ASSERT_TRUE(Env::Default()->CreateDir(path_).ok());
  EXPECT_TRUE(absl::IsNotFound(RepairDB(path_, options_)));
}

}  // namespace repair_test
}  // namespace siftdb
