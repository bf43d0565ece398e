// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// What iterate bounds save: a bounded scan stops at its bound even inside a
// long run of deleted keys (few data blocks read, where an unbounded scan
// reads through every deleted key to the next live one), and tables and
// data blocks wholly outside the bounds are not read (the counters
// iter.bounds_skipped_tables and iter.bounds_skipped_blocks move, and a
// seek into a gap between tables reads no data block at all).

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/write_batch.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace iterate_bounds_scan_test {

class IterateBoundsScanTest : public ::testing::Test {
 protected:
  IterateBoundsScanTest() {
    options_.create_if_missing = true;
    options_.compression = kNoCompression;
    path_ = dir_.Join("db");
  }

  void Open() {
    db_.reset();
    auto db = DB::Open(options_, path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }

  uint64_t Counter(const std::string& name) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty("siftdb.counter." + name, &v)) << name;
    return std::stoull(v);
  }

  void PutRange(const std::string& prefix, int first, int last,
                int value_size) {
    WriteBatch batch;
    for (int i = first; i <= last; i++) {
      batch.Put(Key(prefix, i), std::string(value_size, 'v'));
    }
    ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  }

  static std::string Key(const std::string& prefix, int i) {
    return absl::StrFormat("%s%05d", prefix, i);
  }

  // Keys from Seek(start) while key < stop, with `ro`; counts the data
  // blocks read meanwhile into *reads.
  std::vector<std::string> Scan(ReadOptions ro, const std::string& start,
                                const std::string& stop, uint64_t* reads) {
    ro.fill_cache = false;  // every block the scan needs is a read
    const uint64_t before = Counter("block.data_reads");
    std::vector<std::string> keys;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    for (it->Seek(start); it->Valid() && it->key() < stop; it->Next()) {
      keys.emplace_back(it->key());
    }
    EXPECT_TRUE(it->status().ok()) << it->status();
    *reads = Counter("block.data_reads") - before;
    return keys;
  }

  test::TempDir dir_;
  Options options_;
  std::string path_;
  std::unique_ptr<DB> db_;
};

TEST_F(IterateBoundsScanTest, UpperBoundStopsInsideLongRunOfDeletedKeys) {
  options_.max_file_size = 64 << 10;  // many tables
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(PutRange("k", 0, 19999, 100));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  // Delete almost everything: tombstones in the MemTable, the values in
  // about 500 data blocks of the tables below.
  WriteBatch batch;
  for (int i = 1000; i < 19000; i++) batch.Delete(Key("k", i));
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());

  const std::string lower = Key("k", 990), upper = Key("k", 1010);
  std::vector<std::string> expect;
  for (int i = 990; i < 1000; i++) expect.push_back(Key("k", i));

  // Unbounded: the scan has to find the next live key (k19000) before it
  // can see that it is past `upper`: it reads every deleted key's block.
  uint64_t unbounded_reads = 0;
  EXPECT_EQ(expect, Scan(ReadOptions(), lower, upper, &unbounded_reads));
  // Bounded: DBIter stops at the first entry at or past the bound, and the
  // tables' iterators read no block past the one holding it (either alone
  // keeps the reads small here; the model test shows DBIter's stop is
  // needed for correct answers).
  ReadOptions bounded;
  bounded.iterate_upper_bound = upper;
  uint64_t bounded_reads = 0;
  EXPECT_EQ(expect, Scan(bounded, lower, "~", &bounded_reads));
  EXPECT_LE(bounded_reads, 4u);
  EXPECT_GE(unbounded_reads, 400u);

  // Backward with a lower bound: the same inside the run, from above.
  // (The bounds' bytes must outlive the iterator: named strings.)
  const std::string back_lower = Key("k", 18990);
  const std::string back_upper = Key("k", 19005);
  ReadOptions backward;
  backward.iterate_lower_bound = back_lower;
  backward.iterate_upper_bound = back_upper;
  backward.fill_cache = false;
  const uint64_t before = Counter("block.data_reads");
  std::unique_ptr<Iterator> it = db_->NewIterator(backward);
  std::vector<std::string> got;
  for (it->SeekToLast(); it->Valid(); it->Prev()) got.emplace_back(it->key());
  ASSERT_TRUE(it->status().ok()) << it->status();
  std::vector<std::string> expect_back;
  for (int i = 19004; i >= 19000; i--) expect_back.push_back(Key("k", i));
  EXPECT_EQ(expect_back, got);
  EXPECT_LE(Counter("block.data_reads") - before, 4u);
}

// Level 1: tables of a-keys, then tables of c-keys (a boundary between
// tables at the gap); level 0: one table of e-keys.
class IterateBoundsSkipTest : public IterateBoundsScanTest {
 protected:
  void SetUp() override {
    options_.max_file_size = 16 << 10;
    ASSERT_NO_FATAL_FAILURE(Open());
    ASSERT_NO_FATAL_FAILURE(PutRange("a", 0, 999, 100));
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    ASSERT_NO_FATAL_FAILURE(PutRange("c", 0, 999, 100));
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    ASSERT_NO_FATAL_FAILURE(PutRange("e", 0, 99, 100));
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
    std::string l0;
    ASSERT_TRUE(db_->GetProperty("siftdb.num-files-at-level0", &l0));
    ASSERT_EQ("1", l0);
  }
};

