// Copyright (c) siftdb authors.
//
// NewProbingMergingIterator (table/merging_iterator.h): over random
// children of internal keys (user keys repeated across children with
// different sequence numbers, as in a DB) and random probes (exact, with
// false "maybe"s, or null), random operation sequences give exactly the
// results of NewMergingIterator; a seek of an existing key positions no
// child whose probe said no until the merge moves on; a deferred child's
// error still surfaces; a probe count that does not match the children is
// an error.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/filter_hash.h"
#include "gtest/gtest.h"
#include "siftdb/comparator.h"
#include "table/internal_key.h"
#include "table/merging_iterator.h"
#include "tests/table/table_test_util.h"

namespace siftdb {
namespace {

using test::IKey;
using test::KVList;
using test::TestRandom;
using test::VectorIterator;

const InternalKeyComparator* Icmp() {
  static const InternalKeyComparator* const icmp =
      new InternalKeyComparator(BytewiseComparator());
  return icmp;
}

std::string SeekKey(std::string_view user_key, SequenceNumber seq) {
  return IKey(user_key, seq, kValueTypeForSeek);
}

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
// Model-based comparison with the plain merge.

enum class ProbeKind { kNull, kExact, kMaybe, kAlwaysYes };

struct ChildSpec {
  bool present = true;  // false: a null child (ignored by both merges)
  KVList entries;       // sorted by Icmp()
  std::set<std::string> user_keys;
  ProbeKind probe = ProbeKind::kExact;
  uint64_t salt = 0;  // picks the false "maybe"s of kMaybe
};

struct Scenario {
  std::vector<ChildSpec> children;
  std::vector<std::string> present_user_keys;  // sorted, unique
  std::vector<std::string> absent_user_keys;
  SequenceNumber max_seq = 0;
};

Scenario MakeScenario(TestRandom* rnd) {
  Scenario s;
  const size_t num_children = 1 + rnd->Uniform(6);
  s.children.resize(num_children);
  for (ChildSpec& c : s.children) {
    c.present = !rnd->OneIn(8);
    switch (rnd->Uniform(4)) {
      case 0:
        c.probe = ProbeKind::kNull;
        break;
      case 1:
        c.probe = ProbeKind::kMaybe;
        break;
      case 2:
        c.probe = ProbeKind::kAlwaysYes;
        break;
      default:
        c.probe = ProbeKind::kExact;
    }
    // Exact probes are the interesting case: make them the most common.
    if (rnd->OneIn(2)) c.probe = ProbeKind::kExact;
    c.salt = rnd->Next();
  }
  const size_t universe = 1 + rnd->Uniform(40);
  const bool duplicates = rnd->OneIn(4);  // equal internal keys in 2 children
  SequenceNumber seq = 1 + rnd->Uniform(3);
  for (size_t u = 0; u < universe; u++) {
    const std::string user_key = absl::StrFormat("u%03d", 2 * u + 1);
    s.absent_user_keys.push_back(absl::StrFormat("u%03d", 2 * u));
    if (rnd->OneIn(5)) continue;  // a gap
    const size_t versions = 1 + rnd->Uniform(4);
    for (size_t v = 0; v < versions; v++) {
      seq += 1 + rnd->Uniform(3);
      const ValueType type = rnd->OneIn(4) ? kTypeDeletion : kTypeValue;
      size_t copies = duplicates && rnd->OneIn(3) ? 2 : 1;
      for (size_t copy = 0; copy < copies; copy++) {
        const size_t ci = rnd->Uniform(num_children);
        ChildSpec& c = s.children[ci];
        const std::string ikey = IKey(user_key, seq, type);
        if (!c.entries.empty() && c.entries.back().first == ikey) continue;
        c.entries.emplace_back(ikey,
                               absl::StrFormat("c%d:%s@%d", ci, user_key, seq));
        c.user_keys.insert(user_key);
      }
    }
  }
  s.max_seq = seq;
  for (ChildSpec& c : s.children) {
    std::sort(c.entries.begin(), c.entries.end(),
              [](const auto& a, const auto& b) {
                return Icmp()->Compare(a.first, b.first) < 0;
              });
    if (c.present) {
      s.present_user_keys.insert(s.present_user_keys.end(), c.user_keys.begin(),
                                 c.user_keys.end());
    }
  }
  std::sort(s.present_user_keys.begin(), s.present_user_keys.end());
  s.present_user_keys.erase(
      std::unique(s.present_user_keys.begin(), s.present_user_keys.end()),
      s.present_user_keys.end());
  // Before and after every key, and the empty user key.
  s.absent_user_keys.push_back("a");
  s.absent_user_keys.push_back("zzz");
  s.absent_user_keys.push_back("");
  s.absent_user_keys.push_back("u001\x01");  // just after u001
  return s;
}

ChildProbe MakeProbe(const ChildSpec& c, int* calls) {
  const auto keys = std::make_shared<std::set<std::string>>(c.user_keys);
  const uint64_t salt = c.salt;
  switch (c.probe) {
    case ProbeKind::kNull:
      return nullptr;
    case ProbeKind::kAlwaysYes:
      return [calls](std::string_view) {
        (*calls)++;
        return true;
      };
    case ProbeKind::kExact:
      return [keys, calls](std::string_view target) {
        (*calls)++;
        return keys->count(std::string(ExtractUserKey(target))) > 0;
      };
    case ProbeKind::kMaybe:
      // Exact, plus a false "maybe" for about a third of the other targets.
      return [keys, salt, calls](std::string_view target) {
        (*calls)++;
        if (keys->count(std::string(ExtractUserKey(target))) > 0) return true;
        return (FilterKeyHash(target) ^ salt) % 3 == 0;
      };
  }
  return nullptr;
}

struct MergePair {
  std::unique_ptr<Iterator> plain;
  std::unique_ptr<Iterator> probing;
  int probe_calls = 0;
};

// Builds both merges over copies of the scenario's children. A null
// child's probe always says no, so a probe applied to the wrong child
// would show.
void BuildMerges(const Scenario& s, MergePair* m) {
  std::vector<std::unique_ptr<Iterator>> plain_children, probing_children;
  std::vector<ChildProbe> probes;
  for (const ChildSpec& c : s.children) {
    if (c.present) {
      plain_children.push_back(
          std::make_unique<VectorIterator>(Icmp(), c.entries));
      probing_children.push_back(
          std::make_unique<VectorIterator>(Icmp(), c.entries));
      probes.push_back(MakeProbe(c, &m->probe_calls));
    } else {
      plain_children.push_back(nullptr);
      probing_children.push_back(nullptr);
      probes.push_back([](std::string_view) { return false; });
    }
  }
  m->plain = NewMergingIterator(Icmp(), std::move(plain_children));
  m->probing = NewProbingMergingIterator(Icmp(), std::move(probing_children),
                                         std::move(probes));
}

std::string RandomTarget(const Scenario& s, TestRandom* rnd) {
  const bool existing = !s.present_user_keys.empty() && !rnd->OneIn(3);
  const std::vector<std::string>& pool =
      existing ? s.present_user_keys : s.absent_user_keys;
  const std::string& user_key = pool[rnd->Uniform(pool.size())];
  SequenceNumber seq;
  switch (rnd->Uniform(4)) {
    case 0:
      seq = kMaxSequenceNumber;
      break;
    case 1:
      seq = 0;
      break;
    default:
      seq = rnd->Uniform(s.max_seq + 2);
  }
  // Mostly seek keys; sometimes a deletion-typed key (sorts just after).
  return IKey(user_key, seq, rnd->OneIn(6) ? kTypeDeletion : kValueTypeForSeek);
}

std::string Describe(const Iterator& it) {
  if (!it.Valid()) {
    return "invalid, status " + it.status().ToString();
  }
  ParsedInternalKey parsed;
  if (!ParseInternalKey(it.key(), &parsed)) return "unparsable key";
  return absl::StrFormat("%s@%d/%d = %s", std::string(parsed.user_key),
                         parsed.sequence, static_cast<int>(parsed.type),
                         std::string(it.value()));
}

void RunSeed(uint64_t seed) {
  TestRandom rnd(seed);
  const Scenario s = MakeScenario(&rnd);
  MergePair m;
  BuildMerges(s, &m);
  std::string trace;
  bool last_was_seek = false;
  for (int op = 0; op < 150; op++) {
    const bool valid = m.plain->Valid();
    uint64_t choice = rnd.Uniform(100);
    // Right after a Seek, often switch direction at once (or move on).
    if (last_was_seek && valid && rnd.OneIn(2)) choice = rnd.OneIn(2) ? 50 : 80;
    last_was_seek = false;
    if (choice < 40) {
      const std::string target = RandomTarget(s, &rnd);
      trace += "Seek(" + std::string(ExtractUserKey(target)) + ") ";
      m.plain->Seek(target);
      m.probing->Seek(target);
      last_was_seek = true;
    } else if (choice < 70) {
      if (!valid) continue;
      trace += "Next ";
      m.plain->Next();
      m.probing->Next();
    } else if (choice < 90) {
      if (!valid) continue;
      trace += "Prev ";
      m.plain->Prev();
      m.probing->Prev();
    } else if (choice < 95) {
      trace += "SeekToFirst ";
      m.plain->SeekToFirst();
      m.probing->SeekToFirst();
    } else {
      trace += "SeekToLast ";
      m.plain->SeekToLast();
      m.probing->SeekToLast();
    }
    ASSERT_EQ(Describe(*m.probing), Describe(*m.plain))
        << "seed " << seed << ", ops: " << trace;
    ASSERT_EQ(m.probing->Valid(), m.plain->Valid());
    if (m.plain->Valid()) {
      ASSERT_EQ(m.probing->key(), m.plain->key()) << "seed " << seed;
      ASSERT_EQ(m.probing->value(), m.plain->value()) << "seed " << seed;
    }
    ASSERT_TRUE(m.probing->status().ok())
        << "seed " << seed << ": " << m.probing->status();
  }
  // Then full scans both ways agree too.
  m.plain->SeekToFirst();
  m.probing->SeekToFirst();
  while (m.plain->Valid()) {
    ASSERT_EQ(Describe(*m.probing), Describe(*m.plain)) << "seed " << seed;
    m.plain->Next();
    m.probing->Next();
  }
  ASSERT_FALSE(m.probing->Valid()) << "seed " << seed;
}

TEST(ProbingMergeTest, MatchesPlainMergeOverRandomOperations) {
  for (uint64_t seed = 1; seed <= 600; seed++) {
    SCOPED_TRACE(absl::StrFormat("seed %d", seed));
    RunSeed(seed);
    if (HasFatalFailure()) return;
  }
}

// Every seek of every user key (present and absent) at every sequence
// number, each followed by a walk forward and one backward.
TEST(ProbingMergeTest, ExhaustiveSeeksThenWalks) {
  for (uint64_t seed = 1000; seed < 1040; seed++) {
    TestRandom rnd(seed);
    const Scenario s = MakeScenario(&rnd);
    std::vector<std::string> user_keys = s.present_user_keys;
    user_keys.insert(user_keys.end(), s.absent_user_keys.begin(),
                     s.absent_user_keys.end());
    // Per user key: its entries' sequence numbers and their neighbours.
    std::map<std::string, std::set<SequenceNumber>> seqs;
    for (const ChildSpec& c : s.children) {
      for (const auto& [k, v] : c.entries) {
        ParsedInternalKey parsed;
        ASSERT_TRUE(ParseInternalKey(k, &parsed));
        std::set<SequenceNumber>& set = seqs[std::string(parsed.user_key)];
        set.insert({parsed.sequence - 1, parsed.sequence, parsed.sequence + 1});
      }
    }
    for (const std::string& u : user_keys) {
      std::set<SequenceNumber> targets = seqs[u];
      targets.insert({0, 1, s.max_seq + 1, kMaxSequenceNumber});
      for (SequenceNumber seq : targets) {
        for (int dir = 0; dir < 2; dir++) {
          MergePair m;
          BuildMerges(s, &m);
          m.plain->Seek(SeekKey(u, seq));
          m.probing->Seek(SeekKey(u, seq));
          for (int step = 0; step < 4; step++) {
            ASSERT_EQ(Describe(*m.probing), Describe(*m.plain))
                << "seed " << seed << " seek " << u << "@" << seq << " dir "
                << dir << " step " << step;
            if (!m.plain->Valid()) break;
            if (dir == 0) {
              m.plain->Next();
              m.probing->Next();
            } else {
              m.plain->Prev();
              m.probing->Prev();
            }
          }
        }
      }
    }
  }
}

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

}  // namespace
}  // namespace siftdb
