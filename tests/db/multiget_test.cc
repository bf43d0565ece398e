// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DB::MultiGet: the same answers as Get for every key, wherever the key
// lives (MemTable, the MemTable being flushed, tables of any level), at one
// point in time for the whole batch (a snapshot, or the latest sequence
// when the batch starts, even while writers run), with one status per key:
// an oversized key fails alone. A model (std::map) checks every answer over
// seeds and batch sizes.

#include <atomic>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace multiget_test {

std::string Key(int k) { return absl::StrFormat("key%06d", k); }

class MultiGetTest : public testing::Test {
 protected:
  void Open(size_t write_buffer_size = 64 << 10) {
    Options o;
    o.create_if_missing = true;
    o.write_buffer_size = write_buffer_size;
    auto db = DB::Open(o, dir_.path());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  // Checks MultiGet of `keys` against the model, key by key.
  void ExpectModel(const std::map<std::string, std::string>& model,
                   const std::vector<std::string>& keys,
                   const ReadOptions& ro = ReadOptions()) {
    std::vector<std::string_view> views(keys.begin(), keys.end());
    std::vector<std::string> values = {"stale"};
    std::vector<absl::Status> statuses = db_->MultiGet(ro, views, &values);
    ASSERT_EQ(statuses.size(), keys.size());
    ASSERT_EQ(values.size(), keys.size());
    for (size_t i = 0; i < keys.size(); ++i) {
      auto it = model.find(keys[i]);
      if (it == model.end()) {
        EXPECT_TRUE(absl::IsNotFound(statuses[i])) << keys[i] << statuses[i];
        EXPECT_EQ(values[i], "") << keys[i];
      } else {
        ASSERT_TRUE(statuses[i].ok()) << keys[i] << statuses[i];
        EXPECT_EQ(values[i], it->second) << keys[i];
      }
    }
  }

  test::TempDir dir_;
  std::unique_ptr<DB> db_;
};

TEST_F(MultiGetTest, EmptyBatch) {
  Open();
  std::vector<std::string> values = {"x"};
  EXPECT_TRUE(db_->MultiGet(ReadOptions(), {}, &values).empty());
  EXPECT_TRUE(values.empty());
}

// Keys spread over tables of several levels, the MemTable, deletions and
// overwrites; batches of every size with duplicates and absent keys.
TEST_F(MultiGetTest, MatchesTheModelEverywhere) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    SCOPED_TRACE(seed);
    db_.reset();
    ASSERT_TRUE(DestroyDB(dir_.path(), Options()).ok());
    Open(16 << 10);
    std::mt19937 rng(seed);
    std::map<std::string, std::string> model;
    for (int round = 0; round < 4; ++round) {
      for (int i = 0; i < 1500; ++i) {
        const std::string k = Key(rng() % 3000);
        if (rng() % 5 == 0) {
          ASSERT_TRUE(db_->Delete(WriteOptions(), k).ok());
          model.erase(k);
        } else {
          const std::string v = absl::StrFormat("v%d-%d-%s", seed, round, k);
          ASSERT_TRUE(db_->Put(WriteOptions(), k, v).ok());
          model[k] = v;
        }
      }
      if (round == 1) {
        ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
      }
      for (size_t batch : {1u, 7u, 64u, 1000u}) {
        std::vector<std::string> keys;
        for (size_t j = 0; j < batch; ++j) keys.push_back(Key(rng() % 3100));
        if (batch > 1) keys.push_back(keys.front());  // a duplicate
        ExpectModel(model, keys);
      }
    }
  }
}

TEST_F(MultiGetTest, ReadsAtTheSnapshot) {
  Open();
  std::map<std::string, std::string> before;
  for (int k = 0; k < 100; ++k) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), "old").ok());
    before[Key(k)] = "old";
  }
  const Snapshot* snap = db_->GetSnapshot();
  for (int k = 0; k < 100; k += 2) {
    ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), "new").ok());
  }
  for (int k = 1; k < 100; k += 2) {
    ASSERT_TRUE(db_->Delete(WriteOptions(), Key(k)).ok());
  }
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  std::vector<std::string> keys;
  for (int k = 0; k < 110; ++k) keys.push_back(Key(k));
  ReadOptions at_snap;
  at_snap.snapshot = snap;
  ExpectModel(before, keys, at_snap);
  db_->ReleaseSnapshot(snap);
}

// One bad key fails alone; the others are answered.
TEST_F(MultiGetTest, AnOversizedKeyFailsAlone) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  const std::string huge(kMaxKeySize + 1, 'k');
  std::vector<std::string_view> keys = {"a", huge, "b"};
  std::vector<std::string> values;
  std::vector<absl::Status> statuses =
      db_->MultiGet(ReadOptions(), keys, &values);
  ASSERT_EQ(statuses.size(), 3u);
  EXPECT_TRUE(statuses[0].ok());
  EXPECT_EQ(values[0], "1");
  EXPECT_TRUE(absl::IsInvalidArgument(statuses[1])) << statuses[1];
  EXPECT_NE(statuses[1].message().find("kMaxKeySize"), std::string::npos);
  EXPECT_TRUE(absl::IsNotFound(statuses[2]));
}

// A writer puts pairs (k, k+1) in one batch with the same value; a batch
// read at one point in time never sees one of a pair without the other.
TEST_F(MultiGetTest, OneBatchIsOnePointInTime) {
  Open(16 << 10);
  std::atomic<bool> stop{false};
  std::thread writer([&] {
    for (int round = 0; !stop.load(); ++round) {
      WriteBatch batch;
      const std::string v = absl::StrFormat("round%08d", round);
      for (int k = 0; k < 20; ++k) batch.Put(Key(k), v);
      ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
    }
  });
  std::vector<std::string> keys;
  for (int k = 0; k < 20; ++k) keys.push_back(Key(k));
  std::vector<std::string_view> views(keys.begin(), keys.end());
  for (int i = 0; i < 2000; ++i) {
    std::vector<std::string> values;
    std::vector<absl::Status> statuses =
        db_->MultiGet(ReadOptions(), views, &values);
    if (absl::IsNotFound(statuses[0])) continue;  // before the first write
    for (size_t k = 0; k < keys.size(); ++k) {
      ASSERT_TRUE(statuses[k].ok()) << statuses[k];
      ASSERT_EQ(values[k], values[0]) << "key " << k << " read " << i;
    }
  }
  stop = true;
  writer.join();
}

}  // namespace multiget_test
}  // namespace siftdb
