// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Split compactions (Options::max_subcompactions > 1) under trouble: a part
// whose table writes fail stops the DB with that error and loses no
// acknowledged write nor leaves a table behind; closing during a split
// compaction loses nothing; readers on other threads during split
// compactions see only OK or NotFound, and every write is there afterwards.
// The reads are checked against a std::map model with the helpers of
// parallel_compaction_test_util.h; the other parallel-compaction cases are
// in parallel_compaction_test.cc.

#include <atomic>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/parallel_compaction_test_util.h"
#include "tests/support/temp_dir.h"
#include "util/mutex.h"
#include "util/random.h"
#include "util/testing/fault_injection_env.h"

namespace siftdb {
namespace parallel_compaction_fault_test {

using test::CompactionWatcher;
using test::ExpectLevelsSorted;
using test::ExpectMatches;
using test::ExpectNoOrphanTables;
using test::Key;
using test::LiveTables;
using test::Model;
using test::OpenOrDie;
using test::ParallelCompactionTest;
using test::RandomValue;
using test::SmallOptions;
using test::SplitCompactions;
using test::WaitIdle;

// --- 4. A part whose table writes fail ---

// The state every fault case starts from, built once: level 1 spread over
// many tables, and three level-0 tables over the whole key range (one
// short of the trigger, so nothing runs until CompactRange).
constexpr int kFaultKeys = 3000;

class ParallelCompactionFaultTest : public ::testing::TestWithParam<FaultOp> {
 protected:
  ParallelCompactionFaultTest() : env_(Env::Default()) {}

  Options FaultOptions() {
    Options o = SmallOptions(4);
    o.env = &env_;
    o.write_buffer_size = 1 << 20;         // flushes only when asked
    o.max_bytes_for_level_base = 8 << 20;  // level 1 stays level 1
    return o;
  }

  void BuildTemplate(const std::string& path) {
    std::unique_ptr<DB> db = OpenOrDie(FaultOptions(), path);
    ASSERT_NE(nullptr, db);
    Random rnd(5);
    for (int i = 0; i < kFaultKeys; i++) {
      const std::string v = RandomValue(&rnd, "base", 150);
      ASSERT_TRUE(db->Put(WriteOptions(), Key(i), v).ok());
      model_[Key(i)] = v;
    }
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    for (int round = 0; round < 3; round++) {
      for (int i = round; i < kFaultKeys; i += 3) {
        if (i % 11 == 0) {
          ASSERT_TRUE(db->Delete(WriteOptions(), Key(i)).ok());
          model_.erase(Key(i));
        } else {
          const std::string v =
              RandomValue(&rnd, absl::StrFormat("round%d", round), 150);
          ASSERT_TRUE(db->Put(WriteOptions(), Key(i), v).ok());
          model_[Key(i)] = v;
        }
      }
      ASSERT_TRUE(static_cast<DBImpl*>(db.get())->FlushMemTable().ok());
    }
    ASSERT_TRUE(WaitIdle(db.get()).ok());
    std::string l0;
    ASSERT_TRUE(db->GetProperty("siftdb.num-files-at-level0", &l0));
    ASSERT_EQ("3", l0);
    ASSERT_GE(LiveTables(db.get())[1].size(), 10u);
  }

