// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// log::Writer + log::Reader on undamaged logs: contents, block layout,
// offsets, initial_offset seeks, appending to an existing log, errors.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "tests/wal/log_test_util.h"

namespace siftdb::log {
namespace log_roundtrip_test {

using test::BigString;
using test::LogHarness;
using test::NumberString;

TEST(LogRoundTripTest, EmptyLog) {
  LogHarness h;
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount());
}

TEST(LogRoundTripTest, ReadWrite) {
  LogHarness h;
  h.Write("foo");
  h.Write("bar");
  h.Write("");
  h.Write("xxxx");
  EXPECT_EQ("foo", h.Read());
  EXPECT_EQ("bar", h.Read());
  EXPECT_EQ("", h.Read());
  EXPECT_EQ("xxxx", h.Read());
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ("EOF", h.Read());  // stays at the end
  EXPECT_EQ(0u, h.ReportCount());
}

TEST(LogRoundTripTest, PhysicalLayout) {
  LogHarness h;
  h.Write("foo");
  const std::string& c = h.contents();
  ASSERT_EQ(kHeaderSize + 3, c.size());
  EXPECT_EQ(3, c[4]);  // length, little-endian
  EXPECT_EQ(0, c[5]);
  EXPECT_EQ(kFullType, c[6]);
  EXPECT_EQ("foo", c.substr(7));
  // The checksum covers the type byte and the payload, masked.
  const char covered[] = {static_cast<char>(kFullType), 'f', 'o', 'o'};
  EXPECT_EQ(crc32c::Mask(crc32c::Value(covered, 4)), DecodeFixed32(c.data()));
}

TEST(LogRoundTripTest, ManySmallRecords) {
  LogHarness h;
  for (int i = 0; i < 100000; i++) h.Write(NumberString(i));
  for (int i = 0; i < 100000; i++) ASSERT_EQ(NumberString(i), h.Read());
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount());
}

TEST(LogRoundTripTest, Fragmentation) {
  LogHarness h;
  h.Write("small");
  h.Write(BigString("medium", 50000));
  h.Write(BigString("large", 100000));
  EXPECT_EQ("small", h.Read());
  EXPECT_EQ(BigString("medium", 50000), h.Read());
  EXPECT_EQ(BigString("large", 100000), h.Read());
  EXPECT_EQ("EOF", h.Read());
}

// Records spanning 1..5 blocks, with sizes just around the block limits.
TEST(LogRoundTripTest, RecordsSpanningBlocks) {
  std::vector<size_t> sizes;
  for (size_t blocks = 1; blocks <= 5; blocks++) {
    const size_t fill = blocks * (kBlockSize - kHeaderSize);
    for (size_t delta :
         {size_t{0}, size_t{1}, size_t{2}, size_t{7}, size_t{8}, size_t{100}}) {
      sizes.push_back(fill - delta);
      sizes.push_back(fill + delta);
    }
  }
  // Each alone from the start of the log, then all of them in a row.
  for (size_t size : sizes) {
    LogHarness h;
    const std::string record = BigString(std::to_string(size), size);
    h.Write(record);
    h.Write("after");
    ASSERT_EQ(record, h.Read()) << size;
    ASSERT_EQ("after", h.Read()) << size;
    ASSERT_EQ("EOF", h.Read()) << size;
    ASSERT_EQ(0u, h.ReportCount());
  }
  LogHarness h;
  for (size_t size : sizes) h.Write(BigString(std::to_string(size), size));
  for (size_t size : sizes) {
    ASSERT_EQ(BigString(std::to_string(size), size), h.Read()) << size;
  }
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount());
}

// The first record leaves `left` bytes in block 0, for left in 0..8:
// 0 (exact fit), 1..6 (zero-filled trailer), 7 (a header with no payload
// fits), 8 (one payload byte fits).
TEST(LogRoundTripTest, BlockTails) {
  for (size_t left = 0; left <= 8; left++) {
    for (const std::string second : {"", "x", "bar", "a longer record"}) {
      SCOPED_TRACE(testing::Message()
                   << "left " << left << " second '" << second << "'");
      LogHarness h;
      const std::string first =
          BigString("foo", kBlockSize - kHeaderSize - left);
      h.Write(first);
      ASSERT_EQ(kBlockSize - left, h.WrittenBytes());
      const uint64_t second_offset = h.Write(second);
      const uint64_t third_offset = h.Write("third");
      if (left < kHeaderSize) {
        // The trailer is zero-filled and the record starts in block 1.
        EXPECT_EQ(kBlockSize, second_offset);
        EXPECT_EQ(std::string(left, '\0'),
                  h.contents().substr(kBlockSize - left, left));
      } else {
        EXPECT_EQ(kBlockSize - left, second_offset);
      }
      EXPECT_EQ(first, h.Read());
      EXPECT_EQ(0u, h.reader()->LastRecordOffset());
      EXPECT_EQ(second, h.Read());
      EXPECT_EQ(second_offset, h.reader()->LastRecordOffset());
      EXPECT_EQ("third", h.Read());
      EXPECT_EQ(third_offset, h.reader()->LastRecordOffset());
      EXPECT_EQ("EOF", h.Read());
      EXPECT_EQ(0u, h.ReportCount()) << h.ReportMessages();
    }
  }
}

