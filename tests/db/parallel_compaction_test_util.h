// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers shared by the parallel-compaction tests
// (parallel_compaction_test.cc, parallel_compaction_fault_test.cc): small
// options that make compactions split, a std::map model and the checks of
// what a reader sees against it, parsers of the "siftdb.stats" and
// "siftdb.sstables" properties, the level-invariant and orphan-table checks,
// the ParallelCompactionTest fixture and a Logger that notes split and
// aborted compactions.
//
// Header-only: every function is inline and every class is defined here
// once, so both test files share one definition (GoogleTest requires the
// tests of the suite ParallelCompactionTest, spread over both files, to use
// the same fixture class). The check functions report through GoogleTest
// assertions and must run on the test's thread. The fixture is not
// thread-safe beyond what DB itself allows; CompactionWatcher is.

#ifndef SIFTDB_TESTS_DB_PARALLEL_COMPACTION_TEST_UTIL_H_
#define SIFTDB_TESTS_DB_PARALLEL_COMPACTION_TEST_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "siftdb/options.h"
#include "tests/support/temp_dir.h"
#include "util/mutex.h"
#include "util/random.h"

namespace siftdb::test {

using Model = std::map<std::string, std::string>;

// Small buffers and tables so that a few MB of writes flush and compact
// many times, and level-1 inputs span several tables (so compactions split).
inline Options SmallOptions(int subcompactions) {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 10;
  o.max_file_size = 16 << 10;
  o.max_bytes_for_level_base = 128 << 10;
  o.max_subcompactions = subcompactions;
  return o;
}

inline std::unique_ptr<DB> OpenOrDie(const Options& options,
                                     const std::string& path) {
  auto db = DB::Open(options, path);
  EXPECT_TRUE(db.ok()) << path << ": " << db.status();
  return db.ok() ? std::move(*db) : nullptr;
}

inline absl::Status WaitIdle(DB* db) {
  return static_cast<DBImpl*>(db)->WaitForBackgroundWork();
}

inline std::string Key(int i) { return absl::StrFormat("key%06d", i); }

// Letters at random: snappy barely shrinks them, so sizes stay predictable.
inline std::string RandomValue(Random* rnd, const std::string& tag, int len) {
  std::string v = tag + ":";
  for (int i = 0; i < len; i++) v.push_back('a' + rnd->Uniform(26));
  return v;
}

// The number right after `label` in "siftdb.stats" (0, with a test
// failure, when the label is missing).
inline uint64_t StatsNumberAfter(DB* db, std::string_view label) {
  std::string stats;
  EXPECT_TRUE(db->GetProperty("siftdb.stats", &stats));
  const size_t pos = stats.find(label);
  EXPECT_NE(std::string::npos, pos) << label << " not in:\n" << stats;
  if (pos == std::string::npos) return 0;
  return std::stoull(stats.substr(pos + label.size()));
}

// Compactions the DB merged as more than one part.
inline uint64_t SplitCompactions(DB* db) {
  return StatsNumberAfter(db, "compactions split into parts: ");
}

// One live table as "siftdb.sstables" describes it.
struct TableInfo {
  uint64_t number = 0;
  uint64_t size = 0;
  bool parsed = false;  // both bounds are valid internal keys
  std::string smallest, largest;
  uint64_t smallest_seq = 0, largest_seq = 0;
  std::string line;
};

// The live tables of each level, parsed from "siftdb.sstables" (lines
// " 000012.sst 1234 bytes ['key1' @ 5 : put .. 'key9' @ 0 : del]").
inline std::vector<std::vector<TableInfo>> LiveTables(DB* db) {
  std::string text;
  EXPECT_TRUE(db->GetProperty("siftdb.sstables", &text));
  std::vector<std::vector<TableInfo>> levels;
  size_t start = 0;
  while (start < text.size()) {
    size_t end = text.find('\n', start);
    if (end == std::string::npos) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    int level;
    if (std::sscanf(line.c_str(), "--- level %d ---", &level) == 1) {
      levels.resize(level + 1);
      continue;
    }
    if (line.empty() || levels.empty()) continue;
    TableInfo t;
    t.line = line;
    unsigned long long number, size, sseq, lseq;
    char skey[256], lkey[256], stype[8], ltype[8];
    const int n = std::sscanf(
        line.c_str(),
        " %llu.sst %llu bytes ['%255[^']' @ %llu : %7[a-z] .. '%255[^']' @ "
        "%llu : %7[a-z]]",
        &number, &size, skey, &sseq, stype, lkey, &lseq, ltype);
    if (n >= 2) {
      t.number = number;
      t.size = size;
    }
    if (n == 8) {
      t.parsed = true;
      t.smallest = skey;
      t.largest = lkey;
      t.smallest_seq = sseq;
      t.largest_seq = lseq;
    }
    levels.back().push_back(t);
  }
  return levels;
}

inline std::set<uint64_t> LiveTableNumbers(DB* db) {
  std::set<uint64_t> numbers;
  for (const auto& level : LiveTables(db)) {
    for (const TableInfo& t : level) numbers.insert(t.number);
  }
  return numbers;
}

inline std::set<uint64_t> TableFilesOnDisk(const std::string& path) {
  std::set<uint64_t> numbers;
  auto children = Env::Default()->GetChildren(path);
  EXPECT_TRUE(children.ok()) << children.status();
  if (!children.ok()) return numbers;
  for (const std::string& name : *children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kTableFile) {
      numbers.insert(number);
    }
  }
  return numbers;
}

