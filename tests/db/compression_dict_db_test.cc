// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// zstd dictionaries through the DB (CompressionOptions::max_dict_bytes with
// bottommost_compression = zstd): random puts, overwrites and deletes,
// compacted to the bottom, read back as a std::map says, by Get, forward
// and backward scans and snapshots, before and after a reopen without the
// dictionary options; the tables written to the bottom (zstd) carry
// dictionaries and the others (Snappy) none; one compaction part's output
// tables share one dictionary; bad dictionary options are InvalidArgument
// naming the field.

#include <map>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/live_tables.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace compression_dict_db_test {

Options DictOptions(size_t train_bytes) {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 256 << 10;
  o.target_file_size_base = 256 << 10;
  o.max_bytes_for_level_base = 1 << 20;
  o.compression = kSnappyCompression;
  o.bottommost_compression = kZstdCompression;
  o.compression_opts.max_dict_bytes = 4096;
  o.compression_opts.zstd_max_train_bytes = train_bytes;
  return o;
}

std::string Key(uint32_t i) { return absl::StrFormat("k%07d", i); }

void ExpectMatches(DB* db, const std::map<std::string, std::string>& model,
                   const ReadOptions& ro = ReadOptions()) {
  auto it = db->NewIterator(ro);
  auto m = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model.end()) << it->key();
    ASSERT_EQ(it->key(), m->first);
    ASSERT_EQ(it->value(), m->second);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(m, model.end());
  auto r = model.rbegin();
  for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
    ASSERT_NE(r, model.rend());
    ASSERT_EQ(it->key(), r->first);
  }
  ASSERT_EQ(r, model.rend());
  for (uint32_t i = 0; i < 4000; i += 7) {
    std::string v;
    absl::Status s = db->Get(ro, Key(i), &v);
    auto found = model.find(Key(i));
    if (found == model.end()) {
      ASSERT_TRUE(absl::IsNotFound(s)) << Key(i) << ": " << s;
    } else {
      ASSERT_TRUE(s.ok()) << Key(i) << ": " << s;
      ASSERT_EQ(v, found->second);
    }
  }
}

class CompressionDictDbTest : public ::testing::TestWithParam<size_t> {};

TEST_P(CompressionDictDbTest, ModelCheckAcrossCompactionAndReopen) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  std::mt19937 rng(static_cast<uint32_t>(GetParam()) + 17);
  std::vector<std::string> pool;
  for (int i = 0; i < 40; i++) {
    std::string v(100 + rng() % 60, '\0');
    for (char& c : v) c = static_cast<char>(rng());
    pool.push_back(std::move(v));
  }
  std::map<std::string, std::string> model;
  std::map<std::string, std::string> at_snapshot;
  {
    auto db = DB::Open(DictOptions(GetParam()), path);
    ASSERT_TRUE(db.ok()) << db.status();
    const Snapshot* snap = nullptr;
    for (int round = 0; round < 3; round++) {
      for (int i = 0; i < 12000; i++) {
        const std::string k = Key(rng() % 4000);
        if (rng() % 9 == 0) {
          ASSERT_TRUE((*db)->Delete(WriteOptions(), k).ok());
          model.erase(k);
        } else {
          const std::string& v = pool[rng() % pool.size()];
          ASSERT_TRUE((*db)->Put(WriteOptions(), k, v).ok());
          model[k] = v;
        }
      }
      if (round == 0) {
        snap = (*db)->GetSnapshot();
        at_snapshot = model;
      }
    }
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE(static_cast<DBImpl*>(db->get())->WaitForBackgroundWork().ok());
    // Tables written as bottommost (zstd) have dictionaries; the others
    // (Snappy) none. A table keeps what it was written with when a deeper
    // level fills later.
    int bottom_with = 0, deepest = 0;
    const auto tables = OpenLiveTables(db->get(), path);
    for (const auto& t : tables) deepest = std::max(deepest, t.level);
    for (const auto& t : tables) {
      const bool has = t.table->compression_dictionary() != nullptr;
      const bool zstd = t.table->properties().compression_name == "zstd";
      EXPECT_EQ(has, zstd) << t.file << " on level " << t.level;
      if (t.level == deepest) bottom_with += has;
    }
    EXPECT_GT(bottom_with, 0);
    ExpectMatches(db->get(), model);
    ReadOptions ro;
    ro.snapshot = snap;
    ExpectMatches(db->get(), at_snapshot, ro);
    ro.verify_checksums = true;
    ro.fill_cache = false;
    ExpectMatches(db->get(), at_snapshot, ro);
    (*db)->ReleaseSnapshot(snap);
  }
  // Reopened without dictionaries (and without zstd), the tables that
  // have them still read back.
  Options plain;
  plain.create_if_missing = false;
  auto db = DB::Open(plain, path);
  ASSERT_TRUE(db.ok()) << db.status();
  ExpectMatches(db->get(), model);
}

INSTANTIATE_TEST_SUITE_P(RawAndTrained, CompressionDictDbTest,
                         ::testing::Values(size_t{0}, size_t{256} << 10));