TEST(LogRoundTripTest, HeaderWithEmptyFirstFragment) {
  // 7 bytes left: "bar" becomes an empty kFirstType there and a kLastType
  // with the 3 bytes in block 1.
  LogHarness h;
  h.Write(BigString("foo", kBlockSize - 2 * kHeaderSize));
  h.Write("bar");
  const std::string& c = h.contents();
  EXPECT_EQ(kFirstType, c[kBlockSize - 1]);
  EXPECT_EQ(0, c[kBlockSize - 3]);  // length 0
  EXPECT_EQ(kLastType, c[kBlockSize + 6]);
  EXPECT_EQ(BigString("foo", kBlockSize - 2 * kHeaderSize), h.Read());
  EXPECT_EQ("bar", h.Read());
  EXPECT_EQ(kBlockSize - kHeaderSize, h.reader()->LastRecordOffset());
  EXPECT_EQ("EOF", h.Read());
}

TEST(LogRoundTripTest, RandomSizes) {
  Random write_rnd(301);
  LogHarness h;
  std::vector<uint64_t> offsets;
  for (int i = 0; i < 500; i++)
    offsets.push_back(h.Write(test::RandomRecord(&write_rnd)));
  Random read_rnd(301);
  for (int i = 0; i < 500; i++) {
    ASSERT_EQ(test::RandomRecord(&read_rnd), h.Read()) << i;
    ASSERT_EQ(offsets[i], h.reader()->LastRecordOffset()) << i;
  }
  EXPECT_EQ("EOF", h.Read());
  EXPECT_EQ(0u, h.ReportCount());
}

TEST(LogRoundTripTest, WithoutChecksums) {
  LogHarness h;
  h.Write("foo");
  h.Write(BigString("bar", 3 * kBlockSize));
  h.StartReading(0, /*checksum=*/false);
  EXPECT_EQ("foo", h.Read());
  EXPECT_EQ(BigString("bar", 3 * kBlockSize), h.Read());
  EXPECT_EQ("EOF", h.Read());
}

TEST(LogRoundTripTest, AppendToExistingLog) {
  for (size_t first_size : {size_t{10}, kBlockSize - 2 * kHeaderSize,
                            kBlockSize - kHeaderSize - 3, 2 * kBlockSize}) {
    LogHarness h;
    const std::string first = BigString("first", first_size);
    h.Write(first);
    h.ReopenForAppend();
    h.Write("second");
    h.Write(BigString("third", 40000));
    EXPECT_EQ(first, h.Read());
    EXPECT_EQ("second", h.Read());
    EXPECT_EQ(BigString("third", 40000), h.Read());
    EXPECT_EQ("EOF", h.Read());
    EXPECT_EQ(0u, h.ReportCount()) << first_size;
  }
}

TEST(LogRoundTripTest, WriterFlushesEveryRecord) {
  test::StringSink sink;
  Writer writer(&sink);
  ASSERT_TRUE(writer.AddRecord("a").ok());
  ASSERT_TRUE(writer.AddRecord(BigString("b", 100000)).ok());
  EXPECT_EQ(2, sink.flushes);
}

TEST(LogRoundTripTest, WriterErrorsAreSticky) {
  test::StringSink sink;
  Writer writer(&sink);
  ASSERT_TRUE(writer.AddRecord("ok").ok());
  sink.fail_appends = true;
  absl::Status s = writer.AddRecord("lost");
  EXPECT_EQ(absl::StatusCode::kResourceExhausted, s.code());
  sink.fail_appends = false;
  const size_t size = sink.contents.size();
  EXPECT_EQ(s, writer.AddRecord("also lost"));
  EXPECT_EQ(size, sink.contents.size());  // nothing more written
}

// The worked examples of docs/wal_format.md.
std::string Hex(std::string_view bytes) {
  std::string out;
  for (char c : bytes) {
    absl::StrAppendFormat(&out, "%s%02x", out.empty() ? "" : " ",
                          static_cast<uint8_t>(c));
  }
  return out;
}

