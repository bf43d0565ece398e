// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The MemTable's user-key Bloom filter (db/memtable.h, ConcurrentBloom):
// with and without a filter, Get finds every entry added (puts and
// deletions, several versions, many sizes), UserKeyMayMatch never says no
// to an added key, absent keys are not found; FilterMemoryUsage() and its
// exclusion from ApproximateMemoryUsage(). Through the public API:
// Options.memtable_filter_ratio 0, default and 0.25 give identical results
// for a random workload, and out-of-range ratios fail DB::Open.

#include <atomic>
#include <cmath>
#include <limits>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/lookup_key.h"
#include "db/memtable.h"
#include "gtest/gtest.h"
#include "siftdb/comparator.h"
#include "siftdb/db.h"
#include "siftdb/options.h"
#include "table/internal_key.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"

namespace siftdb {
namespace memtable_filter_test {

// ---------------------------------------------------------------------------
// MemTable.

struct MemTableUnref {
  void operator()(MemTable* m) const { m->Unref(); }
};
using MemTablePtr = std::unique_ptr<MemTable, MemTableUnref>;

const InternalKeyComparator& Icmp() {
  static const InternalKeyComparator* const icmp =
      new InternalKeyComparator(BytewiseComparator());
  return *icmp;
}

MemTablePtr NewMemTable(size_t filter_bytes) {
  MemTable* m = new MemTable(Icmp(), filter_bytes);
  m->Ref();
  return MemTablePtr(m);
}

// User key i: lengths 0..~40, several shapes, all distinct.
std::string UserKey(int i) {
  if (i == 0) return "";
  switch (i % 4) {
    case 0:
      return absl::StrFormat("key%06d", i);
    case 1:
      return absl::StrFormat("%d", i);
    case 2:
      return absl::StrFormat("user/%d/%s", i, std::string(i % 23, 'p'));
    default: {
      std::string k = absl::StrFormat("b%d", i);
      k.push_back('\0');
      k.push_back(static_cast<char>(0xff));
      return k;
    }
  }
}

// Not equal to any UserKey(i).
std::string AbsentKey(int i) { return absl::StrFormat("absent-%d", i); }

struct Version {
  SequenceNumber seq;
  ValueType type;
  std::string value;
};
// Per user key: its versions, oldest first.
using Model = std::map<std::string, std::vector<Version>>;

struct GetResult {
  bool found = false;
  absl::Status status;
  std::string value;
};

GetResult MemGet(MemTable* mem, std::string_view user_key, SequenceNumber seq) {
  LookupKey lkey(user_key, seq);
  GetResult r;
  r.value = "<untouched>";
  r.found = mem->Get(lkey, &r.value, &r.status);
  return r;
}

// What Get at `seq` must answer for `versions`.
void ExpectGet(MemTable* mem, const std::string& user_key,
               const std::vector<Version>& versions, SequenceNumber seq) {
  const Version* want = nullptr;
  for (const Version& v : versions) {
    if (v.seq <= seq) want = &v;
  }
  const GetResult r = MemGet(mem, user_key, seq);
  if (want == nullptr) {
    EXPECT_FALSE(r.found) << "key '" << user_key << "' at " << seq;
    return;
  }
  ASSERT_TRUE(r.found) << "key '" << user_key << "' at " << seq;
  if (want->type == kTypeValue) {
    EXPECT_TRUE(r.status.ok()) << r.status;
    EXPECT_EQ(r.value, want->value) << "key '" << user_key << "' at " << seq;
  } else {
    EXPECT_TRUE(absl::IsNotFound(r.status))
        << "key '" << user_key << "' at " << seq << ": " << r.status;
  }
}

// Adds `n` user keys with 1..3 versions each (every fourth a deletion) and
// returns the model.
Model Fill(MemTable* mem, int n, uint64_t seed) {
  Random rnd(seed);
  Model model;
  SequenceNumber seq = 100;
  // Versions of different keys interleave, as writes do.
  std::vector<int> order;
  for (int i = 0; i < n; i++) {
    const int versions = 1 + rnd.Uniform(3);
    for (int v = 0; v < versions; v++) order.push_back(i);
  }
  for (size_t j = order.size(); j > 1; j--) {
    std::swap(order[j - 1], order[rnd.Uniform(j)]);
  }
  for (int i : order) {
    const std::string key = UserKey(i);
    seq += 1 + rnd.Uniform(2);
    const ValueType type = rnd.OneIn(4) ? kTypeDeletion : kTypeValue;
    const std::string value =
        type == kTypeDeletion
            ? ""
            : absl::StrFormat("v%d-%s", seq, std::string(rnd.Uniform(50), 'x'));
    mem->Add(seq, type, key, value);
    model[key].push_back({seq, type, value});
  }
  return model;
}

const size_t kFilterSizes[] = {0, 63, 64, 1000, size_t{1} << 16};
const int kKeyCounts[] = {1, 2, 3, 7, 20, 100, 1000, 5000};

TEST(MemTableFilterTest, GetFindsEveryAddedEntry) {
  for (size_t bytes : kFilterSizes) {
    for (int n : kKeyCounts) {
      SCOPED_TRACE(absl::StrFormat("filter bytes %d, keys %d", bytes, n));
      MemTablePtr mem = NewMemTable(bytes);
      const Model model = Fill(mem.get(), n, bytes * 31 + n);
      for (const auto& [key, versions] : model) {
        ASSERT_TRUE(mem->UserKeyMayMatch(key)) << "key '" << key << "'";
        // The newest version, each version at its own sequence and just
        // below it, and below the oldest (not found).
        ExpectGet(mem.get(), key, versions, kMaxSequenceNumber);
        for (const Version& v : versions) {
          ExpectGet(mem.get(), key, versions, v.seq);
          ExpectGet(mem.get(), key, versions, v.seq - 1);
        }
        ExpectGet(mem.get(), key, versions, 0);
        if (HasFailure()) return;
      }
      // Absent keys: not found, value untouched.
      for (int i = 0; i < 300; i++) {
        const GetResult r = MemGet(mem.get(), AbsentKey(i), kMaxSequenceNumber);
        ASSERT_FALSE(r.found) << AbsentKey(i);
        ASSERT_EQ(r.value, "<untouched>");
      }
      // Keys not added yet (beyond n) are absent too.
      for (int i = n; i < n + 50; i++) {
        ASSERT_FALSE(MemGet(mem.get(), UserKey(i), kMaxSequenceNumber).found)
            << "key " << i;
      }
    }
  }
}

TEST(MemTableFilterTest, EachEntryIsFoundRightAfterItsAdd) {
  for (size_t bytes : {size_t{0}, size_t{64}, size_t{4096}}) {
    MemTablePtr mem = NewMemTable(bytes);
    for (int i = 0; i < 2000; i++) {
      const std::string key = UserKey(i);
      const std::string value = absl::StrFormat("value%d", i);
      ASSERT_FALSE(MemGet(mem.get(), key, kMaxSequenceNumber).found) << i;
      mem->Add(1000 + i, kTypeValue, key, value);
      ASSERT_TRUE(mem->UserKeyMayMatch(key)) << i;
      const GetResult r = MemGet(mem.get(), key, kMaxSequenceNumber);
      ASSERT_TRUE(r.found) << i;
      ASSERT_EQ(r.value, value);
    }
    EXPECT_EQ(mem->NumEntries(), 2000u);
  }
}

TEST(MemTableFilterTest, DisabledFilterAlwaysMayMatch) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{63}}) {
    MemTablePtr mem = NewMemTable(bytes);
    EXPECT_TRUE(mem->UserKeyMayMatch("anything"));
    EXPECT_TRUE(mem->UserKeyMayMatch(""));
    Fill(mem.get(), 100, 1);
    for (int i = 0; i < 100; i++) {
      EXPECT_TRUE(mem->UserKeyMayMatch(AbsentKey(i)));
    }
  }
}

