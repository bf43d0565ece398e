// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/histogram.h"

#include <cmath>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace siftdb {
namespace histogram_test {

using ::testing::HasSubstr;

TEST(HistogramTest, EmptyIsAllZero) {
  Histogram h;
  EXPECT_EQ(0u, h.Count());
  EXPECT_EQ(0, h.Min());
  EXPECT_EQ(0, h.Max());
  EXPECT_EQ(0, h.Average());
  EXPECT_EQ(0, h.StdDev());
  EXPECT_EQ(0, h.Median());
  EXPECT_EQ(0, h.Percentile(99));
  EXPECT_THAT(h.ToString(), HasSubstr("Count: 0"));
}

TEST(HistogramTest, MomentsAreExact) {
  Histogram h;
  for (double v : {2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0}) h.Add(v);
  EXPECT_EQ(8u, h.Count());
  EXPECT_DOUBLE_EQ(2, h.Min());
  EXPECT_DOUBLE_EQ(9, h.Max());
  EXPECT_DOUBLE_EQ(5, h.Average());
  EXPECT_DOUBLE_EQ(2, h.StdDev());  // population standard deviation
  EXPECT_DOUBLE_EQ(40, h.Sum());
}

TEST(HistogramTest, PercentilesOfUniformValues) {
  Histogram h;
  for (int i = 1; i <= 10000; i++) h.Add(i);
  // Buckets are at most 25% wide: estimates within that of the truth.
  EXPECT_NEAR(5000, h.Median(), 5000 * 0.25);
  EXPECT_NEAR(9900, h.Percentile(99), 9900 * 0.25);
  EXPECT_NEAR(9990, h.Percentile(99.9), 9990 * 0.25);
  EXPECT_DOUBLE_EQ(10000, h.Percentile(100));
  EXPECT_GE(h.Percentile(0), 1);
  // Monotone in p.
  double prev = 0;
  for (double p = 0; p <= 100; p += 0.5) {
    const double v = h.Percentile(p);
    EXPECT_GE(v, prev) << p;
    prev = v;
  }
}

TEST(HistogramTest, PercentilesStayWithinMinAndMax) {
  Histogram h;
  for (int i = 0; i < 100; i++) h.Add(1234.5);
  EXPECT_DOUBLE_EQ(1234.5, h.Median());
  EXPECT_DOUBLE_EQ(1234.5, h.Percentile(99.9));
  EXPECT_DOUBLE_EQ(1234.5, h.Percentile(0));
}

TEST(HistogramTest, HugeAndNegativeValues) {
  Histogram h;
  h.Add(-5);
  h.Add(1e300);
  EXPECT_EQ(0, h.Min());
  EXPECT_EQ(1e300, h.Max());
  EXPECT_LE(h.Percentile(99), 1e300);
  EXPECT_FALSE(h.ToString().empty());
}

TEST(HistogramTest, MergeEqualsAddingEverything) {
  Histogram a, b, all;
  for (int i = 0; i < 1000; i++) {
    a.Add(i);
    all.Add(i);
    b.Add(i * 3 + 7);
    all.Add(i * 3 + 7);
  }
  a.Merge(b);
  EXPECT_EQ(all.Count(), a.Count());
  EXPECT_DOUBLE_EQ(all.Average(), a.Average());
  EXPECT_DOUBLE_EQ(all.StdDev(), a.StdDev());
  EXPECT_DOUBLE_EQ(all.Min(), a.Min());
  EXPECT_DOUBLE_EQ(all.Max(), a.Max());
  EXPECT_DOUBLE_EQ(all.Percentile(99), a.Percentile(99));
  EXPECT_EQ(all.ToString(), a.ToString());
  Histogram empty;
  a.Merge(empty);
  EXPECT_EQ(all.ToString(), a.ToString());
}

TEST(HistogramTest, ToStringHasDbBenchLayout) {
  Histogram h;
  for (int i = 1; i <= 100; i++) h.Add(i);
  const std::string s = h.ToString();
  EXPECT_THAT(s, HasSubstr("Count: 100  Average: 50.5000  StdDev: "));
  EXPECT_THAT(s, HasSubstr("Min: 1.0000  Median: "));
  EXPECT_THAT(s, HasSubstr("Percentiles: P50: "));
  EXPECT_THAT(s, HasSubstr(" P99: "));
  EXPECT_THAT(s, HasSubstr(" P99.9: "));
  EXPECT_THAT(s, HasSubstr("Max: 100.00"));
  EXPECT_THAT(s,
              HasSubstr("[      90,     100 )      10  10.000%  99.000% ##\n"));
  EXPECT_THAT(s, HasSubstr("1.000% 100.000%\n"));
}

TEST(HistogramTest, ClearResets) {
  Histogram h;
  h.Add(10);
  h.Clear();
  EXPECT_EQ(0u, h.Count());
  EXPECT_EQ(0, h.Max());
}

}  // namespace histogram_test
}  // namespace siftdb
