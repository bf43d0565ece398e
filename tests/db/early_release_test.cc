// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Freeing compaction inputs early (Options::free_compaction_inputs_early):
// a compaction installs its finished outputs and deletes the input tables
// it has fully merged as it goes. Checked here:
// 1. the table bytes on disk during a compaction peak lower than without
//    it, and the stats count the freed tables;
// 2. readers at every snapshot, with deletions, see what a std::map model
//    says, and levels stay sorted;
// 3. a compaction that fails after freeing some inputs loses nothing: the
//    reopened DB reads right, and the next compaction keeps one copy of
//    each entry the failure left both in its installed outputs and in the
//    level-0 tables it had not finished;
// 4. a reader holding the Version the compaction started from keeps the
//    freed tables on disk until it is done.

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/iterator.h"
#include "table/internal_key.h"
#include "table/table.h"
#include "tests/db/parallel_compaction_test_util.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"
#include "util/mutex.h"
#include "util/random.h"
#include "util/testing/fault_injection_env.h"

namespace siftdb {
namespace early_release_test {

using test::ExpectLevelsSorted;
using test::ExpectMatches;
using test::ExpectNoOrphanTables;
using test::Key;
using test::LiveTableNumbers;
using test::LiveTables;
using test::Model;
using test::OpenOrDie;
using test::RandomValue;
using test::SmallOptions;
using test::TableFilesOnDisk;
using test::WaitIdle;

constexpr int kKeys = 3000;

// Each time a table file is created, adds up the bytes of the table files
// in its directory and keeps the largest sum seen.
class PeakTableBytesEnv final : public test::ForwardingEnv {
 public:
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    if (f.size() > 4 && f.compare(f.size() - 4, 4, ".sst") == 0) {
      const std::string dir = f.substr(0, f.rfind('/'));
      uint64_t total = 0;
      auto children = base()->GetChildren(dir);
      if (children.ok()) {
        for (const std::string& name : *children) {
          uint64_t number;
          FileType type;
          if (!ParseFileName(name, &number, &type) ||
              type != FileType::kTableFile) {
            continue;
          }
          auto size = base()->GetFileSize(dir + "/" + name);
          if (size.ok()) total += *size;
        }
      }
      MutexLock l(&mu_);
      peak_ = std::max(peak_, total);
    }
    return base()->NewWritableFile(f);
  }
  void ResetPeak() {
    MutexLock l(&mu_);
    peak_ = 0;
  }
  uint64_t peak() {
    MutexLock l(&mu_);
    return peak_;
  }

 private:
  Mutex mu_;
  uint64_t peak_ ABSL_GUARDED_BY(mu_) = 0;
};

// Input tables freed before their compaction ended, from siftdb.stats.
uint64_t TablesFreedEarly(DB* db) {
  return test::StatsNumberAfter(db, "inputs freed early: ");
}

Options ReleaseOptions(Env* env, bool free_early) {
  Options o = SmallOptions(1);
  o.env = env;
  o.write_buffer_size = 1 << 20;         // flushes only when asked
  o.max_bytes_for_level_base = 8 << 20;  // level 1 stays level 1
  o.free_compaction_inputs_early = free_early;
  return o;
}

// Level 1 holds every key in many tables, level 0 three tables of newer
// versions of a third of the keys each (some deleted): compacting level 0
// rewrites all of level 1.
void BuildTwoLevels(DB* db, Model* model) {
  Random rnd(11);
  for (int i = 0; i < kKeys; i++) {
    const std::string v = RandomValue(&rnd, "base", 150);
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), v).ok());
    (*model)[Key(i)] = v;
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  for (int round = 0; round < 3; round++) {
    for (int i = round; i < kKeys; i += 3) {
      if (i % 13 == 0) {
        ASSERT_TRUE(db->Delete(WriteOptions(), Key(i)).ok());
        model->erase(Key(i));
      } else {
        const std::string v =
            RandomValue(&rnd, absl::StrFormat("round%d", round), 150);
        ASSERT_TRUE(db->Put(WriteOptions(), Key(i), v).ok());
        (*model)[Key(i)] = v;
      }
    }
    ASSERT_TRUE(static_cast<DBImpl*>(db)->FlushMemTable().ok());
  }
  ASSERT_TRUE(WaitIdle(db).ok());
  const auto levels = LiveTables(db);
  ASSERT_EQ(3u, levels[0].size());
  ASSERT_GE(levels[1].size(), 20u);
}

std::set<std::string> AllKeys() {
  std::set<std::string> keys;
  for (int i = 0; i < kKeys; i++) keys.insert(Key(i));
  return keys;
}

uint64_t LevelBytes(DB* db, int level) {
  uint64_t bytes = 0;
  const auto levels = LiveTables(db);
  for (const test::TableInfo& t : levels[level]) bytes += t.size;
  return bytes;
}

