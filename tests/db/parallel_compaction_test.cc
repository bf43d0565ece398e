// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Compactions merged as several parts on several threads
// (Options::max_subcompactions > 1) against the one-thread merge and a
// std::map model: same reads (scans both ways, Gets, snapshots) before and
// after CompactRange; levels >= 1 stay sorted and non-overlapping with no
// empty table; tombstones and snapshot versions survive part boundaries;
// max_subcompactions may change between opens and is checked by DB::Open.
// Failed parts, closing during a split compaction and readers during split
// compactions are in parallel_compaction_fault_test.cc; the helpers both
// files share are in parallel_compaction_test_util.h.
//
// The tests check through GetProperty("siftdb.stats") that compactions
// really were split, so none passes without exercising the parts. One more
// case (ManyVersionsOfOneKeyStayOrderedAcrossLevels) concerns where any
// compaction may end an output table, split or not.

#include <cstdint>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/parallel_compaction_test_util.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"

namespace siftdb {
namespace parallel_compaction_test {

using test::ExpectLevelsSorted;
using test::ExpectMatches;
using test::ExpectNoOrphanTables;
using test::Key;
using test::LiveTableNumbers;
using test::LiveTables;
using test::Model;
using test::OpenOrDie;
using test::ParallelCompactionTest;
using test::RandomValue;
using test::SmallOptions;
using test::SplitCompactions;
using test::WaitIdle;

// --- 1. Same result as the one-thread merge, over several seeds ---

// One DB per entry of kSubcompactions, all fed the same random writes and
// checked against one model, with snapshots held across compactions.
class ParallelCompactionSeedTest : public ::testing::TestWithParam<int> {
 protected:
  // A snapshot of every DB and the model it sees.
  struct Held {
    std::vector<const Snapshot*> per_db;
    Model model;
  };

  static constexpr int kSubcompactions[] = {1, 2, 3, 8};
  static constexpr int kKeys = 2000;
  static constexpr int kSteps = 10000;
  static constexpr size_t kMaxHeld = 3;

  // Snapshots must go before their DB, also when an assertion fails.
  void TearDown() override { ReleaseHeld(); }

  // Opens one DB per entry of kSubcompactions.
  void OpenDbs() {
    for (int n : kSubcompactions) {
      dbs_.push_back(
          OpenOrDie(SmallOptions(n), dir_.Join(absl::StrFormat("db%d", n))));
      ASSERT_NE(nullptr, dbs_.back());
    }
  }

  // One random operation on every DB (and the model) at `step`: a put, a
  // delete, a batch, or taking or releasing a snapshot.
  void RandomStep(int step) {
    const int op = rnd_.Uniform(100);
    if (op < 65) {
      const std::string k = Key(rnd_.Uniform(kKeys));
      const std::string v = RandomValue(&rnd_, absl::StrFormat("p%d", step),
                                        40 + rnd_.Uniform(200));
      for (auto& db : dbs_) ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
      model_[k] = v;
      written_.insert(k);
    } else if (op < 82) {
      const std::string k = Key(rnd_.Uniform(kKeys));
      for (auto& db : dbs_) ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
      model_.erase(k);
      written_.insert(k);
    } else if (op < 97) {
      ASSERT_NO_FATAL_FAILURE(WriteRandomBatch(step));
    } else if (held_.size() < kMaxHeld && rnd_.OneIn(8)) {
      Held h;
      for (auto& db : dbs_) h.per_db.push_back(db->GetSnapshot());
      h.model = model_;
      held_.push_back(std::move(h));
    } else if (!held_.empty() && rnd_.OneIn(12)) {
      const size_t i = rnd_.Uniform(held_.size());
      for (size_t d = 0; d < dbs_.size(); d++) {
        dbs_[d]->ReleaseSnapshot(held_[i].per_db[d]);
      }
      held_.erase(held_.begin() + i);
    }
  }

  // One batch of 1..8 random puts and deletes, written to every DB.
  void WriteRandomBatch(int step) {
    WriteBatch batch;
    const int n = 1 + rnd_.Uniform(8);
    for (int i = 0; i < n; i++) {
      const std::string k = Key(rnd_.Uniform(kKeys));
      written_.insert(k);
      if (rnd_.OneIn(4)) {
        batch.Delete(k);
        model_.erase(k);
      } else {
        const std::string v = RandomValue(
            &rnd_, absl::StrFormat("b%d.%d", step, i), 20 + rnd_.Uniform(100));
        batch.Put(k, v);
        model_[k] = v;
      }
    }
    for (auto& db : dbs_) {
      WriteBatch copy = batch;
      ASSERT_TRUE(db->Write(WriteOptions(), &copy).ok());
    }
  }

