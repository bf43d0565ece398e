// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A database whose tables carry different filters: built under the blocked
// Bloom policy, reopened with Ribbon, then with no filter, then with the
// classic Bloom policy, writing, overwriting and deleting in every phase.
// Each table keeps the policy name it was written with; after every phase
// Get of every present and absent key must agree with a std::map model, and
// KeyMayExist must never say no for a present key.

#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/filter_policy.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace ribbon_filter_db_test {

std::string Key(int k) { return absl::StrFormat("key%07d", k); }

class RibbonFilterDbTest : public testing::Test {
 protected:
  void Open(const std::function<void(Options*)>& configure) {
    db_.reset();
    Options o;
    o.create_if_missing = true;
    o.write_buffer_size = 64 << 10;
    o.max_file_size = 32 << 10;
    configure(&o);
    auto db = DB::Open(o, dir_.path());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  // Writes keys [first, first + count) at step 2 (even keys only, so odd
  // keys are absent inside the tables' ranges), overwrites a few older
  // ones, deletes some, and flushes.
  void WritePhase(int phase, int first, int count) {
    for (int k = first; k < first + count; k += 2) {
      const std::string v = absl::StrFormat("p%d-%d", phase, k);
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), v).ok());
      model_[Key(k)] = v;
    }
    for (int k = 0; k < first; k += 14) {  // overwrite
      const std::string v = absl::StrFormat("p%d-over-%d", phase, k);
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), v).ok());
      model_[Key(k)] = v;
    }
    for (int k = phase * 4; k < first + count; k += 22) {  // delete
      ASSERT_TRUE(db_->Delete(WriteOptions(), Key(k)).ok());
      model_.erase(Key(k));
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }

  void CheckModel(int limit) {
    int absent = 0;
    for (int k = 0; k < limit; ++k) {
      std::string value;
      const absl::Status s = db_->Get(ReadOptions(), Key(k), &value);
      auto it = model_.find(Key(k));
      if (it == model_.end()) {
        ASSERT_TRUE(absl::IsNotFound(s)) << Key(k) << ": " << s;
        absent++;
      } else {
        ASSERT_TRUE(s.ok()) << Key(k) << ": " << s;
        ASSERT_EQ(value, it->second) << Key(k);
        ASSERT_TRUE(db_->KeyMayExist(ReadOptions(), Key(k))) << Key(k);
      }
    }
    EXPECT_GT(absent, 0);
  }

  test::TempDir dir_;
  std::unique_ptr<DB> db_;
  std::map<std::string, std::string> model_;
};

TEST_F(RibbonFilterDbTest, MixedFilterKindsAgreeWithModel) {
  constexpr int kPerPhase = 3000;
  Open([](Options*) {});  // default: blocked Bloom
  WritePhase(1, 0, kPerPhase);
  CheckModel(kPerPhase);

  Open([](Options* o) { o->filter_policy = NewRibbonFilterPolicy(10); });
  CheckModel(kPerPhase);
  WritePhase(2, kPerPhase, kPerPhase);
  CheckModel(2 * kPerPhase);

  Open([](Options* o) { o->filter_bits_per_key = 0; });
  CheckModel(2 * kPerPhase);
  WritePhase(3, 2 * kPerPhase, kPerPhase);
  CheckModel(3 * kPerPhase);

  Open([](Options* o) { o->filter_policy = NewClassicBloomFilterPolicy(7); });
  CheckModel(3 * kPerPhase);
  WritePhase(4, 3 * kPerPhase, kPerPhase);
  CheckModel(4 * kPerPhase);

  // Rewrite everything under Ribbon at another bits/key, then reopen with
  // the default: every table is read through FilterPolicyFromName.
  Open([](Options* o) { o->filter_policy = NewRibbonFilterPolicy(15); });
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  CheckModel(4 * kPerPhase);
  Open([](Options*) {});
  CheckModel(4 * kPerPhase);
}

// Tables written under Ribbon turn most absent keys away.
TEST_F(RibbonFilterDbTest, RibbonTablesRejectAbsentKeys) {
  Open([](Options* o) {
    o->filter_policy = NewRibbonFilterPolicy(10);
    o->write_buffer_size = 4 << 20;
    o->max_file_size = 4 << 20;
  });
  WritePhase(1, 0, 8000);
  int maybe = 0;
  for (int k = 1; k < 8000; k += 2) {
    maybe += db_->KeyMayExist(ReadOptions(), Key(k));
  }
  EXPECT_LT(maybe, 4000 / 20);  // ~1% expected; tables answered
}

}  // namespace ribbon_filter_db_test
}  // namespace siftdb
