// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The generic iterators: merging (against a sorted model, both directions,
// random direction switches, keys repeated across children), two-level
// (empty blocks, errors), and their fail-stop error handling.

#include <algorithm>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "gtest/gtest.h"
#include "table/iterator_wrapper.h"
#include "table/merging_iterator.h"
#include "table/two_level_iterator.h"
#include "tests/table/table_test_util.h"

namespace siftdb {
namespace iterator_test {

using test::KVList;
using test::TestRandom;
using test::VectorIterator;

// (key, child index, value), in merge order.
using ModelEntry = std::tuple<std::string, size_t, std::string>;

struct MergeCase {
  std::vector<KVList> children;
  std::vector<ModelEntry> model;
};

MergeCase MakeCase(TestRandom* rnd, size_t num_children, size_t universe,
                   bool allow_duplicates) {
  MergeCase c;
  c.children.resize(num_children);
  for (size_t k = 0; k < universe; k++) {
    char key[16];
    std::snprintf(key, sizeof(key), "k%05zu", k * 3);
    if (allow_duplicates) {
      for (size_t child = 0; child < num_children; child++) {
        if (rnd->OneIn(3)) {
          const std::string value =
              std::string(key) + "@" + std::to_string(child);
          c.children[child].emplace_back(key, value);
          c.model.emplace_back(key, child, value);
        }
      }
    } else if (!rnd->OneIn(4)) {
      const size_t child = rnd->Uniform(num_children);
      const std::string value = std::string(key) + "@" + std::to_string(child);
      c.children[child].emplace_back(key, value);
      c.model.emplace_back(key, child, value);
    }
  }
  std::sort(c.model.begin(), c.model.end());
  return c;
}

std::unique_ptr<Iterator> MergeOf(const MergeCase& c) {
  std::vector<std::unique_ptr<Iterator>> children;
  for (const KVList& list : c.children) {
    children.push_back(
        std::make_unique<VectorIterator>(BytewiseComparator(), list));
  }
  return NewMergingIterator(BytewiseComparator(), std::move(children));
}

void RunRandomOps(const MergeCase& c, TestRandom* rnd, int ops) {
  auto it = MergeOf(c);
  const auto& model = c.model;
  size_t pos = model.size();  // model.size(): not valid
  for (int op = 0; op < ops; op++) {
    const uint64_t choice = rnd->Uniform(10);
    if (choice == 0) {
      it->SeekToFirst();
      pos = 0;
    } else if (choice == 1) {
      it->SeekToLast();
      pos = model.empty() ? 0 : model.size() - 1;
    } else if (choice == 2) {
      char target[16];
      std::snprintf(target, sizeof(target), "k%05d",
                    static_cast<int>(rnd->Uniform(c.model.size() * 3 + 10)));
      it->Seek(target);
      pos = std::lower_bound(model.begin(), model.end(), target,
                             [](const ModelEntry& e, const std::string& t) {
                               return std::get<0>(e) < t;
                             }) -
            model.begin();
    } else if (pos < model.size()) {
      if (choice < 6) {
        it->Next();
        pos++;
      } else {
        it->Prev();
        pos = pos == 0 ? model.size() : pos - 1;
      }
    } else {
      continue;
    }
    if (pos >= model.size()) pos = model.size();
    ASSERT_EQ(it->Valid(), pos < model.size()) << "op " << op;
    if (pos < model.size()) {
      ASSERT_EQ(it->key(), std::get<0>(model[pos])) << "op " << op;
      ASSERT_EQ(it->value(), std::get<2>(model[pos])) << "op " << op;
    }
    ASSERT_TRUE(it->status().ok());
  }
}

TEST(MergingIteratorTest, MatchesModelWithRandomDirectionSwitches) {
  TestRandom rnd(42);
  for (size_t children : {0, 1, 2, 3, 5, 8, 16}) {
    for (size_t universe : {0, 1, 5, 50, 300}) {
      SCOPED_TRACE(testing::Message()
                   << children << " children, universe " << universe);
      if (children == 0) {
        std::vector<std::unique_ptr<Iterator>> none;
        auto it = NewMergingIterator(BytewiseComparator(), std::move(none));
        it->SeekToFirst();
        EXPECT_FALSE(it->Valid());
        continue;
      }
      MergeCase c = MakeCase(&rnd, children, universe, false);
      RunRandomOps(c, &rnd, 2000);
    }
  }
}

TEST(MergingIteratorTest, KeysRepeatedAcrossChildren) {
  TestRandom rnd(7);
  for (size_t children : {2, 3, 6}) {
    for (size_t universe : {1, 10, 200}) {
      SCOPED_TRACE(testing::Message()
                   << children << " children, universe " << universe);
      MergeCase c = MakeCase(&rnd, children, universe, true);
      RunRandomOps(c, &rnd, 3000);
    }
  }
}

TEST(MergingIteratorTest, FullScansBothWays) {
  TestRandom rnd(3);
  MergeCase c = MakeCase(&rnd, 4, 500, false);
  auto it = MergeOf(c);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
    ASSERT_EQ(it->key(), std::get<0>(c.model[i]));
  }
  EXPECT_EQ(i, c.model.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_EQ(it->key(), std::get<0>(c.model[--i]));
  }
  EXPECT_EQ(i, 0u);
}

TEST(MergingIteratorTest, ChildErrorStopsTheMerge) {
  std::vector<std::unique_ptr<Iterator>> children;
  children.push_back(std::make_unique<VectorIterator>(
      BytewiseComparator(), KVList{{"a", "1"}, {"c", "3"}}));
  children.push_back(NewErrorIterator(absl::DataLossError("x.sst: broken")));
  auto it = NewMergingIterator(BytewiseComparator(), std::move(children));
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->status().code(), absl::StatusCode::kDataLoss);
  it->Seek("b");  // sticky
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->status().code(), absl::StatusCode::kDataLoss);
}

