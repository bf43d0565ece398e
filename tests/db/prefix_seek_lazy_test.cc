// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The lazy prefix iterator (DBImpl::NewIterator with prefix_same_as_start,
// db/db_impl_iter.cc): it probes the prefix filters before building an
// iterator tree. A new iterator per seek (as db_bench does) against a
// std::map model; an iterator reads the DB as of its creation (or its
// snapshot, released or not) even when its first seek comes after writes,
// flushes and compactions; one that
// never built its tree still pins and then releases its Version; level-0
// tables that cannot hold the prefix from the target on are not probed.

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/slice_transform.h"
#include "tests/db/parallel_compaction_test_util.h"
#include "tests/db/prefix_model.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace prefix_seek_lazy_test {

using prefix_model::Counter;
using prefix_model::Model;
using prefix_model::ModelForward;
using prefix_model::ScanForward;
using prefix_model::UserKey;

Options LazyOptions() {
  Options o;
  o.create_if_missing = true;
  o.compression = kNoCompression;
  o.write_buffer_size = 32 << 10;
  o.max_file_size = 16 << 10;
  o.max_bytes_for_level_base = 64 << 10;
  o.prefix_extractor = NewFixedPrefixTransform(4);
  return o;
}

ReadOptions PrefixRead() {
  ReadOptions ro;
  ro.prefix_same_as_start = true;
  return ro;
}

std::unique_ptr<DB> OpenOrDie(const Options& o, const std::string& path) {
  auto db = DB::Open(o, path);
  EXPECT_TRUE(db.ok()) << db.status();
  return db.ok() ? std::move(*db) : nullptr;
}

TEST(PrefixSeekLazyTest, NewIteratorPerSeekMatchesModel) {
  test::TempDir dir;
  auto db = OpenOrDie(LazyOptions(), dir.Join("db"));
  ASSERT_NE(db, nullptr);
  std::mt19937 rng(3);
  Model model;
  for (int i = 0; i < 4000; i++) {
    const std::string k = UserKey(2 * (rng() % 100), rng() % 60);
    if (rng() % 5 == 0) {
      ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
      model.erase(k);
    } else {
      const std::string v = absl::StrFormat("v%d", i);
      ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
      model[k] = v;
    }
    if (i == 2000) {
      ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    }
    if (i % 900 == 899) {
      ASSERT_TRUE(db->Flush(FlushOptions()).ok());
    }
  }
  for (int i = 0; i < 600; i++) {
    const std::string t = UserKey(rng() % 200, rng() % 70);
    for (const std::string& target : {t, t.substr(0, 4)}) {
      std::unique_ptr<Iterator> it = db->NewIterator(PrefixRead());
      EXPECT_EQ(ScanForward(it.get(), target), ModelForward(model, target))
          << target;
    }
  }
}

// The read state is taken by NewIterator, not by the first seek.
TEST(PrefixSeekLazyTest, ReadsTheDBAsOfItsCreation) {
  test::TempDir dir;
  auto db = OpenOrDie(LazyOptions(), dir.Join("db"));
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 20; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), UserKey(2, i), "old").ok());
  }
  ASSERT_TRUE(db->Flush(FlushOptions()).ok());
  std::unique_ptr<Iterator> early = db->NewIterator(PrefixRead());
  // Prefix 1 appears and prefix 2 goes, in the MemTable and in tables.
  for (int i = 0; i < 20; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), UserKey(1, i), "new").ok());
    ASSERT_TRUE(db->Delete(WriteOptions(), UserKey(2, i)).ok());
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(db->Put(WriteOptions(), UserKey(1, 99), "newer").ok());

  early->Seek(UserKey(1, 0));
  EXPECT_FALSE(early->Valid());
  EXPECT_TRUE(early->status().ok()) << early->status();
  int n = 0;
  for (early->Seek(UserKey(2, 0)); early->Valid(); early->Next()) {
    EXPECT_EQ(early->value(), "old");
    n++;
  }
  EXPECT_EQ(n, 20);
  early->Seek(UserKey(1, 0));  // absent again, after the tree was built
  EXPECT_FALSE(early->Valid());
  EXPECT_TRUE(early->status().ok()) << early->status();

  std::unique_ptr<Iterator> late = db->NewIterator(PrefixRead());
  n = 0;
  for (late->Seek(UserKey(1, 0)); late->Valid(); late->Next()) n++;
  EXPECT_EQ(n, 21);
  late->Seek(UserKey(2, 0));
  EXPECT_FALSE(late->Valid());
}