  // Every DB reads as the model, and as each held snapshot's model.
  void CheckAll(const std::string& when) {
    for (size_t d = 0; d < dbs_.size(); d++) {
      const std::string where =
          absl::StrFormat("seed %d, %s, max_subcompactions=%d", GetParam(),
                          when, kSubcompactions[d]);
      ASSERT_NO_FATAL_FAILURE(
          ExpectMatches(dbs_[d].get(), nullptr, model_, written_, where));
      for (size_t h = 0; h < held_.size(); h++) {
        ASSERT_NO_FATAL_FAILURE(ExpectMatches(
            dbs_[d].get(), held_[h].per_db[d], held_[h].model, written_,
            absl::StrFormat("%s, snapshot %d", where, h)));
      }
    }
  }

  // CompactRange on every DB, then its levels are sorted (`strict`: no
  // user key in two tables of a level).
  void CompactAll(bool strict, const std::string& where) {
    for (auto& db : dbs_) {
      ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
      ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db.get(), strict, where));
    }
  }

  // Releases every held snapshot.
  void ReleaseHeld() {
    for (Held& h : held_) {
      for (size_t d = 0; d < dbs_.size(); d++) {
        dbs_[d]->ReleaseSnapshot(h.per_db[d]);
      }
    }
    held_.clear();
  }

  // The split DBs split; the one-thread DB never does.
  void ExpectSplits() {
    for (size_t d = 0; d < dbs_.size(); d++) {
      const uint64_t splits = SplitCompactions(dbs_[d].get());
      RecordProperty(absl::StrFormat("splits_%d", kSubcompactions[d]),
                     static_cast<int>(splits));
      if (kSubcompactions[d] == 1) {
        EXPECT_EQ(0u, splits);
      } else {
        EXPECT_GT(splits, 0u) << "max_subcompactions=" << kSubcompactions[d];
      }
    }
  }

  test::TempDir dir_;
  std::vector<std::unique_ptr<DB>> dbs_;
  std::vector<Held> held_;
  Model model_;
  std::set<std::string> written_;
  Random rnd_{static_cast<uint64_t>(GetParam() * 1000003 + 17)};
};

TEST_P(ParallelCompactionSeedTest, SameReadsAsOneThreadAndTheModel) {
  ASSERT_NO_FATAL_FAILURE(OpenDbs());
  for (int step = 0; step < kSteps; step++) {
    ASSERT_NO_FATAL_FAILURE(RandomStep(step));
    if (step == kSteps / 2) {
      ASSERT_NO_FATAL_FAILURE(CheckAll("mid-way"));
    }
  }
  ASSERT_NO_FATAL_FAILURE(CheckAll("after the writes"));
  ASSERT_NO_FATAL_FAILURE(CompactAll(false, "compacted"));
  ASSERT_NO_FATAL_FAILURE(CheckAll("after CompactRange with snapshots"));
  ReleaseHeld();
  ASSERT_NO_FATAL_FAILURE(CompactAll(true, "final"));
  ASSERT_NO_FATAL_FAILURE(CheckAll("after the final CompactRange"));
  ExpectSplits();
}

INSTANTIATE_TEST_SUITE_P(ParallelCompaction, ParallelCompactionSeedTest,
                         ::testing::Values(1, 2, 3));

// --- 2. Level invariants after split compactions ---

TEST_F(ParallelCompactionTest, LevelsStaySortedWithoutEmptyTables) {
  for (int subcompactions : {2, 4, 64}) {
    const std::string where =
        absl::StrFormat("max_subcompactions=%d", subcompactions);
    path_ = dir_.Join(absl::StrFormat("db%d", subcompactions));
    model_.clear();
    written_.clear();
    ASSERT_NO_FATAL_FAILURE(Open(SmallOptions(subcompactions)));
    Random rnd(subcompactions);
    for (int round = 0; round < 4; round++) {
      for (int i = 0; i < 2500; i++) {
        const std::string k = Key(rnd.Uniform(3000));
        written_.insert(k);
        if (rnd.OneIn(5)) {
          ASSERT_TRUE(Delete(k).ok());
        } else {
          ASSERT_TRUE(
              Put(k, RandomValue(&rnd, Key(i), 50 + rnd.Uniform(250))).ok());
        }
      }
      ASSERT_TRUE(WaitIdle(db_.get()).ok());
      // No snapshot: each compaction output holds one entry per user key,
      // so no key may appear in two tables of a level.
      ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(
          db_.get(), true, absl::StrFormat("%s, round %d", where, round)));
      ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db_.get(), path_));
    }
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db_.get(), true, where));
    ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db_.get(), path_));
    ASSERT_NO_FATAL_FAILURE(Check(where));
    EXPECT_GT(SplitCompactions(db_.get()), 0u) << where;
  }
}

