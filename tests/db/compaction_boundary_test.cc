// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Compactions never separate the versions of one user key that neighbouring
// tables of a level share (tables written before outputs were cut only
// between user keys may hold such a split): VersionSet's picking pulls in
// the table that starts with the key the inputs end with. Built on table
// metadata alone; picking reads no table.

#include <memory>
#include <string>
#include <vector>

#include "db/compaction.h"
#include "db/table_cache.h"
#include "db/version_edit.h"
#include "db/version_set.h"
#include "gtest/gtest.h"
#include "siftdb/comparator.h"
#include "siftdb/env.h"
#include "siftdb/options.h"
#include "table/internal_key.h"
#include "table/table_options.h"
#include "tests/support/temp_dir.h"
#include "util/mutex.h"

namespace siftdb {
namespace compaction_boundary_test {

std::string IKey(const std::string& user_key, SequenceNumber seq) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, kTypeValue);
  return k;
}

struct TableSpec {
  int level;
  uint64_t number;
  std::string smallest_user;
  SequenceNumber smallest_seq;
  std::string largest_user;
  SequenceNumber largest_seq;
};

class CompactionBoundaryTest : public ::testing::Test {
 protected:
  CompactionBoundaryTest()
      : icmp_(BytewiseComparator()),
        table_cache_(dir_.path(), Env::Default(), TableOptions(), 16) {
    options_.env = Env::Default();
    options_.comparator = BytewiseComparator();
    versions_ = std::make_unique<VersionSet>(dir_.path(), &options_,
                                             &table_cache_, &icmp_);
  }

  void Install(const std::vector<TableSpec>& tables) {
    VersionEdit edit;
    edit.SetComparatorName(icmp_.user_comparator()->Name());
    edit.SetLogNumber(0);
    edit.SetNextFile(1000);
    edit.SetLastSequence(1000);
    for (const TableSpec& t : tables) {
      edit.AddFile(t.level, t.number, 1 << 20,
                   IKey(t.smallest_user, t.smallest_seq),
                   IKey(t.largest_user, t.largest_seq));
    }
    MutexLock l(&mu_);
    ASSERT_TRUE(versions_->LogAndApply(&edit, &mu_).ok());
  }

  static std::vector<uint64_t> Numbers(const Compaction& c, int which) {
    std::vector<uint64_t> numbers;
    for (int i = 0; i < c.num_input_files(which); i++) {
      numbers.push_back(c.input(which, i)->number);
    }
    return numbers;
  }

  // REQUIRES: mu_ held (a Compaction's destructor releases its Version).
  std::unique_ptr<Compaction> CompactLevel(int level, const std::string& begin,
                                           const std::string& end) {
    std::string_view b(begin), e(end);
    return versions_->CompactRange(level, &b, &e);
  }

  test::TempDir dir_;
  Options options_;
  InternalKeyComparator icmp_;
  TableCache table_cache_;
  Mutex mu_;
  std::unique_ptr<VersionSet> versions_;
};

// Level 1: table 10 ends with k@50, table 11 holds k@40 (older) onwards.
// Compacting the range of table 10 must take table 11 as well, and is then
// no trivial move.
TEST_F(CompactionBoundaryTest, CompactionTakesTheTableHoldingOlderVersions) {
  Install({{1, 10, "a", 100, "k", 50},
           {1, 11, "k", 40, "p", 10},
           {1, 12, "q", 5, "z", 1}});
  MutexLock l(&mu_);
  std::unique_ptr<Compaction> c = CompactLevel(1, "a", "b");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Numbers(*c, 0), (std::vector<uint64_t>{10, 11}));
  EXPECT_FALSE(c->IsTrivialMove());
  c.reset();

  // Table 11 alone may go: the newer versions of k stay above.
  c = CompactLevel(1, "m", "n");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Numbers(*c, 0), (std::vector<uint64_t>{11}));
}

// A key split over three tables pulls in the whole chain.
TEST_F(CompactionBoundaryTest, CompactionFollowsAChainOfSplitKeys) {
  Install({{1, 10, "a", 100, "k", 50},
           {1, 11, "k", 40, "k", 30},
           {1, 12, "k", 20, "m", 10},
           {1, 13, "n", 5, "z", 1}});
  MutexLock l(&mu_);
  std::unique_ptr<Compaction> c = CompactLevel(1, "a", "b");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Numbers(*c, 0), (std::vector<uint64_t>{10, 11, 12}));
}

// The next level's inputs are completed the same way: overlapping "a".."c"
// finds table 20 only, but table 21 holds older versions of its last key.
TEST_F(CompactionBoundaryTest, NextLevelInputsAreCompletedToo) {
  Install({{1, 10, "a", 100, "c", 90},
           {2, 20, "a", 80, "k", 50},
           {2, 21, "k", 40, "p", 10}});
  MutexLock l(&mu_);
  std::unique_ptr<Compaction> c = CompactLevel(1, "a", "c");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Numbers(*c, 0), (std::vector<uint64_t>{10}));
  EXPECT_EQ(Numbers(*c, 1), (std::vector<uint64_t>{20, 21}));
}

