// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The batched DB::MultiGet against Get and a std::map model, with the keys
// spread over every place a key can live at once: deeper levels, several
// overlapping level-0 tables, the MemTable being flushed (its flush held
// up) and the MemTable; overwrites and deletions across those layers; a
// snapshot taken in between; random batches of 1..64 keys (several seeds)
// with duplicates and keys absent everywhere. Tables have small blocks, so
// a batch meets keys sharing a block and keys in neighbouring blocks; the
// block cache is large, tiny (every batch evicts), or absent.

#include <chrono>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/blocking_env.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace multiget_placement_test {

constexpr int kKeySpace = 2000;  // keys [0, kKeySpace); batches ask past it

std::string Key(int k) { return absl::StrFormat("key%06d", k); }

int FilesAt(DB* db, int level) {
  std::string v;
  EXPECT_TRUE(db->GetProperty(
      absl::StrFormat("siftdb.num-files-at-level%d", level), &v));
  return v.empty() ? 0 : std::stoi(v);
}

using Model = std::map<std::string, std::string>;

class MultiGetPlacementTest : public testing::TestWithParam<size_t> {
 protected:
  Options BaseOptions() {
    Options o;
    o.create_if_missing = true;
    o.env = &env_;
    o.block_size = 256;  // many blocks per table
    o.write_buffer_size = 256 << 10;
    o.max_file_size = 8 << 10;
    o.max_bytes_for_level_base = 32 << 10;
    o.block_cache_size = GetParam();
    return o;
  }

  void Open(const Options& o) {
    db_.reset();
    auto db = DB::Open(o, dir_.path());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  // `count` random writes (a fifth of them deletions) to db_ and *model.
  void Write(std::mt19937* rng, int count, const std::string& tag,
             Model* model) {
    for (int i = 0; i < count; i++) {
      const std::string k = Key((*rng)() % kKeySpace);
      if ((*rng)() % 5 == 0) {
        ASSERT_TRUE(db_->Delete(WriteOptions(), k).ok());
        model->erase(k);
      } else {
        const std::string v = absl::StrFormat("%s-%d-%s", tag, i, k);
        ASSERT_TRUE(db_->Put(WriteOptions(), k, v).ok());
        (*model)[k] = v;
      }
    }
  }

  // MultiGet of random batches (sizes 1..64, duplicates, absent keys)
  // agrees with Get and with the model, key by key.
  void CheckBatches(uint32_t seed, const Model& model, const ReadOptions& ro) {
    std::mt19937 rng(seed);
    for (size_t size = 1; size <= 64; size++) {
      std::vector<std::string> keys;
      for (size_t j = 0; j < size; j++) {
        if (j > 0 && rng() % 8 == 0) {
          keys.push_back(keys[rng() % keys.size()]);  // a duplicate
        } else {
          keys.push_back(Key(rng() % (kKeySpace + kKeySpace / 10)));
        }
      }
      std::vector<std::string_view> views(keys.begin(), keys.end());
      std::vector<std::string> values(3, "stale");
      std::vector<absl::Status> statuses = db_->MultiGet(ro, views, &values);
      ASSERT_EQ(statuses.size(), size);
      ASSERT_EQ(values.size(), size);
      for (size_t j = 0; j < size; j++) {
        SCOPED_TRACE(
            absl::StrFormat("seed %d size %d key %s", seed, size, keys[j]));
        std::string got;
        absl::Status s = db_->Get(ro, keys[j], &got);
        ASSERT_EQ(statuses[j].code(), s.code()) << statuses[j] << " vs " << s;
        auto it = model.find(keys[j]);
        if (it == model.end()) {
          ASSERT_TRUE(absl::IsNotFound(statuses[j])) << statuses[j];
          ASSERT_EQ(values[j], "");
        } else {
          ASSERT_TRUE(statuses[j].ok()) << statuses[j];
          ASSERT_EQ(values[j], it->second);
          ASSERT_EQ(got, it->second);
        }
      }
    }
  }

  test::BlockingTableEnv env_;
  test::TempDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_P(MultiGetPlacementTest, MultiGetMatchesGetAndTheModelEverywhere) {
  std::mt19937 rng(7);
  Model model;
  // Deeper levels: compactions run as usual.
  Open(BaseOptions());
  Write(&rng, 6000, "deep", &model);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  Write(&rng, 2000, "deep2", &model);
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(static_cast<DBImpl*>(db_.get())->WaitForBackgroundWork().ok());

  // Level 0 stays as flushed from here on: two overlapping tables.
  Options o = BaseOptions();
  o.disable_auto_compactions = true;
  Open(o);
  Write(&rng, 800, "l0a", &model);
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  const Snapshot* snap = db_->GetSnapshot();
  const Model at_snap = model;
  Write(&rng, 800, "l0b", &model);
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());

  // The MemTable being flushed, its table held up; then the MemTable.
  Write(&rng, 500, "imm", &model);
  env_.BlockTablesAfter(0);
  FlushOptions no_wait;
  no_wait.wait = false;
  ASSERT_TRUE(db_->Flush(no_wait).ok());
  Write(&rng, 500, "mem", &model);
  for (int i = 0; i < 1000 && env_.waiting() == 0; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ASSERT_EQ(env_.waiting(), 1);
  EXPECT_GE(FilesAt(db_.get(), 0), 2);
  int deeper = 0;
  for (int level = 1; level < 7; level++) deeper += FilesAt(db_.get(), level);
  EXPECT_GT(deeper, 1);

  ReadOptions snap_ro;
  snap_ro.snapshot = snap;
  for (uint32_t seed : {1u, 2u, 3u}) {
    CheckBatches(seed, model, ReadOptions());
    CheckBatches(seed + 100, at_snap, snap_ro);
  }
  // Every key at once, and every key absent everywhere.
  std::vector<std::string> all;
  for (int k = 0; k < kKeySpace + 50; k++) all.push_back(Key(k));
  std::vector<std::string_view> views(all.begin(), all.end());
  std::vector<std::string> values;
  std::vector<absl::Status> statuses =
      db_->MultiGet(ReadOptions(), views, &values);
  for (size_t j = 0; j < all.size(); j++) {
    auto it = model.find(all[j]);
    if (it == model.end()) {
      EXPECT_TRUE(absl::IsNotFound(statuses[j])) << all[j] << statuses[j];
    } else {
      EXPECT_TRUE(statuses[j].ok()) << all[j] << statuses[j];
      EXPECT_EQ(values[j], it->second) << all[j];
    }
  }
  std::vector<std::string> absent;
  for (int k = 0; k < 64; k++) {
    absent.push_back(absl::StrFormat("key%06d-", k * 31));  // between keys
  }
  absent.push_back("");
  absent.push_back("zzz");
  std::vector<std::string_view> absent_views(absent.begin(), absent.end());
  statuses = db_->MultiGet(ReadOptions(), absent_views, &values);
  for (size_t j = 0; j < absent.size(); j++) {
    EXPECT_TRUE(absl::IsNotFound(statuses[j])) << absent[j] << statuses[j];
    EXPECT_EQ(values[j], "");
  }

  db_->ReleaseSnapshot(snap);
  env_.Release();
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  CheckBatches(9, model, ReadOptions());
}

// A large cache, a tiny one (every batch evicts blocks it just read while
// others stay pinned) and none (blocks owned by the batch).
INSTANTIATE_TEST_SUITE_P(BlockCache, MultiGetPlacementTest,
                         testing::Values(size_t{8} << 20, size_t{2048},
                                         size_t{0}));

}  // namespace multiget_placement_test
}  // namespace siftdb
