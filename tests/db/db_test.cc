// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DB basics: put/get/delete/overwrite, reopen, flush, option and path
// errors, the LOCK, snapshots and the filter's effect on reads.

#include "siftdb/db.h"

#include <map>
#include <thread>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace db_test {

class DBTest : public ::testing::Test {
 protected:
  DBTest() {
    options_.create_if_missing = true;
    path_ = dir_.Join("db");
  }

  void Open() { ASSERT_TRUE(TryOpen().ok()); }
  absl::Status TryOpen() {
    db_.reset();
    auto db = DB::Open(options_, path_);
    if (!db.ok()) return db.status();
    db_ = std::move(*db);
    return absl::OkStatus();
  }
  DBImpl* impl() { return static_cast<DBImpl*>(db_.get()); }

  std::string Get(std::string_view key, const Snapshot* snap = nullptr) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::string value;
    absl::Status s = db_->Get(ro, key, &value);
    if (absl::IsNotFound(s)) return "NOT_FOUND";
    if (!s.ok()) return s.ToString();
    return value;
  }
  absl::Status Put(std::string_view k, std::string_view v) {
    return db_->Put(WriteOptions(), k, v);
  }
  uint64_t Counter(const std::string& name) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty("siftdb.counter." + name, &v)) << name;
    return std::stoull(v);
  }
  int FilesAtLevel(int level) {
    std::string v;
    EXPECT_TRUE(db_->GetProperty(
        "siftdb.num-files-at-level" + std::to_string(level), &v));
    return std::stoi(v);
  }

  test::TempDir dir_;
  std::string path_;
  Options options_;
  std::unique_ptr<DB> db_;
};

TEST_F(DBTest, EmptyGetIsNotFound) {
  Open();
  EXPECT_EQ("NOT_FOUND", Get("foo"));
}

TEST_F(DBTest, PutGetDeleteOverwrite) {
  Open();
  ASSERT_TRUE(Put("foo", "v1").ok());
  EXPECT_EQ("v1", Get("foo"));
  ASSERT_TRUE(Put("bar", "v2").ok());
  ASSERT_TRUE(Put("foo", "v3").ok());
  EXPECT_EQ("v3", Get("foo"));
  EXPECT_EQ("v2", Get("bar"));
  ASSERT_TRUE(db_->Delete(WriteOptions(), "foo").ok());
  EXPECT_EQ("NOT_FOUND", Get("foo"));
  // Deleting an absent key is fine.
  ASSERT_TRUE(db_->Delete(WriteOptions(), "nothere").ok());
  // Empty keys and values are ordinary.
  ASSERT_TRUE(Put("", "").ok());
  EXPECT_EQ("", Get(""));
}

TEST_F(DBTest, WriteBatchIsAtomicAndOrdered) {
  Open();
  WriteBatch batch;
  batch.Put("a", "1");
  batch.Put("b", "2");
  batch.Delete("a");
  batch.Put("c", "3");
  ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
  EXPECT_EQ("NOT_FOUND", Get("a"));
  EXPECT_EQ("2", Get("b"));
  EXPECT_EQ("3", Get("c"));
}

TEST_F(DBTest, ReopenKeepsEverything) {
  Open();
  for (int i = 0; i < 1000; i++) {
    ASSERT_TRUE(Put("k" + std::to_string(i), "v" + std::to_string(i)).ok());
  }
  ASSERT_TRUE(db_->Delete(WriteOptions(), "k7").ok());
  Open();
  for (int i = 0; i < 1000; i++) {
    EXPECT_EQ(i == 7 ? "NOT_FOUND" : "v" + std::to_string(i),
              Get("k" + std::to_string(i)));
  }
  // And again: recovery wrote the log into a table; nothing is replayed twice
  // into a wrong state.
  ASSERT_TRUE(Put("k1", "new").ok());
  Open();
  EXPECT_EQ("new", Get("k1"));
  EXPECT_EQ("NOT_FOUND", Get("k7"));
}

TEST_F(DBTest, FlushesToTablesAndReadsThem) {
  options_.write_buffer_size = 64 << 10;
  Open();
  const std::string value(200, 'x');
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(Put("key" + std::to_string(i), value + std::to_string(i)).ok());
  }
  ASSERT_TRUE(impl()->WaitForBackgroundWork().ok());
  std::string sstables;
  ASSERT_TRUE(db_->GetProperty("siftdb.sstables", &sstables));
  EXPECT_NE(std::string::npos, sstables.find(".sst")) << sstables;
  for (int i = 0; i < 2000; i++) {
    ASSERT_EQ(value + std::to_string(i), Get("key" + std::to_string(i)));
  }
  Open();
  for (int i = 0; i < 2000; i++) {
    ASSERT_EQ(value + std::to_string(i), Get("key" + std::to_string(i)));
  }
}