TEST(MemTableFilterTest, FilterRejectsAbsentKeys) {
  // A filter of 64 KiB over 1000 keys (~500 bits per key): an empty
  // MemTable rejects everything and a filled one nearly everything absent.
  MemTablePtr mem = NewMemTable(size_t{1} << 16);
  for (int i = 0; i < 1000; i++) {
    ASSERT_FALSE(mem->UserKeyMayMatch(AbsentKey(i))) << i;
  }
  Fill(mem.get(), 1000, 2);
  int rejected = 0;
  for (int i = 0; i < 10000; i++) {
    if (!mem->UserKeyMayMatch(AbsentKey(i))) rejected++;
  }
  EXPECT_GE(rejected, 9990);
}

TEST(MemTableFilterTest, FilterMemoryUsage) {
  struct Case {
    size_t bytes, usage;
  };
  for (const Case& c :
       {Case{0, 0}, Case{63, 0}, Case{64, 64}, Case{1000, 960},
        Case{size_t{1} << 16, 1 << 16}, Case{size_t{1} << 20, 1 << 20}}) {
    MemTablePtr mem = NewMemTable(c.bytes);
    EXPECT_EQ(mem->FilterMemoryUsage(), c.usage) << "bytes " << c.bytes;
    Fill(mem.get(), 500, 3);
    EXPECT_EQ(mem->FilterMemoryUsage(), c.usage) << "bytes " << c.bytes;
  }
}

