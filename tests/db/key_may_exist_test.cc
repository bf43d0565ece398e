// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DB::KeyMayExist: never false for a key that exists, wherever it lives
// (the MemTable, the MemTable being flushed, level-0 and deeper tables),
// with or without a snapshot; false for most absent keys (the filters'
// false-positive rate) without reading a single data block, even when the
// tables are opened for the question; certain answers from the MemTables
// (the value of a live key, false for a deleted one) at the read's
// sequence; "maybe" whenever a table cannot answer (no filter, a filter of
// an unknown policy, a table that cannot be opened); and the same on a
// read-only DB and after Close.

#include <atomic>
#include <chrono>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/cleanup/cleanup.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/blocking_env.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace key_may_exist_test {

// Present keys are even, absent ones odd, so absent keys fall inside the
// tables' key ranges and only the filters can turn them away.
std::string Key(int k) { return absl::StrFormat("key%07d", k); }
std::string Value(int k) { return absl::StrFormat("value-%07d", k); }

uint64_t Counter(DB* db, std::string_view name) {
  std::string v;
  EXPECT_TRUE(db->GetProperty(absl::StrFormat("siftdb.counter.%s", name), &v))
      << name;
  return v.empty() ? 0 : std::stoull(v);
}

int FilesAtLevel(DB* db, int level) {
  std::string v;
  EXPECT_TRUE(db->GetProperty(
      absl::StrFormat("siftdb.num-files-at-level%d", level), &v));
  return v.empty() ? 0 : std::stoi(v);
}

class KeyMayExistTest : public testing::Test {
 protected:
  Options SmallOptions() {
    Options o;
    o.create_if_missing = true;
    o.write_buffer_size = 64 << 10;
    o.max_file_size = 32 << 10;
    o.max_bytes_for_level_base = 128 << 10;
    return o;
  }

  // Options under which a few thousand keys make one table, so that every
  // absent key between the first and the last is in a table's range.
  Options OneTableOptions() {
    Options o = SmallOptions();
    o.write_buffer_size = 4 << 20;
    o.max_file_size = 4 << 20;
    return o;
  }

  void Open(const Options& o) {
    db_.reset();
    auto db = DB::Open(o, dir_.path());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  void Put(int k) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), Value(k)).ok());
  }

  // KeyMayExist over keys first, first + step, ... below limit; returns how
  // many answered true.
  int CountMayExist(int first, int limit, int step,
                    const ReadOptions& ro = ReadOptions()) {
    int yes = 0;
    for (int k = first; k < limit; k += step) {
      if (db_->KeyMayExist(ro, Key(k))) yes++;
    }
    return yes;
  }

  test::TempDir dir_;
  // Declared before db_: a DB's Env must outlive it (Close syncs through it).
  test::BlockingTableEnv blocking_env_;
  std::unique_ptr<DB> db_;
};

