// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// target_file_size_base and target_file_size_multiplier: compactions cut
// the tables of level L at base * multiplier^(L-1), so deeper levels hold
// fewer, larger tables; max_file_size stays an alias of the base. Every
// key written is read back against a std::map model.

#include <algorithm>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"

namespace siftdb {
namespace target_file_size_test {

constexpr uint64_t kBase = 16 << 10;

Options SmallTreeOptions(int multiplier) {
  Options o;
  o.create_if_missing = true;
  o.compression = kNoCompression;  // table sizes follow the bytes written
  o.write_buffer_size = 64 << 10;
  o.target_file_size_base = kBase;
  o.target_file_size_multiplier = multiplier;
  o.max_bytes_for_level_base = 64 << 10;
  o.max_bytes_for_level_multiplier = 4;
  return o;
}

// Table sizes per level, parsed from siftdb.sstables.
std::vector<std::vector<uint64_t>> TableSizes(DB* db) {
  std::string text;
  EXPECT_TRUE(db->GetProperty("siftdb.sstables", &text));
  std::vector<std::vector<uint64_t>> sizes(7);
  std::istringstream in(text);
  std::string line;
  int level = -1;
  while (std::getline(in, line)) {
    int l;
    unsigned long long bytes;
    char name[32];
    if (std::sscanf(line.c_str(), "--- level %d ---", &l) == 1) {
      level = l;
    } else if (level >= 0 && std::sscanf(line.c_str(), " %31s %llu bytes", name,
                                         &bytes) == 2) {
      sizes[level].push_back(bytes);
    }
  }
  return sizes;
}

// Writes random keys, then compacts the whole range, so the deepest level
// holding tables has merged (not merely moved) outputs; checks every key
// against the model.
void FillAndCheck(int multiplier, std::vector<std::vector<uint64_t>>* sizes) {
  test::TempDir dir;
  auto db = DB::Open(SmallTreeOptions(multiplier), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  std::map<std::string, std::string> model;
  Random rnd(301 + multiplier);
  for (int i = 0; i < 12000; i++) {
    std::string key = absl::StrFormat("key%08d", rnd.Uniform(100000));
    std::string value(100, static_cast<char>('a' + rnd.Uniform(26)));
    value += key;
    ASSERT_TRUE((*db)->Put(WriteOptions(), key, value).ok());
    model[key] = value;
  }
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  *sizes = TableSizes(db->get());
  for (const auto& [key, value] : model) {
    std::string got;
    ASSERT_TRUE((*db)->Get(ReadOptions(), key, &got).ok()) << key;
    ASSERT_EQ(value, got) << key;
  }
}

uint64_t Largest(const std::vector<uint64_t>& v) {
  return v.empty() ? 0 : *std::max_element(v.begin(), v.end());
}

int DeepestLevel(const std::vector<std::vector<uint64_t>>& sizes) {
  for (int level = 6; level > 0; level--) {
    if (!sizes[level].empty()) return level;
  }
  return 0;
}

// A table ends at the first entry that takes it past its target, plus its
// index, filter and footer: a few KiB past the target at most.
constexpr uint64_t kSlack = 8 << 10;

TEST(TargetFileSizeTest, DeeperLevelsGetLargerTables) {
  std::vector<std::vector<uint64_t>> sizes;
  ASSERT_NO_FATAL_FAILURE(FillAndCheck(/*multiplier=*/4, &sizes));
  const int deepest = DeepestLevel(sizes);
  ASSERT_GE(deepest, 2) << "the tree never reached level 2";
  uint64_t target = kBase;
  for (int level = 1; level < 7; level++) {
    for (uint64_t size : sizes[level]) {
      EXPECT_LE(size, target + kSlack) << "level " << level;
    }
    target *= 4;
  }
  // The deepest level's target is at least 64 KiB: its merged tables are
  // well past level 1's target.
  EXPECT_GT(Largest(sizes[deepest]), 2 * kBase);
}

TEST(TargetFileSizeTest, MultiplierOneKeepsOneSizeEverywhere) {
  std::vector<std::vector<uint64_t>> sizes;
  ASSERT_NO_FATAL_FAILURE(FillAndCheck(/*multiplier=*/1, &sizes));
  ASSERT_GE(DeepestLevel(sizes), 2) << "the tree never reached level 2";
  for (int level = 1; level < 7; level++) {
    EXPECT_LE(Largest(sizes[level]), kBase + kSlack) << "level " << level;
  }
}

// max_file_size, the old name, still sets the base; equal values of both
// names are accepted.
TEST(TargetFileSizeTest, MaxFileSizeIsAnAliasOfTheBase) {
  test::TempDir dir;
  Options o = SmallTreeOptions(1);
  o.target_file_size_base = Options().target_file_size_base;
  o.max_file_size = kBase;
  {
    auto db = DB::Open(o, dir.Join("db"));
    ASSERT_TRUE(db.ok()) << db.status();
    Random rnd(7);
    for (int i = 0; i < 8000; i++) {
      ASSERT_TRUE((*db)
                      ->Put(WriteOptions(),
                            absl::StrFormat("key%08d", rnd.Uniform(100000)),
                            std::string(100, 'v'))
                      .ok());
    }
    ASSERT_TRUE(static_cast<DBImpl*>(db->get())->WaitForBackgroundWork().ok());
    auto sizes = TableSizes(db->get());
    ASSERT_FALSE(sizes[1].empty());
    for (int level = 1; level < 7; level++) {
      EXPECT_LE(Largest(sizes[level]), kBase + kSlack) << "level " << level;
    }
  }
  o.target_file_size_base = kBase;  // the same value under both names
  EXPECT_TRUE(DB::Open(o, dir.Join("db")).ok());
}

}  // namespace target_file_size_test
}  // namespace siftdb
