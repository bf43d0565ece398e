// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Block::Seek, the point lookup without an iterator, in both forms (any
// Comparator, and InternalKeyComparator without virtual calls): each must
// give exactly what an iterator's Seek gives, the same entry or the same
// error, on blocks of internal keys of every shape and on damaged ones.

#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/internal_key.h"
#include "tests/table/table_test_util.h"

namespace siftdb {
namespace block_point_seek_test {

using test::BlockFromBytes;
using test::BuildBlockBytes;
using test::IKey;
using test::TestRandom;

// What a lookup answered: the entry found (if any), or its error.
struct Answer {
  absl::StatusCode code = absl::StatusCode::kOk;
  std::string message;
  std::optional<std::pair<std::string, std::string>> entry;

  bool operator==(const Answer&) const = default;
};

std::ostream& operator<<(std::ostream& os, const Answer& a) {
  os << absl::StatusCodeToString(a.code) << " " << a.message;
  if (a.entry) os << " -> " << a.entry->first.size() << "-byte key";
  return os;
}

Answer ByIterator(const Block& block, const Comparator* cmp,
                  std::string_view target) {
  Answer a;
  auto it = block.NewIterator(cmp, "000004.sst");
  it->Seek(target);
  if (!it->status().ok()) {
    a.code = it->status().code();
    a.message = std::string(it->status().message());
  } else if (it->Valid()) {
    a.entry.emplace(std::string(it->key()), std::string(it->value()));
  }
  return a;
}

template <typename Cmp>
Answer ByPointSeek(const Block& block, const Cmp& cmp,
                   std::string_view target) {
  Answer a;
  absl::Status s = block.Seek(cmp, "000004.sst", target,
                              [&](std::string_view k, std::string_view v) {
                                a.entry.emplace(std::string(k), std::string(v));
                              });
  if (!s.ok()) {
    a.code = s.code();
    a.message = std::string(s.message());
    a.entry.reset();
  }
  return a;
}

// Internal keys of `n` user keys drawn from a small alphabet (so they share
// prefixes), each with one to three versions, in InternalKeyComparator
// order, with short random values.
std::vector<std::pair<std::string, std::string>> Entries(size_t n,
                                                         uint64_t seed) {
  TestRandom rnd(seed);
  std::vector<std::pair<std::string, std::string>> entries;
  for (size_t i = 0; i < n; i++) {
    std::string user(1 + rnd.Uniform(20), 'a');
    for (char& c : user) c = static_cast<char>('a' + rnd.Uniform(3));
    const int versions = 1 + static_cast<int>(rnd.Uniform(3));
    for (int v = 0; v < versions; v++) {
      const ValueType type = rnd.OneIn(5) ? kTypeDeletion : kTypeValue;
      entries.emplace_back(IKey(user, 1 + rnd.Uniform(1000), type),
                           rnd.Bytes(rnd.Uniform(30)));
    }
  }
  test::SortInternalKeys(&entries);
  return entries;
}

// Targets: every key, each user key at the newest and oldest sequence,
// random user keys at a random sequence, and keys too short to hold a
// trailer (which the comparator orders before every well-formed key).
std::vector<std::string> Targets(
    const std::vector<std::pair<std::string, std::string>>& entries,
    uint64_t seed) {
  TestRandom rnd(seed);
  std::vector<std::string> targets;
  for (const auto& [k, v] : entries) {
    targets.push_back(k);
    const std::string user(ExtractUserKey(k));
    targets.push_back(IKey(user, kMaxSequenceNumber, kValueTypeForSeek));
    targets.push_back(IKey(user, 0, kTypeDeletion));
  }
  for (int i = 0; i < 50; i++) {
    std::string user(rnd.Uniform(22), 'a');
    for (char& c : user) c = static_cast<char>('a' + rnd.Uniform(4));
    targets.push_back(IKey(user, rnd.Uniform(1200), kValueTypeForSeek));
  }
  targets.push_back("");
  targets.push_back("abc");
  targets.push_back(std::string(7, '\xff'));
  return targets;
}

TEST(BlockPointSeekTest, AgreesWithTheIteratorOnEveryShape) {
  const InternalKeyComparator icmp(BytewiseComparator());
  for (int restart_interval : {1, 2, 3, 16}) {
    for (size_t n : {1, 2, 7, 40, 300}) {
      for (uint64_t seed = 1; seed <= 3; seed++) {
        SCOPED_TRACE(testing::Message()
                     << "restart interval " << restart_interval << ", " << n
                     << " user keys, seed " << seed);
        const auto entries = Entries(n, seed);
        auto block = BlockFromBytes(BuildBlockBytes(entries, restart_interval));
        ASSERT_NE(block, nullptr);
        int found = 0;
        for (const std::string& target : Targets(entries, seed)) {
          const Answer want = ByIterator(*block, &icmp, target);
          ASSERT_TRUE(want.code == absl::StatusCode::kOk) << want;
          // The model: the first entry at or after the target.
          auto at = std::lower_bound(entries.begin(), entries.end(), target,
                                     [&](const auto& e, const std::string& t) {
                                       return icmp.Compare(e.first, t) < 0;
                                     });
          ASSERT_EQ(want.entry.has_value(), at != entries.end());
          if (at != entries.end()) {
            ASSERT_EQ(want.entry->first, at->first);
            found++;
          }
          ASSERT_EQ(ByPointSeek(*block, icmp, target), want);
          ASSERT_EQ(ByPointSeek(*block, static_cast<const Comparator*>(&icmp),
                                target),
                    want);
        }
        EXPECT_GT(found, 0);
      }
    }
  }
}

TEST(BlockPointSeekTest, DamagedBlocksGiveTheIteratorsAnswerOrError) {
  // Every truncation and every bit flip that Block::Create accepts: both
  // point lookups answer what the iterator answers, the same entry or the
  // same DataLoss naming the file and offsets; none reads out of bounds
  // (the sanitizer builds run this too).
  const InternalKeyComparator icmp(BytewiseComparator());
  const auto entries = Entries(12, 5);
  std::vector<std::string> targets = Targets(entries, 5);
  targets.resize(std::min<size_t>(targets.size(), 24));
  const std::string good = BuildBlockBytes(entries, 3);
  std::vector<std::string> damaged;
  for (size_t n = 0; n < good.size(); n++) damaged.push_back(good.substr(0, n));
  for (size_t i = 0; i < good.size(); i++) {
    for (int bit = 0; bit < 8; bit++) {
      damaged.push_back(good);
      damaged.back()[i] ^= static_cast<char>(1 << bit);
    }
  }
  int errors = 0;
  for (const std::string& bytes : damaged) {
    auto block = BlockFromBytes(bytes);
    if (block == nullptr) continue;
    for (const std::string& target : targets) {
      const Answer want = ByIterator(*block, &icmp, target);
      if (want.code != absl::StatusCode::kOk) {
        errors++;
        EXPECT_EQ(want.code, absl::StatusCode::kDataLoss);
        EXPECT_NE(want.message.find("000004.sst: block at offset 4096"),
                  std::string::npos)
            << want;
      }
      ASSERT_EQ(ByPointSeek(*block, icmp, target), want);
      ASSERT_EQ(
          ByPointSeek(*block, static_cast<const Comparator*>(&icmp), target),
          want);
    }
  }
  EXPECT_GT(errors, 0);
}

}  // namespace block_point_seek_test
}  // namespace siftdb