TEST_F(DBTest, FilterRejectionReadsNoDataBlock) {
  Open();
  auto key = [](int i) { return absl::StrFormat("key%06d", i); };
  for (int i = 0; i < 5000; i++) {
    ASSERT_TRUE(Put(key(i * 2), "value").ok());
  }
  ASSERT_TRUE(impl()->FlushMemTable().ok());
  ASSERT_GE(FilesAtLevel(0) + FilesAtLevel(1), 1);
  ASSERT_EQ("value", Get(key(0)));  // warm the table cache

  const uint64_t reads_before = Counter("block.data_reads");
  const uint64_t negatives_before = Counter("filter.negatives");
  const uint64_t positives_before = Counter("filter.positives");
  int found = 0;
  // Absent keys inside the table's key range, so the filter decides.
  for (int i = 0; i < 4999; i++) {
    if (Get(key(i * 2 + 1)) != "NOT_FOUND") found++;
  }
  EXPECT_EQ(0, found);
  const uint64_t negatives = Counter("filter.negatives") - negatives_before;
  const uint64_t positives = Counter("filter.positives") - positives_before;
  const uint64_t reads = Counter("block.data_reads") - reads_before;
  // Every absent key was either rejected by the filter (no block read) or
  // a false positive; at 10 bits per key that is about 1%.
  EXPECT_EQ(4999u, negatives + positives);
  EXPECT_LT(positives, 150u);
  EXPECT_LE(reads, positives);
  EXPECT_EQ(positives, Counter("filter.false_positives"));
}

TEST_F(DBTest, FiltersCanBeDisabled) {
  options_.filter_bits_per_key = 0;
  Open();
  ASSERT_TRUE(Put("a", "1").ok());
  ASSERT_TRUE(impl()->FlushMemTable().ok());
  EXPECT_EQ("NOT_FOUND", Get("b"));
  EXPECT_EQ("1", Get("a"));
  EXPECT_EQ(0u, Counter("filter.checks"));
}

TEST_F(DBTest, SnapshotsSeeTheirPast) {
  Open();
  ASSERT_TRUE(Put("foo", "v1").ok());
  const Snapshot* s1 = db_->GetSnapshot();
  ASSERT_TRUE(Put("foo", "v2").ok());
  ASSERT_TRUE(db_->Delete(WriteOptions(), "bar").ok());
  const Snapshot* s2 = db_->GetSnapshot();
  ASSERT_TRUE(db_->Delete(WriteOptions(), "foo").ok());
  EXPECT_EQ("v1", Get("foo", s1));
  EXPECT_EQ("v2", Get("foo", s2));
  EXPECT_EQ("NOT_FOUND", Get("foo"));
  ASSERT_TRUE(impl()->FlushMemTable().ok());
  EXPECT_EQ("v1", Get("foo", s1));
  EXPECT_EQ("v2", Get("foo", s2));
  EXPECT_EQ("NOT_FOUND", Get("foo"));
  db_->ReleaseSnapshot(s1);
  db_->ReleaseSnapshot(s2);
}

TEST_F(DBTest, MissingDBWithoutCreateIfMissing) {
  options_.create_if_missing = false;
  absl::Status s = TryOpen();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(std::string::npos, s.message().find("does not exist")) << s;
}

TEST_F(DBTest, ErrorIfExists) {
  Open();
  db_.reset();
  options_.error_if_exists = true;
  absl::Status s = TryOpen();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(std::string::npos, s.message().find("error_if_exists")) << s;
}

TEST_F(DBTest, PathThatIsAFile) {
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "not a db", path_, false).ok());
  absl::Status s = TryOpen();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(std::string::npos, s.message().find("not a directory")) << s;
}

TEST_F(DBTest, DirectoryThatIsNotADB) {
  ASSERT_TRUE(Env::Default()->CreateDir(path_).ok());
  options_.create_if_missing = false;
  absl::Status s = TryOpen();
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(std::string::npos, s.message().find("no CURRENT")) << s;
}

TEST_F(DBTest, NonsenseOptionsAreInvalidArgument) {
  struct Case {
    const char* field;
    void (*mutate)(Options*);
  } cases[] = {
      {"write_buffer_size", [](Options* o) { o->write_buffer_size = 0; }},
      {"max_open_files", [](Options* o) { o->max_open_files = 0; }},
      {"block_size", [](Options* o) { o->block_size = 0; }},
      {"block_restart_interval",
       [](Options* o) { o->block_restart_interval = 0; }},
      {"filter_bits_per_key", [](Options* o) { o->filter_bits_per_key = -1; }},
      {"compression",
       [](Options* o) { o->compression = static_cast<CompressionType>(9); }},
      {"level0", [](Options* o) { o->level0_stop_writes_trigger = 1; }},
      // 0 leaves the alias unset; any other value below 4 KiB is refused.
      {"max_file_size", [](Options* o) { o->max_file_size = 1; }},
      {"target_file_size_base",
       [](Options* o) { o->target_file_size_base = 0; }},
      {"target_file_size_multiplier",
       [](Options* o) { o->target_file_size_multiplier = 0; }},
  };
  for (const Case& c : cases) {
    Options o = options_;
    c.mutate(&o);
    auto db = DB::Open(o, path_);
    ASSERT_FALSE(db.ok()) << c.field;
    EXPECT_TRUE(absl::IsInvalidArgument(db.status())) << db.status();
    EXPECT_NE(std::string::npos, db.status().message().find(c.field))
        << db.status();
  }
  EXPECT_TRUE(absl::IsInvalidArgument(DB::Open(options_, "").status()));
}

