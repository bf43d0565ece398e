// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// NewProbingMergingIterator (table/merging_iterator.h), the work it saves
// and its errors: a seek of an existing key positions no child whose probe
// said no until the merge moves on (counted per child); a deferred child's
// error still surfaces, on Next, Prev or a re-seek; a child failed from the
// start fails the merge even when its probe says no; a probe count that
// does not match the children is an error; null children drop their
// probes; zero or one child. Agreement with NewMergingIterator over random
// operations is tested in probing_merge_test.cc.

#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/iterator.h"
#include "table/internal_key.h"
#include "table/merging_iterator.h"
#include "tests/table/probing_merge_test_util.h"
#include "tests/table/table_test_util.h"

namespace siftdb {
namespace probing_merge_work_test {

using test::Icmp;
using test::IKey;
using test::KVList;
using test::SeekKey;
using test::VectorIterator;

// Counts the calls that position the wrapped iterator.
struct CallCounts {
  int seeks = 0;
  int others = 0;  // SeekToFirst, SeekToLast, Next, Prev
};

class CountingIterator final : public Iterator {
 public:
  CountingIterator(std::unique_ptr<Iterator> base, CallCounts* counts)
      : base_(std::move(base)), counts_(counts) {}
  bool Valid() const override { return base_->Valid(); }
  void SeekToFirst() override {
    counts_->others++;
    base_->SeekToFirst();
  }
  void SeekToLast() override {
    counts_->others++;
    base_->SeekToLast();
  }
  void Seek(std::string_view target) override {
    counts_->seeks++;
    base_->Seek(target);
  }
  void Next() override {
    counts_->others++;
    base_->Next();
  }
  void Prev() override {
    counts_->others++;
    base_->Prev();
  }
  std::string_view key() const override { return base_->key(); }
  std::string_view value() const override { return base_->value(); }
  absl::Status status() const override { return base_->status(); }

 private:
  std::unique_ptr<Iterator> base_;
  CallCounts* const counts_;
};

// A VectorIterator whose first Seek fails: from then on it is invalid and
// its status is an error (sticky). Other positioning works until then.
class FailOnSeekIterator final : public Iterator {
 public:
  explicit FailOnSeekIterator(KVList entries)
      : base_(Icmp(), std::move(entries)) {}
  bool Valid() const override { return failed_.ok() && base_.Valid(); }
  void SeekToFirst() override {
    if (failed_.ok()) base_.SeekToFirst();
  }
  void SeekToLast() override {
    if (failed_.ok()) base_.SeekToLast();
  }
  void Seek(std::string_view) override {
    failed_ = absl::DataLossError("injected seek failure in child");
  }
  void Next() override { base_.Next(); }
  void Prev() override { base_.Prev(); }
  std::string_view key() const override { return base_.key(); }
  std::string_view value() const override { return base_.value(); }
  absl::Status status() const override { return failed_; }