// 100,000 keys over every place a key can be: deeper levels (compacted),
// level 0 (flushed, below the compaction trigger), the MemTable being
// flushed (its flush held up) and the MemTable. Every one of them may
// exist, at the latest sequence and under a snapshot; the MemTables give
// their values; absent keys are mostly turned away; no data block is read.
TEST_F(KeyMayExistTest, NoFalseNegativesWhereverTheKeyLives) {
  test::BlockingTableEnv& env = blocking_env_;
  Options o = SmallOptions();
  o.env = &env;
  o.write_buffer_size = 512 << 10;
  o.max_file_size = 64 << 10;
  o.level0_file_num_compaction_trigger = 20;
  o.level0_slowdown_writes_trigger = 30;
  o.level0_stop_writes_trigger = 40;
  Open(o);
  constexpr int kKeys = 100000;
  // [0, 60000): compacted to the deeper levels.
  for (int i = 0; i < 60000; i++) Put(2 * i);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  // [60000, 90000): level-0 tables.
  for (int i = 60000; i < 90000; i++) Put(2 * i);
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  // [90000, 95000): the MemTable being flushed, its table held up.
  for (int i = 90000; i < 95000; i++) Put(2 * i);
  env.BlockTablesAfter(0);
  FlushOptions no_wait;
  no_wait.wait = false;
  ASSERT_TRUE(db_->Flush(no_wait).ok());
  // [95000, 100000): the MemTable.
  for (int i = 95000; i < kKeys; i++) Put(2 * i);
  // Once a table creation is held the background thread is frozen: no
  // compaction reads data blocks while the counter is watched.
  for (int i = 0; i < 1000 && env.waiting() == 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(env.waiting(), 1);

  EXPECT_GT(FilesAtLevel(db_.get(), 0), 0);
  int deeper = 0;
  for (int level = 1; level < 7; level++) {
    deeper += FilesAtLevel(db_.get(), level);
  }
  EXPECT_GT(deeper, 1);

  const Snapshot* snap = db_->GetSnapshot();
  ReadOptions at_snap;
  at_snap.snapshot = snap;
  const uint64_t data_reads = Counter(db_.get(), "block.data_reads");
  const uint64_t checks = Counter(db_.get(), "key_may_exist.checks");
  const uint64_t negatives = Counter(db_.get(), "key_may_exist.negatives");

  for (const ReadOptions& ro : {ReadOptions(), at_snap}) {
    for (int i = 0; i < kKeys; i++) {
      std::string value = "untouched";
      bool found = true;
      ASSERT_TRUE(db_->KeyMayExist(ro, Key(2 * i), &value, &found)) << i;
      if (i >= 90000) {
        ASSERT_TRUE(found) << i;
        ASSERT_EQ(value, Value(2 * i));
      } else {
        ASSERT_FALSE(found) << i;
        ASSERT_EQ(value, "untouched");
      }
    }
  }
  // Still held: the MemTable being flushed was among those that answered.
  EXPECT_EQ(env.waiting(), 1);

  int false_positives = 0;
  for (int i = 0; i < kKeys; i++) {
    bool found = true;
    if (db_->KeyMayExist(ReadOptions(), Key(2 * i + 1), nullptr, &found)) {
      false_positives++;
    }
    EXPECT_FALSE(found);
  }
  EXPECT_LT(false_positives, kKeys / 20);  // ~1% at 10 bits per key

  EXPECT_EQ(Counter(db_.get(), "block.data_reads"), data_reads);
  EXPECT_EQ(Counter(db_.get(), "key_may_exist.checks"), checks + 3 * kKeys);
  EXPECT_EQ(Counter(db_.get(), "key_may_exist.negatives"),
            negatives + kKeys - false_positives);

  env.Release();
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  // Flushed: the same keys, now answered by level-0 filters.
  EXPECT_EQ(CountMayExist(0, 2 * kKeys, 2), kKeys);
  EXPECT_EQ(CountMayExist(0, 2 * kKeys, 2, at_snap), kKeys);
  db_->ReleaseSnapshot(snap);
}

// A DB just opened has no table open: asking opens them (footer, index,
// filter) and still reads no data block.
TEST_F(KeyMayExistTest, OpeningTablesForTheQuestionReadsNoDataBlock) {
  Options o = SmallOptions();
  // Level 1 far under its target: no compaction reads blocks meanwhile.
  o.max_bytes_for_level_base = 64 << 20;
  Open(o);
  for (int i = 0; i < 20000; i++) Put(2 * i);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_GT(FilesAtLevel(db_.get(), 1), 1);
  Open(o);
  EXPECT_EQ(Counter(db_.get(), "block.data_reads"), 0u);
  EXPECT_EQ(CountMayExist(0, 40000, 2), 20000);
  EXPECT_LT(CountMayExist(1, 40000, 2), 1000);
  EXPECT_EQ(Counter(db_.get(), "block.data_reads"), 0u);
  EXPECT_GT(Counter(db_.get(), "bytes.read"), 0u);  // the tables were opened
  // A Get does read data blocks: the counter would have seen them.
  std::string value;
  ASSERT_TRUE(db_->Get(ReadOptions(), Key(0), &value).ok());
  EXPECT_GT(Counter(db_.get(), "block.data_reads"), 0u);
}

TEST_F(KeyMayExistTest, MemTableHitReturnsTheValue) {
  Open(SmallOptions());
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "v1").ok());

  std::string value;
  bool found = false;
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), "k", &value, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(value, "v1");

  // Without a place for the value, none is returned.
  found = true;
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), "k", nullptr, &found));
  EXPECT_FALSE(found);
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), "k"));

  // An absent key: false, *value untouched.
  value = "untouched";
  found = true;
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), "other", &value, &found));
  EXPECT_FALSE(found);
  EXPECT_EQ(value, "untouched");
}

