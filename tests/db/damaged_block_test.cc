// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A data block whose bytes changed on disk is never returned as good data
// and never rewritten as good: Get with default ReadOptions reports
// DataLoss (checksums are verified by default), a block bound for the
// block cache is verified whatever the ReadOptions say, and a compaction
// meeting it stops with DataLoss naming the file and offset instead of
// writing its bytes into a new table with a valid checksum.

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/parallel_compaction_test_util.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace damaged_block_test {

constexpr int kKeys = 500;

std::string Key(int i) { return absl::StrFormat("key%06d", i); }
std::string Value(int i) { return absl::StrFormat("value-%06d-%s", i, "x"); }

Options DamageOptions() {
  Options o;
  o.create_if_missing = true;
  o.compression = kNoCompression;  // the flipped byte lands in a value
  return o;
}

class DamagedBlockTest : public ::testing::Test {
 protected:
  // One table of kKeys entries; the byte at offset 22 of its first data
  // block (inside the first value: 3 length bytes, a 17-byte key) flipped.
  void SetUp() override {
    path_ = dir_.Join("db");
    {
      auto db = DB::Open(DamageOptions(), path_);
      ASSERT_TRUE(db.ok()) << db.status();
      for (int i = 0; i < kKeys; i++) {
        ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), Value(i)).ok());
      }
      ASSERT_TRUE(static_cast<DBImpl*>(db->get())->FlushMemTable().ok());
    }
    const std::set<uint64_t> tables = test::TableFilesOnDisk(path_);
    ASSERT_EQ(1u, tables.size());
    table_ = TableFileName(path_, *tables.begin());
    ASSERT_FALSE(table_.empty());
    std::fstream f(table_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(22);
    char c;
    f.get(c);
    f.seekp(22);
    f.put(static_cast<char>(c ^ 0x01));
  }

  std::unique_ptr<DB> Open() {
    auto db = DB::Open(DamageOptions(), path_);
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? std::move(*db) : nullptr;
  }

  test::TempDir dir_;
  std::string path_;
  std::string table_;
};

TEST_F(DamagedBlockTest, DefaultReadsReportTheDamage) {
  std::unique_ptr<DB> db = Open();
  ASSERT_NE(nullptr, db);
  std::string v;
  absl::Status s = db->Get(ReadOptions(), Key(0), &v);
  EXPECT_EQ(absl::StatusCode::kDataLoss, s.code()) << s << " value " << v;
  EXPECT_NE(std::string::npos, s.message().find(table_)) << s;
  auto it = db->NewIterator(ReadOptions());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid() && it->key() == Key(0) && it->value() != Value(0));
  EXPECT_EQ(absl::StatusCode::kDataLoss, it->status().code()) << it->status();
}

// Opting out of verification does not put unchecked bytes in the cache:
// a block read with verify_checksums = false but bound for the cache is
// verified anyway.
TEST_F(DamagedBlockTest, TheCacheNeverHoldsUncheckedBlocks) {
  std::unique_ptr<DB> db = Open();
  ASSERT_NE(nullptr, db);
  ReadOptions unchecked;
  unchecked.verify_checksums = false;
  unchecked.fill_cache = true;
  std::string v;
  absl::Status s = db->Get(unchecked, Key(0), &v);
  EXPECT_EQ(absl::StatusCode::kDataLoss, s.code()) << s << " value " << v;
  // And a verifying read after it still sees the damage (nothing cached).
  s = db->Get(ReadOptions(), Key(0), &v);
  EXPECT_EQ(absl::StatusCode::kDataLoss, s.code()) << s;
}

TEST_F(DamagedBlockTest, CompactionStopsInsteadOfLaunderingTheBlock) {
  std::unique_ptr<DB> db = Open();
  ASSERT_NE(nullptr, db);
  absl::Status s = db->CompactRange(nullptr, nullptr);
  ASSERT_EQ(absl::StatusCode::kDataLoss, s.code()) << s;
  EXPECT_NE(std::string::npos, s.message().find(table_)) << s;
  EXPECT_NE(std::string::npos, s.message().find("offset 0")) << s;
  db.reset();
  // The damaged table is still the only one: nothing was rewritten.
  EXPECT_EQ(test::TableFilesOnDisk(path_),
            (std::set<uint64_t>{
                std::stoull(std::filesystem::path(table_).stem().string())}));
}

}  // namespace damaged_block_test
}  // namespace siftdb
