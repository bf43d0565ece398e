// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "filter/bloom_math.h"

#include <cmath>
#include <limits>

#include "gtest/gtest.h"

namespace siftdb {
namespace bloom_math_test {

TEST(BloomMathTest, ClassicFormulas) {
  // -ln(0.01) / ln(2)^2 = 9.5850...
  EXPECT_NEAR(ClassicBitsPerKeyForRate(0.01), 9.58505, 1e-4);
  EXPECT_NEAR(ClassicOptimalKExact(10), 6.93147, 1e-4);
  EXPECT_EQ(ClassicOptimalK(10), 7);
  EXPECT_EQ(ClassicOptimalK(1), 1);
  EXPECT_EQ(ClassicOptimalK(20), 14);
  EXPECT_NEAR(ClassicFpRate(10, 7), 0.0081937, 1e-6);
  EXPECT_NEAR(ClassicFpRate(5, 3), 0.0918488, 1e-6);
  // The exact-size formula converges to the per-key one for large m.
  EXPECT_NEAR(ClassicFpRateExact(10'000'000, 1'000'000, 7),
              ClassicFpRate(10, 7), 1e-7);
  // With m = 1 bit every probe of every key hits it.
  EXPECT_DOUBLE_EQ(ClassicFpRateExact(1, 1, 1), 1.0);
}

TEST(BloomMathTest, ClassicSizeForRate) {
  // m = ceil(1e6 * 9.58505...) and k = round(9.585 * ln 2) = 7.
  BloomSize s = ClassicSizeForRate(1'000'000, 0.01);
  EXPECT_EQ(s.bits, 9'585'059u);
  EXPECT_EQ(s.k, 7);
  s = ClassicSizeForRate(1000, 0.001);  // 14.38 bits/key
  EXPECT_EQ(s.bits, 14'378u);
  EXPECT_EQ(s.k, 10);
  // The filter it sizes meets its target (the formula is the optimum).
  s = ClassicSizeForRate(100'000, 0.02);
  EXPECT_LE(ClassicFpRateExact(s.bits, 100'000, s.k), 0.0201);
}

TEST(BloomMathTest, BlockedFormula) {
  EXPECT_NEAR(BlockedFpRate(10, 7), 0.0095712, 1e-6);
  EXPECT_NEAR(BlockedFpRate(10, 6), 0.0095760, 1e-6);
  EXPECT_NEAR(BlockedFpRate(20, 11), 0.00019150, 1e-7);
  // Blocking always costs something over the classic filter.
  // (At k = 1 the two are equal: one probe per key either way.)
  for (int bpk = 3; bpk <= 30; ++bpk) {
    const int k = ClassicOptimalK(bpk);
    EXPECT_GT(BlockedFpRate(bpk, k), ClassicFpRate(bpk, k)) << bpk;
  }
  // A huge block behaves like a classic filter.
  EXPECT_NEAR(BlockedFpRate(10, 7, 1u << 24), ClassicFpRate(10, 7), 2e-6);
  // Tiny bpk: Poisson mean of 51200 keys per block must not underflow.
  EXPECT_NEAR(BlockedFpRate(0.01, 1), 1.0, 1e-9);
  EXPECT_NEAR(BlockedFpRate(0.05, 2), 1.0, 1e-9);
  EXPECT_NEAR(BlockedFpRate(1, 1), ClassicFpRate(1, 1), 1e-9);
  // Either side of the large-load shortcut (lambda = 1e4) agrees.
  EXPECT_NEAR(BlockedFpRate(512 / 9999.0, 1), BlockedFpRate(512 / 10001.0, 1),
              1e-6);
}

// Frozen: the table in docs/filter_format.md ("Choosing k").
TEST(BloomMathTest, BlockedOptimalKTable) {
  const int kExpected[31] = {0,  1,  1,  2,  3,  3,  4,  5,  5,  6,  7,
                             7,  8,  8,  9,  9,  10, 10, 10, 11, 11, 12,
                             12, 12, 13, 13, 13, 14, 14, 14, 14};
  for (int bpk = 1; bpk <= 30; ++bpk) {
    EXPECT_EQ(BlockedOptimalK(bpk), kExpected[bpk]) << "bpk " << bpk;
    // Optimal means no other k does better.
    for (int k = 1; k <= 30; ++k) {
      EXPECT_GE(BlockedFpRate(bpk, k), BlockedFpRate(bpk, kExpected[bpk]));
    }
    // And it is never above the classic choice (blocks are fuller).
    EXPECT_LE(BlockedOptimalK(bpk), ClassicOptimalK(bpk));
  }
  EXPECT_EQ(BlockedOptimalK(9.5), 6);
  EXPECT_EQ(BlockedOptimalK(100), 24);
  EXPECT_EQ(BlockedOptimalK(1e-9), 1);  // fast, too
}

TEST(BloomMathTest, OutOfRangeInputsDoNotCrash) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  EXPECT_EQ(ClassicBitsPerKeyForRate(1), 0);
  EXPECT_EQ(ClassicBitsPerKeyForRate(2), 0);
  EXPECT_EQ(ClassicBitsPerKeyForRate(nan), 0);
  EXPECT_GT(ClassicBitsPerKeyForRate(0), 1000);
  EXPECT_GT(ClassicBitsPerKeyForRate(-1), 1000);
  EXPECT_EQ(ClassicOptimalK(0), 1);
  EXPECT_EQ(ClassicOptimalK(-3), 1);
  EXPECT_EQ(ClassicOptimalK(nan), 1);
  EXPECT_EQ(ClassicOptimalK(inf), 30);
  EXPECT_EQ(ClassicOptimalK(1e9), 30);
  EXPECT_EQ(ClassicFpRate(0, 3), 1);
  EXPECT_EQ(ClassicFpRate(10, 0), 1);
  EXPECT_EQ(ClassicFpRate(nan, 3), 1);
  EXPECT_EQ(ClassicFpRateExact(0, 10, 3), 1);
  EXPECT_EQ(BlockedFpRate(0, 3), 1);
  EXPECT_EQ(BlockedFpRate(nan, 3), 1);
  EXPECT_EQ(BlockedFpRate(10, 0), 1);
  EXPECT_EQ(BlockedFpRate(10, 3, 0), 1);
  EXPECT_EQ(BlockedOptimalK(0), 1);
  EXPECT_EQ(BlockedOptimalK(-1), 1);
  EXPECT_EQ(BlockedOptimalK(nan), 1);
  EXPECT_EQ(BlockedOptimalK(inf), 1);
  EXPECT_EQ(BlockedFpRate(inf, 3), 0);
  EXPECT_EQ(ClassicFpRate(inf, 3), 0);
  EXPECT_EQ(ClassicSizeForRate(0, 0.01).bits, 0u);
  EXPECT_EQ(ClassicSizeForRate(0, 0.01).k, 7);
  EXPECT_EQ(ClassicSizeForRate(10, 1).bits, 0u);
  EXPECT_EQ(ClassicSizeForRate(10, 1).k, 1);
}

}  // namespace bloom_math_test
}  // namespace siftdb
