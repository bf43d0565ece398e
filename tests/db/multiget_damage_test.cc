// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The batched DB::MultiGet under stress: a data block whose bytes changed
// on disk fails (DataLoss naming the table) exactly the keys of the batch
// that need it, while the other keys of the same batch get their values;
// damaged bytes are never served, raw or compressed, verified on request
// or because the block was bound for the cache. And concurrent MultiGet
// readers beside a writer whose flushes and compactions keep replacing the
// tables, with a tiny block cache: every answer is one the writer wrote,
// never older than one the same reader saw before.

#include <atomic>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/parallel_compaction_test_util.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace multiget_damage_test {

constexpr int kKeys = 500;

std::string Key(int i) { return absl::StrFormat("key%06d", i); }
std::string Value(int i) { return absl::StrFormat("value-%06d-%s", i, "x"); }

class MultiGetDamageTest : public testing::TestWithParam<CompressionType> {
 protected:
  Options DamageOptions() {
    Options o;
    o.create_if_missing = true;
    o.compression = GetParam();
    o.block_size = 1024;  // several blocks: the damage is in the first
    return o;
  }

  // One table of kKeys entries, a byte inside its first data block flipped.
  void SetUp() override {
    path_ = dir_.Join("db");
    {
      auto db = DB::Open(DamageOptions(), path_);
      ASSERT_TRUE(db.ok()) << db.status();
      for (int i = 0; i < kKeys; i++) {
        ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), Value(i)).ok());
      }
      ASSERT_TRUE(static_cast<DBImpl*>(db->get())->FlushMemTable().ok());
    }
    const std::set<uint64_t> tables = test::TableFilesOnDisk(path_);
    ASSERT_EQ(1u, tables.size());
    table_ = TableFileName(path_, *tables.begin());
    std::fstream f(table_, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(22);
    char c;
    f.get(c);
    f.seekp(22);
    f.put(static_cast<char>(c ^ 0x01));
  }

  // MultiGet of every key (and a few absent ones) in one batch: each
  // answer is Get's, the damaged keys fail with DataLoss naming the table,
  // every other key has its value.
  void ExpectDamageContained(DB* db, const ReadOptions& ro) {
    std::vector<std::string> keys;
    for (int i = kKeys + 5; i >= -5; i--) keys.push_back(Key(i));
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<std::string> values;
    std::vector<absl::Status> statuses = db->MultiGet(ro, views, &values);
    ASSERT_EQ(statuses.size(), keys.size());
    int lost = 0, good = 0;
    for (size_t j = 0; j < keys.size(); j++) {
      const int i = kKeys + 5 - static_cast<int>(j);
      std::string got;
      absl::Status s = db->Get(ro, keys[j], &got);
      EXPECT_EQ(statuses[j].code(), s.code()) << keys[j] << statuses[j] << s;
      if (i < 0 || i >= kKeys) {
        EXPECT_TRUE(absl::IsNotFound(statuses[j]) || absl::IsDataLoss(s))
            << keys[j] << statuses[j];
        continue;
      }
      if (absl::IsDataLoss(statuses[j])) {
        lost++;
        EXPECT_NE(std::string::npos, statuses[j].message().find(table_))
            << statuses[j];
        EXPECT_EQ(values[j], "");
      } else {
        good++;
        ASSERT_TRUE(statuses[j].ok()) << keys[j] << statuses[j];
        EXPECT_EQ(values[j], Value(i)) << keys[j];
      }
    }
    EXPECT_GT(lost, 0);
    EXPECT_GT(good, kKeys / 2);
    // The first key lives in the damaged block.
    EXPECT_TRUE(absl::IsDataLoss(statuses[keys.size() - 6]))
        << statuses[keys.size() - 6];
  }

  test::TempDir dir_;
  std::string path_;
  std::string table_;
};

TEST_P(MultiGetDamageTest, DamagedBlockFailsOnlyTheKeysThatNeedIt) {
  auto db = DB::Open(DamageOptions(), path_);
  ASSERT_TRUE(db.ok()) << db.status();
  ExpectDamageContained(db->get(), ReadOptions());
  // Twice: the good blocks now come from the cache, the damaged one again
  // from the file (never cached).
  ExpectDamageContained(db->get(), ReadOptions());
}

TEST_P(MultiGetDamageTest, BlocksBoundForTheCacheAreVerifiedAnyway) {
  auto db = DB::Open(DamageOptions(), path_);
  ASSERT_TRUE(db.ok()) << db.status();
  ReadOptions unchecked;
  unchecked.verify_checksums = false;
  unchecked.fill_cache = true;
  ExpectDamageContained(db->get(), unchecked);
  ExpectDamageContained(db->get(), ReadOptions());
}

TEST_P(MultiGetDamageTest, WithoutABlockCache) {
  Options o = DamageOptions();
  o.block_cache_size = 0;
  auto db = DB::Open(o, path_);
  ASSERT_TRUE(db.ok()) << db.status();
  ExpectDamageContained(db->get(), ReadOptions());
}

