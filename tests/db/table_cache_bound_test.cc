// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// More live tables than Options::max_open_files keeps open: every read,
// point or scan, still answers as a std::map model does, the cache never
// holds more tables than its bound once nothing pins them, and siftdb.stats
// reports the hit rate (issue #20, "many tables").

#include <map>
#include <memory>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/iterator.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"

namespace siftdb::test {
namespace table_cache_bound_test {

uint64_t Counter(DB* db, const std::string& name) {
  std::string v;
  uint64_t n = 0;
  EXPECT_TRUE(db->GetProperty("siftdb.counter." + name, &v)) << name;
  EXPECT_TRUE(absl::SimpleAtoi(v, &n)) << v;
  return n;
}

int LiveTables(DB* db) {
  int total = 0;
  for (int level = 0; level < 7; level++) {
    std::string v;
    int n = 0;
    EXPECT_TRUE(db->GetProperty(
        absl::StrFormat("siftdb.num-files-at-level%d", level), &v));
    EXPECT_TRUE(absl::SimpleAtoi(v, &n));
    total += n;
  }
  return total;
}

// "table cache: <open> open of <capacity> ..." from siftdb.stats.
std::pair<int, int> OpenOfCapacity(DB* db) {
  std::string stats;
  EXPECT_TRUE(db->GetProperty("siftdb.stats", &stats));
  int open = -1, capacity = -1;
  const size_t at = stats.find("table cache: ");
  EXPECT_NE(at, std::string::npos) << stats;
  if (at != std::string::npos) {
    EXPECT_EQ(std::sscanf(stats.c_str() + at, "table cache: %d open of %d",
                          &open, &capacity),
              2);
  }
  return {open, capacity};
}

void CheckAgainstModel(DB* db, const std::map<std::string, std::string>& model,
                       Random* rnd) {
  for (int i = 0; i < 3000; i++) {
    const std::string key = absl::StrFormat("key%06d", rnd->Uniform(30000));
    std::string value;
    absl::Status s = db->Get(ReadOptions(), key, &value);
    auto it = model.find(key);
    if (it == model.end()) {
      ASSERT_TRUE(absl::IsNotFound(s)) << key << ": " << s;
    } else {
      ASSERT_TRUE(s.ok()) << key << ": " << s;
      ASSERT_EQ(value, it->second) << key;
    }
  }
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  auto m = model.begin();
  for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
    ASSERT_NE(m, model.end());
    ASSERT_EQ(it->key(), m->first);
    ASSERT_EQ(it->value(), m->second);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  EXPECT_EQ(m, model.end());
}

TEST(TableCacheBoundTest, MoreTablesThanOpenFilesReadLikeTheModel) {
  TempDir dir;
  Options o;
  o.create_if_missing = true;
  o.max_open_files = 16;  // the smallest allowed: 6 tables kept open
  o.write_buffer_size = 64 << 10;
  // Uncompressed tables of the smallest allowed size: ~130 of them after
  // the full compaction. With 8 KiB Snappy tables the count sat at the
  // floor below (18 under TSan in CI), where a compaction's timing decides.
  o.compression = kNoCompression;
  o.target_file_size_base = 4 << 10;
  o.max_bytes_for_level_base = 64 << 10;
  std::map<std::string, std::string> model;
  Random rnd(301);
  {
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 20000; i++) {
      const std::string key = absl::StrFormat("key%06d", rnd.Uniform(20000));
      const std::string value = absl::StrFormat("v%d-%s", i, key);
      ASSERT_TRUE((*db)->Put(WriteOptions(), key, value).ok());
      model[key] = value;
    }
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    ASSERT_GT(LiveTables(db->get()), 3 * 6) << "too few tables for the test";
    CheckAgainstModel(db->get(), model, &rnd);
    EXPECT_GT(Counter(db->get(), "table_cache.misses"), 6u);
    EXPECT_GT(Counter(db->get(), "table_cache.hits"), 0u);
    EXPECT_GT(Counter(db->get(), "table_cache.filter_bytes_loaded"), 0u);
    auto [open, capacity] = OpenOfCapacity(db->get());
    EXPECT_EQ(capacity, 6);
    EXPECT_GE(open, 1);
    EXPECT_LE(open, capacity) << "nothing pins a table now";
  }
  // A reopen starts with nothing open and reads the same.
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  CheckAgainstModel(db->get(), model, &rnd);
  EXPECT_LE(OpenOfCapacity(db->get()).first, 6);
}

}  // namespace table_cache_bound_test
}  // namespace siftdb::test
