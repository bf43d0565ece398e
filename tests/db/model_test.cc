// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Model-based test: random sequences of put, delete, write batch, get,
// iteration (both directions, with seeks and direction changes), snapshots,
// reopen and CompactRange, checked against std::map, over many seeds.

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"

namespace siftdb {
namespace model_test {

using Model = std::map<std::string, std::string>;

class ModelTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    options_.create_if_missing = true;
    // Small buffers and tables so a short run flushes and compacts a lot.
    options_.write_buffer_size = 8 << 10;
    options_.max_file_size = 8 << 10;
    options_.max_bytes_for_level_base = 32 << 10;
    options_.block_size = 512;
    path_ = dir_.Join("db");
    Reopen();
  }

  void Reopen() {
    db_.reset();
    auto db = DB::Open(options_, path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }

  std::string RandomKey(Random* rnd) {
    // A small key space, so overwrites and deletes hit existing keys.
    return absl::StrFormat("k%04d", rnd->Uniform(400));
  }

  // Compares a full forward and backward scan and random seeks with model.
  void CheckIterator(const Model& model, const Snapshot* snap, Random* rnd) {
    ReadOptions ro;
    ro.snapshot = snap;
    std::unique_ptr<Iterator> it = db_->NewIterator(ro);
    auto m = model.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_NE(m, model.end()) << "extra key " << it->key();
      ASSERT_EQ(m->first, it->key());
      ASSERT_EQ(m->second, it->value());
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
    ASSERT_EQ(m, model.end());
    auto r = model.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
      ASSERT_NE(r, model.rend()) << "extra key " << it->key();
      ASSERT_EQ(r->first, it->key());
      ASSERT_EQ(r->second, it->value());
    }
    ASSERT_EQ(r, model.rend());
    // Seeks followed by a random walk that changes direction.
    for (int i = 0; i < 20; i++) {
      const std::string target = RandomKey(rnd);
      it->Seek(target);
      auto pos = model.lower_bound(target);
      for (int step = 0; step < 10; step++) {
        if (pos == model.end()) {
          ASSERT_FALSE(it->Valid());
          break;
        }
        ASSERT_TRUE(it->Valid());
        ASSERT_EQ(pos->first, it->key());
        ASSERT_EQ(pos->second, it->value());
        if (rnd->OneIn(2)) {
          it->Next();
          ++pos;
        } else {
          if (pos == model.begin()) {
            it->Prev();
            ASSERT_FALSE(it->Valid());
            break;
          }
          it->Prev();
          --pos;
        }
      }
    }
  }

  test::TempDir dir_;
  Options options_;
  std::string path_;
  std::unique_ptr<DB> db_;
};

TEST_P(ModelTest, RandomOperationsMatchStdMap) {
  Random rnd(GetParam() * 7919 + 1);
  Model model;
  struct Snap {
    const Snapshot* snapshot;
    Model model;
  };
  std::vector<Snap> snapshots;
  constexpr int kSteps = 2500;
  for (int step = 0; step < kSteps; step++) {
    const int op = rnd.Uniform(100);
    if (op < 45) {
      const std::string k = RandomKey(&rnd);
      const std::string v =
          absl::StrFormat("v%d-%s", step, std::string(rnd.Uniform(60), 'x'));
      ASSERT_TRUE(db_->Put(WriteOptions(), k, v).ok());
      model[k] = v;
    } else if (op < 60) {
      const std::string k = RandomKey(&rnd);
      ASSERT_TRUE(db_->Delete(WriteOptions(), k).ok());
      model.erase(k);
    } else if (op < 68) {
      WriteBatch batch;
      const int n = 1 + rnd.Uniform(10);
      for (int i = 0; i < n; i++) {
        const std::string k = RandomKey(&rnd);
        if (rnd.OneIn(3)) {
          batch.Delete(k);
          model.erase(k);
        } else {
          const std::string v = absl::StrFormat("b%d-%d", step, i);
          batch.Put(k, v);
          model[k] = v;
        }
      }
      ASSERT_TRUE(db_->Write(WriteOptions(), &batch).ok());
    } else if (op < 85) {
      const std::string k = RandomKey(&rnd);
      std::string v;
      absl::Status s = db_->Get(ReadOptions(), k, &v);
      auto m = model.find(k);
      if (m == model.end()) {
        ASSERT_TRUE(absl::IsNotFound(s)) << k << ": " << s;
      } else {
        ASSERT_TRUE(s.ok()) << k << ": " << s;
        ASSERT_EQ(m->second, v) << k;
      }
    } else if (op < 88) {
      if (snapshots.size() < 4) {
        snapshots.push_back({db_->GetSnapshot(), model});
      } else {
        const size_t i = rnd.Uniform(snapshots.size());
        db_->ReleaseSnapshot(snapshots[i].snapshot);
        snapshots.erase(snapshots.begin() + i);
      }
    } else if (op < 92) {
      ASSERT_NO_FATAL_FAILURE(CheckIterator(model, nullptr, &rnd));
      for (const Snap& s : snapshots) {
        ASSERT_NO_FATAL_FAILURE(CheckIterator(s.model, s.snapshot, &rnd));
        // Point reads at the snapshot agree too.
        const std::string k = RandomKey(&rnd);
        ReadOptions ro;
        ro.snapshot = s.snapshot;
        std::string v;
        absl::Status st = db_->Get(ro, k, &v);
        auto m = s.model.find(k);
        if (m == s.model.end()) {
          ASSERT_TRUE(absl::IsNotFound(st)) << k;
        } else {
          ASSERT_EQ(m->second, v) << k;
        }
      }
    } else if (op < 95) {
      std::string a = RandomKey(&rnd), b = RandomKey(&rnd);
      if (a > b) std::swap(a, b);
      std::string_view begin(a), end(b);
      ASSERT_TRUE(db_->CompactRange(rnd.OneIn(3) ? nullptr : &begin,
                                    rnd.OneIn(3) ? nullptr : &end)
                      .ok());
    } else if (op < 97 && snapshots.empty()) {
      Reopen();
    }
  }
  ASSERT_NO_FATAL_FAILURE(CheckIterator(model, nullptr, &rnd));
  for (const Snap& s : snapshots) {
    ASSERT_NO_FATAL_FAILURE(CheckIterator(s.model, s.snapshot, &rnd));
    db_->ReleaseSnapshot(s.snapshot);
  }
  // Compact everything down: the model still holds, and deleted keys are
  // gone from the tables too.
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(CheckIterator(model, nullptr, &rnd));
  Reopen();
  ASSERT_NO_FATAL_FAILURE(CheckIterator(model, nullptr, &rnd));
}

INSTANTIATE_TEST_SUITE_P(Seeds, ModelTest, ::testing::Range(0, 12));

}  // namespace model_test
}  // namespace siftdb