 private:
  VectorIterator base_;
  absl::Status failed_;
};

// ---------------------------------------------------------------------------
// Work: which children a Seek positions.

struct CountedMerge {
  std::unique_ptr<Iterator> iter;
  std::vector<CallCounts> counts;
  std::vector<int> probe_calls;
  std::vector<std::string> probe_targets;  // every target a probe saw
};

// Children (entries) with exact probes, except those listed in
// always_yes (a false "maybe" for every target).
std::unique_ptr<CountedMerge> MakeCountedMerge(
    const std::vector<KVList>& children, std::set<size_t> always_yes = {}) {
  auto m = std::make_unique<CountedMerge>();
  m->counts.resize(children.size());
  m->probe_calls.assign(children.size(), 0);
  std::vector<std::unique_ptr<Iterator>> iters;
  std::vector<ChildProbe> probes;
  for (size_t i = 0; i < children.size(); i++) {
    iters.push_back(std::make_unique<CountingIterator>(
        std::make_unique<VectorIterator>(Icmp(), children[i]), &m->counts[i]));
    std::set<std::string> keys;
    for (const auto& [k, v] : children[i]) {
      keys.insert(std::string(ExtractUserKey(k)));
    }
    const bool yes = always_yes.count(i) > 0;
    CountedMerge* raw = m.get();
    probes.push_back([keys, yes, raw, i](std::string_view target) {
      raw->probe_calls[i]++;
      raw->probe_targets.emplace_back(target);
      return yes || keys.count(std::string(ExtractUserKey(target))) > 0;
    });
  }
  m->iter =
      NewProbingMergingIterator(Icmp(), std::move(iters), std::move(probes));
  return m;
}

std::vector<KVList> CountingChildren() {
  return {
      // 0 holds k050 (newest).
      {{IKey("a", 5), "a5"},
       {IKey("k050", 10), "k050@10"},
       {IKey("z", 3), "z3"}},
      // 1 and 2 do not hold k050.
      {{IKey("b", 6), "b6"}, {IKey("k060", 7), "k060@7"}},
      {{IKey("k040", 2), "k040@2"}, {IKey("k070", 1), "k070@1"}},
      // 3 holds an older k050 (a deletion).
      {{IKey("k050", 4, kTypeDeletion), ""}, {IKey("k080", 8), "k080@8"}},
      // 4 does not hold k050, but its probe always says maybe.
      {{IKey("k055", 9), "k055@9"}},
  };
}

std::vector<int> Seeks(const CountedMerge& m) {
  std::vector<int> seeks;
  for (const CallCounts& c : m.counts) seeks.push_back(c.seeks);
  return seeks;
}

std::vector<std::string> ScanUserKeys(Iterator* it) {
  std::vector<std::string> keys;
  for (; it->Valid(); it->Next()) {
    keys.emplace_back(ExtractUserKey(it->key()));
  }
  return keys;
}

TEST(ProbingMergeTest, SeekOfExistingKeyDefersChildrenThatProbedNo) {
  auto m = MakeCountedMerge(CountingChildren(), {4});
  const std::string target = SeekKey("k050", kMaxSequenceNumber);
  m->iter->Seek(target);
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k050", 10));
  EXPECT_EQ(m->iter->value(), "k050@10");
  EXPECT_TRUE(m->iter->status().ok());
  // Children 1 and 2 (probe: no) untouched; 0, 3 and 4 (maybe) positioned.
  EXPECT_EQ(Seeks(*m), (std::vector<int>{1, 0, 0, 1, 1}));
  for (const CallCounts& c : m->counts) EXPECT_EQ(c.others, 0);
  // Every probe ran once, on the target itself.
  EXPECT_EQ(m->probe_calls, (std::vector<int>{1, 1, 1, 1, 1}));
  for (const std::string& t : m->probe_targets) EXPECT_EQ(t, target);

  // Moving on positions the deferred children at the target.
  m->iter->Next();
  EXPECT_EQ(Seeks(*m), (std::vector<int>{1, 1, 1, 1, 1}));
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k050", 4, kTypeDeletion));
  EXPECT_EQ(
      ScanUserKeys(m->iter.get()),
      (std::vector<std::string>{"k050", "k055", "k060", "k070", "k080", "z"}));
  // Neither Next nor SeekToFirst runs probes.
  m->iter->SeekToFirst();
  EXPECT_EQ(m->probe_calls, (std::vector<int>{1, 1, 1, 1, 1}));
  EXPECT_EQ(ScanUserKeys(m->iter.get()),
            (std::vector<std::string>{"a", "b", "k040", "k050", "k050", "k055",
                                      "k060", "k070", "k080", "z"}));
}

TEST(ProbingMergeTest, SeekOfOlderVersionStillDefers) {
  auto m = MakeCountedMerge(CountingChildren());
  // At sequence 9 the first entry is child 3's k050@4.
  m->iter->Seek(SeekKey("k050", 9));
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k050", 4, kTypeDeletion));
  EXPECT_EQ(Seeks(*m), (std::vector<int>{1, 0, 0, 1, 0}));
  m->iter->Next();
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k055", 9));
  EXPECT_EQ(Seeks(*m), (std::vector<int>{1, 1, 1, 1, 1}));
}

TEST(ProbingMergeTest, SeekPastEveryVersionPositionsAll) {
  auto m = MakeCountedMerge(CountingChildren());
  // Below both k050 versions: the merge starts at another user key, so
  // every child is positioned before Seek returns.
  m->iter->Seek(SeekKey("k050", 3));
  EXPECT_EQ(Seeks(*m), (std::vector<int>{1, 1, 1, 1, 1}));
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k055", 9));
}

TEST(ProbingMergeTest, SeekOfAbsentKeyPositionsAll) {
  auto m = MakeCountedMerge(CountingChildren());
  m->iter->Seek(SeekKey("k045", kMaxSequenceNumber));
  EXPECT_EQ(Seeks(*m), (std::vector<int>{1, 1, 1, 1, 1}));
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k050", 10));
  // Past the end: every child positioned, the merge is invalid.
  auto end = MakeCountedMerge(CountingChildren());
  end->iter->Seek(SeekKey("zz", kMaxSequenceNumber));
  EXPECT_EQ(Seeks(*end), (std::vector<int>{1, 1, 1, 1, 1}));
  EXPECT_FALSE(end->iter->Valid());
  EXPECT_TRUE(end->iter->status().ok());
}

TEST(ProbingMergeTest, PrevRightAfterDeferringSeek) {
  auto m = MakeCountedMerge(CountingChildren());
  m->iter->Seek(SeekKey("k050", kMaxSequenceNumber));
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(Seeks(*m), (std::vector<int>{1, 0, 0, 1, 0}));
  m->iter->Prev();
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k040", 2));
  m->iter->Prev();
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("b", 6));
  m->iter->Next();
  m->iter->Next();
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k050", 10));
  m->iter->Next();
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k050", 4, kTypeDeletion));
}

TEST(ProbingMergeTest, ReseekWhileDeferred) {
  auto m = MakeCountedMerge(CountingChildren());
  m->iter->Seek(SeekKey("k050", kMaxSequenceNumber));
  // A second seek before moving: the first one's deferral is dropped.
  m->iter->Seek(SeekKey("k060", kMaxSequenceNumber));
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("k060", 7));
  EXPECT_EQ(ScanUserKeys(m->iter.get()),
            (std::vector<std::string>{"k060", "k070", "k080", "z"}));
  m->iter->Seek(SeekKey("k050", kMaxSequenceNumber));
  m->iter->SeekToLast();
  ASSERT_TRUE(m->iter->Valid());
  EXPECT_EQ(m->iter->key(), IKey("z", 3));
}

