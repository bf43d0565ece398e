// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Prefix seeks (Options::prefix_extractor, ReadOptions::
// prefix_same_as_start) against a std::map model: data spread over the
// MemTable, level 0 and deeper levels, deletes, snapshots, forward and
// backward moves, reopens under another extractor or none; and the
// counters that show tables skipped.

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/slice_transform.h"
#include "tests/db/prefix_model.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace prefix_seek_test {

using prefix_model::Counter;
using prefix_model::Model;
using prefix_model::ModelForward;
using prefix_model::ScanForward;
using prefix_model::UserKey;

Options PrefixOptions(std::shared_ptr<const SliceTransform> extractor) {
  Options o;
  o.create_if_missing = true;
  o.compression = kNoCompression;
  o.write_buffer_size = 32 << 10;
  o.max_file_size = 16 << 10;
  o.max_bytes_for_level_base = 64 << 10;
  o.prefix_extractor = std::move(extractor);
  return o;
}

// Writes `ops` random puts and deletes of even users, flushing now and
// then, and compacting once so that every level holds some of them.
void RandomWrites(DB* db, Model* model, std::mt19937* rng, int ops) {
  for (int i = 0; i < ops; i++) {
    const std::string k = UserKey(2 * ((*rng)() % 100), (*rng)() % 60);
    if ((*rng)() % 5 == 0) {
      ASSERT_TRUE(db->Delete(WriteOptions(), k).ok());
      model->erase(k);
    } else {
      const std::string v = absl::StrFormat("v%d", i);
      ASSERT_TRUE(db->Put(WriteOptions(), k, v).ok());
      (*model)[k] = v;
    }
    if (i == ops / 2) {
      ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    }
    if (i % 700 == 699) {
      ASSERT_TRUE(db->Flush(FlushOptions()).ok());
    }
  }
}

// Seek, then walk backward: the keys of the prefix before the first key at
// or after t, newest first, then nothing past the prefix's start.
void CheckBackward(const Model& m, Iterator* it, const std::string& t) {
  it->Seek(t);
  auto pos = m.lower_bound(t);
  if (pos == m.end() || pos->first.compare(0, 4, t, 0, 4) != 0) {
    EXPECT_FALSE(it->Valid()) << t;
    return;
  }
  ASSERT_TRUE(it->Valid()) << t;
  while (true) {
    ASSERT_TRUE(it->Valid());
    EXPECT_EQ(it->key(), pos->first);
    it->Prev();
    if (pos == m.begin()) break;
    --pos;
    if (pos->first.compare(0, 4, t, 0, 4) != 0) break;
  }
  EXPECT_FALSE(it->Valid()) << "Prev left the prefix of " << t;
}

void CheckAgainstModel(DB* db, const Model& m, std::mt19937* rng,
                       const Snapshot* snapshot = nullptr) {
  ReadOptions ro;
  ro.prefix_same_as_start = true;
  ro.snapshot = snapshot;
  std::unique_ptr<Iterator> it = db->NewIterator(ro);
  for (int i = 0; i < 300; i++) {
    const std::string t = UserKey((*rng)() % 200, (*rng)() % 70);
    EXPECT_EQ(ScanForward(it.get(), t), ModelForward(m, t)) << t;
    if (i % 10 == 0) CheckBackward(m, it.get(), t);
    // A target that is only the prefix starts at its first key.
    const std::string p = t.substr(0, 4);
    EXPECT_EQ(ScanForward(it.get(), p), ModelForward(m, p)) << p;
  }
  // A total-order iterator still sees everything.
  ReadOptions total;
  total.prefix_same_as_start = true;
  total.total_order_seek = true;
  total.snapshot = snapshot;
  std::unique_ptr<Iterator> all = db->NewIterator(total);
  size_t n = 0;
  for (all->SeekToFirst(); all->Valid(); all->Next()) n++;
  EXPECT_EQ(n, m.size());
  all->Seek(UserKey(1, 0));  // absent prefix: total order moves on to user 2
  if (m.lower_bound(UserKey(1, 0)) != m.end()) {
    ASSERT_TRUE(all->Valid());
    EXPECT_EQ(all->key(), m.lower_bound(UserKey(1, 0))->first);
  }
}