// --- Two-level ---

// An index whose values are block numbers; blocks[i] holds entries.
struct TwoLevelCase {
  KVList index;
  std::vector<KVList> blocks;
  KVList all;
};

TwoLevelCase MakeTwoLevel(TestRandom* rnd, size_t num_blocks) {
  TwoLevelCase c;
  int k = 0;
  for (size_t b = 0; b < num_blocks; b++) {
    KVList block;
    const size_t n = rnd->OneIn(3) ? 0 : rnd->Uniform(6);  // some empty
    for (size_t i = 0; i < n; i++) {
      char key[16];
      std::snprintf(key, sizeof(key), "k%04d", k);
      k += 2;
      block.emplace_back(key, "v" + std::string(key));
      c.all.push_back(block.back());
    }
    // Separator: >= every key so far, < every later key.
    char suffix[8];
    std::snprintf(suffix, sizeof(suffix), "\x01%03zu", b);
    c.index.emplace_back((c.all.empty() ? "" : c.all.back().first) + suffix,
                         std::to_string(b));
    c.blocks.push_back(block);
  }
  return c;
}

std::unique_ptr<Iterator> TwoLevelOf(const TwoLevelCase& c,
                                     int failing_block = -1) {
  return NewTwoLevelIterator(
      std::make_unique<VectorIterator>(BytewiseComparator(), c.index),
      [&c, failing_block](std::string_view v) -> std::unique_ptr<Iterator> {
        const int b = std::stoi(std::string(v));
        if (b == failing_block) {
          return NewErrorIterator(absl::DataLossError("bad block"));
        }
        return std::make_unique<VectorIterator>(BytewiseComparator(),
                                                c.blocks[b]);
      });
}

TEST(TwoLevelIteratorTest, SkipsEmptyBlocksBothWays) {
  TestRandom rnd(11);
  for (size_t num_blocks : {0, 1, 2, 10, 60}) {
    TwoLevelCase c = MakeTwoLevel(&rnd, num_blocks);
    auto it = TwoLevelOf(c);
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
      ASSERT_EQ(it->key(), c.all[i].first);
      ASSERT_EQ(it->value(), c.all[i].second);
    }
    ASSERT_EQ(i, c.all.size());
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      ASSERT_EQ(it->key(), c.all[--i].first);
    }
    ASSERT_EQ(i, 0u);
    // Seeks to every key and between keys.
    for (size_t j = 0; j < c.all.size(); j++) {
      it->Seek(c.all[j].first);
      ASSERT_TRUE(it->Valid());
      ASSERT_EQ(it->key(), c.all[j].first);
      it->Seek(c.all[j].first + "!");
      if (j + 1 < c.all.size()) {
        ASSERT_TRUE(it->Valid());
        ASSERT_EQ(it->key(), c.all[j + 1].first);
        it->Prev();
        ASSERT_TRUE(it->Valid());
        ASSERT_EQ(it->key(), c.all[j].first);
      } else {
        ASSERT_FALSE(it->Valid());
      }
    }
    EXPECT_TRUE(it->status().ok());
  }
}

