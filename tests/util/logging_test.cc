// Copyright (c) siftdb authors.

#include "util/logging.h"

#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace siftdb {
namespace {

class CapturingLogger : public Logger {
 public:
  void Log(std::string_view message) override { lines.emplace_back(message); }
  std::vector<std::string> lines;
};

TEST(LoggingTest, LogFormatsAndIgnoresNull) {
  CapturingLogger logger;
  const std::string_view file = "000005.log";
  Log(&logger, "recovered %d records from %s", 42, file);
  Log(&logger, "plain");
  ASSERT_EQ(2u, logger.lines.size());
  EXPECT_EQ("recovered 42 records from 000005.log", logger.lines[0]);
  EXPECT_EQ("plain", logger.lines[1]);
  Log(nullptr, "dropped %d", 1);  // no crash
}

TEST(LoggingTest, NumberToString) {
  EXPECT_EQ("0", NumberToString(0));
  EXPECT_EQ("1", NumberToString(1));
  EXPECT_EQ("18446744073709551615",
            NumberToString(std::numeric_limits<uint64_t>::max()));
  std::string s = "n=";
  AppendNumberTo(&s, 123);
  EXPECT_EQ("n=123", s);
}

TEST(LoggingTest, EscapeString) {
  EXPECT_EQ("", EscapeString(""));
  EXPECT_EQ("key-01 ~", EscapeString("key-01 ~"));
  EXPECT_EQ("a\\x00b\\xff\\x0a", EscapeString(std::string("a\0b\xff\n", 5)));
  EXPECT_EQ("\\x7f\\x1f", EscapeString("\x7f\x1f"));
}

// Round trips every number around powers of 10 and 2, plus text after it.
TEST(LoggingTest, ConsumeDecimalNumberRoundTrip) {
  std::vector<uint64_t> values = {0,
                                  1,
                                  9,
                                  10,
                                  99,
                                  100,
                                  std::numeric_limits<uint64_t>::max(),
                                  std::numeric_limits<uint64_t>::max() - 1};
  for (uint64_t p = 1; p < std::numeric_limits<uint64_t>::max() / 10; p *= 10) {
    values.push_back(p - 1);
    values.push_back(p);
    values.push_back(p + 1);
  }
  for (int shift = 0; shift < 64; shift++) {
    values.push_back(uint64_t{1} << shift);
    values.push_back((uint64_t{1} << shift) - 1);
  }
  for (uint64_t v : values) {
    for (const std::string suffix : {"", " ", "abc", ".log"}) {
      const std::string text = NumberToString(v) + suffix;
      std::string_view in = text;
      uint64_t parsed = 7;
      ASSERT_TRUE(ConsumeDecimalNumber(&in, &parsed)) << text;
      EXPECT_EQ(v, parsed);
      EXPECT_EQ(suffix, in);
    }
  }
}

TEST(LoggingTest, ConsumeDecimalNumberRejects) {
  for (const std::string text :
       {"", "x1", " 1", "-1", "18446744073709551616", "18446744073709551617",
        "99999999999999999999", "184467440737095516150"}) {
    std::string_view in = text;
    uint64_t v;
    EXPECT_FALSE(ConsumeDecimalNumber(&in, &v)) << text;
    EXPECT_EQ(text, in) << "input consumed on failure";
  }
}

TEST(LoggingTest, ConsumeDecimalNumberLeadingZeros) {
  std::string_view in = "000005.log";
  uint64_t v;
  ASSERT_TRUE(ConsumeDecimalNumber(&in, &v));
  EXPECT_EQ(5u, v);
  EXPECT_EQ(".log", in);
}

}  // namespace
}  // namespace siftdb