TEST(PrefixSeekTest, ModelAcrossLevelsSnapshotsAndSeeds) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    test::TempDir dir;
    std::mt19937 rng(seed);
    auto db =
        DB::Open(PrefixOptions(NewFixedPrefixTransform(4)), dir.Join("db"));
    ASSERT_TRUE(db.ok()) << db.status();
    Model model;
    RandomWrites(db->get(), &model, &rng, 3000);
    std::string v;
    ASSERT_TRUE((*db)->GetProperty("siftdb.num-files-at-level0", &v));
    CheckAgainstModel(db->get(), model, &rng);

    const Snapshot* snap = (*db)->GetSnapshot();
    const Model at_snapshot = model;
    RandomWrites(db->get(), &model, &rng, 1500);
    CheckAgainstModel(db->get(), at_snapshot, &rng, snap);
    CheckAgainstModel(db->get(), model, &rng);
    (*db)->ReleaseSnapshot(snap);
  }
}

// Tables written under one extractor stay correct under another (their
// prefixes are ignored) and with none.
TEST(PrefixSeekTest, ReopenUnderAnotherExtractorOrNone) {
  test::TempDir dir;
  std::mt19937 rng(7);
  Model model;
  {
    auto db =
        DB::Open(PrefixOptions(NewFixedPrefixTransform(4)), dir.Join("db"));
    ASSERT_TRUE(db.ok()) << db.status();
    RandomWrites(db->get(), &model, &rng, 2000);
    ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  }
  {
    // A 4-byte capped prefix means the same prefixes under another name:
    // the old tables' prefixes must not be used, the answers stay right.
    auto db =
        DB::Open(PrefixOptions(NewCappedPrefixTransform(4)), dir.Join("db"));
    ASSERT_TRUE(db.ok()) << db.status();
    const uint64_t checks = Counter(db->get(), "prefix_filter.checks");
    CheckAgainstModel(db->get(), model, &rng);
    EXPECT_EQ(Counter(db->get(), "prefix_filter.checks"), checks)
        << "tables of another extractor were probed";
    RandomWrites(db->get(), &model, &rng, 1000);
    CheckAgainstModel(db->get(), model, &rng);
  }
  {
    Options o = PrefixOptions(nullptr);
    auto db = DB::Open(o, dir.Join("db"));
    ASSERT_TRUE(db.ok()) << db.status();
    ReadOptions ro;
    ro.prefix_same_as_start = true;  // no extractor: a total-order seek
    std::unique_ptr<Iterator> it = (*db)->NewIterator(ro);
    size_t n = 0;
    for (it->Seek(""); it->Valid(); it->Next()) n++;
    EXPECT_EQ(n, model.size());
  }
}

// whole_key_filtering = false: prefixes only; Gets stay exact (they probe
// by prefix), and seeks skip tables as before.
TEST(PrefixSeekTest, PrefixOnlyFiltersServeGetsAndSeeks) {
  test::TempDir dir;
  std::mt19937 rng(11);
  Options o = PrefixOptions(NewFixedPrefixTransform(4));
  o.whole_key_filtering = false;
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  Model model;
  RandomWrites(db->get(), &model, &rng, 2000);
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  for (const auto& [k, v] : model) {
    std::string got;
    ASSERT_TRUE((*db)->Get(ReadOptions(), k, &got).ok()) << k;
    EXPECT_EQ(got, v);
  }
  const uint64_t negatives = Counter(db->get(), "filter.negatives");
  std::string got;
  for (int u = 1; u < 200; u += 2) {
    EXPECT_TRUE(
        absl::IsNotFound((*db)->Get(ReadOptions(), UserKey(u, 1), &got)));
  }
  EXPECT_GT(Counter(db->get(), "filter.negatives"), negatives)
      << "absent prefixes should be rejected by the prefix-only filters";
  CheckAgainstModel(db->get(), model, &rng);
}

