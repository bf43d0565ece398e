// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A database whose tables carry blocked Bloom, Ribbon, partitioned (Bloom
// and Ribbon partitions) and no filters, reopened with partitioning and the
// filter cache switched on and off, writing, overwriting and deleting in
// every phase. After every phase Get and MultiGet of every present and
// absent key must agree with a std::map model, and KeyMayExist must never
// say no for a present key.

#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/partitioned_filter.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/filter_policy.h"
#include "tests/db/live_tables.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace partitioned_filter_db_test {

std::string Key(int k) { return absl::StrFormat("key%07d", k); }

class PartitionedFilterDbTest : public testing::Test {
 protected:
  void Open(const std::function<void(Options*)>& configure) {
    db_.reset();
    Options o;
    o.create_if_missing = true;
    o.write_buffer_size = 64 << 10;
    o.max_file_size = 32 << 10;
    o.filter_partition_size = 128;
    configure(&o);
    auto db = DB::Open(o, dir_.path());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = *std::move(db);
  }

  // Even keys of [first, first + count), some overwrites and deletes, then
  // a flush.
  void WritePhase(int phase, int first, int count) {
    for (int k = first; k < first + count; k += 2) {
      const std::string v = absl::StrFormat("p%d-%d", phase, k);
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), v).ok());
      model_[Key(k)] = v;
    }
    for (int k = 0; k < first; k += 14) {
      const std::string v = absl::StrFormat("p%d-over-%d", phase, k);
      ASSERT_TRUE(db_->Put(WriteOptions(), Key(k), v).ok());
      model_[Key(k)] = v;
    }
    for (int k = phase * 4; k < first + count; k += 22) {
      ASSERT_TRUE(db_->Delete(WriteOptions(), Key(k)).ok());
      model_.erase(Key(k));
    }
    ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  }

  void CheckModel(int limit) {
    std::vector<std::string> keys;
    for (int k = 0; k < limit; ++k) keys.push_back(Key(k));
    int absent = 0;
    for (const std::string& key : keys) {
      std::string value;
      const absl::Status s = db_->Get(ReadOptions(), key, &value);
      auto it = model_.find(key);
      if (it == model_.end()) {
        ASSERT_TRUE(absl::IsNotFound(s)) << key << ": " << s;
        absent++;
      } else {
        ASSERT_TRUE(s.ok()) << key << ": " << s;
        ASSERT_EQ(value, it->second) << key;
        ASSERT_TRUE(db_->KeyMayExist(ReadOptions(), key)) << key;
      }
    }
    EXPECT_GT(absent, 0);
    // MultiGet in batches of 97 sorted keys.
    for (size_t start = 0; start < keys.size(); start += 97) {
      const size_t end = std::min(keys.size(), start + 97);
      std::vector<std::string_view> batch(keys.begin() + start,
                                          keys.begin() + end);
      std::vector<std::string> values;
      const std::vector<absl::Status> st =
          db_->MultiGet(ReadOptions(), batch, &values);
      ASSERT_EQ(st.size(), batch.size());
      for (size_t i = 0; i < batch.size(); i++) {
        auto it = model_.find(std::string(batch[i]));
        if (it == model_.end()) {
          ASSERT_TRUE(absl::IsNotFound(st[i])) << batch[i] << ": " << st[i];
        } else {
          ASSERT_TRUE(st[i].ok()) << batch[i] << ": " << st[i];
          ASSERT_EQ(values[i], it->second) << batch[i];
        }
      }
    }
  }

  // Filter kinds among the live tables: 'P', 'O' (ordinary) or '-' (none).
  std::set<char> FilterKinds() {
    std::set<char> kinds;
    for (const OpenedLiveTable& t : OpenLiveTables(db_.get(), dir_.path())) {
      std::string bytes;
      EXPECT_TRUE(t.table->CopyFilter(&bytes).ok());
      kinds.insert(bytes.empty()                ? '-'
                   : IsPartitionedFilter(bytes) ? 'P'
                                                : 'O');
    }
    return kinds;
  }

  test::TempDir dir_;
  std::unique_ptr<DB> db_;
  std::map<std::string, std::string> model_;
};

TEST_F(PartitionedFilterDbTest, MixedFilterKindsAgreeWithModel) {
  constexpr int kPerPhase = 3000;
  Open([](Options*) {});  // blocked Bloom, unpartitioned
  WritePhase(1, 0, kPerPhase);
  CheckModel(kPerPhase);
  EXPECT_EQ(FilterKinds(), std::set<char>({'O'}));

  Open([](Options* o) { o->partition_filters = true; });
  CheckModel(kPerPhase);
  WritePhase(2, kPerPhase, kPerPhase);
  CheckModel(2 * kPerPhase);
  EXPECT_TRUE(FilterKinds().count('P'));

  // Ribbon partitions, filters in a small block cache.
  Open([](Options* o) {
    o->filter_policy = NewRibbonFilterPolicy(10);
    o->partition_filters = true;
    o->cache_filter_blocks = true;
    o->block_cache_size = 16 << 10;
  });
  CheckModel(2 * kPerPhase);
  WritePhase(3, 2 * kPerPhase, kPerPhase);
  CheckModel(3 * kPerPhase);
  EXPECT_TRUE(FilterKinds().count('P'));

  Open([](Options* o) { o->filter_bits_per_key = 0; });
  CheckModel(3 * kPerPhase);
  WritePhase(4, 3 * kPerPhase, kPerPhase);
  CheckModel(4 * kPerPhase);

  Open([](Options* o) { o->filter_policy = NewRibbonFilterPolicy(10); });
  CheckModel(4 * kPerPhase);
  WritePhase(5, 4 * kPerPhase, kPerPhase);
  CheckModel(5 * kPerPhase);

  // Reopened with the other settings: every kind read each way.
  Open([](Options* o) {
    o->cache_filter_blocks = true;
    o->block_cache_size = 8 << 10;
  });
  CheckModel(5 * kPerPhase);
  Open([](Options* o) { o->partition_filters = true; });
  CheckModel(5 * kPerPhase);

  // Overwritten and compacted partitioned, then read with the filter
  // cache.
  Open([](Options* o) { o->partition_filters = true; });
  WritePhase(6, 0, 5 * kPerPhase);
  ASSERT_TRUE(db_->CompactRange(nullptr, nullptr).ok());
  CheckModel(5 * kPerPhase);
  EXPECT_TRUE(FilterKinds().count('P'));
  Open([](Options* o) {
    o->cache_filter_blocks = true;
    o->block_cache_size = 8 << 10;
  });
  CheckModel(5 * kPerPhase);
}

// Partitioned tables turn most absent keys away, from the heap or the
// cache.
TEST_F(PartitionedFilterDbTest, PartitionedTablesRejectAbsentKeys) {
  for (bool cached : {false, true}) {
    Open([&](Options* o) {
      o->partition_filters = true;
      o->cache_filter_blocks = cached;
      o->write_buffer_size = 4 << 20;
      o->max_file_size = 4 << 20;
    });
    if (!cached) WritePhase(1, 0, 8000);
    EXPECT_EQ(FilterKinds(), std::set<char>({'P'}));
    int maybe = 0;
    for (int k = 1; k < 8000; k += 2) {
      maybe += db_->KeyMayExist(ReadOptions(), Key(k));
    }
    EXPECT_LT(maybe, 4000 / 20) << cached;  // ~1% expected
  }
}

}  // namespace partitioned_filter_db_test
}  // namespace siftdb
