// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Byte-level format: handles, footer, block trailers, ReadBlock's checks,
// property encoding, and the worked examples in docs/table_format.md.

#include "table/format.h"

#include <cstring>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "siftdb/comparator.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/internal_key.h"
#include "table/table_properties.h"
#include "tests/table/table_test_util.h"
#include "util/absl_compat.h"
#include "util/coding.h"

namespace siftdb {
namespace format_test {

using test::StringSource;

std::string Hex(std::string_view s) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  for (unsigned char c : s) {
    if (!out.empty()) out.push_back(' ');
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

TEST(FormatTest, BlockHandleRoundTrip) {
  for (uint64_t offset : {0ull, 1ull, 127ull, 128ull, 1ull << 40, ~0ull}) {
    for (uint64_t size : {0ull, 300ull, ~0ull}) {
      BlockHandle h(offset, size);
      std::string enc;
      h.EncodeTo(&enc);
      EXPECT_LE(enc.size(), BlockHandle::kMaxEncodedLength);
      std::string_view in = enc;
      BlockHandle d;
      ASSERT_TRUE(d.DecodeFrom(&in));
      EXPECT_TRUE(in.empty());
      EXPECT_EQ(d.offset(), offset);
      EXPECT_EQ(d.size(), size);
      for (size_t n = 0; n < enc.size(); n++) {
        std::string_view cut(enc.data(), n);
        EXPECT_FALSE(d.DecodeFrom(&cut));
      }
    }
  }
}

TEST(FormatTest, FooterBytesMatchTheSpec) {
  Footer f;
  f.metaindex_handle = BlockHandle(1000, 50);
  f.index_handle = BlockHandle(700, 295);
  std::string enc;
  f.EncodeTo(&enc);
  ASSERT_EQ(enc.size(), kFooterSize);
  ASSERT_EQ(kFooterSize, 52u);
  // docs/table_format.md, "Footer" example.
  EXPECT_EQ(Hex(enc),
            "e8 07 32 bc 05 a7 02 00 00 00 00 00 00 00 00 00 00 00 00 00 "
            "00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 00 "
            "01 00 00 00 53 69 66 74 53 53 54 31");
  EXPECT_EQ(enc.substr(44), "SiftSST1");
  Footer d;
  ASSERT_TRUE(d.DecodeFrom(enc, "t").ok());
  EXPECT_EQ(d.metaindex_handle.offset(), 1000u);
  EXPECT_EQ(d.index_handle.size(), 295u);

  std::string bad = enc;
  bad[51] ^= 1;
  absl::Status s = d.DecodeFrom(bad, "x.sst: footer at offset 9");
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(s.message().find("x.sst: footer at offset 9: not a siftdb table"),
            absl::string_view::npos)
      << s;
  bad = enc;
  bad[40] = 2;  // version 2: a table with a compression dictionary
  ASSERT_TRUE(d.DecodeFrom(bad, "t").ok());
  EXPECT_EQ(d.format_version, kTableFormatVersionWithDictionary);
  for (char v : {0, 3, 0x7f}) {
    bad[40] = v;
    s = d.DecodeFrom(bad, "t");
    EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << int{v};
    EXPECT_NE(s.message().find("unsupported table format version"),
              absl::string_view::npos)
        << s;
  }
  bad = enc;
  for (int i = 0; i < 40; i++) bad[i] = '\xff';  // varints never end
  EXPECT_EQ(d.DecodeFrom(bad, "t").code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(d.DecodeFrom(enc.substr(1), "t").code(),
            absl::StatusCode::kDataLoss);
}

TEST(FormatTest, DocumentedBlockExample) {
  // docs/table_format.md, "Worked example: a block".
  BlockBuilder b(16);
  b.Add("abc", "1");
  b.Add("abd", "22");
  const std::string block(b.Finish());
  EXPECT_EQ(Hex(block),
            "00 03 01 61 62 63 31 02 01 02 64 32 32 00 00 00 00 01 00 00 00");
  std::string trailer;
  AppendBlockTrailer(&trailer, block, kNoCompression);
  EXPECT_EQ(Hex(trailer), "00 " + Hex(trailer.substr(1)));
  // The stored CRC is the masked CRC32C of the block bytes and the type.
  EXPECT_EQ(DecodeFixed32(trailer.data() + 1),
            BlockChecksum(block, kNoCompression));
  // crc32c(block ++ 00) = 0xfea2d4b9, masked 0x4bf6e81d.
  EXPECT_EQ(Hex(trailer), "00 1d e8 f6 4b");
}

std::string StoredBlock(std::string_view contents, uint8_t type) {
  std::string out(contents);
  AppendBlockTrailer(&out, contents, type);
  return out;
}

TEST(FormatTest, ReadBlockChecks) {
  BlockBuilder b(16);
  b.Add("key", "value");
  const std::string block(b.Finish());
  std::string file = "padding!" + StoredBlock(block, kNoCompression);
  StringSource source(file);
  ReadBlockOptions ro;
  ro.verify_checksum = true;
  ro.file_name = "000003.sst";
  BlockHandle h(8, block.size());
  auto contents = ReadBlock(source, ro, h);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(contents->data(), block);

  auto expect_loss = [&](const absl::StatusOr<BlockContents>& r,
                         std::string_view what) {
    ASSERT_FALSE(r.ok());
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(r.status().message().find("000003.sst: block at offset"),
              absl::string_view::npos)
        << r.status();
    EXPECT_NE(r.status().message().find(AsAbsl(what)), absl::string_view::npos)
        << r.status();
  };
  // Past the limit, past the file, huge sizes.
  ro.limit = file.size() - 1;
  expect_loss(ReadBlock(source, ro, h), "extends past");
  ro.limit = UINT64_MAX;
  expect_loss(ReadBlock(source, ro, BlockHandle(8, block.size() + 1)),
              "truncated read");
  ro.limit = file.size();
  expect_loss(ReadBlock(source, ro, BlockHandle(8, UINT64_MAX - 2)),
              "extends past");
  expect_loss(ReadBlock(source, ro, BlockHandle(UINT64_MAX, 1)),
              "extends past");
  // Checksum.
  std::string damaged = file;
  damaged[10] ^= 4;
  StringSource damaged_source(damaged);
  expect_loss(ReadBlock(damaged_source, ro, h), "checksum mismatch");
  ro.verify_checksum = false;
  EXPECT_TRUE(ReadBlock(damaged_source, ro, h).ok());
  // Unknown compression type (CRC valid).
  StringSource unknown(StoredBlock(block, 9));
  expect_loss(ReadBlock(unknown, ro, BlockHandle(0, block.size())),
              "unknown compression type 9");
  // Snappy type over bytes that are not snappy (CRC valid).
  const std::string garbage = "\xff\xff\xff\xff\x0f garbage";
  StringSource not_snappy(StoredBlock(garbage, kSnappyCompression));
  expect_loss(ReadBlock(not_snappy, ro, BlockHandle(0, garbage.size())),
              "snappy");
  // A length header claiming far more than the bytes could expand to.
  std::string huge;
  PutVarint32(&huge, 1u << 30);
  huge += "abc";
  StringSource too_big(StoredBlock(huge, kSnappyCompression));
  expect_loss(ReadBlock(too_big, ro, BlockHandle(0, huge.size())), "claims");
}

TEST(FormatTest, PropertiesRoundTripAndUnknownNames) {
  TableProperties p;
  p.num_entries = 12345;
  p.num_deletions = 7;
  p.raw_key_size = 1 << 20;
  p.raw_value_size = 3;
  p.data_size = 99999;
  p.index_size = 77;
  p.filter_size = 1234;
  p.num_data_blocks = 25;
  p.filter_policy_name = "siftdb.BlockedBloom";
  p.filter_bits_per_key = 9.5;
  p.filter_num_keys = 12000;
  p.comparator_name = "leveldb.BytewiseComparator";
  p.compression_name = "snappy";
  p.smallest_key = std::string("a\0b", 3);
  p.largest_key = "zzz";
  p.creation_time = 1700000000;
  p.format_version = 1;
  auto encoded = EncodeTableProperties(p);
  for (size_t i = 1; i < encoded.size(); i++) {
    EXPECT_LT(encoded[i - 1].first, encoded[i].first);
  }
  TableProperties d;
  for (const auto& [name, value] : encoded) {
    ASSERT_TRUE(DecodeTableProperty(name, value, &d).ok()) << name;
  }
  ASSERT_TRUE(DecodeTableProperty("siftdb.future.thing", "xyz", &d).ok());
  EXPECT_EQ(d.num_entries, p.num_entries);
  EXPECT_EQ(d.num_deletions, p.num_deletions);
  EXPECT_EQ(d.raw_key_size, p.raw_key_size);
  EXPECT_EQ(d.raw_value_size, p.raw_value_size);
  EXPECT_EQ(d.data_size, p.data_size);
  EXPECT_EQ(d.index_size, p.index_size);
  EXPECT_EQ(d.filter_size, p.filter_size);
  EXPECT_EQ(d.num_data_blocks, p.num_data_blocks);
  EXPECT_EQ(d.filter_policy_name, p.filter_policy_name);
  EXPECT_EQ(d.filter_bits_per_key, p.filter_bits_per_key);
  EXPECT_EQ(d.filter_num_keys, p.filter_num_keys);
  EXPECT_EQ(d.comparator_name, p.comparator_name);
  EXPECT_EQ(d.compression_name, p.compression_name);
  EXPECT_EQ(d.smallest_key, p.smallest_key);
  EXPECT_EQ(d.largest_key, p.largest_key);
  EXPECT_EQ(d.creation_time, p.creation_time);
  EXPECT_EQ(d.format_version, p.format_version);
  ASSERT_EQ(d.unknown.size(), 1u);
  EXPECT_EQ(d.unknown[0].first, "siftdb.future.thing");

  // Malformed values of known properties are DataLoss.
  EXPECT_EQ(DecodeTableProperty("siftdb.num.entries", "\x80", &d).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(DecodeTableProperty("siftdb.num.entries", "\x01\x01", &d).code(),
            absl::StatusCode::kDataLoss);
  EXPECT_EQ(
      DecodeTableProperty("siftdb.filter.bits_per_key", "1234", &d).code(),
      absl::StatusCode::kDataLoss);
  // The documented encoding of bits per key: IEEE-754 bits, little-endian.
  for (const auto& [name, value] : encoded) {
    if (name == "siftdb.filter.bits_per_key") {
      EXPECT_EQ(Hex(value), "00 00 00 00 00 00 23 40");  // 9.5
    }
    if (name == "siftdb.num.entries") {
      EXPECT_EQ(Hex(value), "b9 60");
    }
  }
}

// siftdb.input.files: absent unless recorded; round-trips; a count larger
// than the bytes that follow, a truncated number or trailing bytes are
// DataLoss (checked before anything is allocated).
TEST(FormatTest, InputFilesPropertyRoundTripAndDamage) {
  TableProperties none;
  for (const auto& [name, value] : EncodeTableProperties(none)) {
    EXPECT_NE(name, property_names::kInputFiles);
  }
  TableProperties p;
  p.has_input_files = true;
  p.input_files = {5, 300, uint64_t{1} << 40};
  std::string stored;
  for (const auto& [name, value] : EncodeTableProperties(p)) {
    if (name == property_names::kInputFiles) stored = value;
  }
  ASSERT_FALSE(stored.empty());
  TableProperties d;
  ASSERT_TRUE(
      DecodeTableProperty(property_names::kInputFiles, stored, &d).ok());
  EXPECT_TRUE(d.has_input_files);
  EXPECT_EQ(d.input_files, p.input_files);

  for (const std::string& bad :
       {std::string("\xff\xff\xff\xff\x0f", 5),  // count 2^32-1, no numbers
        std::string("\x02\x05", 2),              // 2 numbers, 1 present
        std::string("\x01\x80", 2),              // truncated varint
        std::string("\x01\x05\x06", 3)}) {       // trailing byte
    TableProperties t;
    EXPECT_EQ(DecodeTableProperty(property_names::kInputFiles, bad, &t).code(),
              absl::StatusCode::kDataLoss);
  }
  TableProperties empty;
  ASSERT_TRUE(DecodeTableProperty(property_names::kInputFiles,
                                  std::string("\x00", 1), &empty)
                  .ok());
  EXPECT_TRUE(empty.has_input_files);
  EXPECT_TRUE(empty.input_files.empty());
}

// Keys too short to hold the 8-byte trailer (damaged data that passed a
// checksum) are compared without reading outside them (ASan checks this in
// CI): bytewise among themselves, before every well-formed key.
TEST(FormatTest, ComparatorSurvivesKeysShorterThanTheirTrailer) {
  InternalKeyComparator icmp(BytewiseComparator());
  std::string good;
  AppendInternalKey(&good, "a", 7, kTypeValue);
  for (const std::string& s :
       {std::string(), std::string("ab"), std::string("abcdefg")}) {
    // Copies in exactly-sized buffers, so a read past either end shows.
    std::unique_ptr<char[]> x(new char[s.size() + 1]);
    std::unique_ptr<char[]> y(new char[s.size() + 1]);
    std::memcpy(x.get(), s.data(), s.size());
    std::memcpy(y.get(), s.data(), s.size());
    const std::string_view a(x.get(), s.size()), b(y.get(), s.size());
    EXPECT_EQ(0, icmp.Compare(a, b));
    EXPECT_LT(icmp.Compare(a, good), 0);
    EXPECT_GT(icmp.Compare(good, a), 0);
    EXPECT_TRUE(ExtractUserKey(a).empty());
  }
  EXPECT_LT(icmp.Compare("ab", "ac"), 0);
}

}  // namespace format_test
}  // namespace siftdb