// Once the DB is idle, the directory holds exactly the live tables: no
// output of a failed or abandoned compaction part is left behind.
inline void ExpectNoOrphanTables(DB* db, const std::string& path) {
  ASSERT_TRUE(WaitIdle(db).ok());
  EXPECT_EQ(LiveTableNumbers(db), TableFilesOnDisk(path));
}

// Levels >= 1: every table non-empty with ordered bounds, tables in
// increasing order without overlap. With `strict`, no user key spans two
// tables of a level either (true whenever no snapshot kept several
// versions of a key: compaction outputs then hold one entry per key).
inline void ExpectLevelsSorted(DB* db, bool strict, const std::string& where) {
  const auto levels = LiveTables(db);
  ASSERT_FALSE(levels.empty()) << where;
  for (size_t level = 0; level < levels.size(); level++) {
    for (size_t i = 0; i < levels[level].size(); i++) {
      const TableInfo& t = levels[level][i];
      ASSERT_TRUE(t.parsed)
          << where << ": unreadable bounds (empty table?) " << t.line;
      EXPECT_GT(t.size, 0u) << where << ": " << t.line;
      const bool ordered =
          t.smallest < t.largest ||
          (t.smallest == t.largest && t.smallest_seq >= t.largest_seq);
      EXPECT_TRUE(ordered) << where << ": " << t.line;
      if (level == 0 || i == 0) continue;
      const TableInfo& prev = levels[level][i - 1];
      const bool apart =
          prev.largest < t.smallest || (!strict && prev.largest == t.smallest &&
                                        prev.largest_seq > t.smallest_seq);
      EXPECT_TRUE(apart) << where << ": level " << level << " tables overlap:\n"
                         << prev.line << "\n"
                         << t.line;
    }
  }
}

// The live tables whose user-key range holds `key`, for failure messages.
inline std::string TablesHolding(DB* db, const std::string& key) {
  std::string r = "\ntables holding " + key + ":";
  const auto levels = LiveTables(db);
  for (size_t level = 0; level < levels.size(); level++) {
    for (const TableInfo& t : levels[level]) {
      if (!t.parsed || (t.smallest <= key && key <= t.largest)) {
        absl::StrAppendFormat(&r, "\n  level %d:%s", level, t.line);
      }
    }
  }
  return r;
}

