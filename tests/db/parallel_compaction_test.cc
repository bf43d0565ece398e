// Copyright (c) siftdb authors.
//
// Compactions merged as several parts on several threads
// (Options::max_subcompactions > 1) against the one-thread merge and a
// std::map model: same reads (scans both ways, Gets, snapshots) before and
// after CompactRange; levels >= 1 stay sorted and non-overlapping with no
// empty table; tombstones and snapshot versions survive part boundaries; a
// part whose table writes fail stops the DB with that error and loses no
// acknowledged write nor leaves a table behind; closing during a split
// compaction loses nothing; max_subcompactions may change between opens
// and is checked by DB::Open.
//
// The tests check through GetProperty("siftdb.stats") that compactions
// really were split, so none passes without exercising the parts. One more
// case (ManyVersionsOfOneKeyStayOrderedAcrossLevels) concerns where any
// compaction may end an output table, split or not.

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"
#include "util/fault_injection_env.h"
#include "util/mutex.h"
#include "util/random.h"

namespace siftdb {
namespace {

using Model = std::map<std::string, std::string>;

// Small buffers and tables so that a few MB of writes flush and compact
// many times, and level-1 inputs span several tables (so compactions split).
Options SmallOptions(int subcompactions) {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 10;
  o.max_file_size = 16 << 10;
  o.max_bytes_for_level_base = 128 << 10;
  o.max_subcompactions = subcompactions;
  return o;
}

std::unique_ptr<DB> OpenOrDie(const Options& options, const std::string& path) {
  auto db = DB::Open(options, path);
  EXPECT_TRUE(db.ok()) << path << ": " << db.status();
  return db.ok() ? std::move(*db) : nullptr;
}

absl::Status WaitIdle(DB* db) {
  return static_cast<DBImpl*>(db)->WaitForBackgroundWork();
}

std::string Key(int i) { return absl::StrFormat("key%06d", i); }

// Letters at random: snappy barely shrinks them, so sizes stay predictable.
std::string RandomValue(Random* rnd, const std::string& tag, int len) {
  std::string v = tag + ":";
  for (int i = 0; i < len; i++) v.push_back('a' + rnd->Uniform(26));
  return v;
}

// Compactions the DB merged as more than one part, from "siftdb.stats".
uint64_t SplitCompactions(DB* db) {
  std::string stats;
  EXPECT_TRUE(db->GetProperty("siftdb.stats", &stats));
  constexpr std::string_view kLine = "compactions split into parts: ";
  const size_t pos = stats.find(kLine);
  EXPECT_NE(std::string::npos, pos) << stats;
  if (pos == std::string::npos) return 0;
  return std::stoull(stats.substr(pos + kLine.size()));
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
std::vector<std::vector<TableInfo>> LiveTables(DB* db) {
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

std::set<uint64_t> LiveTableNumbers(DB* db) {
  std::set<uint64_t> numbers;
  for (const auto& level : LiveTables(db)) {
    for (const TableInfo& t : level) numbers.insert(t.number);
  }
  return numbers;
}

std::set<uint64_t> TableFilesOnDisk(const std::string& path) {
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
void ExpectNoOrphanTables(DB* db, const std::string& path) {
  ASSERT_TRUE(WaitIdle(db).ok());
  EXPECT_EQ(LiveTableNumbers(db), TableFilesOnDisk(path));
}

// Levels >= 1: every table non-empty with ordered bounds, tables in
// increasing order without overlap. With `strict`, no user key spans two
// tables of a level either (true whenever no snapshot kept several
// versions of a key: compaction outputs then hold one entry per key).
void ExpectLevelsSorted(DB* db, bool strict, const std::string& where) {
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
std::string TablesHolding(DB* db, const std::string& key) {
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
void ExpectMatches(DB* db, const Snapshot* snap, const Model& model,
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

// --- 1. Same result as the one-thread merge, over several seeds ---

class ParallelCompactionSeedTest : public ::testing::TestWithParam<int> {};

TEST_P(ParallelCompactionSeedTest, SameReadsAsOneThreadAndTheModel) {
  test::TempDir dir;
  const std::vector<int> kSubcompactions = {1, 2, 3, 8};
  std::vector<std::unique_ptr<DB>> dbs;
  for (int n : kSubcompactions) {
    dbs.push_back(
        OpenOrDie(SmallOptions(n), dir.Join(absl::StrFormat("db%d", n))));
    ASSERT_NE(nullptr, dbs.back());
  }
  struct Held {
    std::vector<const Snapshot*> per_db;
    Model model;
  };
  std::vector<Held> held;
  // Snapshots must go before their DB, also when an assertion fails.
  absl::Cleanup release_held = [&] {
    for (Held& h : held) {
      for (size_t d = 0; d < dbs.size(); d++) {
        dbs[d]->ReleaseSnapshot(h.per_db[d]);
      }
    }
  };
  Model model;
  std::set<std::string> written;
  Random rnd(GetParam() * 1000003 + 17);
  constexpr int kKeys = 2000;
  constexpr int kSteps = 10000;
  constexpr size_t kMaxHeld = 3;

  auto check_all = [&](const std::string& when) {
    for (size_t d = 0; d < dbs.size(); d++) {
      const std::string where =
          absl::StrFormat("seed %d, %s, max_subcompactions=%d", GetParam(),
                          when, kSubcompactions[d]);
      ASSERT_NO_FATAL_FAILURE(
          ExpectMatches(dbs[d].get(), nullptr, model, written, where));
      for (size_t h = 0; h < held.size(); h++) {
        ASSERT_NO_FATAL_FAILURE(ExpectMatches(
            dbs[d].get(), held[h].per_db[d], held[h].model, written,
            absl::StrFormat("%s, snapshot %d", where, h)));
      }
    }
  };

  for (int step = 0; step < kSteps; step++) {
    const int op = rnd.Uniform(100);
    if (op < 65) {
      const std::string k = Key(rnd.Uniform(kKeys));
      const std::string v = RandomValue(&rnd, absl::StrFormat("p%d", step),
                                        40 + rnd.Uniform(200));
      for (auto& db : dbs) ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
      model[k] = v;
      written.insert(k);
    } else if (op < 82) {
      const std::string k = Key(rnd.Uniform(kKeys));
      for (auto& db : dbs) ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
      model.erase(k);
      written.insert(k);
    } else if (op < 97) {
      WriteBatch batch;
      const int n = 1 + rnd.Uniform(8);
      for (int i = 0; i < n; i++) {
        const std::string k = Key(rnd.Uniform(kKeys));
        written.insert(k);
        if (rnd.OneIn(4)) {
          batch.Delete(k);
          model.erase(k);
        } else {
          const std::string v = RandomValue(
              &rnd, absl::StrFormat("b%d.%d", step, i), 20 + rnd.Uniform(100));
          batch.Put(k, v);
          model[k] = v;
        }
      }
      for (auto& db : dbs) {
        WriteBatch copy = batch;
        ASSERT_TRUE(db->Write(WriteOptions(), &copy).ok());
      }
    } else if (held.size() < kMaxHeld && rnd.OneIn(8)) {
      Held h;
      for (auto& db : dbs) h.per_db.push_back(db->GetSnapshot());
      h.model = model;
      held.push_back(std::move(h));
    } else if (!held.empty() && rnd.OneIn(12)) {
      const size_t i = rnd.Uniform(held.size());
      for (size_t d = 0; d < dbs.size(); d++) {
        dbs[d]->ReleaseSnapshot(held[i].per_db[d]);
      }
      held.erase(held.begin() + i);
    }
    if (step == kSteps / 2) {
      ASSERT_NO_FATAL_FAILURE(check_all("mid-way"));
    }
  }
  ASSERT_NO_FATAL_FAILURE(check_all("after the writes"));
  for (auto& db : dbs) {
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db.get(), false, "compacted"));
  }
  ASSERT_NO_FATAL_FAILURE(check_all("after CompactRange with snapshots"));
  std::move(release_held).Invoke();
  held.clear();
  for (auto& db : dbs) {
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    ASSERT_NO_FATAL_FAILURE(ExpectLevelsSorted(db.get(), true, "final"));
  }
  ASSERT_NO_FATAL_FAILURE(check_all("after the final CompactRange"));

  // The split DBs split; the one-thread DB never does.
  for (size_t d = 0; d < dbs.size(); d++) {
    const uint64_t splits = SplitCompactions(dbs[d].get());
    RecordProperty(absl::StrFormat("splits_%d", kSubcompactions[d]),
                   static_cast<int>(splits));
    if (kSubcompactions[d] == 1) {
      EXPECT_EQ(0u, splits);
    } else {
      EXPECT_GT(splits, 0u) << "max_subcompactions=" << kSubcompactions[d];
    }
  }
}

INSTANTIATE_TEST_SUITE_P(ParallelCompaction, ParallelCompactionSeedTest,
                         ::testing::Values(1, 2, 3));

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
    // The compaction (failed or not) was split.
    EXPECT_GT(SplitCompactions(db.get()), 0u) << where;
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

// Notes when the DB starts a compaction in several parts and when one
// ends aborted ("compacting ... in N parts", "compacted to ...: ABORTED").
class CompactionWatcher : public Logger {
 public:
  void Log(std::string_view message) override {
    MutexLock l(&mu_);
    if (message.find("compacting ") != std::string_view::npos &&
        message.find(" in 1 parts") == std::string_view::npos) {
      split_started_++;
    }
    if (message.find("compacted to") != std::string_view::npos &&
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

}  // namespace
}  // namespace siftdb