TEST(TwoLevelIteratorTest, BlockErrorIsFailStop) {
  TwoLevelCase c;
  c.blocks = {{{"a", "1"}, {"b", "2"}}, {{"c", "3"}}, {{"d", "4"}}};
  c.index = {{"b", "0"}, {"c", "1"}, {"d", "2"}};
  auto it = TwoLevelOf(c, /*failing_block=*/1);
  it->SeekToFirst();
  ASSERT_TRUE(it->Valid());
  it->Next();
  ASSERT_TRUE(it->Valid());
  it->Next();  // into the failing block: stops, never skips to "d"
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->status().code(), absl::StatusCode::kDataLoss);
  it->Seek("d");  // sticky
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->status().code(), absl::StatusCode::kDataLoss);
}

// Opens c's blocks; counts itself alive, and each block it opens checks at
// its destruction that the opener is still there.
class CountingOpener final : public BlockOpener {
 public:
  CountingOpener(const TwoLevelCase* c, int* alive, int* blocks_outlived)
      : c_(c), alive_(alive), blocks_outlived_(blocks_outlived) {
    ++*alive_;
  }
  ~CountingOpener() override { --*alive_; }
  std::unique_ptr<Iterator> Open(std::string_view v) override {
    auto block = std::make_unique<VectorIterator>(
        BytewiseComparator(), c_->blocks[std::stoi(std::string(v))]);
    block->RegisterCleanup([alive = alive_, outlived = blocks_outlived_] {
      if (*alive == 0) ++*outlived;
    });
    return block;
  }

 private:
  const TwoLevelCase* const c_;
  int* const alive_;
  int* const blocks_outlived_;
};

// The opener built in the iterator's own allocation: the same entries as
// a separately owned one, destroyed with the iterator, after its blocks.
TEST(TwoLevelIteratorTest, InPlaceOpenerLivesAsLongAsItsBlocks) {
  TestRandom rnd(12);
  for (size_t num_blocks : {0, 1, 7, 40}) {
    TwoLevelCase c = MakeTwoLevel(&rnd, num_blocks);
    int alive = 0;
    int blocks_outlived = 0;
    {
      auto it = NewBoundedTwoLevelIteratorInPlace<CountingOpener>(
          std::make_unique<VectorIterator>(BytewiseComparator(), c.index),
          TwoLevelBounds(), &c, &alive, &blocks_outlived);
      EXPECT_EQ(alive, 1);
      size_t i = 0;
      for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
        ASSERT_EQ(it->key(), c.all[i].first);
      }
      ASSERT_EQ(i, c.all.size());
      ASSERT_TRUE(it->status().ok());
      it->SeekToLast();  // leaves a block open for the destructor
    }
    EXPECT_EQ(alive, 0) << num_blocks;
    EXPECT_EQ(blocks_outlived, 0) << num_blocks;
  }
}

// An opener the global operator new cannot align is refused with an
// error, not built misaligned.
struct alignas(64) OverAlignedOpener final : public BlockOpener {
  std::unique_ptr<Iterator> Open(std::string_view) override {
    return NewEmptyIterator();
  }
};

TEST(TwoLevelIteratorTest, InPlaceOpenerNeedingOverAlignmentIsAnError) {
  auto it = NewBoundedTwoLevelIteratorInPlace<OverAlignedOpener>(
      NewEmptyIterator(), TwoLevelBounds());
  it->SeekToFirst();
  EXPECT_FALSE(it->Valid());
  EXPECT_EQ(it->status().code(), absl::StatusCode::kInternal);
  EXPECT_NE(it->status().message().find("over-aligned"), std::string::npos);
}

TEST(IteratorWrapperTest, CachesKeyAndValidity) {
  IteratorWrapper w(std::make_unique<VectorIterator>(
      BytewiseComparator(), KVList{{"a", "1"}, {"b", "2"}}));
  EXPECT_FALSE(w.Valid());
  w.SeekToFirst();
  ASSERT_TRUE(w.Valid());
  EXPECT_EQ(w.key(), "a");
  w.Next();
  EXPECT_EQ(w.key(), "b");
  EXPECT_EQ(w.value(), "2");
  w.Next();
  EXPECT_FALSE(w.Valid());
  w.Set(nullptr);
  EXPECT_FALSE(w.Valid());
}

}  // namespace iterator_test
}  // namespace siftdb