TEST_F(DBTest, OversizedKeysAndValuesAreRejected) {
  Open();
  absl::Status s = Put(std::string(kMaxKeySize + 1, 'k'), "v");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  s = Put("k", std::string(kMaxValueSize + 1, 'v'));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  std::string value;
  s = db_->Get(ReadOptions(), std::string(kMaxKeySize + 1, 'k'), &value);
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  // The DB is still fine.
  ASSERT_TRUE(Put("k", "v").ok());
  EXPECT_EQ("v", Get("k"));
}

TEST_F(DBTest, SecondOpenOfSameDirectoryFails) {
  Open();
  auto second = DB::Open(options_, path_);
  ASSERT_FALSE(second.ok());
  EXPECT_NE(std::string::npos, second.status().message().find("LOCK"))
      << second.status();
  db_.reset();  // releases the lock
  Open();
}

TEST_F(DBTest, DestroyDBRemovesEverything) {
  Open();
  ASSERT_TRUE(Put("a", "b").ok());
  db_.reset();
  ASSERT_TRUE(DestroyDB(path_, options_).ok());
  EXPECT_FALSE(Env::Default()->FileExists(path_));
  ASSERT_TRUE(DestroyDB(path_, options_).ok());  // absent: fine
}

TEST_F(DBTest, GroupCommitFromManyThreads) {
  Open();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 2000;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; i++) {
        WriteOptions wo;
        wo.sync = (i % 100 == 0);
        const std::string k = std::to_string(t) + ":" + std::to_string(i);
        if (!db_->Put(wo, k, k).ok()) failures++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(0, failures.load());
  Open();  // everything survives the log replay too
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kPerThread; i++) {
      const std::string k = std::to_string(t) + ":" + std::to_string(i);
      ASSERT_EQ(k, Get(k));
    }
  }
}

TEST_F(DBTest, PropertiesAnswer) {
  Open();
  std::string v;
  EXPECT_TRUE(db_->GetProperty("siftdb.stats", &v));
  EXPECT_NE(std::string::npos, v.find("filter.negatives"));
  EXPECT_TRUE(db_->GetProperty("siftdb.approximate-memory-usage", &v));
  EXPECT_GT(std::stoull(v), 0u);
  EXPECT_TRUE(db_->GetProperty("siftdb.background-error", &v));
  EXPECT_EQ("OK", v);
  EXPECT_FALSE(db_->GetProperty("siftdb.nonsense", &v));
  EXPECT_FALSE(db_->GetProperty("siftdb.num-files-at-level99", &v));
  EXPECT_FALSE(db_->GetProperty("other.stats", &v));
}

// An iterator opened while the MemTable is empty leaves the MemTable out of
// its merge: it must still see every table entry, and none of the writes
// that follow it (which go to that MemTable).
TEST_F(DBTest, IteratorOverAnEmptyMemTableSeesItsStateOnly) {
  Open();
  for (int i = 0; i < 100; i += 2) {
    ASSERT_TRUE(Put("k" + std::to_string(1000 + i), "table").ok());
  }
  ASSERT_TRUE(impl()->FlushMemTable().ok());
  std::unique_ptr<Iterator> before = db_->NewIterator(ReadOptions());
  for (int i = 0; i < 100; i++) {
    ASSERT_TRUE(Put("k" + std::to_string(1000 + i), "mem").ok());
  }
  std::unique_ptr<Iterator> after = db_->NewIterator(ReadOptions());
  int n = 0;
  for (before->SeekToFirst(); before->Valid(); before->Next(), n++) {
    ASSERT_EQ(before->key(), "k" + std::to_string(1000 + 2 * n));
    ASSERT_EQ(before->value(), "table");
  }
  ASSERT_TRUE(before->status().ok());
  EXPECT_EQ(n, 50);
  n = 0;
  for (after->SeekToLast(); after->Valid(); after->Prev(), n++) {
    ASSERT_EQ(after->key(), "k" + std::to_string(1099 - n));
    ASSERT_EQ(after->value(), "mem");
  }
  ASSERT_TRUE(after->status().ok());
  EXPECT_EQ(n, 100);
}

}  // namespace db_test
}  // namespace siftdb