  // One case: table-file operations of class `op` fail from the skip-th
  // on. Sets *fired to whether the fault fired.
  void RunCase(const std::string& tmpl, FaultOp op, int skip, bool* fired) {
    const std::string where =
        absl::StrFormat("%s fails from match %d on", FaultOpName(op), skip);
    const std::string path = dir_.Join(absl::StrFormat("case%d", case_++));
    std::filesystem::copy(tmpl, path, std::filesystem::copy_options::recursive);
    std::set<std::string> keys;
    for (int i = 0; i < kFaultKeys; i++) keys.insert(Key(i));

    std::unique_ptr<DB> db = OpenOrDie(FaultOptions(), path);
    ASSERT_NE(nullptr, db);
    ASSERT_TRUE(WaitIdle(db.get()).ok());
    const uint64_t injected = env_.InjectedErrorCount();
    env_.InjectIoError(op, ".sst", skip, -1);
    absl::Status s = db->CompactRange(nullptr, nullptr);
    *fired = env_.InjectedErrorCount() > injected;
    // The compaction (failed or not) was split, and a failure is counted.
    EXPECT_GT(SplitCompactions(db.get()), 0u) << where;
    std::string stats;
    ASSERT_TRUE(db->GetProperty("siftdb.stats", &stats));
    EXPECT_EQ(*fired && !s.ok(),
              stats.find("; failed or stopped: 0\n") == std::string::npos)
        << where << "\n"
        << stats;
    if (!*fired) {
      env_.ClearErrors();
      ASSERT_TRUE(s.ok()) << where << ": " << s;
    } else {
      // Its error is what every later write and compaction reports.
      ASSERT_FALSE(s.ok()) << where;
      EXPECT_NE(std::string::npos, s.message().find("injected")) << s;
      std::string err;
      ASSERT_TRUE(db->GetProperty("siftdb.background-error", &err));
      EXPECT_NE(std::string::npos, err.find("injected")) << where << err;
      absl::Status w = db->Put(WriteOptions(), "after", "x");
      EXPECT_FALSE(w.ok()) << where;
      EXPECT_NE(std::string::npos, w.message().find("injected")) << w;
      absl::Status c = db->CompactRange(nullptr, nullptr);
      EXPECT_FALSE(c.ok()) << where;
      EXPECT_NE(std::string::npos, c.message().find("injected")) << c;
      // Reads still see the version before the compaction.
      ASSERT_NO_FATAL_FAILURE(
          ExpectMatches(db.get(), nullptr, model_, keys, where + ", failed"));
      env_.ClearErrors();
    }
    db.reset();

    // Healthy again: everything acknowledged is there, the outputs of the
    // failed parts are gone, and compactions work.
    db = OpenOrDie(FaultOptions(), path);
    ASSERT_NE(nullptr, db);
    ASSERT_NO_FATAL_FAILURE(
        ExpectMatches(db.get(), nullptr, model_, keys, where + ", reopened"));
    ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db.get(), path));
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok()) << where;
    ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db.get(), true, where));
    ASSERT_NO_FATAL_FAILURE(
        ExpectMatches(db.get(), nullptr, model_, keys, where + ", compacted"));
    ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db.get(), path));
  }

  test::TempDir dir_;
  FaultInjectionEnv env_;
  Model model_;
  int case_ = 0;
};

TEST_P(ParallelCompactionFaultTest, FailedPartStopsTheDbAndLosesNothing) {
  const FaultOp op = GetParam();
  const std::string tmpl = dir_.Join("template");
  ASSERT_NO_FATAL_FAILURE(BuildTemplate(tmpl));
  // Early, middle and late failures; the last skip lets the compaction
  // finish.
  const std::vector<int> skips = op == FaultOp::kAppend
                                     ? std::vector<int>{0, 5, 40, 120, 100000}
                                     : std::vector<int>{0, 1, 3, 12, 100000};
  int fired_cases = 0;
  for (int skip : skips) {
    bool fired = false;
    ASSERT_NO_FATAL_FAILURE(RunCase(tmpl, op, skip, &fired));
    if (fired) fired_cases++;
    if (skip == 100000) {
      EXPECT_FALSE(fired) << "the sweep never let the compaction finish";
    }
  }
  EXPECT_GE(fired_cases, 3) << FaultOpName(op);
  RecordProperty("fired_cases", fired_cases);
}

INSTANTIATE_TEST_SUITE_P(ParallelCompaction, ParallelCompactionFaultTest,
                         ::testing::Values(FaultOp::kAppend, FaultOp::kSync,
                                           FaultOp::kCreate),
                         [](const auto& info) {
                           return std::string(FaultOpName(info.param));
                         });