TEST_F(IterateBoundsSkipTest, SeekIntoGapBetweenTablesReadsNoBlock) {
  ReadOptions ro;
  ro.fill_cache = false;
  const std::string lower = "b", upper = "b5";
  ro.iterate_lower_bound = lower;
  ro.iterate_upper_bound = upper;
  const uint64_t reads = Counter("block.data_reads");
  const uint64_t tables = Counter("iter.bounds_skipped_tables");
  std::unique_ptr<Iterator> it = db_->NewIterator(ro);
  it->Seek("b1");
  EXPECT_FALSE(it->Valid());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  it->SeekToLast();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok()) << it->status();
  EXPECT_EQ(0u, Counter("block.data_reads") - reads);
  // The level-0 e-table is left out, and the c-table the seek lands on is
  // declined.
  EXPECT_GE(Counter("iter.bounds_skipped_tables") - tables, 2u);

  // Without bounds the same seek reads a c-block.
  ReadOptions plain;
  plain.fill_cache = false;
  it = db_->NewIterator(plain);
  it->Seek("b1");
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ("c00000", it->key());
  EXPECT_GT(Counter("block.data_reads") - reads, 0u);
}

TEST_F(IterateBoundsSkipTest, ScansStopBeforeTablesOutsideTheBounds) {
  // Forward over the end of the a-tables with upper "b": the c-table after
  // them starts past the bound and is never opened.
  ReadOptions ro;
  const std::string upper = "b";
  ro.iterate_upper_bound = upper;
  uint64_t tables = Counter("iter.bounds_skipped_tables");
  uint64_t reads = 0;
  std::vector<std::string> expect;
  for (int i = 990; i < 1000; i++) expect.push_back(Key("a", i));
  EXPECT_EQ(expect, Scan(ro, Key("a", 990), "~", &reads));
  EXPECT_LE(reads, 2u);
  EXPECT_GE(Counter("iter.bounds_skipped_tables") - tables, 2u);

  // Backward from the start of the c-tables with lower "b": the a-table
  // before them ends below the bound.
  ReadOptions back;
  const std::string lower = "b";
  back.iterate_lower_bound = lower;
  back.fill_cache = false;
  tables = Counter("iter.bounds_skipped_tables");
  const uint64_t before = Counter("block.data_reads");
  std::unique_ptr<Iterator> it = db_->NewIterator(back);
  it->Seek(Key("c", 3));
  std::vector<std::string> got;
  for (; it->Valid(); it->Prev()) got.emplace_back(it->key());
  ASSERT_TRUE(it->status().ok()) << it->status();
  EXPECT_EQ((std::vector<std::string>{Key("c", 3), Key("c", 2), Key("c", 1),
                                      Key("c", 0)}),
            got);
  EXPECT_LE(Counter("block.data_reads") - before, 2u);
  EXPECT_GE(Counter("iter.bounds_skipped_tables") - tables, 1u);
}

TEST_F(IterateBoundsScanTest, BlocksBeyondTheBoundAreNotRead) {
  // One entry per data block (values larger than the block size), keys
  // a00000..a00099 and c00000..c00099 in one table: the index separator
  // between a00099 and c00000 is shortened to "b".
  options_.block_size = 256;
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(PutRange("a", 0, 99, 1000));
  ASSERT_NO_FATAL_FAILURE(PutRange("c", 0, 99, 1000));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());

  ReadOptions ro;
  const std::string upper = "b";
  ro.iterate_upper_bound = upper;
  const uint64_t blocks = Counter("iter.bounds_skipped_blocks");
  uint64_t reads = 0;
  std::vector<std::string> expect;
  for (int i = 95; i < 100; i++) expect.push_back(Key("a", i));
  EXPECT_EQ(expect, Scan(ro, Key("a", 95), "~", &reads));
  // The five a-blocks; not the c00000 block past the separator "b".
  EXPECT_EQ(5u, reads);
  EXPECT_EQ(1u, Counter("iter.bounds_skipped_blocks") - blocks);

  // Without the bound the scan reads the c00000 block to see where it is.
  EXPECT_EQ(expect, Scan(ReadOptions(), Key("a", 95), "b", &reads));
  EXPECT_EQ(6u, reads);

  // Backward: a lower bound above the separator ("b0" > "b") needs no
  // a-block at all.
  ReadOptions back;
  const std::string lower = "b0";
  back.iterate_lower_bound = lower;
  back.fill_cache = false;
  const uint64_t before = Counter("block.data_reads");
  const uint64_t blocks_before = Counter("iter.bounds_skipped_blocks");
  std::unique_ptr<Iterator> it = db_->NewIterator(back);
  it->Seek(Key("c", 1));
  ASSERT_TRUE(it->Valid());
  it->Prev();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(Key("c", 0), it->key());
  it->Prev();
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok()) << it->status();
  EXPECT_EQ(2u, Counter("block.data_reads") - before);
  EXPECT_EQ(1u, Counter("iter.bounds_skipped_blocks") - blocks_before);
}

TEST_F(IterateBoundsScanTest, LowerAboveUpperIsAnEmptyIterator) {
  ASSERT_NO_FATAL_FAILURE(Open());
  ASSERT_NO_FATAL_FAILURE(PutRange("k", 0, 99, 10));
  for (const auto& [lower, upper] :
       std::vector<std::pair<std::string, std::string>>{
           {"k00050", "k00010"}, {"k00050", "k00050"}, {"z", "a"}}) {
    ReadOptions ro;
    ro.iterate_lower_bound = lower;
    ro.iterate_upper_bound = upper;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    it->SeekToLast();
    EXPECT_FALSE(it->Valid());
    it->Seek("k00030");
    EXPECT_FALSE(it->Valid());
    it->Next();
    it->Prev();
    EXPECT_FALSE(it->Valid());
    EXPECT_TRUE(it->status().ok()) << it->status();
  }
}

}  // namespace iterate_bounds_scan_test
}  // namespace siftdb