// ---------------------------------------------------------------------------
// Errors.

// Child 0 holds k050; child 1 fails on its first Seek and holds no k050.
std::unique_ptr<Iterator> MergeWithFailingChild(bool probing) {
  std::vector<std::unique_ptr<Iterator>> children;
  children.push_back(std::make_unique<VectorIterator>(
      Icmp(), KVList{{IKey("k050", 10), "v"}, {IKey("k090", 11), "w"}}));
  children.push_back(
      std::make_unique<FailOnSeekIterator>(KVList{{IKey("k060", 1), "x"}}));
  if (!probing) return NewMergingIterator(Icmp(), std::move(children));
  std::vector<ChildProbe> probes;
  probes.push_back(nullptr);
  probes.push_back(
      [](std::string_view target) { return ExtractUserKey(target) == "k060"; });
  return NewProbingMergingIterator(Icmp(), std::move(children),
                                   std::move(probes));
}

void ExpectFailed(const Iterator& it) {
  EXPECT_FALSE(it.Valid());
  EXPECT_FALSE(it.status().ok());
  EXPECT_EQ(it.status().code(), absl::StatusCode::kDataLoss) << it.status();
  EXPECT_NE(it.status().message().find("injected seek failure"),
            std::string_view::npos)
      << it.status();
}

TEST(ProbingMergeTest, DeferredChildErrorSurfacesOnNext) {
  // The plain merge fails at the Seek itself.
  auto plain = MergeWithFailingChild(false);
  plain->Seek(SeekKey("k050", kMaxSequenceNumber));
  ExpectFailed(*plain);

  auto it = MergeWithFailingChild(true);
  it->Seek(SeekKey("k050", kMaxSequenceNumber));
  // The failing child was deferred: the seek itself succeeds.
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "v");
  EXPECT_TRUE(it->status().ok());
  it->Next();
  ExpectFailed(*it);
  // Sticky.
  it->SeekToFirst();
  ExpectFailed(*it);
  it->Seek(SeekKey("k090", kMaxSequenceNumber));
  ExpectFailed(*it);
}

TEST(ProbingMergeTest, DeferredChildErrorSurfacesOnPrev) {
  auto it = MergeWithFailingChild(true);
  it->Seek(SeekKey("k050", kMaxSequenceNumber));
  ASSERT_TRUE(it->Valid());
  it->Prev();
  ExpectFailed(*it);
}

TEST(ProbingMergeTest, DeferredChildErrorSurfacesOnSeekOfAbsentKey) {
  // The merge does not start at the target's user key: the deferred child
  // is positioned before Seek returns, and fails.
  auto it = MergeWithFailingChild(true);
  it->Seek(SeekKey("k051", kMaxSequenceNumber));
  ExpectFailed(*it);
}