// Without shared keys nothing is added.
TEST_F(CompactionBoundaryTest, DisjointTablesAreLeftAlone) {
  Install({{1, 10, "a", 100, "j", 50},
           {1, 11, "k", 40, "p", 10},
           {2, 20, "a", 80, "c", 50},
           {2, 21, "d", 40, "h", 10}});
  MutexLock l(&mu_);
  std::unique_ptr<Compaction> c = CompactLevel(1, "a", "b");
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(Numbers(*c, 0), (std::vector<uint64_t>{10}));
  EXPECT_EQ(Numbers(*c, 1), (std::vector<uint64_t>{20, 21}));
}

// Freeing inputs early never releases part of a split key's chain: level 1
// table 10 ends with b@100 and table 11 starts with b@50. Past b, table 10
// and the level-2 tables are merged, but table 11 still holds b@50:
// releasing table 10 now would leave table 11 above the outputs holding
// b@100, so reads would find the older version. The level-2 tables may go;
// tables 10 and 11 go together once both are merged.
TEST_F(CompactionBoundaryTest, EarlyReleaseWaitsForTheWholeSplitKeyChain) {
  Install({{1, 10, "a", 100, "b", 100},
           {1, 11, "b", 50, "d", 40},
           {2, 20, "a", 30, "a", 20},
           {2, 21, "a", 10, "b", 5},
           {2, 22, "e", 9, "z", 1}});
  MutexLock l(&mu_);
  std::unique_ptr<Compaction> c = CompactLevel(1, "a", "b");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(Numbers(*c, 0), (std::vector<uint64_t>{10, 11}));
  ASSERT_EQ(Numbers(*c, 1), (std::vector<uint64_t>{20, 21}));
  Compaction::ReleaseCursor cursor;
  size_t consumed[2];
  // At c: table 10 and both level-2 inputs are merged, table 11 is not.
  ASSERT_TRUE(c->ReleasableBefore("c", cursor, consumed));
  EXPECT_EQ(0u, consumed[0]) << "table 10 released without table 11";
  EXPECT_EQ(2u, consumed[1]);
  cursor.next[1] = 2;
  // At e: table 11 is merged as well; the whole chain goes at once.
  ASSERT_TRUE(c->ReleasableBefore("e", cursor, consumed));
  EXPECT_EQ(2u, consumed[0]);
  EXPECT_EQ(0u, consumed[1]);
}

// A chain over three tables: nothing of it goes until its last table is
// merged, even when the first two are.
TEST_F(CompactionBoundaryTest, EarlyReleaseKeepsALongerChainWhole) {
  Install({{1, 10, "a", 100, "k", 50},
           {1, 11, "k", 40, "k", 30},
           {1, 12, "k", 20, "m", 10},
           {2, 20, "a", 9, "b", 1}});
  MutexLock l(&mu_);
  std::unique_ptr<Compaction> c = CompactLevel(1, "a", "b");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(Numbers(*c, 0), (std::vector<uint64_t>{10, 11, 12}));
  Compaction::ReleaseCursor cursor;
  size_t consumed[2];
  // At l: tables 10 and 11 (all of k's newer versions) are merged, 12 is
  // not; only level 2's table may go.
  ASSERT_TRUE(c->ReleasableBefore("l", cursor, consumed));
  EXPECT_EQ(0u, consumed[0]);
  EXPECT_EQ(1u, consumed[1]);
  cursor.next[1] = 1;
  ASSERT_TRUE(c->ReleasableBefore("n", cursor, consumed));
  EXPECT_EQ(3u, consumed[0]);
}

// Without a split key, a level-1 table is released as soon as it and the
// level-2 tables before the current key are merged.
TEST_F(CompactionBoundaryTest, EarlyReleaseFreesATableWithoutSharedKeys) {
  Install({{1, 10, "a", 100, "b", 100},
           {1, 11, "c", 50, "d", 40},
           {2, 20, "a", 30, "b", 5},
           {2, 22, "e", 9, "z", 1}});
  MutexLock l(&mu_);
  std::unique_ptr<Compaction> c = CompactLevel(1, "a", "d");
  ASSERT_NE(c, nullptr);
  ASSERT_EQ(Numbers(*c, 0), (std::vector<uint64_t>{10, 11}));
  ASSERT_EQ(Numbers(*c, 1), (std::vector<uint64_t>{20}));
  Compaction::ReleaseCursor cursor;
  size_t consumed[2];
  ASSERT_TRUE(c->ReleasableBefore("c", cursor, consumed));
  EXPECT_EQ(1u, consumed[0]);
  EXPECT_EQ(1u, consumed[1]);
}

}  // namespace compaction_boundary_test
}  // namespace siftdb