// --- 5. Closing during a split compaction ---

TEST_F(ParallelCompactionTest, CloseDuringSplitCompactionLosesNothing) {
  CompactionWatcher watcher;
  Options options = SmallOptions(4);
  options.info_log = &watcher;
  Random rnd(3);
  constexpr int kRounds = 4;
  for (int round = 0; round < kRounds; round++) {
    ASSERT_NO_FATAL_FAILURE(Open(options));
    // Write until a split compaction has started, then a little more, and
    // close at once: the compaction is most likely still merging.
    const int started = watcher.split_started();
    int extra = -1;
    for (int i = 0; i < 40000 && extra != 0; i++) {
      const std::string k = Key(rnd.Uniform(4000));
      written_.insert(k);
      ASSERT_TRUE(Put(k, RandomValue(&rnd, absl::StrFormat("c%d.%d", round, i),
                                     100 + rnd.Uniform(100)))
                      .ok());
      if (extra > 0) extra--;
      if (extra < 0 && watcher.split_started() > started) extra = 50;
    }
    db_.reset();
    ASSERT_NO_FATAL_FAILURE(Open(options));
    ASSERT_NO_FATAL_FAILURE(Check(absl::StrFormat("round %d", round)));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db_.get(), path_));
  ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db_.get(), true, "closed"));
  EXPECT_GT(watcher.split_started(), 0);
  // How often the close really interrupted a compaction (timing: not
  // asserted).
  RecordProperty("aborted_compactions", watcher.aborted());
  db_.reset();  // the DB logs to watcher until it closes
}

// --- Readers while compactions are split ---

// Gets and scans from other threads while writes keep level-0 compactions
// splitting (and the background thread flushes MemTables between parts).
// Every read returns OK or NotFound, and afterwards every write is there:
// no table a read or a Version still needs was deleted under it.
TEST_F(ParallelCompactionTest, ReadersDuringSplitCompactions) {
  Options options = SmallOptions(4);
  options.write_buffer_size = 16 << 10;  // many flushes and version changes
  ASSERT_NO_FATAL_FAILURE(Open(options));
  constexpr int kWrites = 12000;
  std::atomic<bool> done{false};
  std::atomic<int> read_errors{0};
  Mutex first_error_mu;
  std::string first_error;
  std::vector<std::thread> readers;
  for (int t = 0; t < 2; t++) {
    readers.emplace_back([&, t] {
      Random rnd(100 + t);
      std::string value;
      auto note = [&](const absl::Status& s) {
        if (s.ok() || absl::IsNotFound(s)) return;
        if (read_errors++ == 0) {
          MutexLock l(&first_error_mu);
          first_error = s.ToString();
        }
      };
      while (!done.load(std::memory_order_acquire)) {
        note(db_->Get(ReadOptions(), Key(rnd.Uniform(kWrites)), &value));
        if (rnd.OneIn(50)) {
          std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
          it->Seek(Key(rnd.Uniform(kWrites)));
          for (int i = 0; i < 20 && it->Valid(); i++) it->Next();
          note(it->status());
        }
      }
    });
  }
  const std::string value(100, 'r');
  for (int i = 0; i < kWrites; i++) {
    written_.insert(Key(i * 7919 % kWrites));
    absl::Status s = Put(Key(i * 7919 % kWrites), value);
    if (!s.ok()) {
      ADD_FAILURE() << "write " << i << ": " << s;
      break;
    }
  }
  done.store(true, std::memory_order_release);
  for (std::thread& t : readers) t.join();
  EXPECT_EQ(0, read_errors.load()) << first_error;
  ASSERT_TRUE(WaitIdle(db_.get()).ok());
  ASSERT_NO_FATAL_FAILURE(Check("after concurrent reads"));
  EXPECT_GT(SplitCompactions(db_.get()), 0u);
}

}  // namespace parallel_compaction_fault_test
}  // namespace siftdb