TEST(MemTableFilterTest, ApproximateMemoryUsageExcludesTheFilter) {
  MemTablePtr plain = NewMemTable(0);
  MemTablePtr filtered = NewMemTable(size_t{1} << 20);
  EXPECT_EQ(filtered->ApproximateMemoryUsage(),
            plain->ApproximateMemoryUsage());
  EXPECT_LT(filtered->ApproximateMemoryUsage(), size_t{1} << 20);
  Fill(plain.get(), 1000, 4);
  Fill(filtered.get(), 1000, 4);
  EXPECT_EQ(filtered->ApproximateMemoryUsage(),
            plain->ApproximateMemoryUsage());
}

TEST(MemTableFilterTest, IterationIsUnchanged) {
  MemTablePtr plain = NewMemTable(0);
  MemTablePtr filtered = NewMemTable(4096);
  Fill(plain.get(), 500, 5);
  Fill(filtered.get(), 500, 5);
  auto a = plain->NewIterator();
  auto b = filtered->NewIterator();
  size_t n = 0;
  for (a->SeekToFirst(), b->SeekToFirst(); a->Valid(); a->Next(), b->Next()) {
    ASSERT_TRUE(b->Valid());
    ASSERT_EQ(a->key(), b->key());
    ASSERT_EQ(a->value(), b->value());
    n++;
  }
  EXPECT_FALSE(b->Valid());
  EXPECT_EQ(n, plain->NumEntries());
  // A seek to an absent key lands where it would without a filter.
  for (int i = 0; i < 100; i++) {
    std::string target;
    AppendInternalKey(&target, AbsentKey(i), kMaxSequenceNumber,
                      kValueTypeForSeek);
    a->Seek(target);
    b->Seek(target);
    ASSERT_EQ(a->Valid(), b->Valid());
    if (a->Valid()) {
      ASSERT_EQ(a->key(), b->key());
    }
  }
}

TEST(MemTableFilterTest, ReadersFindEntriesAConcurrentWriterPublished) {
  // One writer adds, then publishes the count with a release store; two
  // readers Get entries below the count they acquire (the DB publishes a
  // write's sequence number under its mutex the same way).
  constexpr int kKeys = 30000;
  MemTablePtr mem = NewMemTable(kKeys * 10 / 8);  // ~10 bits per key
  std::vector<std::string> keys;
  for (int i = 0; i < kKeys; i++) keys.push_back(UserKey(i));
  std::atomic<int> published{0};
  std::atomic<bool> done{false};
  int misses[2] = {0, 0};
  int checks[2] = {0, 0};
  auto reader = [&](int id) {
    Random rnd(id + 7);
    while (true) {
      const bool finished = done.load(std::memory_order_acquire);
      const int limit = published.load(std::memory_order_acquire);
      if (limit > 0) {
        for (int i : {limit - 1, static_cast<int>(rnd.Uniform(limit))}) {
          checks[id]++;
          const GetResult r = MemGet(mem.get(), keys[i], kMaxSequenceNumber);
          if (!r.found || r.value != keys[i]) misses[id]++;
        }
      }
      if (finished) break;
    }
  };
  std::thread r0(reader, 0), r1(reader, 1);
  std::thread writer([&] {
    for (int i = 0; i < kKeys; i++) {
      mem->Add(1 + i, kTypeValue, keys[i], keys[i]);
      published.store(i + 1, std::memory_order_release);
    }
    done.store(true, std::memory_order_release);
  });
  writer.join();
  r0.join();
  r1.join();
  for (int id = 0; id < 2; id++) {
    EXPECT_GT(checks[id], 0);
    EXPECT_EQ(misses[id], 0) << "reader " << id;
  }
}