// Everything a reader sees at `snap` (null: now) is `model`: a forward and
// a backward scan, and a Get of every key in `keys`.
inline void ExpectMatches(DB* db, const Snapshot* snap, const Model& model,
                          const std::set<std::string>& keys,
                          const std::string& where) {
  ReadOptions ro;
  ro.snapshot = snap;
  std::unique_ptr<Iterator> it = db->NewIterator(ro);
  auto m = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model.end()) << where << ": extra key " << it->key();
    ASSERT_EQ(m->first, it->key())
        << where
        << TablesHolding(db, std::min(m->first, std::string(it->key())));
    ASSERT_EQ(m->second, it->value())
        << where << ": " << m->first << TablesHolding(db, m->first);
  }
  ASSERT_TRUE(it->status().ok()) << where << ": " << it->status();
  ASSERT_TRUE(m == model.end()) << where << ": scan misses " << m->first;
  auto r = model.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
    ASSERT_NE(r, model.rend()) << where << ": extra key " << it->key();
    ASSERT_EQ(r->first, it->key())
        << where
        << TablesHolding(db, std::max(r->first, std::string(it->key())));
    ASSERT_EQ(r->second, it->value())
        << where << ": " << r->first << TablesHolding(db, r->first);
  }
  ASSERT_TRUE(it->status().ok()) << where << ": " << it->status();
  ASSERT_TRUE(r == model.rend()) << where << ": reverse misses " << r->first;
  it.reset();
  for (const std::string& k : keys) {
    std::string value;
    absl::Status s = db->Get(ro, k, &value);
    auto found = model.find(k);
    if (found == model.end()) {
      ASSERT_TRUE(absl::IsNotFound(s))
          << where << ": " << k << ": " << s << TablesHolding(db, k);
    } else {
      ASSERT_TRUE(s.ok()) << where << ": " << k << ": " << s
                          << TablesHolding(db, k);
      ASSERT_EQ(found->second, value)
          << where << ": " << k << TablesHolding(db, k);
    }
  }
}

// --- Fixture for the single-DB cases ---

class ParallelCompactionTest : public ::testing::Test {
 protected:
  ParallelCompactionTest() : path_(dir_.Join("db")) {}
  ~ParallelCompactionTest() override { ReleaseSnapshots(); }

  const Snapshot* TakeSnapshot() {
    snapshots_.push_back(db_->GetSnapshot());
    return snapshots_.back();
  }
  void ReleaseSnapshots() {
    for (const Snapshot* s : snapshots_) db_->ReleaseSnapshot(s);
    snapshots_.clear();
  }

  void Open(const Options& options) {
    db_.reset();
    db_ = OpenOrDie(options, path_);
    ASSERT_NE(nullptr, db_);
  }
  absl::Status Put(const std::string& k, const std::string& v) {
    absl::Status s = db_->Put(WriteOptions(), k, v);
    if (s.ok()) model_[k] = v;
    return s;
  }
  absl::Status Delete(const std::string& k) {
    absl::Status s = db_->Delete(WriteOptions(), k);
    if (s.ok()) model_.erase(k);
    return s;
  }
  void Check(const std::string& where, const Snapshot* snap = nullptr,
             const Model* model = nullptr) {
    ASSERT_NO_FATAL_FAILURE(ExpectMatches(
        db_.get(), snap, model ? *model : model_, written_, where));
  }
  uint64_t ApproximateSize() {
    const Range all{"", "~"};
    uint64_t size = 0;
    db_->GetApproximateSizes(&all, 1, &size);
    return size;
  }

  test::TempDir dir_;
  std::string path_;
  std::unique_ptr<DB> db_;
  Model model_;
  std::set<std::string> written_;           // every key ever written
  std::vector<const Snapshot*> snapshots_;  // of db_, oldest first
};

// --- Logger for the close-during-compaction case ---

// Notes when the DB starts a compaction in several parts and when one
// ends aborted ("compacting ... in N parts", "compacted to ...: ABORTED").
class CompactionWatcher : public Logger {
 public:
  void Log(std::string_view message) override {
    MutexLock l(&mu_);
    if (message.find("compaction started (") != std::string_view::npos &&
        message.find("; 1 part(s)") == std::string_view::npos) {
      split_started_++;
    }
    if (message.find("compaction finished") != std::string_view::npos &&
        message.find("closing during compaction") != std::string_view::npos) {
      aborted_++;
    }
  }
  int split_started() {
    MutexLock l(&mu_);
    return split_started_;
  }
  int aborted() {
    MutexLock l(&mu_);
    return aborted_;
  }

 private:
  Mutex mu_;  // util/mutex.h: visible to ThreadSanitizer
  int split_started_ ABSL_GUARDED_BY(mu_) = 0;
  int aborted_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_DB_PARALLEL_COMPACTION_TEST_UTIL_H_
