// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "siftdb/comparator.h"

#include <string>

#include "gtest/gtest.h"

namespace siftdb {
namespace comparator_test {

const Comparator* Cmp() { return BytewiseComparator(); }

std::string Separator(std::string start, std::string_view limit) {
  Cmp()->FindShortestSeparator(&start, limit);
  return start;
}

std::string Successor(std::string key) {
  Cmp()->FindShortSuccessor(&key);
  return key;
}

TEST(BytewiseComparatorTest, NameIsStable) {
  EXPECT_STREQ("siftdb.BytewiseComparator", Cmp()->Name());
  EXPECT_EQ(Cmp(), BytewiseComparator());  // a singleton
}

TEST(BytewiseComparatorTest, ComparesUnsignedBytes) {
  EXPECT_LT(Cmp()->Compare("a", "b"), 0);
  EXPECT_GT(Cmp()->Compare("b", "a"), 0);
  EXPECT_EQ(Cmp()->Compare("abc", "abc"), 0);
  EXPECT_LT(Cmp()->Compare("ab", "abc"), 0);
  EXPECT_LT(Cmp()->Compare("", "a"), 0);
  EXPECT_LT(Cmp()->Compare("\x7f", "\x80"), 0);  // unsigned, not signed
  EXPECT_LT(Cmp()->Compare(std::string("a\0", 2), "a\x01"), 0);
  EXPECT_GT(Cmp()->Compare("\xff", std::string("\0", 1)), 0);
}

TEST(BytewiseComparatorTest, ShortestSeparator) {
  EXPECT_EQ("abd", Separator("abcdef", "abzz"));
  EXPECT_EQ("b", Separator("a", "c"));
  // Bumping would reach limit: unchanged.
  EXPECT_EQ("abc1", Separator("abc1", "abd"));
  // One a prefix of the other: unchanged.
  EXPECT_EQ("abc", Separator("abc", "abcdef"));
  EXPECT_EQ("abcdef", Separator("abcdef", "abc"));
  // 0xff cannot be bumped.
  EXPECT_EQ(
      "a\xff"
      "b",
      Separator("a\xff"
                "b",
                "b"));
  EXPECT_EQ("a\x81", Separator("a\x80zz", "a\x90"));
}

TEST(BytewiseComparatorTest, SeparatorIsBetween) {
  const std::string keys[] = {"",   "a",    "ab",       "abc",       "b",
                              "ba", "\xff", "\xff\xff", "a\xff\x01", "zzz"};
  for (const auto& a : keys) {
    for (const auto& b : keys) {
      if (Cmp()->Compare(a, b) >= 0) continue;
      const std::string s = Separator(a, b);
      EXPECT_LE(Cmp()->Compare(a, s), 0) << a << " " << b;
      EXPECT_LT(Cmp()->Compare(s, b), 0) << a << " " << b;
    }
  }
}

TEST(BytewiseComparatorTest, ShortSuccessor) {
  EXPECT_EQ("b", Successor("abc"));
  EXPECT_EQ("\x01", Successor(std::string("\0\0", 2)));
  EXPECT_EQ("\xff\xff\x01", Successor(std::string("\xff\xff\x00zz", 5)));
  EXPECT_EQ("\xff\xff", Successor("\xff\xff"));
  EXPECT_EQ("", Successor(""));
  for (const std::string k : {"a", "zz", "\xfe\xff", "q\xff"}) {
    EXPECT_GE(Cmp()->Compare(Successor(k), k), 0) << k;
  }
}

}  // namespace comparator_test
}  // namespace siftdb
