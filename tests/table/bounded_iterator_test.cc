// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A table iterator with ReadOptions' iterate bounds leaves out data blocks
// that lie wholly outside them. A merge stays exact only if every
// operation of such an iterator sees the same set of entries, so for random
// bounds this checks that: the forward scan (the kept set) holds every
// entry inside the bounds and is an ordered subset of the table; the
// backward scan is its reverse; Seek to any target (inside, below or
// beyond the bounds) lands on the kept set's first entry at or after it,
// and walks from there agree with the kept set in both directions.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "table/internal_key.h"
#include "table/table.h"
#include "tests/table/table_test_util.h"
#include "util/statistics.h"

namespace siftdb {
namespace bounded_iterator_test {

using test::IKey;
using test::KVList;
using test::TestRandom;

class BoundedTableIteratorTest : public ::testing::TestWithParam<int> {
 protected:
  void SetUp() override {
    TestRandom rnd(GetParam() + 1);
    options_.block_size = 64 + rnd.Uniform(200);
    options_.compression = kNoCompression;
    options_.statistics = &stats_;
    // Sparse user keys (so separators are shortened into the gaps), some
    // with several versions, some deleted.
    int k = 0;
    SequenceNumber seq = 1;
    for (int i = 0; i < 400; i++) {
      k += 1 + rnd.Uniform(4);
      const std::string user = absl::StrFormat("k%05d", k);
      const int versions = rnd.OneIn(5) ? 2 + rnd.Uniform(3) : 1;
      std::vector<SequenceNumber> seqs;
      for (int v = 0; v < versions; v++) seqs.push_back(seq++);
      std::sort(seqs.rbegin(), seqs.rend());  // newest first
      for (SequenceNumber s : seqs) {
        const ValueType type = rnd.OneIn(6) ? kTypeDeletion : kTypeValue;
        entries_.emplace_back(IKey(user, s, type),
                              std::string(rnd.Uniform(40), 'v'));
      }
      users_.push_back(user);
    }
    auto contents = test::BuildTable(options_, entries_);
    ASSERT_TRUE(contents.ok()) << contents.status();
    auto table = test::OpenTable(options_, *contents);
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = std::move(*table);
  }

  std::string RandomUserKey(TestRandom* rnd) {
    switch (rnd->Uniform(5)) {
      case 0:
        return "";
      case 1:
        return users_[rnd->Uniform(users_.size())] + "0";
      case 2:
        return absl::StrFormat("k%d", rnd->Uniform(20));  // a prefix
      default:
        return users_[rnd->Uniform(users_.size())];
    }
  }

  TableOptions options_;
  Statistics stats_;
  KVList entries_;
  std::vector<std::string> users_;
  std::unique_ptr<Table> table_;
  const InternalKeyComparator icmp_{BytewiseComparator()};
};

TEST_P(BoundedTableIteratorTest, EveryOperationSeesTheSameKeptSet) {
  TestRandom rnd(GetParam() * 31 + 7);
  size_t total_kept = 0, total_in_bounds = 0;
  for (int round = 0; round < 200; round++) {
    std::optional<std::string> lower, upper;
    if (!rnd.OneIn(3)) lower = RandomUserKey(&rnd);
    if (!rnd.OneIn(3)) upper = RandomUserKey(&rnd);
    if (lower && upper && *lower > *upper && !rnd.OneIn(5)) {
      std::swap(lower, upper);
    }
    SCOPED_TRACE(absl::StrFormat("lower=%s upper=%s", lower.value_or("none"),
                                 upper.value_or("none")));
    ReadOptions ro;
    if (lower) ro.iterate_lower_bound = *lower;
    if (upper) ro.iterate_upper_bound = *upper;
    const bool empty = lower && upper && *lower >= *upper;
    auto in_bounds = [&](std::string_view ikey) {
      const std::string_view u = ExtractUserKey(ikey);
      return !empty && !(lower && u < *lower) && !(upper && u >= *upper);
    };

    auto it = table_->NewIterator(ro);
    KVList kept;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      kept.emplace_back(it->key(), it->value());
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
    // An ordered subset of the table holding every entry in bounds.
    size_t j = 0;
    for (const auto& e : entries_) {
      if (j < kept.size() && kept[j] == e) {
        j++;
      } else {
        ASSERT_FALSE(in_bounds(e.first))
            << "dropped " << InternalKeyDebugString(e.first, false);
      }
      if (in_bounds(e.first)) total_in_bounds++;
    }
    ASSERT_EQ(j, kept.size()) << "not an ordered subset of the table";
    total_kept += kept.size();

    // Backward: the reverse.
    KVList back;
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      back.emplace_back(it->key(), it->value());
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
    std::reverse(back.begin(), back.end());
    ASSERT_EQ(kept, back);

    // Seeks anywhere, then walks.
    for (int s = 0; s < 10; s++) {
      const std::string target =
          IKey(RandomUserKey(&rnd), rnd.Uniform(3000), kValueTypeForSeek);
      it->Seek(target);
      size_t pos = std::lower_bound(kept.begin(), kept.end(), target,
                                    [&](const auto& e, const std::string& t) {
                                      return icmp_.Compare(e.first, t) < 0;
                                    }) -
                   kept.begin();
      for (int step = 0; step < 8; step++) {
        ASSERT_TRUE(it->status().ok()) << it->status();
        if (pos >= kept.size()) {
          ASSERT_FALSE(it->Valid()) << "step " << step << ": extra "
                                    << InternalKeyDebugString(it->key(), false);
          break;
        }
        ASSERT_TRUE(it->Valid()) << "step " << step;
        ASSERT_EQ(kept[pos].first, it->key()) << "step " << step;
        if (rnd.OneIn(2)) {
          it->Next();
          pos++;
        } else {
          it->Prev();
          pos = pos == 0 ? kept.size() : pos - 1;
        }
      }
    }
  }
  // The bounds did leave blocks out (the kept sets are smaller than the
  // table), and the counter saw it.
  EXPECT_LT(total_kept, 200 * entries_.size());
  EXPECT_GE(total_kept, total_in_bounds);
  EXPECT_GT(stats_.Get(Ticker::kBoundsSkippedBlocks), 0u);
}

INSTANTIATE_TEST_SUITE_P(Seeds, BoundedTableIteratorTest,
                         ::testing::Range(0, 8));

}  // namespace bounded_iterator_test
}  // namespace siftdb
