// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Damage inside a log: every kind is reported once, as DataLoss naming the
// offset, with the bytes dropped; reading resumes after it.

#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/wal/log_test_util.h"

namespace siftdb::log {
namespace log_corruption_test {

using test::BigString;
using test::LogHarness;
using ::testing::HasSubstr;

// The single report h holds: its status is DataLoss with this message.
void ExpectOneReport(const LogHarness& h, const std::string& message,
                     size_t dropped) {
  ASSERT_EQ(1u, h.ReportCount()) << h.ReportMessages();
  const absl::Status& s = h.report().statuses[0];
  EXPECT_EQ(absl::StatusCode::kDataLoss, s.code());
  EXPECT_EQ(message, s.message());
  EXPECT_EQ(dropped, h.DroppedBytes());
}

// Block 0: "foo" (10 bytes) then the kFirstType of a record whose kLastType
// carries its last 17 bytes at the start of block 1; then "baz".
void WriteSpanningLog(LogHarness* h) {
  h->Write("foo");
  h->Write(BigString("bar", kBlockSize));
  h->Write("baz");
}

TEST(LogCorruptionTest, ReadErrorIsReportedWithItsStatus) {
  LogHarness h;
  h.Write("foo");
  h.StartReading();
  h.source()->fail_reads = true;
  EXPECT_EQ("EOF", h.Read());
  ASSERT_EQ(1u, h.ReportCount());
  EXPECT_EQ(absl::StatusCode::kInternal, h.report().statuses[0].code());
  EXPECT_THAT(std::string(h.report().statuses[0].message()),
              HasSubstr("Input/output error"));
  EXPECT_EQ(kBlockSize, h.DroppedBytes());
}

TEST(LogCorruptionTest, ChecksumMismatchMidLogDropsRestOfBlock) {
  LogHarness h;
  WriteSpanningLog(&h);
  h.IncrementByte(0, 14);  // foo's checksum
  EXPECT_EQ("baz", h.Read());
  EXPECT_EQ("EOF", h.Read());
  // Block 0 is dropped; the orphaned kLastType in block 1 is reported too.
  ASSERT_EQ(2u, h.ReportCount()) << h.ReportMessages();
  EXPECT_EQ("log record at offset 0: checksum mismatch",
            h.report().statuses[0].message());
  EXPECT_EQ(absl::StatusCode::kDataLoss, h.report().statuses[0].code());
  EXPECT_EQ(
      absl::StrFormat("log record at offset %d: missing start of fragmented "
                      "record",
                      kBlockSize),
      h.report().statuses[1].message());
  EXPECT_EQ(kBlockSize + 17, h.DroppedBytes());
}

TEST(LogCorruptionTest, PayloadDamageIsAChecksumMismatch) {
  LogHarness h;
  h.Write("first");
  const uint64_t offset = h.Write("damaged");
  h.Write(BigString("x", kBlockSize));  // the log goes on into block 1
  h.Write("after");
  h.IncrementByte(offset + kHeaderSize + 2, 1);
  EXPECT_EQ("first", h.Read());
  EXPECT_EQ("after", h.Read());
  EXPECT_EQ("EOF", h.Read());
  ASSERT_EQ(2u, h.ReportCount());
  EXPECT_EQ(
      absl::StrFormat("log record at offset %d: checksum mismatch", offset),
      h.report().statuses[0].message());
}

TEST(LogCorruptionTest, ChecksumMismatchOfRecordFillingABlockWithMoreAfter) {
  LogHarness h;
  h.Write(BigString("full", kBlockSize - kHeaderSize));  // exactly block 0
  h.Write("next");
  h.IncrementByte(100, 1);
  EXPECT_EQ("next", h.Read());
  EXPECT_EQ("EOF", h.Read());
  ExpectOneReport(h, "log record at offset 0: checksum mismatch", kBlockSize);
}

TEST(LogCorruptionTest, ChecksumMismatchNotAtEndOfFileIsReported) {
  // The damaged record is followed by a torn one: still damage.
  LogHarness h;
  h.Write("foo");
  h.Write("bar");
  h.Write("torn");
  h.IncrementByte(kHeaderSize + 1, 1);  // foo's payload
  h.ShrinkSize(2);
  EXPECT_EQ("EOF", h.Read());
  ExpectOneReport(h, "log record at offset 0: checksum mismatch",
                  h.WrittenBytes());
}

TEST(LogCorruptionTest, BadLengthMidLog) {
  LogHarness h;
  WriteSpanningLog(&h);
  h.SetLength(0, 40000);  // past the end of block 0
  EXPECT_EQ("baz", h.Read());
  EXPECT_EQ("EOF", h.Read());
  ASSERT_EQ(2u, h.ReportCount()) << h.ReportMessages();
  EXPECT_EQ("log record at offset 0: bad record length",
            h.report().statuses[0].message());
  EXPECT_EQ(kBlockSize + 17, h.DroppedBytes());
}

TEST(LogCorruptionTest, BadLengthInLastBlockLooksTorn) {
  // Documented limit: a length reaching past the end of the file is a torn
  // payload as far as the reader can tell.
  LogHarness h;
  h.Write("foo");
  h.Write("bar");
  h.SetLength(0, 1000);
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount());
}

// The first record, "foo", gets another type (with a valid checksum); the
// second record is still read and the first is reported.
TEST(LogCorruptionTest, WrongRecordTypes) {
  struct Case {
    int type;
    std::string second;
    std::string message;
    size_t dropped;
  };
  const std::string big = BigString("bar", 100000);
  const Case cases[] = {
      {100, "bar", "unknown record type 100", kHeaderSize + 3},
      {kZeroType, "bar", "unknown record type 0", kHeaderSize + 3},
      {kMiddleType, "bar", "missing start of fragmented record", 3},
      {kLastType, "bar", "missing start of fragmented record", 3},
      {kFirstType, "bar", "partial record without end", 3},  // then a full
      {kFirstType, big, "partial record without end", 3},    // then a first
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "type " << c.type << ", "
                                    << c.second.size() << "-byte second");
    LogHarness h;
    h.Write("foo");
    h.Write(c.second);
    h.SetByte(6, static_cast<char>(c.type));
    h.FixChecksum(0, 3);
    EXPECT_EQ(c.second, h.Read());
    EXPECT_EQ("EOF", h.Read());
    ExpectOneReport(h, "log record at offset 0: " + c.message, c.dropped);
  }
}

