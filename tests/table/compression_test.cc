// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Block compression (table/compression.h): every type round-trips over
// sweeping sizes, seeds and levels; incompressible blocks are stored raw;
// tables of every type scan back over sweeping block sizes; and a stored
// block that lies (a wrong length header, damaged bytes, an unknown type)
// is DataLoss naming the file and offset, checked before any allocation.

#include "table/compression.h"

#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "table/format.h"
#include "tests/table/table_test_util.h"
#include "util/absl_compat.h"
#include "util/coding.h"

namespace siftdb {
namespace compression_test {

using test::CheckScan;
using test::KVList;
using test::MakeEntries;
using test::OpenTable;
using test::StringSource;
using test::TestRandom;

constexpr CompressionType kCompressed[] = {kSnappyCompression, kLZ4Compression,
                                           kZstdCompression};
constexpr int kDefault = CompressionOptions::kDefaultCompressionLevel;

TEST(CompressionTest, NamesAndParse) {
  EXPECT_EQ(CompressionTypeName(kNoCompression), "none");
  EXPECT_EQ(CompressionTypeName(kSnappyCompression), "snappy");
  EXPECT_EQ(CompressionTypeName(kLZ4Compression), "lz4");
  EXPECT_EQ(CompressionTypeName(kZstdCompression), "zstd");
  EXPECT_EQ(CompressionTypeName(kDisableCompressionOption), "disabled");
  EXPECT_EQ(CompressionTypeName(9), "unknown(9)");
  for (CompressionType t : {kNoCompression, kSnappyCompression, kLZ4Compression,
                            kZstdCompression}) {
    CompressionType parsed = kDisableCompressionOption;
    ASSERT_TRUE(ParseCompressionType(CompressionTypeName(t), &parsed));
    EXPECT_EQ(parsed, t);
    EXPECT_TRUE(IsBlockCompressionType(t));
  }
  CompressionType parsed;
  EXPECT_FALSE(ParseCompressionType("disabled", &parsed));
  EXPECT_FALSE(ParseCompressionType("zlib", &parsed));
  for (int t : {2, 3, 5, 6, 8, 0xff}) EXPECT_FALSE(IsBlockCompressionType(t));
}

// Every type and level round-trips blocks of sweeping sizes and seeds,
// compressible or not.
TEST(CompressionTest, RoundTripSweep) {
  struct Level {
    CompressionType type;
    int level;
  };
  const std::vector<Level> levels = {
      {kSnappyCompression, kDefault}, {kLZ4Compression, kDefault},
      {kLZ4Compression, 0},           {kLZ4Compression, -8},
      {kLZ4Compression, 9},           {kLZ4Compression, 100},
      {kZstdCompression, kDefault},   {kZstdCompression, 1},
      {kZstdCompression, -5},         {kZstdCompression, 19},
      {kZstdCompression, 1000},       {kZstdCompression, INT32_MIN},
      {kLZ4Compression, INT32_MIN},   {kLZ4Compression, INT32_MAX},
  };
  for (const Level& l : levels) {
    for (size_t size : {0, 1, 2, 7, 100, 4096, 65537, 300000}) {
      for (uint64_t seed = 0; seed < 3; seed++) {
        for (bool compressible : {false, true}) {
          if (size > 65537 && (seed > 0 || l.level == 19)) continue;
          SCOPED_TRACE(absl::StrFormat(
              "%s level %d size %d seed %d %s", CompressionTypeName(l.type),
              l.level, size, seed, compressible ? "text" : "random"));
          TestRandom rnd(seed + 7 * size);
          const std::string raw =
              compressible ? rnd.Compressible(size) : rnd.Bytes(size);
          std::string stored;
          ASSERT_TRUE(CompressBlock(l.type, l.level, raw, &stored));
          // (The fastest levels barely compress: the builder then stores
          // such blocks raw.)
          if (compressible && size >= 4096 && l.level > -100) {
            EXPECT_LT(stored.size(), raw.size() / 2);
          }
          auto back = UncompressBlock(stored, l.type, "ctx");
          ASSERT_TRUE(back.ok()) << back.status();
          EXPECT_EQ(back->stored_type, l.type);
          ASSERT_EQ(back->data(), raw);
        }
      }
    }
  }
  std::string out = "junk";
  EXPECT_FALSE(CompressBlock(kNoCompression, kDefault, "abc", &out));
  EXPECT_FALSE(
      CompressBlock(static_cast<CompressionType>(9), kDefault, "abc", &out));
}

// The LZ4 and zstd forms start with a varint32 of the uncompressed length
// (docs/table_format.md); snappy's own header is the same varint.
TEST(CompressionTest, LengthHeaderLeadsTheBlock) {
  const std::string raw = TestRandom(3).Compressible(5000);
  for (CompressionType t : kCompressed) {
    std::string stored;
    ASSERT_TRUE(CompressBlock(t, kDefault, raw, &stored));
    std::string_view in = stored;
    uint32_t n = 0;
    ASSERT_TRUE(GetVarint32(&in, &n));
    EXPECT_EQ(n, raw.size()) << CompressionTypeName(t);
  }
  std::string zstd;
  ASSERT_TRUE(CompressBlock(kZstdCompression, kDefault, raw, &zstd));
  // The zstd frame magic follows the 2-byte varint of 5000.
  EXPECT_EQ(zstd.substr(2, 4), std::string("\x28\xb5\x2f\xfd", 4));
}

// The block with its trailer, as a table stores it.
std::string StoredBlock(std::string_view contents, uint8_t type) {
  std::string out(contents);
  AppendBlockTrailer(&out, contents, type);
  return out;
}

// Reads `stored` (with a valid CRC) as the block at offset 0 of "t.sst".
absl::StatusOr<BlockContents> ReadStored(std::string_view stored,
                                         uint8_t type) {
  StringSource source(StoredBlock(stored, type));
  ReadBlockOptions ro;
  ro.verify_checksum = true;
  ro.file_name = "t.sst";
  return ReadBlock(source, ro, BlockHandle(0, stored.size()));
}

void ExpectLoss(const absl::StatusOr<BlockContents>& r, std::string_view what) {
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss) << r.status();
  EXPECT_NE(r.status().message().find("t.sst: block at offset 0"),
            absl::string_view::npos)
      << r.status();
  EXPECT_NE(r.status().message().find(AsAbsl(what)), absl::string_view::npos)
      << r.status();
}

// `stored` with its varint32 length header replaced by `n`.
std::string WithLength(std::string_view stored, uint32_t n) {
  std::string_view in = stored;
  uint32_t old = 0;
  EXPECT_TRUE(GetVarint32(&in, &old));
  std::string out;
  PutVarint32(&out, n);
  out.append(in.data(), in.size());
  return out;
}

// A length header that lies is DataLoss, whichever way it lies; a huge
// claim is refused before allocating (the "claims" message comes from the
// check that precedes the allocation).
TEST(CompressionTest, LyingLengthIsDataLoss) {
  const std::string raw = TestRandom(5).Compressible(4000);
  for (CompressionType t : {kLZ4Compression, kZstdCompression}) {
    SCOPED_TRACE(CompressionTypeName(t));
    std::string stored;
    ASSERT_TRUE(CompressBlock(t, kDefault, raw, &stored));
    ASSERT_TRUE(ReadStored(stored, t).ok());
    ExpectLoss(ReadStored(WithLength(stored, 0xffffffffu), t), "claims");
    ExpectLoss(ReadStored(WithLength(stored, 1u << 30), t), "claims");
    ExpectLoss(ReadStored(WithLength(stored, raw.size() - 1), t), "corrupt");
    ExpectLoss(ReadStored(WithLength(stored, raw.size() + 1), t), "corrupt");
    ExpectLoss(ReadStored(WithLength(stored, 0), t), "corrupt");
    // Cut short: no header, or a truncated payload.
    ExpectLoss(ReadStored("", t), "bad length header");
    ExpectLoss(ReadStored("\x80", t), "bad length header");
    ExpectLoss(ReadStored(stored.substr(0, stored.size() / 2), t), "corrupt");
  }
  // zstd checks its frame's content size before allocating.
  std::string zstd;
  ASSERT_TRUE(CompressBlock(kZstdCompression, kDefault, raw, &zstd));
  ExpectLoss(ReadStored(WithLength(zstd, 100u << 20), kZstdCompression),
             "frame holds");
  // LZ4 can expand at most ~255-fold.
  std::string lz4;
  ASSERT_TRUE(CompressBlock(kLZ4Compression, kDefault, raw, &lz4));
  ExpectLoss(ReadStored(WithLength(lz4, 100u << 20), kLZ4Compression),
             "claims");
  // Snappy keeps its own bound, and the absolute cap.
  std::string snappy;
  PutVarint32(&snappy, 0xffffffffu);
  snappy.append(std::string(1 << 18, 'x'));
  ExpectLoss(ReadStored(snappy, kSnappyCompression), "claims");
}

// LZ4 and zstd carry no checksum of their own, so a damaged byte could
// decode to other bytes of the right length: ReadBlock checks their CRC even
// with verify_checksum off, and every damaged byte is DataLoss.
TEST(CompressionTest, DamagedBlocksNeverDecodeSilentlyWithoutCrc) {
  const std::string raw = TestRandom(11).Compressible(4096);
  for (CompressionType t : {kLZ4Compression, kZstdCompression}) {
    SCOPED_TRACE(CompressionTypeName(t));
    std::string stored;
    ASSERT_TRUE(CompressBlock(t, kDefault, raw, &stored));
    std::string file = StoredBlock(stored, t);
    ReadBlockOptions ro;
    ro.verify_checksum = false;
    ro.file_name = "t.sst";
    for (size_t i = 0; i < stored.size(); i++) {
      std::string damaged = file;
      damaged[i] ^= 0x20;
      StringSource source(damaged);
      auto r = ReadBlock(source, ro, BlockHandle(0, stored.size()));
      ASSERT_FALSE(r.ok()) << "byte " << i;
      EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
      EXPECT_NE(r.status().message().find("t.sst: block at offset 0"),
                absl::string_view::npos);
    }
  }
}

// ReadBlockOptions::arrival_nanos, which tells a table whether a block
// came from storage: set on every path (each type, CRC checked or not),
// and covering the file's read.
TEST(CompressionTest, ArrivalTimeCoversTheReadOnEveryPath) {
  class SlowSource final : public RandomAccessFile {
   public:
    explicit SlowSource(std::string contents) : inner_(std::move(contents)) {}
    absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                      char* scratch) const override {
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return inner_.Read(offset, n, result, scratch);
    }

   private:
    StringSource inner_;
  };
  std::string raw;
  for (int i = 0; i < 200; i++) raw += absl::StrFormat("key%06d=value ", i);
  for (CompressionType t : {kNoCompression, kSnappyCompression, kLZ4Compression,
                            kZstdCompression}) {
    std::string stored = raw;
    if (t != kNoCompression)
      ASSERT_TRUE(CompressBlock(t, kDefault, raw, &stored));
    SlowSource source(StoredBlock(stored, t));
    for (bool verify : {false, true}) {
      ReadBlockOptions ro;
      ro.verify_checksum = verify;
      ro.file_name = "t.sst";
      int64_t arrival = -1;
      ro.arrival_nanos = &arrival;
      auto r = ReadBlock(source, ro, BlockHandle(0, stored.size()));
      ASSERT_TRUE(r.ok()) << r.status();
      EXPECT_EQ(r->data(), raw);
      EXPECT_GE(arrival, 5'000'000)
          << CompressionTypeName(t) << (verify ? " verified" : "");
    }
  }
}

