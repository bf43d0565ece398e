// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Torn tails: a log cut (or garbled) anywhere inside its last record, as a
// crash leaves it, reads back every earlier record and then ends cleanly
// with no damage reported.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/wal/log_test_util.h"

namespace siftdb::log {
namespace log_torn_tail_test {

using test::BigString;
using test::LogHarness;
using test::ReportCollector;
using test::StringSource;

// Reads the log in `bytes` and checks that it holds exactly `expected`,
// with no report.
void ExpectCleanRead(std::string_view bytes,
                     const std::vector<std::string>& expected,
                     const std::string& what) {
  StringSource source(bytes);
  ReportCollector report;
  Reader reader(&source, &report, /*checksum=*/true, /*initial_offset=*/0);
  std::string scratch;
  std::string_view record;
  size_t n = 0;
  while (reader.ReadRecord(&record, &scratch)) {
    ASSERT_LT(n, expected.size()) << what << ": extra record";
    ASSERT_EQ(expected[n], record) << what << ": record " << n;
    n++;
  }
  ASSERT_EQ(expected.size(), n) << what << ": records missing";
  ASSERT_EQ(0u, report.statuses.size()) << what << ": " << report.Messages();
}

// The header offset of the last physical record of the record that starts
// at `start` in log.
uint64_t FinalPhysicalRecord(const std::string& log, uint64_t start) {
  uint64_t pos = start;
  while (true) {
    if (kBlockSize - pos % kBlockSize < kHeaderSize) {
      pos += kBlockSize - pos % kBlockSize;
    }
    const size_t length =
        static_cast<uint8_t>(log[pos + 4]) |
        (static_cast<size_t>(static_cast<uint8_t>(log[pos + 5])) << 8);
    const int type = log[pos + 6];
    if (type == kFullType || type == kLastType) return pos;
    pos += kHeaderSize + length;
  }
}

class TornTailTest : public ::testing::TestWithParam<size_t> {
 protected:
  // Earlier records (one spanning blocks), then the record of the test's
  // size; returns where that last record begins. end_of_earlier_ is where
  // the earlier records end (before any block trailer).
  uint64_t WriteLog() {
    for (const std::string& r :
         {std::string("alpha"), std::string(""),
          BigString("spanning", kBlockSize + 1000), std::string("omega")}) {
      earlier_.push_back(r);
      h_.Write(r);
    }
    end_of_earlier_ = h_.WrittenBytes();
    last_ = BigString("last", GetParam());
    return h_.Write(last_);
  }

  LogHarness h_;
  std::vector<std::string> earlier_;
  uint64_t end_of_earlier_ = 0;
  std::string last_;
};

TEST_P(TornTailTest, CutAtEveryByteOfTheLastRecord) {
  WriteLog();
  const std::string& log = h_.contents();
  // From the end of the earlier records: a cut may fall into the
  // zero-filled trailer before the last record too.
  for (uint64_t cut = end_of_earlier_; cut < log.size(); cut++) {
    ExpectCleanRead(std::string_view(log).substr(0, cut), earlier_,
                    "cut at " + std::to_string(cut));
    if (HasFailure()) return;
  }
  // And whole, it reads everything.
  std::vector<std::string> all = earlier_;
  all.push_back(last_);
  ExpectCleanRead(log, all, "whole");
}

// The file has its full length but the final physical record's bytes are
// garbage from some point on (a partly written sector). Earlier fragments
// of the same record are intact.
TEST_P(TornTailTest, GarbledFinalPhysicalRecord) {
  const uint64_t start = WriteLog();
  const std::string& log = h_.contents();
  const uint64_t final_header = FinalPhysicalRecord(log, start);
  for (uint64_t from = final_header; from < log.size(); from++) {
    if (from == final_header + 4 || from == final_header + 5) {
      continue;  // a garbled length is covered by the cut test
    }
    std::string garbled = log;
    for (uint64_t i = from; i < garbled.size(); i++) {
      garbled[i] = static_cast<char>(garbled[i] ^ 0x5a);
    }
    ExpectCleanRead(garbled, earlier_, "garbled from " + std::to_string(from));
    if (HasFailure()) return;
  }
}

// A crash can also leave the file extended with zeros.
TEST_P(TornTailTest, ZeroFilledTail) {
  const uint64_t start = WriteLog();
  std::string log = h_.contents();
  for (uint64_t zeros_from : {start, start + 3, start + kHeaderSize}) {
    if (zeros_from >= log.size()) continue;
    for (size_t extra : {size_t{0}, size_t{100}, 3 * kBlockSize}) {
      std::string zeroed = log.substr(0, zeros_from);
      zeroed.append(log.size() - zeros_from + extra, '\0');
      ExpectCleanRead(zeroed, earlier_,
                      "zeros from " + std::to_string(zeros_from) + " +" +
                          std::to_string(extra));
    }
  }
  // Zeros after a complete log are just the end too.
  std::vector<std::string> all = earlier_;
  all.push_back(last_);
  ExpectCleanRead(log + std::string(2 * kBlockSize + 5, '\0'), all,
                  "zeros after");
}

INSTANTIATE_TEST_SUITE_P(LastRecordSizes, TornTailTest,
                         ::testing::Values(size_t{0}, size_t{1}, size_t{100},
                                           kBlockSize - 2 * kHeaderSize,
                                           kBlockSize - kHeaderSize,
                                           kBlockSize + 100,
                                           2 * kBlockSize + 5000));

// The log ends exactly at a block boundary with a damaged final record:
// the lookahead finds no more data, so it is a torn tail.
TEST(TornTailBoundaryTest, GarbledRecordEndingAtBlockBoundary) {
  LogHarness h;
  h.Write("alpha");
  const uint64_t start =
      h.Write(BigString("fill", kBlockSize - h.WrittenBytes() - kHeaderSize));
  ASSERT_EQ(kBlockSize, h.WrittenBytes());
  h.IncrementByte(start + kHeaderSize + 10, 1);
  EXPECT_EQ("alpha", h.Read());
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount()) << h.ReportMessages();
}

TEST(TornTailBoundaryTest, FirstAndMiddleWithoutLast) {
  LogHarness h;
  h.Write("alpha");
  h.Write(BigString("x", 3 * kBlockSize));
  // Drop the kLastType entirely: the log ends after a kMiddleType.
  h.ShrinkSize(h.WrittenBytes() - 3 * kBlockSize);
  EXPECT_EQ("alpha", h.Read());
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount()) << h.ReportMessages();
}

}  // namespace log_torn_tail_test
}  // namespace siftdb::log