TEST(LogCorruptionTest, DamagedMiddleFragmentDropsTheWholeRecord) {
  LogHarness h;
  h.Write(BigString("big", 3 * kBlockSize));  // first, middle x2, last
  h.Write(BigString("next", kBlockSize));     // goes on into block 4
  h.Write("end");
  h.IncrementByte(kBlockSize + 50, 1);  // block 1: a kMiddleType
  EXPECT_EQ(BigString("next", kBlockSize), h.Read());
  EXPECT_EQ("end", h.Read());
  EXPECT_EQ("EOF", h.Read());
  // The checksum failure, the partial record it cut, and the orphaned
  // middle and last fragments after it.
  ASSERT_EQ(4u, h.ReportCount()) << h.ReportMessages();
  EXPECT_EQ(
      absl::StrFormat("log record at offset %d: checksum mismatch", kBlockSize),
      h.report().statuses[0].message());
  EXPECT_EQ("log record at offset 0: partial record without end",
            h.report().statuses[1].message());
  EXPECT_THAT(h.ReportMessages(),
              HasSubstr(absl::StrFormat(
                  "log record at offset %d: missing start", 2 * kBlockSize)));
}

TEST(LogCorruptionTest, ZeroedBlockMidLog) {
  LogHarness h;
  for (int i = 0; i < 3; i++) {
    h.Write(BigString(std::to_string(i), kBlockSize - kHeaderSize));
  }
  for (size_t i = kBlockSize; i < 2 * kBlockSize; i++) h.SetByte(i, 0);
  EXPECT_EQ(BigString("0", kBlockSize - kHeaderSize), h.Read());
  EXPECT_EQ(BigString("2", kBlockSize - kHeaderSize), h.Read());
  EXPECT_EQ("EOF", h.Read());
  ExpectOneReport(h,
                  absl::StrFormat("log record at offset %d: zero-filled region",
                                  kBlockSize),
                  kBlockSize);
}

TEST(LogCorruptionTest, ZeroedRecordInsideABlock) {
  LogHarness h;
  h.Write("foo");
  h.Write("bar");
  h.Write("baz");
  h.Write(BigString("x", kBlockSize));
  h.Write("end");
  for (size_t i = 10; i < 20; i++) h.SetByte(i, 0);  // all of "bar"
  EXPECT_EQ("foo", h.Read());
  EXPECT_EQ("end", h.Read());
  EXPECT_EQ("EOF", h.Read());
  // The rest of block 0 cannot be trusted; the orphan tail of x in block 1.
  ASSERT_EQ(2u, h.ReportCount()) << h.ReportMessages();
  EXPECT_EQ("log record at offset 10: checksum mismatch",
            h.report().statuses[0].message());
}