// One compaction part builds one dictionary: its first output trains (or
// samples) it and the later outputs compress against the same one, each
// storing a copy. Without the reuse every table's ID is its own.
TEST_P(CompressionDictDbTest, OneCompactionPartBuildsOneDictionary) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = DictOptions(GetParam());
  o.max_subcompactions = 1;
  // Every write stays in level 0 until the manual compaction below, which
  // then writes the whole bottom level in one part: many outputs of one
  // part whatever the timing. With background compactions the bottom
  // level's shape depended on when they ran, and the largest part wrote
  // only 2 tables in some runs (one failure in CI, 2026-12-07).
  o.disable_auto_compactions = true;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  std::mt19937 rng(11);
  std::vector<std::string> pool;  // shared content, and a random tail each
  for (int i = 0; i < 40; i++) {
    std::string v(100, '\0');
    for (char& c : v) c = static_cast<char>(rng());
    pool.push_back(std::move(v));
  }
  std::map<std::string, std::string> model;
  for (int i = 0; i < 60000; i++) {
    const std::string k = Key(rng() % 40000);
    std::string v = pool[rng() % pool.size()];
    for (int j = 0; j < 40; j++) v.push_back(static_cast<char>(rng()));
    ASSERT_TRUE((*db)->Put(WriteOptions(), k, v).ok());
    model[k] = v;
  }
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(static_cast<DBImpl*>(db->get())->WaitForBackgroundWork().ok());
  const auto tables = OpenLiveTables(db->get(), path);
  std::map<uint32_t, int> tables_per_id;
  int with = 0;
  for (const auto& t : tables) {
    const ZstdDictionary* dict = t.table->compression_dictionary();
    if (dict == nullptr) continue;
    with++;
    tables_per_id[dict->id()]++;
  }
  ASSERT_GE(with, 4) << "too few zstd tables to tell";
  // The compaction's outputs share its dictionary. Without the reuse
  // every table's dictionary differs (its own samples).
  int most = 0;
  for (const auto& [id, n] : tables_per_id) most = std::max(most, n);
  EXPECT_LT(tables_per_id.size(), static_cast<size_t>(with));
  EXPECT_GE(most, 3) << tables_per_id.size() << " dictionaries in " << with
                     << " tables";
  ExpectMatches(db->get(), model);
}

TEST(CompressionDictDbOptionsTest, BadSizesAreInvalidArgument) {
  test::TempDir dir;
  for (size_t dict : {size_t{1}, size_t{255}, (size_t{16} << 20) + 1}) {
    Options o;
    o.create_if_missing = true;
    o.compression_opts.max_dict_bytes = dict;
    auto db = DB::Open(o, dir.Join("db"));
    ASSERT_FALSE(db.ok()) << dict;
    EXPECT_EQ(db.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_NE(db.status().message().find("compression_opts.max_dict_bytes"),
              absl::string_view::npos)
        << db.status();
  }
  Options o;
  o.create_if_missing = true;
  o.compression_opts.max_dict_bytes = 4096;
  o.compression_opts.zstd_max_train_bytes = (size_t{1} << 30) + 1;
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_FALSE(db.ok());
  EXPECT_NE(db.status().message().find("compression_opts.zstd_max_train_bytes"),
            absl::string_view::npos)
      << db.status();
}

// bottommost_compression_opts, enabled, tunes only the bottommost
// compaction outputs: zstd everywhere, dictionaries at the bottom only;
// disabled, it is ignored (and never validated).
TEST(CompressionDictDbOptionsTest, BottommostCompressionOptsTuneOnlyTheBottom) {
  for (bool enabled : {true, false}) {
    SCOPED_TRACE(enabled ? "enabled" : "disabled");
    test::TempDir dir;
    const std::string path = dir.Join("db");
    Options o = DictOptions(0);
    o.compression = kZstdCompression;
    o.bottommost_compression = kDisableCompressionOption;
    o.compression_opts.max_dict_bytes = 0;
    o.bottommost_compression_opts.enabled = enabled;
    o.bottommost_compression_opts.max_dict_bytes = 4096;
    if (!enabled) o.bottommost_compression_opts.max_dict_bytes = 1;  // unread
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    std::map<std::string, std::string> model;
    std::mt19937 rng(5);
    auto write = [&](int n) {
      for (int i = 0; i < n; i++) {
        const std::string k = Key(rng() % 4000);
        const std::string v = absl::StrFormat("%s-%0120d", k, i);
        ASSERT_TRUE((*db)->Put(WriteOptions(), k, v).ok());
        model[k] = v;
      }
    };
    write(12000);
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    write(1000);
    ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());  // a level-0 table
    ASSERT_TRUE(static_cast<DBImpl*>(db->get())->WaitForBackgroundWork().ok());
    int bottom = 0, level0 = 0;
    const auto tables = OpenLiveTables(db->get(), path);
    int deepest = 0;
    for (const auto& t : tables) deepest = std::max(deepest, t.level);
    ASSERT_GT(deepest, 0);
    for (const auto& t : tables) {
      EXPECT_EQ(t.table->properties().compression_name, "zstd") << t.file;
      const bool has = t.table->compression_dictionary() != nullptr;
      if (t.level == 0) {
        level0++;
        EXPECT_FALSE(has) << t.file << ": a flush is never bottommost";
      } else if (t.level == deepest) {
        bottom++;
        EXPECT_EQ(has, enabled) << t.file;
      }
    }
    EXPECT_GT(bottom, 0);
    EXPECT_GT(level0, 0);
    ExpectMatches(db->get(), model);
  }
  Options bad;
  bad.create_if_missing = true;
  bad.bottommost_compression_opts.enabled = true;
  bad.bottommost_compression_opts.max_dict_bytes = 255;
  test::TempDir dir;
  auto db = DB::Open(bad, dir.Join("db"));
  ASSERT_FALSE(db.ok());
  EXPECT_EQ(db.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_NE(
      db.status().message().find("bottommost_compression_opts.max_dict_bytes"),
      absl::string_view::npos)
      << db.status();
}

}  // namespace compression_dict_db_test
}  // namespace siftdb