// An upper bound no further than the prefix's end makes a seek a prefix
// seek without prefix_same_as_start: same answers as the model, and absent
// prefixes skip the tables.
TEST(PrefixSeekTest, UpperBoundInsideThePrefixSkipsTables) {
  test::TempDir dir;
  std::mt19937 rng(5);
  auto db = DB::Open(PrefixOptions(NewFixedPrefixTransform(4)), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  Model model;
  RandomWrites(db->get(), &model, &rng, 3000);
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  const uint64_t negatives = Counter(db->get(), "prefix_filter.negatives");
  for (int user = 0; user < 200; user++) {
    const std::string prefix = absl::StrFormat("u%03d", user);
    // The prefix's successor, and a bound inside the prefix.
    std::string successor = prefix;
    successor.back()++;
    for (const std::string& upper : {successor, UserKey(user, 30)}) {
      ReadOptions ro;
      ro.iterate_upper_bound = upper;
      std::unique_ptr<Iterator> it = (*db)->NewIterator(ro);
      const std::string target = UserKey(user, 0);
      std::vector<std::string> want;
      for (auto m = model.lower_bound(target);
           m != model.end() && m->first < upper; ++m) {
        want.push_back(m->first + "=" + m->second);
      }
      EXPECT_EQ(ScanForward(it.get(), target), want) << target << " " << upper;
    }
  }
  EXPECT_GE(Counter(db->get(), "prefix_filter.negatives") - negatives, 100u)
      << "seeks into the 100 absent prefixes should skip tables";
}

// A capped prefix shorter than its cap does not cover longer keys that
// begin with it ("ab" is the prefix of "ab" only; "abc" has its own): an
// upper bound at its successor must not turn the seek into a prefix seek.
TEST(PrefixSeekTest, ShortCappedPrefixStaysTotalOrder) {
  test::TempDir dir;
  auto db =
      DB::Open(PrefixOptions(NewCappedPrefixTransform(3)), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Put(WriteOptions(), "abc", "1").ok());
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  ASSERT_TRUE((*db)->Put(WriteOptions(), "zzz", "2").ok());
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  ReadOptions ro;
  const std::string upper = "ac";
  ro.iterate_upper_bound = upper;
  std::unique_ptr<Iterator> it = (*db)->NewIterator(ro);
  it->Seek("ab");
  ASSERT_TRUE(it->Valid()) << it->status();
  EXPECT_EQ(it->key(), "abc");
}

// Seeks to absent prefixes skip tables: the prefix filters say no, and no
// data block is read for them.
TEST(PrefixSeekTest, AbsentPrefixesReadNoDataBlocks) {
  test::TempDir dir;
  Options o = PrefixOptions(NewFixedPrefixTransform(4));
  o.block_cache_size = 0;
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  for (int u = 0; u < 200; u += 2) {
    for (int i = 0; i < 20; i++) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), UserKey(u, i), "value").ok());
    }
  }
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  for (int u = 0; u < 200; u += 4) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), UserKey(u, 50), "newer").ok());
  }
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());

  ReadOptions ro;
  ro.prefix_same_as_start = true;
  std::unique_ptr<Iterator> it = (*db)->NewIterator(ro);
  const uint64_t reads = Counter(db->get(), "block.data_reads");
  const uint64_t negatives = Counter(db->get(), "prefix_filter.negatives");
  int found = 0;
  for (int u = 1; u < 200; u += 2) {
    it->Seek(UserKey(u, 0));
    if (it->Valid()) found++;
  }
  EXPECT_EQ(found, 0);
  EXPECT_TRUE(it->status().ok()) << it->status();
  // 100 absent prefixes: a few false positives may read a block each.
  EXPECT_LT(Counter(db->get(), "block.data_reads") - reads, 10u);
  EXPECT_GE(Counter(db->get(), "prefix_filter.negatives") - negatives, 90u);

  // Present prefixes are still found whole.
  it->Seek(UserKey(4, 0));
  int n = 0;
  for (; it->Valid(); it->Next()) n++;
  EXPECT_EQ(n, 21);
}

}  // namespace prefix_seek_test
}  // namespace siftdb