// Every entry of every live table, in table order: checks that no internal
// key appears twice anywhere and returns how many entries there are.
size_t CountEntriesExpectingNoCopies(DB* db, const std::string& path) {
  std::set<std::string> seen;
  size_t entries = 0;
  TableOptions options;
  for (const auto& level : LiveTables(db)) {
    for (const test::TableInfo& t : level) {
      const std::string name = TableFileName(path, t.number);
      auto file = Env::Default()->NewRandomAccessFile(name);
      EXPECT_TRUE(file.ok()) << file.status();
      if (!file.ok()) return entries;
      auto table = Table::Open(options, name, std::move(*file), t.size);
      EXPECT_TRUE(table.ok()) << table.status();
      if (!table.ok()) return entries;
      std::unique_ptr<Iterator> it = (*table)->NewIterator(ReadOptions());
      for (it->SeekToFirst(); it->Valid(); it->Next()) {
        entries++;
        EXPECT_TRUE(seen.insert(std::string(it->key())).second)
            << "an entry is stored twice, in " << name;
      }
      EXPECT_TRUE(it->status().ok()) << it->status();
    }
  }
  return entries;
}

// --- 1. Less room on disk while compacting ---

TEST(EarlyReleaseTest, FreesMergedInputsDuringTheCompaction) {
  uint64_t peak[2] = {0, 0};
  uint64_t level1_bytes = 0;
  for (bool free_early : {false, true}) {
    test::TempDir dir;
    const std::string path = dir.Join("db");
    PeakTableBytesEnv env;
    std::unique_ptr<DB> db = OpenOrDie(ReleaseOptions(&env, free_early), path);
    ASSERT_NE(nullptr, db);
    Model model;
    ASSERT_NO_FATAL_FAILURE(BuildTwoLevels(db.get(), &model));
    level1_bytes = LevelBytes(db.get(), 1);
    const uint64_t freed_before = TablesFreedEarly(db.get());
    env.ResetPeak();
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    peak[free_early] = env.peak();
    const uint64_t freed = TablesFreedEarly(db.get()) - freed_before;
    if (free_early) {
      // Most of level 1's tables went before the compaction ended.
      EXPECT_GE(freed, LiveTables(db.get())[1].size() / 2);
    } else {
      EXPECT_EQ(0u, freed);
    }
    ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db.get(), true, "compacted"));
    ASSERT_NO_FATAL_FAILURE(
        ExpectMatches(db.get(), nullptr, model, AllKeys(), "compacted"));
    ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db.get(), path));
  }
  // Holding every input until the end, the peak includes level 1 twice
  // (inputs and outputs); freeing early, the merged half of level 1 is
  // gone by the time its replacement is written.
  RecordProperty("peak_bytes_holding", static_cast<int>(peak[0]));
  RecordProperty("peak_bytes_freeing", static_cast<int>(peak[1]));
  EXPECT_LT(peak[1] + level1_bytes / 2, peak[0])
      << "level 1: " << level1_bytes << " bytes";
}

// --- 2. Snapshots and deletions against a model ---

class EarlyReleaseModelTest : public test::ParallelCompactionTest {};

TEST_F(EarlyReleaseModelTest, ReadersAtEverySnapshotSeeTheModel) {
  Options options = SmallOptions(1);
  ASSERT_TRUE(options.free_compaction_inputs_early);  // the default
  ASSERT_NO_FATAL_FAILURE(Open(options));
  Random rnd(23);
  std::vector<Model> at_snapshot;
  for (int round = 0; round < 6; round++) {
    for (int i = 0; i < 3000; i++) {
      const std::string k = Key(rnd.Uniform(2500));
      written_.insert(k);
      if (rnd.OneIn(9)) {
        ASSERT_TRUE(Delete(k).ok());
      } else {
        ASSERT_TRUE(Put(k, RandomValue(&rnd, absl::StrFormat("r%d", round),
                                       60 + rnd.Uniform(120)))
                        .ok());
      }
    }
    if (round % 2 == 0) {
      TakeSnapshot();
      at_snapshot.push_back(model_);
    }
    if (round == 3) {
      ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
    }
  }
  ASSERT_TRUE(WaitIdle(db_.get()).ok());
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_GT(TablesFreedEarly(db_.get()), 0u);
  ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db_.get(), false, "snapshots"));
  ASSERT_NO_FATAL_FAILURE(Check("now"));
  for (size_t i = 0; i < snapshots_.size(); i++) {
    ASSERT_NO_FATAL_FAILURE(Check(absl::StrFormat("snapshot %d", i),
                                  snapshots_[i], &at_snapshot[i]));
  }
  ReleaseSnapshots();
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db_.get(), true, "released"));
  ASSERT_NO_FATAL_FAILURE(Check("after releasing the snapshots"));
  ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db_.get(), path_));
}

