// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/random.h"

#include <vector>

#include "gtest/gtest.h"

namespace siftdb {
namespace random_test {

TEST(RandomTest, SameSeedSameSequence) {
  Random a(42), b(42), c(43);
  bool differs = false;
  for (int i = 0; i < 1000; i++) {
    const uint32_t x = a.Next();
    EXPECT_EQ(x, b.Next());
    if (x != c.Next()) differs = true;
  }
  EXPECT_TRUE(differs);
}

TEST(RandomTest, UniformStaysInRangeAndCoversIt) {
  Random rnd(1);
  for (uint32_t n : {1u, 2u, 3u, 10u, 1000u}) {
    std::vector<int> seen(n, 0);
    for (int i = 0; i < 20000; i++) {
      const uint32_t v = rnd.Uniform(n);
      ASSERT_LT(v, n);
      seen[v]++;
    }
    if (n <= 10) {
      for (uint32_t v = 0; v < n; v++) {
        // Expected 20000/n each; allow a wide margin (deterministic seed).
        EXPECT_GT(seen[v], 20000 / static_cast<int>(n) / 2) << n << " " << v;
      }
    }
  }
  EXPECT_EQ(0u, rnd.Uniform(0));
}

TEST(RandomTest, OneInIsRoughlyRight) {
  Random rnd(7);
  int hits = 0;
  for (int i = 0; i < 40000; i++) hits += rnd.OneIn(4) ? 1 : 0;
  EXPECT_GT(hits, 9000);
  EXPECT_LT(hits, 11000);
  EXPECT_TRUE(rnd.OneIn(1));
}

TEST(RandomTest, SkewedFavorsSmallNumbers) {
  Random rnd(9);
  int small = 0;
  for (int i = 0; i < 10000; i++) {
    const uint32_t v = rnd.Skewed(10);
    ASSERT_LT(v, 1u << 10);
    if (v < 32) small++;
  }
  // Bases 0..5 of 0..10 always give < 32: over half the draws.
  EXPECT_GT(small, 5000);
  EXPECT_EQ(0u, rnd.Skewed(0));
}

}  // namespace random_test
}  // namespace siftdb