// --- The versions of one user key, held by snapshots, across tables ---

// A user key whose versions (kept by snapshots) fill several output tables
// of one compaction; level 1 is then over its target, so the background
// thread moves its tables down one or a few at a time. Every read must
// still give the newest version the reader may see. This goes wrong when
// a compaction ends an output table in the middle of one user key's
// versions and a later compaction (a trivial move, or one whose inputs
// could not grow) takes one of those tables without the others: older
// versions then sit in a shallower level than newer ones, and Get (which
// stops at the first level holding the key) returns an old value. With
// the sequence numbers zeroed at the bottom, scans go wrong too. Nothing
// here depends on max_subcompactions; it is run with 1 and with 4.
TEST_F(ParallelCompactionTest, ManyVersionsOfOneKeyStayOrderedAcrossLevels) {
  for (int subcompactions : {1, 4}) {
    const std::string where =
        absl::StrFormat("max_subcompactions=%d", subcompactions);
    path_ = dir_.Join(absl::StrFormat("db%d", subcompactions));
    Options options = SmallOptions(subcompactions);
    options.write_buffer_size = 1 << 20;  // flushes only when asked
    options.max_file_size = 4 << 10;
    options.max_bytes_for_level_base = 16 << 10;
    ASSERT_NO_FATAL_FAILURE(Open(options));
    Random rnd(7);
    std::vector<Model> models;
    model_.clear();
    written_ = {"a", "k", "z"};
    ASSERT_TRUE(Put("a", "first").ok());
    for (int v = 0; v < 150; v++) {
      ASSERT_TRUE(
          Put("k", RandomValue(&rnd, absl::StrFormat("v%d", v), 1000)).ok());
      TakeSnapshot();
      models.push_back(model_);
    }
    ASSERT_TRUE(Put("z", "last").ok());
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE(WaitIdle(db_.get()).ok());
    ASSERT_NO_FATAL_FAILURE(Check(where + ", snapshots held"));
    for (size_t i = 0; i < snapshots_.size(); i++) {
      ASSERT_NO_FATAL_FAILURE(
          Check(absl::StrFormat("%s, snapshot %d", where, i), snapshots_[i],
                &models[i]));
    }
    ReleaseSnapshots();
    ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE(WaitIdle(db_.get()).ok());
    ASSERT_NO_FATAL_FAILURE(Check(where + ", snapshots released"));
  }
}

// --- 3. Tombstones and snapshots across part boundaries ---

