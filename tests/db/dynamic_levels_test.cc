// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Options::level_compaction_dynamic_level_bytes: level targets set from the
// largest level, level 0 compacting into the base level, the levels between
// them empty, most of the data in the last level; switching the option on
// and off on an existing DB; every key checked against a std::map model.

#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/output_compression.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"

namespace siftdb {
namespace dynamic_levels_test {

using Model = std::map<std::string, std::string>;

Options SmallTreeOptions(bool dynamic) {
  Options o;
  o.create_if_missing = true;
  o.compression = kNoCompression;  // level sizes follow the bytes written
  o.write_buffer_size = 64 << 10;
  o.target_file_size_base = 64 << 10;
  o.max_bytes_for_level_base = 128 << 10;
  o.max_bytes_for_level_multiplier = 4;
  o.level_compaction_dynamic_level_bytes = dynamic;
  // Tiny buffers make level-0 tables pile up; do not let the write
  // controller's delays stretch the test.
  o.level0_slowdown_writes_trigger = 20;
  o.level0_stop_writes_trigger = 40;
  return o;
}

// Bytes per level, from siftdb.sstables.
std::vector<uint64_t> LevelBytes(DB* db) {
  std::string text;
  EXPECT_TRUE(db->GetProperty("siftdb.sstables", &text));
  std::vector<uint64_t> bytes(7, 0);
  std::istringstream in(text);
  std::string line;
  int level = -1;
  while (std::getline(in, line)) {
    int l;
    unsigned long long size;
    char name[32];
    if (std::sscanf(line.c_str(), "--- level %d ---", &l) == 1) {
      level = l;
    } else if (level >= 0 && std::sscanf(line.c_str(), " %31s %llu bytes", name,
                                         &size) == 2) {
      bytes[level] += size;
    }
  }
  return bytes;
}

int FirstNonEmptyLevelBelowZero(const std::vector<uint64_t>& bytes) {
  for (int level = 1; level < 7; level++) {
    if (bytes[level] > 0) return level;
  }
  return 0;
}

void WaitForCompactions(DB* db) {
  ASSERT_TRUE(static_cast<DBImpl*>(db)->WaitForBackgroundWork().ok());
}

// Random puts (and some deletes) of `n` keys drawn from `space`, mirrored
// in *model.
void Write(DB* db, Random* rnd, int n, int space, Model* model) {
  for (int i = 0; i < n; i++) {
    const std::string key = absl::StrFormat("key%08d", rnd->Uniform(space));
    if (rnd->OneIn(10)) {
      ASSERT_TRUE(db->Delete(WriteOptions(), key).ok());
      model->erase(key);
      continue;
    }
    std::string value(100, static_cast<char>('a' + rnd->Uniform(26)));
    value += key;
    ASSERT_TRUE(db->Put(WriteOptions(), key, value).ok());
    (*model)[key] = value;
  }
}

// Every model key by Get and the whole DB by a scan.
void CheckModel(DB* db, const Model& model) {
  for (const auto& [key, value] : model) {
    std::string got;
    absl::Status s = db->Get(ReadOptions(), key, &got);
    ASSERT_TRUE(s.ok()) << key << ": " << s;
    ASSERT_EQ(value, got) << key;
  }
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  auto m = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model.end()) << "extra key " << it->key();
    ASSERT_EQ(m->first, it->key());
    ASSERT_EQ(m->second, it->value());
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(m, model.end());
}

TEST(DynamicLevelsTest, EmptyTreeCompactsLevelZeroIntoTheLastLevel) {
  test::TempDir dir;
  auto db = DB::Open(SmallTreeOptions(true), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  Model model;
  Random rnd(11);
  // About five write buffers: level 0 reaches its trigger once.
  ASSERT_NO_FATAL_FAILURE(Write(db->get(), &rnd, 2600, 1 << 20, &model));
  ASSERT_NO_FATAL_FAILURE(WaitForCompactions(db->get()));
  const std::vector<uint64_t> bytes = LevelBytes(db->get());
  EXPECT_GT(bytes[6], 0u);
  for (int level = 1; level < 6; level++) {
    EXPECT_EQ(bytes[level], 0u) << "level " << level;
  }
  ASSERT_NO_FATAL_FAILURE(CheckModel(db->get(), model));
}

TEST(DynamicLevelsTest, LastLevelHoldsMostOfTheData) {
  test::TempDir dir;
  auto db = DB::Open(SmallTreeOptions(true), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  Model model;
  Random rnd(12);
  // ~2.5 MB written over 20k distinct keys: with static targets (128 KiB,
  // x4) the data would spread over levels 1-4.
  ASSERT_NO_FATAL_FAILURE(Write(db->get(), &rnd, 24000, 20000, &model));
  ASSERT_NO_FATAL_FAILURE(WaitForCompactions(db->get()));
  const std::vector<uint64_t> bytes = LevelBytes(db->get());
  uint64_t below_zero = 0;
  for (int level = 1; level < 7; level++) below_zero += bytes[level];
  ASSERT_GT(below_zero, 0u);
  // The levels above the base level stay empty: with ~2 MB in the last
  // level, x4 per level and 128 KiB at the base, the base level is 4.
  EXPECT_GE(FirstNonEmptyLevelBelowZero(bytes), 4);
  // Up to 3/4 of it is in the last level when every level above is full
  // (their targets sum to a third of it); at least 60% here.
  EXPECT_GE(static_cast<double>(bytes[6]) / static_cast<double>(below_zero),
            0.6)
      << absl::StrFormat("levels 1-6: %d %d %d %d %d %d", bytes[1], bytes[2],
                         bytes[3], bytes[4], bytes[5], bytes[6]);
  ASSERT_NO_FATAL_FAILURE(CheckModel(db->get(), model));
}

TEST(DynamicLevelsTest, SwitchingOnAndOffKeepsEveryKey) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Model model;
  Random rnd(13);
  for (int round = 0; round < 4; round++) {
    // Static, dynamic, static, dynamic.
    const bool dynamic = round % 2 == 1;
    auto db = DB::Open(SmallTreeOptions(dynamic), path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_NO_FATAL_FAILURE(CheckModel(db->get(), model));
    ASSERT_NO_FATAL_FAILURE(Write(db->get(), &rnd, 8000, 12000, &model));
    ASSERT_NO_FATAL_FAILURE(WaitForCompactions(db->get()));
    ASSERT_NO_FATAL_FAILURE(CheckModel(db->get(), model)) << "round " << round;
    if (dynamic) {
      // A manual compaction of everything ends with the data in the
      // levels below the base level only.
      ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
      ASSERT_NO_FATAL_FAILURE(CheckModel(db->get(), model));
    }
  }
}

TEST(DynamicLevelsTest, ModelAcrossSeedsWithReopens) {
  for (int seed = 1; seed <= 3; seed++) {
    test::TempDir dir;
    const std::string path = dir.Join("db");
    Model model;
    Random rnd(100 + seed);
    Options o = SmallTreeOptions(true);
    o.max_subcompactions = seed;  // 1, 2 or 3 threads per compaction
    for (int round = 0; round < 3; round++) {
      auto db = DB::Open(o, path);
      ASSERT_TRUE(db.ok()) << db.status();
      ASSERT_NO_FATAL_FAILURE(Write(db->get(), &rnd, 5000, 4000, &model));
      ASSERT_NO_FATAL_FAILURE(CheckModel(db->get(), model))
          << "seed " << seed << " round " << round;
    }
  }
}

TEST(DynamicLevelsTest, CompressionPerLevelStartsAtTheBaseLevel) {
  Options o;
  o.compression_per_level = {kNoCompression, kSnappyCompression,
                             kLZ4Compression, kZstdCompression};
  // Static targets (base level 1): entry i for level i.
  EXPECT_EQ(OutputCompression(o, 0, false), kNoCompression);
  EXPECT_EQ(OutputCompression(o, 2, false), kLZ4Compression);
  // Base level 4: entry 1 for level 4, 2 for level 5, the last beyond.
  EXPECT_EQ(OutputCompression(o, 0, false, 4), kNoCompression);
  EXPECT_EQ(OutputCompression(o, 4, false, 4), kSnappyCompression);
  EXPECT_EQ(OutputCompression(o, 5, false, 4), kLZ4Compression);
  EXPECT_EQ(OutputCompression(o, 6, false, 4), kZstdCompression);
  // The base level last: entry 1.
  EXPECT_EQ(OutputCompression(o, 6, false, 6), kSnappyCompression);
}

}  // namespace dynamic_levels_test
}  // namespace siftdb