TEST_F(KeyMayExistTest, DeletionInMemTableIsFalse) {
  Open(SmallOptions());
  // Deleted in the MemTable, with no table behind it.
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), "a").ok());
  std::string value = "untouched";
  bool found = true;
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), "a", &value, &found));
  EXPECT_FALSE(found);
  EXPECT_EQ(value, "untouched");

  // Deleted in the MemTable over a value in a table whose filter has it:
  // the newest entry decides.
  ASSERT_TRUE(db_->Put(WriteOptions(), "b", "2").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), "b"));
  const Snapshot* before_delete = db_->GetSnapshot();
  ASSERT_TRUE(db_->Delete(WriteOptions(), "b").ok());
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), "b", &value, &found));
  EXPECT_FALSE(found);

  // The snapshot sees the value, in the table: "maybe", no value.
  ReadOptions ro;
  ro.snapshot = before_delete;
  EXPECT_TRUE(db_->KeyMayExist(ro, "b", &value, &found));
  EXPECT_FALSE(found);
  EXPECT_EQ(value, "untouched");
  db_->ReleaseSnapshot(before_delete);
}

TEST_F(KeyMayExistTest, SnapshotSeesTheOldState) {
  Open(SmallOptions());
  const Snapshot* empty = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "old").ok());
  const Snapshot* old_value = db_->GetSnapshot();
  ASSERT_TRUE(db_->Put(WriteOptions(), "k", "new").ok());
  const Snapshot* new_value = db_->GetSnapshot();
  ASSERT_TRUE(db_->Delete(WriteOptions(), "k").ok());

  ReadOptions ro;
  std::string value;
  bool found = true;
  ro.snapshot = empty;
  EXPECT_FALSE(db_->KeyMayExist(ro, "k", &value, &found));
  EXPECT_FALSE(found);
  ro.snapshot = old_value;
  EXPECT_TRUE(db_->KeyMayExist(ro, "k", &value, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(value, "old");
  ro.snapshot = new_value;
  EXPECT_TRUE(db_->KeyMayExist(ro, "k", &value, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(value, "new");
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), "k", &value, &found));
  EXPECT_FALSE(found);
  for (const Snapshot* s : {empty, old_value, new_value}) {
    db_->ReleaseSnapshot(s);
  }
}

// With filters disabled a table whose range holds the key can only say
// "maybe"; a key outside every table's range is still certainly absent.
TEST_F(KeyMayExistTest, TableWithoutFilterAnswersMaybe) {
  Options o = OneTableOptions();
  o.filter_bits_per_key = 0;
  Open(o);
  for (int i = 0; i < 5000; i++) Put(2 * i);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  EXPECT_EQ(CountMayExist(0, 10000, 2), 5000);
  EXPECT_EQ(CountMayExist(1, 9998, 2), 4999);  // every gap of the table
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), Key(9999)));
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), "after-every-key"));
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), "a-before-every-key"));
}

// A policy with a name no build knows: its tables, read later without it,
// cannot answer and say "maybe".
class UnknownNamePolicy : public FilterPolicy {
 public:
  const char* Name() const override { return "test.UnknownNamePolicy"; }
  double BitsPerKey() const override { return base_->BitsPerKey(); }
  std::unique_ptr<FilterBitsBuilder> NewBuilder() const override {
    return base_->NewBuilder();
  }
  bool KeyMayMatch(std::string_view key,
                   std::string_view filter) const override {
    return base_->KeyMayMatch(key, filter);
  }
  uint64_t HashKey(std::string_view key) const override {
    return base_->HashKey(key);
  }
  bool HashMayMatch(uint64_t hash, std::string_view filter) const override {
    return base_->HashMayMatch(hash, filter);
  }

 private:
  std::shared_ptr<const FilterPolicy> base_ = NewBloomFilterPolicy(10);
};

TEST_F(KeyMayExistTest, FilterOfAnUnknownPolicyAnswersMaybe) {
  Options o = OneTableOptions();
  o.filter_policy = std::make_shared<UnknownNamePolicy>();
  Open(o);
  for (int i = 0; i < 5000; i++) Put(2 * i);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  // With the policy at hand its filters work.
  EXPECT_EQ(CountMayExist(0, 10000, 2), 5000);
  EXPECT_LT(CountMayExist(1, 9998, 2), 250);
  // Without it they cannot be read.
  Open(OneTableOptions());
  EXPECT_EQ(CountMayExist(0, 10000, 2), 5000);
  EXPECT_EQ(CountMayExist(1, 9998, 2), 4999);
}