INSTANTIATE_TEST_SUITE_P(Compression, MultiGetDamageTest,
                         testing::Values(kNoCompression, kSnappyCompression,
                                         kLZ4Compression, kZstdCompression));

// One writer overwrites keys with ever larger rounds while its small
// MemTable keeps flushing and compacting; MultiGet readers with a tiny
// block cache check every answer.
TEST(MultiGetMissingTableTest, AMissingTableFailsOnlyTheKeysInItsRange) {
  // One sorted run of several tables, none opened yet (a fresh open), one
  // of them deleted: a batch over all of them pins the others together
  // (TableCache::PinMany, opening each), and the missing one fails exactly
  // the keys of its range, with DataLoss naming it, never NotFound; each
  // answer is Get's.
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o;
  o.create_if_missing = true;
  o.target_file_size_base = 4096;  // the least: ~100 keys a table
  o.compression = kNoCompression;
  {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 900; i++) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), Value(i)).ok());
    }
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    std::string files;
    ASSERT_TRUE((*db)->GetProperty("siftdb.num-files-at-level0", &files));
    ASSERT_EQ("0", files);
  }
  const std::set<uint64_t> tables = test::TableFilesOnDisk(path);
  ASSERT_GE(tables.size(), 3u);
  const std::string missing = TableFileName(path, *std::next(tables.begin()));
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_EQ(0, std::remove(missing.c_str()));
  std::vector<std::string> keys;
  for (int i = 0; i < 900; i += 3) keys.push_back(Key(i));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  std::vector<std::string> values;
  std::vector<absl::Status> statuses =
      (*db)->MultiGet(ReadOptions(), views, &values);
  int lost = 0, first_lost = -1, last_lost = -1;
  for (size_t j = 0; j < keys.size(); j++) {
    std::string got;
    const absl::Status s = (*db)->Get(ReadOptions(), keys[j], &got);
    EXPECT_EQ(statuses[j].code(), s.code()) << keys[j] << statuses[j] << s;
    if (statuses[j].ok()) {
      EXPECT_EQ(values[j], Value(static_cast<int>(j) * 3));
      continue;
    }
    ASSERT_TRUE(absl::IsDataLoss(statuses[j])) << keys[j] << statuses[j];
    EXPECT_NE(std::string::npos, statuses[j].message().find(missing))
        << statuses[j];
    lost++;
    if (first_lost < 0) first_lost = static_cast<int>(j);
    last_lost = static_cast<int>(j);
  }
  EXPECT_GT(lost, 0);
  EXPECT_LT(lost, static_cast<int>(keys.size()) / 2);
  EXPECT_EQ(lost, last_lost - first_lost + 1) << "one table's keys: a range";
}

TEST(MultiGetConcurrencyTest, ConcurrentMultiGetReadersBesideAWriter) {
  test::TempDir dir;
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 16 << 10;
  o.max_file_size = 8 << 10;
  o.max_bytes_for_level_base = 32 << 10;
  o.block_size = 256;
  o.block_cache_size = 4096;
  auto opened = DB::Open(o, dir.path());
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<DB> db = *std::move(opened);
  constexpr int kSpace = 1000;
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    std::mt19937 rng(1);
    for (int round = 0; !stop.load(); round++) {
      const int k = static_cast<int>(rng() % kSpace);
      ASSERT_TRUE(db->Put(WriteOptions(), Key(k),
                          absl::StrFormat("%s@%09d", Key(k), round))
                      .ok());
    }
  });
  auto reader = [&](uint32_t seed) {
    std::mt19937 rng(seed);
    std::vector<int> last(kSpace, -1);  // the latest round seen per key
    for (int n = 0; n < 300; n++) {
      std::vector<std::string> keys;
      const size_t size = 1 + rng() % 32;
      for (size_t j = 0; j < size; j++) keys.push_back(Key(rng() % kSpace));
      std::vector<std::string_view> views(keys.begin(), keys.end());
      std::vector<std::string> values;
      std::vector<absl::Status> statuses =
          db->MultiGet(ReadOptions(), views, &values);
      ASSERT_EQ(statuses.size(), size);
      for (size_t j = 0; j < size; j++) {
        const int k = std::stoi(keys[j].substr(3));
        if (absl::IsNotFound(statuses[j])) {
          ASSERT_EQ(last[k], -1) << keys[j] << " vanished";
          continue;
        }
        ASSERT_TRUE(statuses[j].ok()) << keys[j] << statuses[j];
        ASSERT_EQ(values[j].size(), keys[j].size() + 10) << values[j];
        ASSERT_EQ(values[j].substr(0, keys[j].size() + 1), keys[j] + "@");
        const int round = std::stoi(values[j].substr(keys[j].size() + 1));
        ASSERT_GE(round, last[k]) << keys[j];
        last[k] = round;
      }
    }
  };
  std::thread reader1(reader, 11u);
  std::thread reader2(reader, 12u);
  reader1.join();
  reader2.join();
  stop = true;
  writer.join();
}

}  // namespace multiget_damage_test
}  // namespace siftdb
