// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/compare_bytes.h"

#include <string>
#include <string_view>

#include "gtest/gtest.h"
#include "util/random.h"

namespace siftdb {
namespace compare_bytes_test {

int Sign(int r) { return (r > 0) - (r < 0); }

// The order std::string_view::compare gives (unsigned bytes, then length).
void ExpectSameOrder(std::string_view a, std::string_view b) {
  EXPECT_EQ(Sign(CompareBytes(a, b)), Sign(a.compare(b)))
      << "a=" << testing::PrintToString(std::string(a))
      << " b=" << testing::PrintToString(std::string(b));
  EXPECT_EQ(Sign(CompareBytes(b, a)), -Sign(a.compare(b)));
}

TEST(CompareBytesTest, EdgeCases) {
  ExpectSameOrder("", "");
  ExpectSameOrder("", "a");
  ExpectSameOrder("abcdefgh", "abcdefgh");
  ExpectSameOrder("abcdefgh", "abcdefghi");  // a prefix, at a word's end
  ExpectSameOrder("abcdefg", "abcdefgh");    // a prefix, inside a word
  // The first differing byte decides, wherever it sits in its word.
  ExpectSameOrder("abcdefgh", "bbcdefga");
  ExpectSameOrder("axxxxxxxz", "bxxxxxxxa");
  // Bytes at and above 0x80 sort after the ASCII ones (unsigned order),
  // in every position of a word and of the tail.
  for (size_t pos = 0; pos < 20; pos++) {
    std::string x(20, 'k');
    std::string y = x;
    y[pos] = static_cast<char>(0x80);
    ExpectSameOrder(x, y);
    y[pos] = static_cast<char>(0xff);
    ExpectSameOrder(x, y);
    y[pos] = '\0';
    ExpectSameOrder(x, y);
  }
}

// Random pairs of every length up to 40: equal, differing in two bytes,
// one a prefix of the other, or unrelated. Half draw from a small alphabet
// (so long shared prefixes are common), half from all 256 byte values.
TEST(CompareBytesTest, MatchesStringViewCompareOnRandomPairs) {
  for (uint32_t seed = 1; seed <= 4; seed++) {
    Random rnd(seed);
    for (int iter = 0; iter < 20000; iter++) {
      const bool all_bytes = iter % 2 == 0;
      const size_t n = rnd.Uniform(41);
      std::string a(n, '\0');
      for (char& c : a) {
        c = static_cast<char>(all_bytes ? rnd.Uniform(256)
                                        : 'a' + rnd.Uniform(3));
      }
      std::string b = a;
      switch (rnd.Uniform(5)) {
        case 0:  // equal
          break;
        case 1:  // two bytes differ (with one only, a word compare in the
                 // wrong byte order would still give the right answer)
          if (n > 0) b[rnd.Uniform(n)] = static_cast<char>(rnd.Uniform(256));
          if (n > 0) b[rnd.Uniform(n)] = static_cast<char>(rnd.Uniform(256));
          break;
        case 2:  // shorter
          b.resize(n == 0 ? 0 : rnd.Uniform(n));
          break;
        case 3:  // unrelated bytes, of a random length
          b.resize(rnd.Uniform(41));
          for (char& c : b) c = static_cast<char>(rnd.Uniform(256));
          break;
        default:  // longer
          b.append(1 + rnd.Uniform(9), static_cast<char>(rnd.Uniform(256)));
          break;
      }
      ExpectSameOrder(a, b);
      if (HasFailure()) return;
    }
  }
}

}  // namespace compare_bytes_test
}  // namespace siftdb
