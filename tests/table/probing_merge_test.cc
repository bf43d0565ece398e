// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// NewProbingMergingIterator (table/merging_iterator.h) against
// NewMergingIterator as the model: over random children of internal keys
// (user keys repeated across children with different sequence numbers, as
// in a DB) and random probes (exact, with false "maybe"s, or null), random
// operation sequences and every seek followed by walks give exactly the
// results of the plain merge. Which children a Seek positions, and error
// handling, are tested in probing_merge_work_test.cc.

#include <algorithm>
#include <cstdint>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/filter_hash.h"
#include "gtest/gtest.h"
#include "siftdb/iterator.h"
#include "table/internal_key.h"
#include "table/merging_iterator.h"
#include "tests/table/probing_merge_test_util.h"
#include "tests/table/table_test_util.h"

namespace siftdb {
namespace probing_merge_test {

using test::Icmp;
using test::IKey;
using test::KVList;
using test::SeekKey;
using test::TestRandom;
using test::VectorIterator;

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

}  // namespace probing_merge_test
}  // namespace siftdb