TEST(ProbingMergeTest, ChildErrorWhenProbeSaysMaybe) {
  auto it = MergeWithFailingChild(true);
  it->Seek(SeekKey("k060", kMaxSequenceNumber));
  ExpectFailed(*it);
}

TEST(ProbingMergeTest, ErrorIteratorChildWithProbeNo) {
  // A child that is failed from the start fails the merge even when its
  // probe rules the target out.
  for (bool null_probe : {false, true}) {
    std::vector<std::unique_ptr<Iterator>> children;
    children.push_back(
        std::make_unique<VectorIterator>(Icmp(), KVList{{IKey("k", 1), "v"}}));
    children.push_back(NewErrorIterator(absl::DataLossError("bad table")));
    std::vector<ChildProbe> probes(2);
    if (!null_probe) probes[1] = [](std::string_view) { return false; };
    auto it = NewProbingMergingIterator(Icmp(), std::move(children),
                                        std::move(probes));
    it->Seek(SeekKey("k", kMaxSequenceNumber));
    EXPECT_FALSE(it->Valid());
    EXPECT_EQ(it->status().code(), absl::StatusCode::kDataLoss) << it->status();
  }
}

TEST(ProbingMergeTest, ProbeCountMismatchIsAnError) {
  for (size_t num_probes : {size_t{0}, size_t{1}, size_t{3}}) {
    SCOPED_TRACE(absl::StrFormat("%d probes", num_probes));
    std::vector<std::unique_ptr<Iterator>> children;
    children.push_back(
        std::make_unique<VectorIterator>(Icmp(), KVList{{IKey("a", 1), "1"}}));
    children.push_back(
        std::make_unique<VectorIterator>(Icmp(), KVList{{IKey("b", 2), "2"}}));
    std::vector<ChildProbe> probes(num_probes);
    auto it = NewProbingMergingIterator(Icmp(), std::move(children),
                                        std::move(probes));
    EXPECT_FALSE(it->status().ok());
    it->SeekToFirst();
    EXPECT_FALSE(it->Valid());
    EXPECT_FALSE(it->status().ok());
    EXPECT_NE(it->status().message().find("probes"), std::string_view::npos)
        << it->status();
  }
}

TEST(ProbingMergeTest, NullChildrenDropTheirProbes) {
  // Children 0 and 2 are null; their probes (which always say no) must not
  // be applied to the present children 1 and 3.
  std::vector<std::unique_ptr<Iterator>> children(4);
  children[1] = std::make_unique<VectorIterator>(
      Icmp(), KVList{{IKey("k1", 5), "a"}, {IKey("k3", 6), "b"}});
  children[3] = std::make_unique<VectorIterator>(
      Icmp(), KVList{{IKey("k2", 7), "c"}, {IKey("k3", 4), "d"}});
  std::vector<ChildProbe> probes(4);
  probes[0] = probes[2] = [](std::string_view) { return false; };
  auto it =
      NewProbingMergingIterator(Icmp(), std::move(children), std::move(probes));
  it->Seek(SeekKey("k3", kMaxSequenceNumber));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "b");
  it->Next();
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "d");
  it->Seek(SeekKey("k2", kMaxSequenceNumber));
  ASSERT_TRUE(it->Valid());
  EXPECT_EQ(it->value(), "c");
}

TEST(ProbingMergeTest, NoOrOneChild) {
  std::vector<std::unique_ptr<Iterator>> none;
  auto empty = NewProbingMergingIterator(Icmp(), std::move(none), {});
  empty->SeekToFirst();
  EXPECT_FALSE(empty->Valid());
  EXPECT_TRUE(empty->status().ok());

  // One child: its probe is not needed for correctness and the child is
  // sought even when the probe says no.
  std::vector<std::unique_ptr<Iterator>> one;
  one.push_back(
      std::make_unique<VectorIterator>(Icmp(), KVList{{IKey("k", 1), "v"}}));
  std::vector<ChildProbe> probes(1);
  probes[0] = [](std::string_view target) {
    return ExtractUserKey(target) == "k";
  };
  auto single =
      NewProbingMergingIterator(Icmp(), std::move(one), std::move(probes));
  single->Seek(SeekKey("a", kMaxSequenceNumber));
  ASSERT_TRUE(single->Valid());
  EXPECT_EQ(single->value(), "v");
}

}  // namespace probing_merge_work_test
}  // namespace siftdb