TEST(CompressionTest, UnknownTypeIsDataLoss) {
  for (int t : {2, 3, 5, 6, 8, 0xff}) {
    ExpectLoss(ReadStored("abcdef", t),
               absl::StrFormat("unknown compression type %d", t));
  }
}

// Tables of every type over sweeping block sizes and seeds: they scan back,
// record their configured type, and store incompressible blocks raw.
TEST(CompressionTest, TablesOfEveryTypeOverBlockSizes) {
  for (CompressionType t : kCompressed) {
    for (size_t block_size : {256, 1024, 4096, 65536}) {
      for (uint64_t seed = 1; seed <= 2; seed++) {
        for (bool compressible : {false, true}) {
          SCOPED_TRACE(absl::StrFormat("%s block_size %d seed %d %s",
                                       CompressionTypeName(t), block_size, seed,
                                       compressible ? "text" : "random"));
          TableOptions options;
          options.compression = t;
          options.block_size = block_size;
          const KVList entries = MakeEntries(800, compressible, seed);
          TableProperties props;
          auto contents = test::BuildTable(options, entries, &props);
          ASSERT_TRUE(contents.ok()) << contents.status();
          EXPECT_EQ(props.compression_name, CompressionTypeName(t));
          auto table = OpenTable(options, *contents);
          ASSERT_TRUE(table.ok()) << table.status();
          EXPECT_EQ((*table)->properties().compression_name,
                    CompressionTypeName(t));
          CheckScan(**table, entries, /*verify=*/false);
          // Each data block's trailer names the type, or none when
          // compressing would not save an eighth.
          auto index = (*table)->NewIndexIterator();
          int typed = 0, raw = 0;
          for (index->SeekToFirst(); index->Valid(); index->Next()) {
            BlockHandle h;
            std::string_view v = index->value();
            ASSERT_TRUE(h.DecodeFrom(&v));
            const uint8_t type = (*contents)[h.offset() + h.size()];
            ASSERT_TRUE(type == t || type == kNoCompression) << int{type};
            (type == t ? typed : raw)++;
          }
          if (compressible) {
            EXPECT_EQ(raw, 0);
          } else {
            EXPECT_EQ(typed, 0);
          }
        }
      }
    }
  }
}

}  // namespace compression_test
}  // namespace siftdb