// A snapshot's iterator reads at the snapshot even when the snapshot is
// released before its first seek.
TEST(PrefixSeekLazyTest, SnapshotReleasedBeforeTheFirstSeek) {
  test::TempDir dir;
  auto db = OpenOrDie(LazyOptions(), dir.Join("db"));
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(db->Put(WriteOptions(), UserKey(2, 1), "old").ok());
  const Snapshot* snap = db->GetSnapshot();
  ReadOptions ro = PrefixRead();
  ro.snapshot = snap;
  std::unique_ptr<Iterator> it = db->NewIterator(ro);
  db->ReleaseSnapshot(snap);
  ASSERT_TRUE(db->Put(WriteOptions(), UserKey(2, 1), "new").ok());
  ASSERT_TRUE(db->Put(WriteOptions(), UserKey(2, 2), "new").ok());
  ASSERT_TRUE(db->Flush(FlushOptions()).ok());
  int n = 0;
  for (it->Seek(UserKey(2, 0)); it->Valid(); it->Next()) {
    EXPECT_EQ(it->value(), "old");
    n++;
  }
  EXPECT_EQ(n, 1);
  EXPECT_TRUE(it->status().ok()) << it->status();
}

// An iterator whose seeks were all rejected by the filters built no tree,
// yet it pins its Version until destroyed, and then lets it go.
TEST(PrefixSeekLazyTest, IteratorWithoutTreePinsAndReleasesItsVersion) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  auto db = OpenOrDie(LazyOptions(), path);
  ASSERT_NE(db, nullptr);
  for (int u = 0; u < 40; u += 2) {
    for (int i = 0; i < 30; i++) {
      ASSERT_TRUE(db->Put(WriteOptions(), UserKey(u, i), "v").ok());
    }
    ASSERT_TRUE(db->Flush(FlushOptions()).ok());
  }
  ASSERT_TRUE(test::WaitIdle(db.get()).ok());
  const std::set<uint64_t> before = test::LiveTableNumbers(db.get());
  std::unique_ptr<Iterator> it = db->NewIterator(PrefixRead());
  it->Seek(UserKey(3, 0));
  EXPECT_FALSE(it->Valid());
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(test::WaitIdle(db.get()).ok());
  const std::set<uint64_t> on_disk = test::TableFilesOnDisk(path);
  for (uint64_t number : before) {
    EXPECT_TRUE(on_disk.count(number))
        << "table " << number << " deleted while pinned";
  }
  it.reset();
  ASSERT_TRUE(test::WaitIdle(db.get()).ok());
  EXPECT_EQ(test::TableFilesOnDisk(path), test::LiveTableNumbers(db.get()));
}

// A level-0 table wholly before the target, or starting past the prefix,
// cannot hold a key of the prefix from the target on: its filter is not
// probed, and nothing is found.
TEST(PrefixSeekLazyTest, LevelZeroTablesOutsideTheTargetAreNotProbed) {
  test::TempDir dir;
  Options o = LazyOptions();
  o.disable_auto_compactions = true;
  auto db = OpenOrDie(o, dir.Join("db"));
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 5; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), UserKey(2, i), "v").ok());
  }
  ASSERT_TRUE(db->Flush(FlushOptions()).ok());
  for (int i = 0; i < 5; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), UserKey(8, i), "v").ok());
  }
  ASSERT_TRUE(db->Flush(FlushOptions()).ok());
  std::string files;
  ASSERT_TRUE(db->GetProperty("siftdb.num-files-at-level0", &files));
  ASSERT_EQ(files, "2");

  const uint64_t checks = Counter(db.get(), "prefix_filter.checks");
  // Past every key of prefix 2 in the first table; before the second.
  std::unique_ptr<Iterator> it = db->NewIterator(PrefixRead());
  it->Seek(UserKey(2, 9));
  EXPECT_FALSE(it->Valid());
  EXPECT_TRUE(it->status().ok()) << it->status();
  EXPECT_EQ(Counter(db.get(), "prefix_filter.checks"), checks)
      << "a table that cannot hold the prefix from the target on was probed";

  // The first table's keys before the target are still found from its
  // start, and SeekToFirst / SeekToLast on a new iterator are unlimited.
  it->Seek(UserKey(2, 3));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->key(), UserKey(2, 3));
  std::unique_ptr<Iterator> all = db->NewIterator(PrefixRead());
  int n = 0;
  for (all->SeekToFirst(); all->Valid(); all->Next()) n++;
  EXPECT_EQ(n, 10);
  std::unique_ptr<Iterator> last = db->NewIterator(PrefixRead());
  last->SeekToLast();
  ASSERT_TRUE(last->Valid());
  EXPECT_EQ(last->key(), UserKey(8, 4));
  last->Prev();
  ASSERT_TRUE(last->Valid());
  EXPECT_EQ(last->key(), UserKey(8, 3));
}

}  // namespace prefix_seek_lazy_test
}  // namespace siftdb