TEST_F(ParallelCompactionTest, TombstonesAndSnapshotsAcrossParts) {
  ASSERT_NO_FATAL_FAILURE(Open(SmallOptions(4)));
  constexpr int kKeys = 1500;
  Random rnd(11);
  for (int i = 0; i < kKeys; i++) {
    written_.insert(Key(i));
    ASSERT_TRUE(Put(Key(i), RandomValue(&rnd, "r0", 100)).ok());
  }
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  // Rounds of overwrites and deletes over the whole key range, each kept
  // by a snapshot, so every part meets many versions and tombstones.
  std::vector<Model> models;
  for (int round = 1; round <= 5; round++) {
    for (int i = 0; i < kKeys; i++) {
      if ((i * 7 + round) % 5 == 0) {
        ASSERT_TRUE(Delete(Key(i)).ok());
      } else if ((i + round) % 3 != 0) {
        ASSERT_TRUE(
            Put(Key(i), RandomValue(&rnd, absl::StrFormat("r%d", round), 100))
                .ok());
      }
    }
    TakeSnapshot();
    models.push_back(model_);
  }
  const uint64_t splits_before = SplitCompactions(db_.get());
  ASSERT_TRUE(WaitIdle(db_.get()).ok());
  ASSERT_NO_FATAL_FAILURE(Check("before CompactRange"));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_GT(SplitCompactions(db_.get()), splits_before);
  ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db_.get(), false, "snapshots"));
  ASSERT_NO_FATAL_FAILURE(Check("after CompactRange"));
  for (size_t i = 0; i < snapshots_.size(); i++) {
    ASSERT_NO_FATAL_FAILURE(Check(absl::StrFormat("snapshot %d", i + 1),
                                  snapshots_[i], &models[i]));
  }
  const uint64_t size_with_snapshots = ApproximateSize();
  const size_t tables_with_snapshots = LiveTableNumbers(db_.get()).size();
  ReleaseSnapshots();

  // New values over the whole range: level 1 fills again, several tables
  // over the older versions in level 2.
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE(Put(Key(i), RandomValue(&rnd, "r6", 150)).ok());
  }
  ASSERT_TRUE(static_cast<DBImpl*>(db_.get())->FlushMemTable().ok());
  ASSERT_TRUE(WaitIdle(db_.get()).ok());
  ASSERT_GE(LiveTables(db_.get())[1].size(), 2u);
  // Then four level-0 tables of deletions spread over the range: their
  // compaction into level 1 is split, and every part must keep its
  // tombstones (older values of the keys lie in level 2).
  const uint64_t splits_before_deletes = SplitCompactions(db_.get());
  for (int part = 0; part < 4; part++) {
    for (int i = part; i < kKeys; i += 8) ASSERT_TRUE(Delete(Key(i)).ok());
    ASSERT_TRUE(static_cast<DBImpl*>(db_.get())->FlushMemTable().ok());
  }
  ASSERT_TRUE(WaitIdle(db_.get()).ok());
  EXPECT_GT(SplitCompactions(db_.get()), splits_before_deletes);
  ASSERT_NO_FATAL_FAILURE(Check("after the deletions"));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db_.get(), true, "final"));
  ASSERT_NO_FATAL_FAILURE(Check("after the final CompactRange"));
  ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db_.get(), path_));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(Check("after the final CompactRange"));

  // Only the live entries are left: one version per key, no tombstone.
  uint64_t live_bytes = 0;
  for (const auto& [k, v] : model_) live_bytes += k.size() + v.size();
  const uint64_t size = ApproximateSize();
  EXPECT_LT(size, size_with_snapshots / 2);
  EXPECT_LT(size, live_bytes * 3 / 2) << "live " << live_bytes;
  EXPECT_LT(LiveTableNumbers(db_.get()).size(), tables_with_snapshots);
  RecordProperty("size_with_snapshots", static_cast<int>(size_with_snapshots));
  RecordProperty("size_final", static_cast<int>(size));
}

// --- 6. max_subcompactions may change between opens ---

TEST_F(ParallelCompactionTest, ReopenWithOtherSubcompactions) {
  Random rnd(9);
  auto write = [&](int n, const std::string& tag) {
    for (int i = 0; i < n; i++) {
      const std::string k = Key(rnd.Uniform(3000));
      written_.insert(k);
      if (rnd.OneIn(6)) {
        ASSERT_TRUE(Delete(k).ok());
      } else {
        ASSERT_TRUE(Put(k, RandomValue(&rnd, tag, 150)).ok());
      }
    }
  };
  ASSERT_NO_FATAL_FAILURE(Open(SmallOptions(1)));
  ASSERT_NO_FATAL_FAILURE(write(6000, "one"));
  ASSERT_TRUE(WaitIdle(db_.get()).ok());
  EXPECT_EQ(0u, SplitCompactions(db_.get()));
  ASSERT_NO_FATAL_FAILURE(Check("1"));

  ASSERT_NO_FATAL_FAILURE(Open(SmallOptions(4)));
  ASSERT_NO_FATAL_FAILURE(Check("reopened with 4"));
  ASSERT_NO_FATAL_FAILURE(write(6000, "four"));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_GT(SplitCompactions(db_.get()), 0u);
  ASSERT_NO_FATAL_FAILURE(Check("4"));

  ASSERT_NO_FATAL_FAILURE(Open(SmallOptions(1)));
  ASSERT_NO_FATAL_FAILURE(Check("reopened with 1"));
  ASSERT_NO_FATAL_FAILURE(write(3000, "one again"));
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(0u, SplitCompactions(db_.get()));
  ASSERT_NO_FATAL_FAILURE(Check("1 again"));
  ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db_.get(), path_));
}

// --- 7. DB::Open checks the range ---

TEST_F(ParallelCompactionTest, OpenRejectsOutOfRangeSubcompactions) {
  for (int bad : {0, -1, 65}) {
    auto db = DB::Open(SmallOptions(bad), path_);
    ASSERT_FALSE(db.ok()) << bad;
    EXPECT_TRUE(absl::IsInvalidArgument(db.status())) << db.status();
    EXPECT_NE(std::string::npos,
              db.status().message().find("max_subcompactions"))
        << db.status();
  }
  for (int good : {1, 64}) {
    auto db = DB::Open(SmallOptions(good), path_);
    EXPECT_TRUE(db.ok()) << good << ": " << db.status();
  }
}

}  // namespace parallel_compaction_test
}  // namespace siftdb