// --- 3. Failing after some inputs were freed ---

TEST(EarlyReleaseTest, FailureAfterFreeingLosesNothing) {
  test::TempDir dir;
  const std::string tmpl = dir.Join("template");
  Model model;
  {
    std::unique_ptr<DB> db =
        OpenOrDie(ReleaseOptions(Env::Default(), true), tmpl);
    ASSERT_NE(nullptr, db);
    ASSERT_NO_FATAL_FAILURE(BuildTwoLevels(db.get(), &model));
  }
  const std::set<std::string> keys = AllKeys();
  FaultInjectionEnv env(Env::Default());
  int failed_after_freeing = 0;
  // The compaction writes about 25 tables: fail the creation of the 3rd,
  // 8th or 15th (after one or more release steps), or never.
  for (int skip : {2, 7, 14, 100000}) {
    const std::string where = absl::StrFormat("table %d fails", skip + 1);
    const std::string path = dir.Join(absl::StrFormat("case%d", skip));
    std::filesystem::copy(tmpl, path, std::filesystem::copy_options::recursive);
    std::unique_ptr<DB> db = OpenOrDie(ReleaseOptions(&env, true), path);
    ASSERT_NE(nullptr, db);
    ASSERT_TRUE(WaitIdle(db.get()).ok());
    env.InjectIoError(FaultOp::kCreate, ".sst", skip, -1);
    absl::Status s = db->CompactRange(nullptr, nullptr);
    const uint64_t freed = TablesFreedEarly(db.get());
    if (skip == 100000) {
      ASSERT_TRUE(s.ok()) << s;
    } else {
      ASSERT_FALSE(s.ok()) << where;
      EXPECT_NE(std::string::npos, s.message().find("injected")) << s;
      if (freed > 0) failed_after_freeing++;
    }
    // Before and after reopening, reads see every acknowledged write.
    ASSERT_NO_FATAL_FAILURE(
        ExpectMatches(db.get(), nullptr, model, keys, where));
    db.reset();
    env.ClearErrors();
    db = OpenOrDie(ReleaseOptions(&env, true), path);
    ASSERT_NE(nullptr, db);
    ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db.get(), true, where));
    ASSERT_NO_FATAL_FAILURE(
        ExpectMatches(db.get(), nullptr, model, keys, where + ", reopened"));
    ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db.get(), path));
    // The next compaction leaves one entry per live key (no snapshots):
    // the copies a failure left in two levels are merged into one.
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok()) << where;
    ASSERT_NO_FATAL_FAILURE(
        ExpectMatches(db.get(), nullptr, model, keys, where + ", compacted"));
    EXPECT_EQ(model.size(), CountEntriesExpectingNoCopies(db.get(), path))
        << where;
    ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db.get(), path));
  }
  EXPECT_EQ(3, failed_after_freeing);
}

// --- 4. A reader of the old Version keeps the freed tables ---

TEST(EarlyReleaseTest, ReaderOfTheOldVersionKeepsFreedTables) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  std::unique_ptr<DB> db =
      OpenOrDie(ReleaseOptions(Env::Default(), true), path);
  ASSERT_NE(nullptr, db);
  Model model;
  ASSERT_NO_FATAL_FAILURE(BuildTwoLevels(db.get(), &model));
  const std::set<uint64_t> pinned = LiveTableNumbers(db.get());
  std::unique_ptr<Iterator> old = db->NewIterator(ReadOptions());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  ASSERT_GT(TablesFreedEarly(db.get()), 0u);
  // Every table the iterator's Version names is still on disk.
  const std::set<uint64_t> on_disk = TableFilesOnDisk(path);
  for (uint64_t number : pinned) {
    EXPECT_TRUE(on_disk.contains(number)) << number << " was deleted";
  }
  // And the iterator reads the state it was created at.
  auto m = model.begin();
  for (old->SeekToFirst(); old->Valid(); old->Next(), ++m) {
    ASSERT_NE(m, model.end());
    ASSERT_EQ(m->first, old->key());
    ASSERT_EQ(m->second, old->value());
  }
  ASSERT_TRUE(old->status().ok()) << old->status();
  EXPECT_TRUE(m == model.end());
  old.reset();
  // Once it is gone, the next flush deletes them.
  ASSERT_TRUE(db->Put(WriteOptions(), "z", "1").ok());
  ASSERT_TRUE(static_cast<DBImpl*>(db.get())->FlushMemTable().ok());
  ASSERT_NO_FATAL_FAILURE(ExpectNoOrphanTables(db.get(), path));
}

}  // namespace early_release_test
}  // namespace siftdb