// ---------------------------------------------------------------------------
// Through the DB.

Options DBOptions(double ratio) {
  Options o;
  o.create_if_missing = true;
  // Small buffers and tables: the workload flushes and compacts, so reads
  // meet the MemTable, the immutable one and tables.
  o.write_buffer_size = 16 << 10;
  o.max_file_size = 16 << 10;
  o.max_bytes_for_level_base = 64 << 10;
  o.block_size = 512;
  o.memtable_filter_ratio = ratio;
  return o;
}

TEST(MemTableFilterDBTest, DefaultRatio) {
  EXPECT_EQ(Options().memtable_filter_ratio, 0.0625);
}

// One DB per ratio of RatiosGiveIdenticalResults, fed the same random
// workload and checked against one std::map model.
class RatioComparison {
 public:
  static constexpr int kDBs = 3;
  static constexpr int kSteps = 5000;

  // Opens a fresh DB per ratio under `dir`.
  void OpenAll(const test::TempDir& dir) {
    for (int i = 0; i < kDBs; i++) {
      paths_[i] = dir.Join(absl::StrFormat("db%d", i));
      Reopen(i);
      ASSERT_FALSE(::testing::Test::HasFatalFailure());
    }
  }

  // One random operation (write, read, snapshot or reopen) at `step`.
  void Step(int step) {
    const int op = rnd_.Uniform(100);
    if (op < 40) {
      const std::string k = WrittenKey();
      const std::string v =
          absl::StrFormat("v%d-%s", step, std::string(rnd_.Uniform(80), 'x'));
      for (auto& db : dbs_) ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
      model_[k] = v;
    } else if (op < 55) {
      const std::string k = WrittenKey();
      for (auto& db : dbs_) ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
      model_.erase(k);
    } else if (op < 80) {
      ASSERT_NO_FATAL_FAILURE(CheckGet(Key(), model_, nullptr));
    } else if (op < 92) {
      ASSERT_NO_FATAL_FAILURE(CheckSeek(model_, nullptr));
    } else if (op < 96) {
      if (snaps_.empty()) return;
      const Snap& s = snaps_[rnd_.Uniform(snaps_.size())];
      ASSERT_NO_FATAL_FAILURE(CheckGet(Key(), s.model, &s));
      ASSERT_NO_FATAL_FAILURE(CheckSeek(s.model, &s));
    } else if (op < 99) {
      TakeOrReleaseSnapshot();
    } else if (snaps_.empty()) {
      // Reopen: recovery replays the log into MemTables with filters.
      for (int i = 0; i < kDBs; i++) {
        Reopen(i);
        ASSERT_FALSE(::testing::Test::HasFatalFailure());
      }
    }
  }

  // Every key of the key space, read from every DB.
  void CheckEveryKey() {
    for (int k = 0; k < 600; k++) {
      ASSERT_NO_FATAL_FAILURE(
          CheckGet(absl::StrFormat("k%04d", k), model_, nullptr));
    }
  }

  // A full forward scan of every DB equals the model.
  void CheckFullScans() {
    for (int i = 0; i < kDBs; i++) {
      auto it = dbs_[i]->NewIterator(ReadOptions());
      auto pos = model_.begin();
      for (it->SeekToFirst(); it->Valid(); it->Next(), ++pos) {
        ASSERT_NE(pos, model_.end());
        ASSERT_EQ(it->key(), pos->first);
        ASSERT_EQ(it->value(), pos->second);
      }
      ASSERT_EQ(pos, model_.end()) << "ratio " << kRatios[i];
      ASSERT_TRUE(it->status().ok()) << it->status();
    }
  }

