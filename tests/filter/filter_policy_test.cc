// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Behaviour of the two FilterPolicy implementations through the public
// interface: no false negatives over a sweep of sizes, false-positive rates,
// adjacent keys, key lengths, hash-once probing and policy lookup by name.

#include "siftdb/filter_policy.h"

#include <cmath>
#include <limits>
#include <memory>
#include <string>
#include <vector>

#include "filter/bloom_math.h"
#include "filter/filter_reader.h"
#include "gtest/gtest.h"
#include "tests/filter/filter_test_keys.h"

namespace siftdb {
namespace filter_policy_test {

using test::BigEndianKey;
using test::RandomKey;
using test::SplitMix64;

enum class Kind { kBlocked, kClassic };

std::shared_ptr<const FilterPolicy> MakePolicy(Kind kind, double bpk) {
  return kind == Kind::kBlocked ? NewBloomFilterPolicy(bpk)
                                : NewClassicBloomFilterPolicy(bpk);
}

std::string Build(const FilterPolicy& policy,
                  const std::vector<std::string>& keys) {
  std::unique_ptr<FilterBitsBuilder> builder = policy.NewBuilder();
  for (const std::string& key : keys) builder->AddKey(key);
  EXPECT_EQ(builder->NumAdded(), keys.size());
  std::string filter;
  builder->Finish(&filter);
  return filter;
}

// Fraction of `absent` keys the filter lets through.
double FpRate(const FilterPolicy& policy, const std::string& filter,
              const std::vector<std::string>& absent) {
  size_t hits = 0;
  for (const std::string& key : absent) hits += policy.KeyMayMatch(key, filter);
  return static_cast<double>(hits) / static_cast<double>(absent.size());
}

class FilterPolicyTest : public ::testing::TestWithParam<Kind> {
 protected:
  std::shared_ptr<const FilterPolicy> Policy(double bpk) const {
    return MakePolicy(GetParam(), bpk);
  }
  double Theory(double bpk) const {
    if (GetParam() == Kind::kBlocked) {
      return BlockedFpRate(bpk, BlockedOptimalK(bpk));
    }
    return ClassicFpRate(bpk, ClassicOptimalK(bpk));
  }
};

// Every size 1..2000, then a geometric sweep (x1.03) up to 10,000, and the
// builder's chunk boundaries.
std::vector<size_t> SweepSizes() {
  std::vector<size_t> sizes;
  for (size_t n = 1; n <= 2000; ++n) sizes.push_back(n);
  for (double n = 2060; n < 10000; n *= 1.03) {
    sizes.push_back(static_cast<size_t>(n));
  }
  sizes.push_back(10000);
  // The builder stores hashes in chunks of 8192.
  for (size_t n : {8191, 8192, 8193, 16384, 16385}) sizes.push_back(n);
  return sizes;
}

TEST_P(FilterPolicyTest, NoFalseNegativesSizeSweep) {
  for (double bpk : {1.0, 2.5, 5.0, 10.0, 16.0, 23.4}) {
    const auto policy = Policy(bpk);
    for (size_t n : SweepSizes()) {
      SplitMix64 rng(n * 1000 + static_cast<uint64_t>(bpk * 10));
      std::vector<std::string> keys;
      keys.reserve(n);
      for (size_t i = 0; i < n; ++i) {
        // Alternate structured and random keys of assorted lengths.
        keys.push_back(i % 2 ? BigEndianKey(i)
                             : RandomKey(&rng, rng.Uniform(40)));
      }
      const std::string filter = Build(*policy, keys);
      for (const std::string& key : keys) {
        ASSERT_TRUE(policy->KeyMayMatch(key, filter))
            << "bpk " << bpk << " n " << n;
      }
    }
  }
}

TEST_P(FilterPolicyTest, FalsePositiveRateAt10BitsPerKey) {
  const auto policy = Policy(10);
  SplitMix64 rng(7);
  std::vector<std::string> keys, absent;
  for (int i = 0; i < 100000; ++i) keys.push_back(RandomKey(&rng, 16));
  for (int i = 0; i < 100000; ++i) absent.push_back(RandomKey(&rng, 16));
  const std::string filter = Build(*policy, keys);
  const double fp = FpRate(*policy, filter, absent);
  // Theory: blocked 0.957%, classic 0.819%.
  EXPECT_LT(fp, 0.012);
  if (GetParam() == Kind::kClassic) {
    EXPECT_LT(fp, 0.0095);
  }
  EXPECT_GT(fp, 0.006);  // a filter that says "maybe" to all is no filter
}

// At several densities the measured rate tracks the formula: within 20%
// plus four standard deviations of the sampling noise.
TEST_P(FilterPolicyTest, FalsePositiveRateTracksTheory) {
  SplitMix64 rng(11);
  std::vector<std::string> keys, absent;
  for (int i = 0; i < 50000; ++i) keys.push_back(RandomKey(&rng, 16));
  for (int i = 0; i < 200000; ++i) absent.push_back(RandomKey(&rng, 16));
  for (double bpk : {3.0, 5.0, 7.5, 10.0, 15.0, 20.0}) {
    const auto policy = Policy(bpk);
    const std::string filter = Build(*policy, keys);
    const double fp = FpRate(*policy, filter, absent);
    const double theory = Theory(bpk);
    const double noise = 4 * std::sqrt(theory / absent.size());
    EXPECT_LE(fp, theory * 1.2 + noise) << "bpk " << bpk;
    EXPECT_GE(fp, theory * 0.8 - noise) << "bpk " << bpk;
  }
}

// Stored keys 2i, absent keys 2i+1 (16-byte big-endian counters) must see
// the same false-positive rate as random absent keys; a weak hash lets most
// neighbours of stored keys through.
TEST_P(FilterPolicyTest, AdjacentKeysSameRateAsRandom) {
  constexpr int kN = 100000;
  std::vector<std::string> stored, adjacent, random_absent;
  SplitMix64 rng(3);
  for (int i = 0; i < kN; ++i) {
    stored.push_back(BigEndianKey(2 * uint64_t(i)));
    adjacent.push_back(BigEndianKey(2 * uint64_t(i) + 1));
    random_absent.push_back(RandomKey(&rng, 16));
  }
  for (double bpk : {5.0, 10.0}) {
    const auto policy = Policy(bpk);
    const std::string filter = Build(*policy, stored);
    const double fp_adjacent = FpRate(*policy, filter, adjacent);
    const double fp_random = FpRate(*policy, filter, random_absent);
    const double theory = Theory(bpk);
    // Each rate has sampling sd sqrt(p / N); allow 5 sd of the difference.
    const double tolerance = 5 * std::sqrt(2 * theory / kN);
    EXPECT_NEAR(fp_adjacent, fp_random, tolerance) << "bpk " << bpk;
    EXPECT_NEAR(fp_adjacent, theory, tolerance + 0.1 * theory) << "bpk " << bpk;
  }
}

// Other structured families: short decimal strings and shared long prefixes.
TEST_P(FilterPolicyTest, StructuredKeysSameRateAsRandom) {
  constexpr int kN = 50000;
  const auto policy = Policy(10);
  const double theory = Theory(10);
  const double tolerance = 5 * std::sqrt(theory / kN) + 0.1 * theory;
  const std::string prefix(100, 'p');
  std::vector<std::string> stored, absent;
  for (int i = 0; i < kN; ++i) {
    stored.push_back("user" + std::to_string(2 * i));
    absent.push_back("user" + std::to_string(2 * i + 1));
  }
  EXPECT_NEAR(FpRate(*policy, Build(*policy, stored), absent), theory,
              tolerance);
  stored.clear();
  absent.clear();
  for (int i = 0; i < kN; ++i) {
    stored.push_back(prefix + std::to_string(i));
    absent.push_back(prefix + std::to_string(i + kN));
  }
  EXPECT_NEAR(FpRate(*policy, Build(*policy, stored), absent), theory,
              tolerance);
}

TEST_P(FilterPolicyTest, VariedKeyLengthsUpTo4KiB) {
  SplitMix64 rng(99);
  std::vector<std::string> keys;
  // Every length 0..4096, random bytes.
  for (size_t len = 0; len <= 4096; ++len) keys.push_back(RandomKey(&rng, len));
  // Prefixes of one buffer: keys that differ only in length.
  const std::string big = RandomKey(&rng, 4096);
  for (size_t len = 0; len <= 4096; len += 7)
    keys.push_back(big.substr(0, len));
  // All-zero and all-0xff keys of every length up to 300.
  for (size_t len = 0; len <= 300; ++len) {
    keys.push_back(std::string(len, '\0'));
    keys.push_back(std::string(len, '\xff'));
  }
  for (double bpk : {2.0, 10.0}) {
    const auto policy = Policy(bpk);
    const std::string filter = Build(*policy, keys);
    for (const std::string& key : keys) {
      ASSERT_TRUE(policy->KeyMayMatch(key, filter))
          << "bpk " << bpk << " length " << key.size();
    }
  }
}

TEST_P(FilterPolicyTest, HashMayMatchEqualsKeyMayMatch) {
  const auto policy = Policy(8);
  SplitMix64 rng(5);
  std::vector<std::string> keys;
  for (int i = 0; i < 3000; ++i)
    keys.push_back(RandomKey(&rng, rng.Uniform(30)));
  const std::string filter = Build(*policy, keys);
  const FilterReader reader(policy.get(), filter);
  size_t positives = 0;
  for (int i = 0; i < 20000; ++i) {
    // Half stored, half not.
    const std::string key = i % 2 ? keys[rng.Uniform(keys.size())]
                                  : RandomKey(&rng, rng.Uniform(30));
    const bool expected = policy->KeyMayMatch(key, filter);
    positives += expected;
    ASSERT_EQ(policy->HashMayMatch(policy->HashKey(key), filter), expected);
    ASSERT_EQ(reader.KeyMayMatch(key), expected);
    ASSERT_EQ(reader.HashMayMatch(policy->HashKey(key)), expected);
  }
  EXPECT_GT(positives, 10000u);  // the stored half
  EXPECT_LT(positives, 10000u + 10000u / 10);
}

TEST_P(FilterPolicyTest, BuilderResetsAndAppends) {
  const auto policy = Policy(10);
  std::unique_ptr<FilterBitsBuilder> builder = policy->NewBuilder();
  EXPECT_EQ(builder->NumAdded(), 0u);
  builder->AddKey("a");
  builder->AddKey("a");  // duplicates are harmless
  builder->AddKey("b");
  EXPECT_EQ(builder->NumAdded(), 3u);
  std::string dst = "prefix";
  builder->Finish(&dst);
  EXPECT_EQ(builder->NumAdded(), 0u);
  ASSERT_GT(dst.size(), 6u);
  EXPECT_EQ(dst.substr(0, 6), "prefix");
  const std::string first = dst.substr(6);
  EXPECT_TRUE(policy->KeyMayMatch("a", first));
  EXPECT_TRUE(policy->KeyMayMatch("b", first));

  // The second filter holds only what was added after the reset.
  for (int i = 0; i < 1000; ++i) builder->AddKey("x" + std::to_string(i));
  std::string second;
  builder->Finish(&second);
  for (int i = 0; i < 1000; ++i) {
    EXPECT_TRUE(policy->KeyMayMatch("x" + std::to_string(i), second));
  }
  int stale =
      policy->KeyMayMatch("a", second) + policy->KeyMayMatch("b", second);
  EXPECT_LE(stale, 1);  // each is a ~1% false positive at most

  // A filter over no keys answers "no" to everything.
  std::string none;
  builder->Finish(&none);
  EXPECT_FALSE(none.empty());
  for (int i = 0; i < 100; ++i) {
    EXPECT_FALSE(policy->KeyMayMatch("k" + std::to_string(i), none));
  }
}

TEST_P(FilterPolicyTest, DisabledPolicyBuildsEmptyAlwaysMayMatchFilters) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const auto reference = Policy(10);
  const std::string real = Build(*reference, {"k1", "k2"});
  for (double bpk : {0.0, -1.0, -1e300, nan}) {
    const auto policy = Policy(bpk);
    EXPECT_EQ(policy->BitsPerKey(), 0);
    EXPECT_EQ(std::string(policy->Name()), reference->Name());
    const std::string filter = Build(*policy, {"k1", "k2", "k3"});
    EXPECT_TRUE(filter.empty());
    EXPECT_TRUE(policy->KeyMayMatch("k1", filter));
    EXPECT_TRUE(policy->KeyMayMatch("zzz", filter));
    // It still reads filters that other configurations built.
    EXPECT_TRUE(policy->KeyMayMatch("k1", real));
    EXPECT_EQ(policy->KeyMayMatch("zzz", real),
              reference->KeyMayMatch("zzz", real));
  }
}

TEST_P(FilterPolicyTest, ExtremeBitsPerKey) {
  // Clamped to 100 bits/key: still correct, and not a huge filter.
  const auto huge = Policy(1e12);
  EXPECT_EQ(huge->BitsPerKey(), 100);
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back(BigEndianKey(i));
  std::string filter = Build(*huge, keys);
  EXPECT_LE(filter.size(), 1000u * 100 / 8 + 128);
  for (const auto& key : keys) EXPECT_TRUE(huge->KeyMayMatch(key, filter));
  // A tiny positive value gives a one-block (or 64-bit) filter that still
  // holds every key.
  const auto tiny = Policy(1e-9);
  EXPECT_GT(tiny->BitsPerKey(), 0);
  filter = Build(*tiny, keys);
  EXPECT_LE(filter.size(), 64u + 8u);
  for (const auto& key : keys) EXPECT_TRUE(tiny->KeyMayMatch(key, filter));
  // Fractional bits per key size the filter proportionally.
  EXPECT_DOUBLE_EQ(Policy(7.5)->BitsPerKey(), 7.5);
}

INSTANTIATE_TEST_SUITE_P(Modes, FilterPolicyTest,
                         ::testing::Values(Kind::kBlocked, Kind::kClassic),
                         [](const ::testing::TestParamInfo<Kind>& info) {
                           return info.param == Kind::kBlocked ? "Blocked"
                                                               : "Classic";
                         });

TEST(FilterPolicyNameTest, FromName) {
  auto blocked = FilterPolicyFromName("siftdb.BlockedBloom", 12);
  ASSERT_TRUE(blocked.ok()) << blocked.status();
  EXPECT_STREQ((*blocked)->Name(), "siftdb.BlockedBloom");
  EXPECT_EQ((*blocked)->BitsPerKey(), 12);
  auto classic = FilterPolicyFromName("siftdb.ClassicBloom", 9);
  ASSERT_TRUE(classic.ok()) << classic.status();
  EXPECT_STREQ((*classic)->Name(), "siftdb.ClassicBloom");
  EXPECT_EQ((*classic)->BitsPerKey(), 9);
  EXPECT_STREQ(NewBloomFilterPolicy(10)->Name(), "siftdb.BlockedBloom");
  EXPECT_STREQ(NewClassicBloomFilterPolicy(10)->Name(), "siftdb.ClassicBloom");

  for (std::string_view bad :
       {"", "siftdb.blockedbloom", "leveldb.BuiltinBloomFilter2",
        "siftdb.BlockedBloom ", "siftdb.RedisBloom"}) {
    auto policy = FilterPolicyFromName(bad, 10);
    EXPECT_EQ(policy.status().code(), absl::StatusCode::kNotFound) << bad;
  }
  auto policy = FilterPolicyFromName("nope", 10);
  EXPECT_NE(policy.status().message().find("nope"), std::string::npos);
}

// A filter made by one policy is never misread by the other.
TEST(FilterPolicyNameTest, ForeignFiltersMayMatch) {
  const auto blocked = NewBloomFilterPolicy(10);
  const auto classic = NewClassicBloomFilterPolicy(10);
  std::vector<std::string> keys;
  for (int i = 0; i < 500; ++i) keys.push_back(BigEndianKey(i));
  const std::string bf = Build(*blocked, keys);
  const std::string cf = Build(*classic, keys);
  for (int i = 0; i < 2000; ++i) {
    EXPECT_TRUE(classic->KeyMayMatch(BigEndianKey(i), bf));
    EXPECT_TRUE(blocked->KeyMayMatch(BigEndianKey(i), cf));
  }
}

// A policy the reader does not know is forwarded to, not reinterpreted.
class EvenLengthPolicy final : public FilterPolicy {
 public:
  const char* Name() const override { return "test.EvenLength"; }
  double BitsPerKey() const override { return 0; }
  std::unique_ptr<FilterBitsBuilder> NewBuilder() const override {
    return nullptr;
  }
  bool KeyMayMatch(std::string_view key, std::string_view) const override {
    return key.size() % 2 == 0;
  }
  uint64_t HashKey(std::string_view key) const override { return key.size(); }
  bool HashMayMatch(uint64_t hash, std::string_view) const override {
    return hash % 2 == 0;
  }
};

TEST(FilterReaderTest, ForwardsUnknownPolicies) {
  EvenLengthPolicy policy;
  const FilterReader reader(&policy, "whatever");
  EXPECT_TRUE(reader.KeyMayMatch("ab"));
  EXPECT_FALSE(reader.KeyMayMatch("abc"));
  const FilterReader none;
  EXPECT_TRUE(none.KeyMayMatch("abc"));
  const FilterReader null_policy(nullptr, "x");
  EXPECT_TRUE(null_policy.KeyMayMatch("abc"));
}

}  // namespace filter_policy_test
}  // namespace siftdb
