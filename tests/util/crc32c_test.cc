// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/crc32c.h"

#include <cstdint>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "util/crc32c_internal.h"

namespace siftdb::crc32c {
namespace crc32c_test {

// Test vectors from RFC 3720, section B.4.
TEST(Crc32cTest, Rfc3720Vectors) {
  char buf[32];

  std::memset(buf, 0, sizeof(buf));
  EXPECT_EQ(0x8a9136aau, Value(buf, sizeof(buf)));

  std::memset(buf, 0xff, sizeof(buf));
  EXPECT_EQ(0x62a8ab43u, Value(buf, sizeof(buf)));

  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(i);
  EXPECT_EQ(0x46dd794eu, Value(buf, sizeof(buf)));

  for (int i = 0; i < 32; i++) buf[i] = static_cast<char>(31 - i);
  EXPECT_EQ(0x113fdb5cu, Value(buf, sizeof(buf)));

  // An iSCSI SCSI Read (10) command PDU.
  const uint8_t iscsi[48] = {
      0x01, 0xc0, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x00, 0x00, 0x04, 0x00,
      0x00, 0x00, 0x00, 0x14, 0x00, 0x00, 0x00, 0x18, 0x28, 0x00, 0x00, 0x00,
      0x00, 0x00, 0x00, 0x00, 0x02, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
  };
  EXPECT_EQ(0xd9963a56u,
            Value(reinterpret_cast<const char*>(iscsi), sizeof(iscsi)));
}

TEST(Crc32cTest, VectorsAgreeOnBothImplementations) {
  char zeros[32] = {};
  EXPECT_EQ(0x8a9136aau, ExtendPortable(0, zeros, sizeof(zeros)));
  EXPECT_EQ(0x8a9136aau, ExtendHardware(0, zeros, sizeof(zeros)));
  EXPECT_EQ(0xe3069283u, ExtendPortable(0, "123456789", 9));  // check value
  EXPECT_EQ(0xe3069283u, ExtendHardware(0, "123456789", 9));
}

TEST(Crc32cTest, EmptyInput) {
  EXPECT_EQ(0u, Value("", 0));
  EXPECT_EQ(0x12345678u, Extend(0x12345678u, "", 0));
}

TEST(Crc32cTest, DiffersOnDifferentInput) {
  EXPECT_NE(Value("a", 1), Value("foo", 3));
  EXPECT_NE(Value("hello", 5), Value("hellp", 5));
}

TEST(Crc32cTest, ExtendEqualsValueOfConcatenation) {
  EXPECT_EQ(Value("hello world", 11), Extend(Value("hello ", 6), "world", 5));

  std::mt19937 rng(301);
  std::string data(100000, '\0');
  for (char& c : data) c = static_cast<char>(rng());
  const uint32_t whole = Value(data.data(), data.size());
  for (size_t split : {size_t{0}, size_t{1}, size_t{7}, size_t{8}, size_t{769},
                       size_t{24576}, size_t{50001}, data.size()}) {
    const uint32_t head = Value(data.data(), split);
    EXPECT_EQ(whole, Extend(head, data.data() + split, data.size() - split))
        << "split at " << split;
  }
}

TEST(Crc32cTest, MaskRoundTrips) {
  const uint32_t crc = Value("foo", 3);
  EXPECT_NE(crc, Mask(crc));
  EXPECT_NE(crc, Mask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Mask(crc)));
  EXPECT_EQ(crc, Unmask(Unmask(Mask(Mask(crc)))));
  std::mt19937 rng(7);
  for (int i = 0; i < 10000; i++) {
    const uint32_t v = rng();
    EXPECT_EQ(v, Unmask(Mask(v)));
  }
  EXPECT_EQ(kMaskDelta, Mask(0));
}

// Every length 0..1000 at every alignment 0..15, with random starting
// CRCs: the hardware path (with its alignment prologue and short stripes)
// must agree with the table-driven one.
TEST(Crc32cTest, HardwareMatchesPortableAllLengthsAndAlignments) {
  std::mt19937 rng(42);
  std::vector<char> buf(1000 + 16);
  for (char& c : buf) c = static_cast<char>(rng());
  for (size_t align = 0; align < 16; align++) {
    for (size_t len = 0; len <= 1000; len++) {
      const uint32_t init = (len % 3 == 0) ? 0 : static_cast<uint32_t>(rng());
      const char* p = buf.data() + align;
      ASSERT_EQ(ExtendPortable(init, p, len), ExtendHardware(init, p, len))
          << "align " << align << " len " << len;
    }
  }
}

// Long inputs exercise the 3 x 8 KiB stripes and the transitions between
// long stripes, short stripes and the tail.
TEST(Crc32cTest, HardwareMatchesPortableLongInputs) {
  std::mt19937 rng(99);
  std::vector<char> buf(200000 + 8);
  for (char& c : buf) c = static_cast<char>(rng());
  const size_t stripe3 = 3 * 8192;
  std::vector<size_t> lengths = {stripe3 - 1,   stripe3,       stripe3 + 1,
                                 stripe3 + 767, stripe3 + 768, 2 * stripe3 + 5,
                                 100000,        200000};
  for (int i = 0; i < 20; i++) lengths.push_back(rng() % 200000);
  for (size_t len : lengths) {
    for (size_t align : {0, 1, 5}) {
      const char* p = buf.data() + align;
      ASSERT_EQ(ExtendPortable(0, p, len), ExtendHardware(0, p, len))
          << "len " << len << " align " << align;
      ASSERT_EQ(ExtendPortable(0xdeadbeef, p, len),
                ExtendHardware(0xdeadbeef, p, len))
          << "len " << len << " align " << align;
    }
  }
}

TEST(Crc32cTest, ReportsHardwareConsistently) {
  // Whatever the CPU, Extend equals one of the two and both agree.
  const char data[] = "the quick brown fox";
  EXPECT_EQ(Value(data, sizeof(data)), ExtendPortable(0, data, sizeof(data)));
  EXPECT_EQ(IsHardwareAccelerated(), IsHardwareAccelerated());
}

}  // namespace crc32c_test
}  // namespace siftdb::crc32c