  // Releases the snapshots still held.
  void ReleaseSnapshots() {
    for (const Snap& s : snaps_) {
      for (int i = 0; i < kDBs; i++) dbs_[i]->ReleaseSnapshot(s.snapshot[i]);
    }
  }

  // The workload did reach tables (reads met more than MemTables): table
  // filters were asked and data blocks read. (Counting the tables left at
  // the end is no proof: a background compaction may just have merged the
  // ~600 live keys into one table, which made that check flaky.)
  void ExpectTablesReached() {
    for (int i = 0; i < kDBs; i++) {
      int tables = 0;
      for (int level = 0; level < 7; level++) {
        std::string v;
        ASSERT_TRUE(dbs_[i]->GetProperty(
            absl::StrFormat("siftdb.num-files-at-level%d", level), &v));
        tables += std::stoi(v);
      }
      EXPECT_GE(tables, 1) << "ratio " << kRatios[i];
      for (const char* counter : {"siftdb.counter.filter.checks",
                                  "siftdb.counter.block.data_reads"}) {
        std::string v;
        ASSERT_TRUE(dbs_[i]->GetProperty(counter, &v)) << counter;
        EXPECT_GT(std::stoll(v), 0) << counter << ", ratio " << kRatios[i];
      }
    }
  }

 private:
  // A snapshot of every DB and the model it sees.
  struct Snap {
    const Snapshot* snapshot[kDBs];
    std::map<std::string, std::string> model;
  };

  const double kRatios[kDBs] = {0.0, Options().memtable_filter_ratio, 0.25};

  // Closes (if open) and opens DB `i`.
  void Reopen(int i) {
    dbs_[i].reset();
    auto db = DB::Open(DBOptions(kRatios[i]), paths_[i]);
    ASSERT_TRUE(db.ok()) << "ratio " << kRatios[i] << ": " << db.status();
    dbs_[i] = std::move(*db);
  }

  // A key space of 600 keys, every other one ever written: absent keys
  // fall both between and beyond written ones.
  std::string Key() { return absl::StrFormat("k%04d", rnd_.Uniform(600)); }
  // One of the keys that may be written.
  std::string WrittenKey() {
    return absl::StrFormat("k%04d", 2 * rnd_.Uniform(300));
  }

  // Takes a snapshot of every DB while fewer than two are held, else
  // releases the oldest.
  void TakeOrReleaseSnapshot() {
    if (snaps_.size() < 2) {
      Snap s;
      for (int i = 0; i < kDBs; i++) s.snapshot[i] = dbs_[i]->GetSnapshot();
      s.model = model_;
      snaps_.push_back(std::move(s));
    } else {
      for (int i = 0; i < kDBs; i++) {
        dbs_[i]->ReleaseSnapshot(snaps_.front().snapshot[i]);
      }
      snaps_.erase(snaps_.begin());
    }
  }

  // One read of `k` from every DB, checked against `m`.
  void CheckGet(const std::string& k,
                const std::map<std::string, std::string>& m, const Snap* snap) {
    for (int i = 0; i < kDBs; i++) {
      ReadOptions ro;
      if (snap != nullptr) ro.snapshot = snap->snapshot[i];
      std::string v;
      absl::Status s = dbs_[i]->Get(ro, k, &v);
      auto it = m.find(k);
      if (it == m.end()) {
        ASSERT_TRUE(absl::IsNotFound(s))
            << "ratio " << kRatios[i] << " key " << k << ": " << s;
      } else {
        ASSERT_TRUE(s.ok())
            << "ratio " << kRatios[i] << " key " << k << ": " << s;
        ASSERT_EQ(v, it->second) << "ratio " << kRatios[i] << " key " << k;
      }
    }
  }