// Damage followed by zeros is held back: a torn tail if the zeros run to
// the end of the file, reported once real data shows up after them.
TEST(LogCorruptionTest, DamageThenZerosThenDataIsReported) {
  LogHarness h;
  h.Write("foo");
  h.Write("bar");
  h.Write(BigString("x", kBlockSize - 20 - kHeaderSize));  // ends block 0
  h.Write(BigString("zeroed", kBlockSize - kHeaderSize));  // all of block 1
  h.Write("next");
  h.IncrementByte(10, 1);  // bar's checksum
  for (size_t i = 20; i < 2 * kBlockSize; i++) h.SetByte(i, 0);
  EXPECT_EQ("foo", h.Read());
  EXPECT_EQ("next", h.Read());
  EXPECT_EQ("EOF", h.Read());
  ExpectOneReport(h, "log record at offset 10: checksum mismatch",
                  2 * kBlockSize - 10);

  // Without "next", the same bytes are a torn tail.
  h.ShrinkSize(h.WrittenBytes() - 2 * kBlockSize);
  h.StartReading();
  EXPECT_EQ("foo", h.Read());
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount()) << h.ReportMessages();
}

TEST(LogCorruptionTest, BadLengthThenZeros) {
  LogHarness h;
  h.Write("foo");
  const uint64_t offset = h.Write(BigString("y", 100));
  h.SetLength(offset, 60000);
  for (size_t i = offset + kHeaderSize; i < h.WrittenBytes(); i++) {
    h.SetByte(i, 0);
  }
  h.contents().resize(3 * kBlockSize, '\0');  // zeros to the end of block 2
  EXPECT_EQ("foo", h.Read());
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount()) << h.ReportMessages();

  h.ReopenForAppend();
  h.Write("data");  // now non-zero data follows, in block 3
  h.StartReading();
  EXPECT_EQ("foo", h.Read());
  EXPECT_EQ("data", h.Read());
  ExpectOneReport(
      h, absl::StrFormat("log record at offset %d: bad record length", offset),
      3 * kBlockSize - offset);
}

TEST(LogCorruptionTest, ChecksumsOffReturnsDamagedPayload) {
  LogHarness h;
  h.Write("foo");
  h.Write("bar");
  h.IncrementByte(kHeaderSize, 1);
  h.StartReading(0, /*checksum=*/false);
  EXPECT_EQ("goo", h.Read());
  EXPECT_EQ("bar", h.Read());
  EXPECT_EQ(0u, h.ReportCount());
}

TEST(LogCorruptionTest, MessageNamesLargeOffsets) {
  LogHarness h;
  for (int i = 0; i < 2000; i++) h.Write(test::NumberString(i));
  const uint64_t offset = h.Write("victim");
  for (int i = 0; i < 5000; i++) h.Write(test::NumberString(i));
  h.IncrementByte(offset, 1);
  h.ReadAll();
  ASSERT_GE(h.ReportCount(), 1u);
  EXPECT_EQ(
      absl::StrFormat("log record at offset %d: checksum mismatch", offset),
      h.report().statuses[0].message());
}

TEST(LogCorruptionTest, DamageBeforeInitialOffsetIsNotReported) {
  LogHarness h;
  h.Write("foo");
  h.Write(BigString("bar", kBlockSize));
  const uint64_t offset = h.Write("baz");
  h.IncrementByte(0, 1);
  h.StartReading(offset);
  EXPECT_EQ("baz", h.Read());
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount()) << h.ReportMessages();
}

// Random single-byte damage anywhere never crashes, never invents records
// and never reports without dropping.
TEST(LogCorruptionTest, RandomDamageIsContained) {
  Random rnd(1234);
  for (int trial = 0; trial < 300; trial++) {
    LogHarness h;
    std::vector<std::string> written;
    const int n = 1 + rnd.Uniform(20);
    for (int i = 0; i < n; i++) {
      written.push_back(test::RandomRecord(&rnd));
      h.Write(written.back());
    }
    const size_t pos = rnd.Uniform(static_cast<uint32_t>(h.WrittenBytes()));
    h.IncrementByte(pos, 1 + rnd.Uniform(255));
    const std::vector<std::string> read = h.ReadAll();
    // What is read is a subsequence of what was written.
    size_t j = 0;
    for (const std::string& r : read) {
      while (j < written.size() && written[j] != r) j++;
      ASSERT_LT(j, written.size()) << "invented a record, trial " << trial;
      j++;
    }
    EXPECT_LE(read.size(), written.size());
  }
}

}  // namespace log_corruption_test
}  // namespace siftdb::log
