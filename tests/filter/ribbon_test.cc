// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// siftdb.Ribbon through the public FilterPolicy interface and the table's
// FilterReader: no false negatives over a sweep of sizes and seeds and at a
// million keys, false-positive rates near the shape's expectation, space
// below the blocked Bloom filter's, and lookup by name.
//
// The default sweep covers every n in 1..300 and a geometric ladder to
// 10,000 (fast enough for the sanitizer builds); SIFTDB_RIBBON_FULL_SWEEP=1
// runs every n in 1..10,000 (a manual run, minutes).

#include <cmath>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "filter/bloom_math.h"
#include "filter/filter_hash.h"
#include "filter/filter_reader.h"
#include "filter/ribbon_builder.h"
#include "filter/ribbon_reader.h"
#include "gtest/gtest.h"
#include "siftdb/filter_policy.h"
#include "tests/filter/filter_test_keys.h"

namespace siftdb {
namespace ribbon_test {

using test::BigEndianKey;
using test::SplitMix64;

std::vector<size_t> SweepSizes() {
  std::vector<size_t> sizes;
  const char* full = std::getenv("SIFTDB_RIBBON_FULL_SWEEP");
  const bool all = full != nullptr && full[0] == '1';
  for (size_t n = 1; n <= 10000; n += (all || n < 300) ? 1 : 1 + n / 8) {
    sizes.push_back(n);
  }
  sizes.push_back(10000);
  return sizes;
}

// Builds over hashes directly (keys are only a means to hashes).
std::string BuildHashes(const std::vector<uint64_t>& hashes, double bpk) {
  std::string filter;
  EXPECT_TRUE(RibbonBuild({{hashes.data(), hashes.size()}},
                          RibbonShapeForBitsPerKey(bpk), &filter));
  return filter;
}

TEST(RibbonTest, NoFalseNegativesSweep) {
  for (uint64_t seed : {1, 2, 3}) {
    SplitMix64 rng(seed);
    for (size_t n : SweepSizes()) {
      const double bpk = (n % 4 == 0)   ? 5
                         : (n % 4 == 1) ? 7
                         : (n % 4 == 2) ? 10
                                        : 15;
      std::vector<uint64_t> hashes(n);
      for (auto& h : hashes) h = rng.Next();
      const std::string filter = BuildHashes(hashes, bpk);
      const ParsedRibbon parsed(filter);
      ASSERT_TRUE(parsed.valid()) << "n=" << n;
      for (uint64_t h : hashes) {
        ASSERT_TRUE(parsed.HashMayMatch(h)) << "n=" << n << " seed=" << seed;
      }
    }
  }
}

TEST(RibbonTest, KeysThroughPolicyAndReader) {
  const auto policy = NewRibbonFilterPolicy(10);
  for (size_t n : {0, 1, 7, 128, 129, 1000, 5000}) {
    std::vector<std::string> keys;
    auto builder = policy->NewBuilder();
    for (size_t i = 0; i < n; ++i) {
      keys.push_back(BigEndianKey(2 * i));
      builder->AddKey(keys.back());
      if (i % 3 == 0) builder->AddKey(keys.back());  // repeats are harmless
    }
    std::string filter;
    builder->Finish(&filter);
    EXPECT_EQ(builder->NumAdded(), 0u);
    const FilterReader reader(policy.get(), filter);
    size_t fp = 0;
    for (size_t i = 0; i < n; ++i) {
      ASSERT_TRUE(policy->KeyMayMatch(keys[i], filter));
      ASSERT_TRUE(reader.KeyMayMatch(keys[i]));
      ASSERT_TRUE(policy->HashMayMatch(policy->HashKey(keys[i]), filter));
      fp += reader.KeyMayMatch(BigEndianKey(2 * i + 1));
    }
    if (n >= 1000) {
      EXPECT_LT(fp, n / 25);
    }
  }
}

// A million keys, once: no false negatives, the rate and the size.
TEST(RibbonTest, OneMillionKeys) {
  constexpr size_t kN = 1000000;
  std::vector<uint64_t> hashes(kN);
  SplitMix64 rng(99);
  for (auto& h : hashes) h = rng.Next();
  const std::string filter = BuildHashes(hashes, 10);
  const ParsedRibbon parsed(filter);
  ASSERT_TRUE(parsed.valid());
  for (uint64_t h : hashes) ASSERT_TRUE(parsed.HashMayMatch(h));
  const double bits_per_key = 8.0 * filter.size() / kN;
  EXPECT_LT(bits_per_key, 7.2);
  size_t fp = 0;
  constexpr size_t kAbsent = 1000000;
  for (size_t i = 0; i < kAbsent; ++i) fp += parsed.HashMayMatch(rng.Next());
  const double expected = RibbonShapeFpRate(RibbonShapeForBitsPerKey(10));
  // About 9,600 expected hits; 6 sigma is under 600.
  EXPECT_NEAR(static_cast<double>(fp) / kAbsent, expected, 0.0006);
}

// Measured rates within a few sigma of the shape's expectation, and at
// least as good as the Bloom filter's theory at the same bits per key.
TEST(RibbonTest, FpRateNearExpectation) {
  constexpr size_t kN = 20000;
  constexpr size_t kAbsent = 200000;
  for (double bpk : {5.0, 7.0, 10.0, 15.0}) {
    SCOPED_TRACE(bpk);
    SplitMix64 rng(static_cast<uint64_t>(bpk * 7));
    std::vector<uint64_t> hashes(kN);
    for (auto& h : hashes) h = rng.Next();
    const std::string filter = BuildHashes(hashes, bpk);
    const ParsedRibbon parsed(filter);
    size_t fp = 0;
    for (size_t i = 0; i < kAbsent; ++i) fp += parsed.HashMayMatch(rng.Next());
    const double rate = static_cast<double>(fp) / kAbsent;
    const double expected = RibbonShapeFpRate(RibbonShapeForBitsPerKey(bpk));
    const double sigma = std::sqrt(expected * (1 - expected) / kAbsent);
    EXPECT_NEAR(rate, expected, 6 * sigma + 1e-5);
    EXPECT_NEAR(expected, BlockedFpRate(bpk, BlockedOptimalK(bpk)),
                expected * 1e-9);
    // Space: clearly below the Bloom filter's bpk.
    EXPECT_LT(8.0 * filter.size() / kN, 0.8 * bpk);
  }
}

TEST(RibbonTest, ShapeMatchesBloomRate) {
  for (double bpk = 0.5; bpk <= 100; bpk += 0.5) {
    const RibbonShape s = RibbonShapeForBitsPerKey(bpk);
    EXPECT_GE(s.lower_columns, 1);
    EXPECT_LT(s.lower_columns, kRibbonMaxColumns);
    EXPECT_GE(s.upper_fraction, 0);
    EXPECT_LE(s.upper_fraction, 1);
  }
  const RibbonShape s10 = RibbonShapeForBitsPerKey(10);
  EXPECT_EQ(s10.lower_columns, 6);
  EXPECT_NEAR(RibbonShapeFpRate(s10), 0.009571, 0.00001);
}

TEST(RibbonTest, DisabledAndClampedBitsPerKey) {
  for (double bpk : {0.0, -1.0, std::nan("")}) {
    const auto policy = NewRibbonFilterPolicy(bpk);
    auto builder = policy->NewBuilder();
    builder->AddKey("x");
    std::string filter;
    builder->Finish(&filter);
    EXPECT_TRUE(filter.empty());
    EXPECT_TRUE(policy->KeyMayMatch("y", filter));
  }
  const auto big = NewRibbonFilterPolicy(1e9);
  EXPECT_EQ(big->BitsPerKey(), 100);
  auto builder = big->NewBuilder();
  for (int i = 0; i < 100; ++i) builder->AddKey(BigEndianKey(i));
  std::string filter;
  builder->Finish(&filter);
  for (int i = 0; i < 100; ++i)
    EXPECT_TRUE(big->KeyMayMatch(BigEndianKey(i), filter));
  EXPECT_FALSE(big->KeyMayMatch(BigEndianKey(1000), filter));
}

TEST(RibbonTest, FromName) {
  auto p = FilterPolicyFromName("siftdb.Ribbon", 7);
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_STREQ((*p)->Name(), "siftdb.Ribbon");
  EXPECT_EQ((*p)->BitsPerKey(), 7);
  // A filter read by a policy of another configuration: the layout comes
  // from the bytes.
  const auto writer = NewRibbonFilterPolicy(15);
  auto builder = writer->NewBuilder();
  for (int i = 0; i < 500; ++i) builder->AddKey(BigEndianKey(i));
  std::string filter;
  builder->Finish(&filter);
  for (int i = 0; i < 500; ++i) {
    EXPECT_TRUE((*p)->KeyMayMatch(BigEndianKey(i), filter));
  }
}

}  // namespace ribbon_test
}  // namespace siftdb
