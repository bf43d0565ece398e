// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/coding.h"

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace siftdb {
namespace coding_test {

TEST(CodingTest, Fixed32) {
  std::string s;
  for (uint32_t v = 0; v < 100000; v++) PutFixed32(&s, v);
  const char* p = s.data();
  for (uint32_t v = 0; v < 100000; v++) {
    ASSERT_EQ(v, DecodeFixed32(p));
    p += sizeof(uint32_t);
  }
}

TEST(CodingTest, Fixed64) {
  std::string s;
  for (int power = 0; power <= 63; power++) {
    const uint64_t v = uint64_t{1} << power;
    PutFixed64(&s, v - 1);
    PutFixed64(&s, v);
    PutFixed64(&s, v + 1);
  }
  const char* p = s.data();
  for (int power = 0; power <= 63; power++) {
    const uint64_t v = uint64_t{1} << power;
    EXPECT_EQ(v - 1, DecodeFixed64(p));
    EXPECT_EQ(v, DecodeFixed64(p + 8));
    EXPECT_EQ(v + 1, DecodeFixed64(p + 16));
    p += 24;
  }
}

TEST(CodingTest, FixedIsLittleEndian) {
  std::string s;
  PutFixed32(&s, 0x04030201);
  ASSERT_EQ(4u, s.size());
  EXPECT_EQ(0x01, s[0]);
  EXPECT_EQ(0x04, s[3]);
  s.clear();
  PutFixed64(&s, 0x0807060504030201ull);
  ASSERT_EQ(8u, s.size());
  EXPECT_EQ(0x01, s[0]);
  EXPECT_EQ(0x08, s[7]);
}

TEST(CodingTest, GetFixedRejectsShortInput) {
  std::string s;
  PutFixed64(&s, 42);
  for (size_t len = 0; len < 4; len++) {
    std::string_view in(s.data(), len);
    uint32_t v32;
    EXPECT_FALSE(GetFixed32(&in, &v32));
  }
  for (size_t len = 0; len < 8; len++) {
    std::string_view in(s.data(), len);
    uint64_t v64;
    EXPECT_FALSE(GetFixed64(&in, &v64));
  }
  std::string_view in = s;
  uint64_t v;
  ASSERT_TRUE(GetFixed64(&in, &v));
  EXPECT_EQ(42u, v);
  EXPECT_TRUE(in.empty());
}

// Every value at and around each 7-bit boundary, for both widths.
std::vector<uint64_t> BoundaryValues(int bits) {
  std::vector<uint64_t> values = {0, 1, 127, 128};
  for (int shift = 7; shift < bits; shift += 7) {
    const uint64_t b = uint64_t{1} << shift;
    values.push_back(b - 1);
    values.push_back(b);
    values.push_back(b + 1);
  }
  const uint64_t max = bits == 64 ? std::numeric_limits<uint64_t>::max()
                                  : (uint64_t{1} << bits) - 1;
  values.push_back(max);
  values.push_back(max - 1);
  return values;
}

TEST(CodingTest, Varint32Boundaries) {
  std::string s;
  const std::vector<uint64_t> values = BoundaryValues(32);
  for (uint64_t v : values) {
    const size_t before = s.size();
    PutVarint32(&s, static_cast<uint32_t>(v));
    EXPECT_EQ(VarintLength(v), static_cast<int>(s.size() - before)) << v;
  }
  std::string_view in = s;
  for (uint64_t v : values) {
    uint32_t actual;
    ASSERT_TRUE(GetVarint32(&in, &actual)) << v;
    EXPECT_EQ(v, actual);
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, Varint32Exhaustive) {
  std::string s;
  for (uint32_t i = 0; i < (32 * 32); i++) {
    PutVarint32(&s, (i / 32) << (i % 32));
  }
  const char* p = s.data();
  const char* limit = p + s.size();
  for (uint32_t i = 0; i < (32 * 32); i++) {
    const uint32_t expected = (i / 32) << (i % 32);
    uint32_t actual;
    const char* start = p;
    p = GetVarint32Ptr(p, limit, &actual);
    ASSERT_NE(nullptr, p);
    EXPECT_EQ(expected, actual);
    EXPECT_EQ(VarintLength(actual), p - start);
  }
  EXPECT_EQ(limit, p);
}

TEST(CodingTest, Varint64Boundaries) {
  std::string s;
  const std::vector<uint64_t> values = BoundaryValues(64);
  for (uint64_t v : values) {
    const size_t before = s.size();
    PutVarint64(&s, v);
    EXPECT_EQ(VarintLength(v), static_cast<int>(s.size() - before)) << v;
  }
  EXPECT_EQ(kMaxVarint64Bytes,
            VarintLength(std::numeric_limits<uint64_t>::max()));
  std::string_view in = s;
  for (uint64_t v : values) {
    uint64_t actual;
    ASSERT_TRUE(GetVarint64(&in, &actual)) << v;
    EXPECT_EQ(v, actual);
  }
  EXPECT_TRUE(in.empty());
}

TEST(CodingTest, TruncatedVarintsAreRejected) {
  for (uint64_t v : BoundaryValues(64)) {
    std::string s;
    PutVarint64(&s, v);
    for (size_t len = 0; len < s.size(); len++) {
      std::string_view in(s.data(), len);
      uint64_t out;
      EXPECT_FALSE(GetVarint64(&in, &out)) << v << " cut to " << len;
      EXPECT_EQ(nullptr, GetVarint64Ptr(s.data(), s.data() + len, &out));
    }
  }
  for (uint64_t v : BoundaryValues(32)) {
    std::string s;
    PutVarint32(&s, static_cast<uint32_t>(v));
    for (size_t len = 0; len < s.size(); len++) {
      std::string_view in(s.data(), len);
      uint32_t out;
      EXPECT_FALSE(GetVarint32(&in, &out)) << v << " cut to " << len;
    }
  }
}

TEST(CodingTest, OverlongVarintsAreRejected) {
  uint32_t v32;
  uint64_t v64;
  // Six bytes for a varint32: too long.
  std::string s32("\x81\x82\x83\x84\x85\x06", 6);
  std::string_view in = s32;
  EXPECT_FALSE(GetVarint32(&in, &v32));
  // Five bytes whose value needs more than 32 bits.
  std::string big32("\xff\xff\xff\xff\x10", 5);
  in = big32;
  EXPECT_FALSE(GetVarint32(&in, &v32));
  std::string max32("\xff\xff\xff\xff\x0f", 5);
  in = max32;
  ASSERT_TRUE(GetVarint32(&in, &v32));
  EXPECT_EQ(0xffffffffu, v32);

  // Eleven bytes for a varint64: too long.
  std::string s64(10, '\x80');
  s64 += '\x01';
  in = s64;
  EXPECT_FALSE(GetVarint64(&in, &v64));
  // Ten bytes whose last byte carries more than the 64th bit.
  std::string big64(9, '\xff');
  big64 += '\x02';
  in = big64;
  EXPECT_FALSE(GetVarint64(&in, &v64));
  std::string max64(9, '\xff');
  max64 += '\x01';
  in = max64;
  ASSERT_TRUE(GetVarint64(&in, &v64));
  EXPECT_EQ(std::numeric_limits<uint64_t>::max(), v64);
}

TEST(CodingTest, LengthPrefixedSlices) {
  std::string s;
  PutLengthPrefixedSlice(&s, "");
  PutLengthPrefixedSlice(&s, "foo");
  PutLengthPrefixedSlice(&s, "bar");
  PutLengthPrefixedSlice(&s, std::string(200, 'x'));
  std::string_view in = s;
  std::string_view v;
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  EXPECT_EQ("", v);
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  EXPECT_EQ("foo", v);
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  EXPECT_EQ("bar", v);
  ASSERT_TRUE(GetLengthPrefixedSlice(&in, &v));
  EXPECT_EQ(std::string(200, 'x'), v);
  EXPECT_TRUE(in.empty());
  EXPECT_FALSE(GetLengthPrefixedSlice(&in, &v));
}

TEST(CodingTest, LengthPrefixedSliceLongerThanInputIsRejected) {
  std::string s;
  PutLengthPrefixedSlice(&s, "hello");
  for (size_t len = 0; len < s.size(); len++) {
    std::string_view in(s.data(), len);
    std::string_view v;
    EXPECT_FALSE(GetLengthPrefixedSlice(&in, &v)) << len;
  }
}

}  // namespace coding_test
}  // namespace siftdb