TEST(LogFormatDocTest, WorkedExamples) {
  {
    LogHarness h;
    h.Write("foo");
    EXPECT_EQ("dd 5f b3 7a 03 00 01 66 6f 6f", Hex(h.contents()));
  }
  {
    LogHarness h;
    h.Write("");
    EXPECT_EQ("05 2b 28 43 00 00 01", Hex(h.contents()));
  }
  {
    LogHarness h;
    h.Write(std::string(32755, 'a'));
    EXPECT_EQ(32762u, h.WrittenBytes());
    EXPECT_EQ(32768u, h.Write("b"));
  }
  {
    LogHarness h;
    h.Write(std::string(32754, 'a'));
    EXPECT_EQ(32761u, h.Write("bar"));
    EXPECT_EQ("00 00 02", Hex(h.contents().substr(32761 + 4, 3)));
    EXPECT_EQ("03 00 04 62 61 72", Hex(h.contents().substr(32768 + 4)));
  }
  {
    // The write batch example: sequence 100, Put("k", "v"), Delete("x").
    std::string batch;
    PutFixed64(&batch, 100);
    PutFixed32(&batch, 2);
    batch += std::string("\x01\x01k\x01v\x00\x01x", 8);
    EXPECT_EQ("64 00 00 00 00 00 00 00 02 00 00 00 01 01 6b 01 76 00 01 78",
              Hex(batch));
    LogHarness h;
    h.Write(batch);
    EXPECT_EQ("73 1f 4d aa 14 00 01", Hex(h.contents().substr(0, 7)));
  }
}

// --- initial_offset ---

class InitialOffsetTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Sizes exercising every fragment kind and block tails; 0 marks the
    // record sized to leave exactly kHeaderSize bytes in its block, so the
    // next one starts with an empty kFirstType.
    const size_t sizes[] = {
        10000, 10000, 2 * kBlockSize - 1000,    1,
        0,     7,     kBlockSize - kHeaderSize, 3 * kBlockSize,
        1,     5};
    for (size_t i = 0; i < std::size(sizes); i++) {
      size_t size = sizes[i];
      if (size == 0) {
        const size_t in_block = h_.WrittenBytes() % kBlockSize;
        size = kBlockSize - in_block - 2 * kHeaderSize;
      }
      records_.push_back(BigString(std::string(1, 'a' + i), size));
      offsets_.push_back(h_.Write(records_.back()));
    }
  }

  // Reads from initial_offset and expects records [first, end).
  void CheckFrom(uint64_t initial_offset, size_t first) {
    SCOPED_TRACE(testing::Message() << "initial_offset " << initial_offset);
    h_.StartReading(initial_offset);
    for (size_t i = first; i < records_.size(); i++) {
      ASSERT_EQ(records_[i], h_.Read()) << "record " << i;
      ASSERT_EQ(offsets_[i], h_.reader()->LastRecordOffset());
    }
    EXPECT_EQ("EOF", h_.Read());
    EXPECT_EQ(0u, h_.ReportCount()) << h_.ReportMessages();
  }

  LogHarness h_;
  std::vector<std::string> records_;
  std::vector<uint64_t> offsets_;
};

TEST_F(InitialOffsetTest, AtEachRecord) {
  for (size_t i = 0; i < records_.size(); i++) CheckFrom(offsets_[i], i);
}

TEST_F(InitialOffsetTest, JustPastEachRecordStart) {
  for (size_t i = 0; i < records_.size(); i++) {
    CheckFrom(offsets_[i] + 1, i + 1);
  }
}

TEST_F(InitialOffsetTest, EveryOffsetIsConsistent) {
  // Sweep offsets (stride keeps it fast; all block edges included).
  std::vector<uint64_t> points;
  for (uint64_t o = 0; o <= h_.WrittenBytes() + 10; o += 997)
    points.push_back(o);
  for (uint64_t b = 0; b <= h_.WrittenBytes(); b += kBlockSize) {
    for (uint64_t d = 0; d < 9; d++) {
      points.push_back(b + d);
      if (b >= d) points.push_back(b - d);
    }
  }
  for (uint64_t o : points) {
    size_t first = 0;
    while (first < records_.size() && offsets_[first] < o) first++;
    CheckFrom(o, first);
  }
}

TEST_F(InitialOffsetTest, PastTheEnd) {
  CheckFrom(h_.WrittenBytes(), records_.size());
  CheckFrom(h_.WrittenBytes() + 5 * kBlockSize, records_.size());
}

}  // namespace log_roundtrip_test
}  // namespace siftdb::log