  // A seek on every DB, then the same random walk on each.
  void CheckSeek(const std::map<std::string, std::string>& m,
                 const Snap* snap) {
    const std::string target = Key();
    const int steps = rnd_.Uniform(8);
    std::vector<bool> forward;
    for (int s = 0; s < steps; s++) forward.push_back(!rnd_.OneIn(3));
    for (int i = 0; i < kDBs; i++) {
      ReadOptions ro;
      if (snap != nullptr) ro.snapshot = snap->snapshot[i];
      auto it = dbs_[i]->NewIterator(ro);
      it->Seek(target);
      auto pos = m.lower_bound(target);
      for (int s = 0;; s++) {
        if (pos == m.end()) {
          ASSERT_FALSE(it->Valid())
              << "ratio " << kRatios[i] << " seek " << target << " step " << s;
          break;
        }
        ASSERT_TRUE(it->Valid())
            << "ratio " << kRatios[i] << " seek " << target << " step " << s;
        ASSERT_EQ(it->key(), pos->first)
            << "ratio " << kRatios[i] << " seek " << target << " step " << s;
        ASSERT_EQ(it->value(), pos->second);
        if (s == steps) break;
        if (forward[s]) {
          it->Next();
          ++pos;
        } else {
          it->Prev();
          if (pos == m.begin()) {
            ASSERT_FALSE(it->Valid());
            break;
          }
          --pos;
        }
      }
      ASSERT_TRUE(it->status().ok()) << it->status();
    }
  }

  std::unique_ptr<DB> dbs_[kDBs];
  std::string paths_[kDBs];
  Random rnd_{2024};
  std::map<std::string, std::string> model_;
  std::vector<Snap> snaps_;
};

TEST(MemTableFilterDBTest, RatiosGiveIdenticalResults) {
  test::TempDir dir;
  RatioComparison dbs;
  ASSERT_NO_FATAL_FAILURE(dbs.OpenAll(dir));
  for (int step = 0; step < RatioComparison::kSteps; step++) {
    ASSERT_NO_FATAL_FAILURE(dbs.Step(step));
  }
  // Finally every key of the key space, and full scans.
  ASSERT_NO_FATAL_FAILURE(dbs.CheckEveryKey());
  ASSERT_NO_FATAL_FAILURE(dbs.CheckFullScans());
  dbs.ReleaseSnapshots();
  dbs.ExpectTablesReached();
}

TEST(MemTableFilterDBTest, FilterCountsInApproximateMemoryUsage) {
  // Fresh DBs, nothing written: the 0.25 one's MemTable filter is
  // write_buffer_size / 4 bytes more.
  test::TempDir dir;
  size_t usage[2];
  const double kRatios[] = {0.0, 0.25};
  for (int i = 0; i < 2; i++) {
    Options o = DBOptions(kRatios[i]);
    o.write_buffer_size = 64 << 10;
    auto db = DB::Open(o, dir.Join(absl::StrFormat("db%d", i)));
    ASSERT_TRUE(db.ok()) << db.status();
    std::string v;
    ASSERT_TRUE((*db)->GetProperty("siftdb.approximate-memory-usage", &v));
    usage[i] = std::stoull(v);
  }
  EXPECT_EQ(usage[1] - usage[0], size_t{16} << 10);
}

TEST(MemTableFilterDBTest, OutOfRangeRatioFailsOpen) {
  const double kBad[] = {-0.1,
                         0.3,
                         0.2500001,
                         1.0,
                         -std::numeric_limits<double>::min(),
                         std::numeric_limits<double>::quiet_NaN(),
                         std::numeric_limits<double>::infinity(),
                         -std::numeric_limits<double>::infinity()};
  for (double ratio : kBad) {
    SCOPED_TRACE(absl::StrFormat("ratio %g", ratio));
    test::TempDir dir;
    auto db = DB::Open(DBOptions(ratio), dir.Join("db"));
    ASSERT_FALSE(db.ok());
    EXPECT_EQ(db.status().code(), absl::StatusCode::kInvalidArgument)
        << db.status();
    EXPECT_NE(db.status().message().find("memtable_filter_ratio"),
              std::string_view::npos)
        << db.status();
  }
  // The bounds themselves are accepted.
  for (double ratio : {0.0, -0.0, 0.25}) {
    test::TempDir dir;
    auto db = DB::Open(DBOptions(ratio), dir.Join("db"));
    EXPECT_TRUE(db.ok()) << "ratio " << ratio << ": " << db.status();
  }
}

}  // namespace memtable_filter_test
}  // namespace siftdb