// An Env that can refuse to open table files for reading.
class FailingTableReadsEnv : public test::ForwardingEnv {
 public:
  std::atomic<bool> fail{false};

  absl::StatusOr<std::unique_ptr<RandomAccessFile>> NewRandomAccessFile(
      const std::string& f) override {
    if (fail.load() && f.size() > 4 && f.substr(f.size() - 4) == ".sst") {
      return absl::UnavailableError("injected: cannot open " + f);
    }
    return ForwardingEnv::NewRandomAccessFile(f);
  }
};

TEST_F(KeyMayExistTest, TableThatCannotBeOpenedAnswersMaybe) {
  FailingTableReadsEnv env;
  absl::Cleanup close_first = [&] { db_.reset(); };  // before env goes
  Options o = OneTableOptions();
  o.env = &env;
  Open(o);
  for (int i = 0; i < 2000; i++) Put(2 * i);
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  Open(o);  // nothing open in the table cache
  env.fail = true;
  EXPECT_EQ(CountMayExist(1, 3998, 2), 1999);
  std::string value;
  EXPECT_FALSE(db_->Get(ReadOptions(), Key(1), &value).ok());
  env.fail = false;
  EXPECT_LT(CountMayExist(1, 3998, 2), 100);
  EXPECT_EQ(CountMayExist(0, 4000, 2), 2000);
}

// Tables and a log not yet flushed, opened read-only: the replayed log is
// a MemTable that answers with values.
TEST_F(KeyMayExistTest, ReadOnlyOpen) {
  Open(SmallOptions());
  for (int i = 0; i < 5000; i++) Put(2 * i);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  for (int i = 5000; i < 5100; i++) Put(2 * i);  // stays in the log
  db_.reset();
  auto ro_db = DB::OpenForReadOnly(SmallOptions(), dir_.path());
  ASSERT_TRUE(ro_db.ok()) << ro_db.status();
  db_ = *std::move(ro_db);
  EXPECT_EQ(CountMayExist(0, 10200, 2), 5100);
  EXPECT_LT(CountMayExist(1, 10200, 2), 250);
  std::string value;
  bool found = false;
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), Key(10000), &value, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(value, Value(10000));
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), Key(0), &value, &found));
  EXPECT_FALSE(found);
  EXPECT_GE(Counter(db_.get(), "key_may_exist.checks"), 10200u);
}

TEST_F(KeyMayExistTest, WorksAfterClose) {
  Open(SmallOptions());
  for (int i = 0; i < 3000; i++) Put(2 * i);
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "in-memtable", "v").ok());
  ASSERT_TRUE(db_->Close().ok());
  EXPECT_EQ(CountMayExist(0, 6000, 2), 3000);
  EXPECT_LT(CountMayExist(1, 6000, 2), 150);
  std::string value;
  bool found = false;
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), "in-memtable", &value, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(value, "v");
}

// No write accepts a key over kMaxKeySize, so none can exist.
TEST_F(KeyMayExistTest, OversizedKeyIsFalse) {
  Open(SmallOptions());
  const std::string huge(kMaxKeySize + 1, 'k');
  ASSERT_FALSE(db_->Put(WriteOptions(), huge, "v").ok());
  std::string value = "untouched";
  bool found = true;
  const uint64_t negatives = Counter(db_.get(), "key_may_exist.negatives");
  EXPECT_FALSE(db_->KeyMayExist(ReadOptions(), huge, &value, &found));
  EXPECT_FALSE(found);
  EXPECT_EQ(value, "untouched");
  EXPECT_EQ(Counter(db_.get(), "key_may_exist.negatives"), negatives + 1);
  // The largest key allowed is an ordinary one.
  const std::string largest(kMaxKeySize, 'k');
  ASSERT_TRUE(db_->Put(WriteOptions(), largest, "v").ok());
  EXPECT_TRUE(db_->KeyMayExist(ReadOptions(), largest, &value, &found));
  EXPECT_TRUE(found);
  EXPECT_EQ(value, "v");
}

}  // namespace key_may_exist_test
}  // namespace siftdb
