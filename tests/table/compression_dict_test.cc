// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// zstd compression dictionaries (table/compression_dict.h,
// CompressionOptions::max_dict_bytes): tables built with one scan and seek
// back over sweeping sizes, seeds, block sizes and dictionary sizes, with
// raw and trained dictionaries, whether the held-back blocks end before
// Finish() or at it; they are format version 2 with the dictionary's size
// in their properties, and smaller than without when blocks share content;
// too little data gives an ordinary version-1 table; and a frame that needs
// a dictionary the reader does not have, or damaged dictionary bytes, is
// DataLoss naming the file, never wrong data; a table given an earlier
// table's dictionary stores it and reads back alone.

#include "table/compression_dict.h"

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "table/compression.h"
#include "table/format.h"
#include "table/table_builder.h"
#include "tests/table/table_test_util.h"
#include "util/absl_compat.h"

namespace siftdb {
namespace compression_dict_test {

using test::CheckScan;
using test::IKey;
using test::KVList;
using test::OpenTable;
using test::TestRandom;

constexpr int kDefault = CompressionOptions::kDefaultCompressionLevel;

// Entries whose values are drawn from a small pool of random strings, as
// db_bench's are from its 1 MiB buffer: blocks share content a dictionary
// can hold, and each value alone compresses poorly.
KVList PooledEntries(size_t n, uint64_t seed, size_t pool_size = 64) {
  TestRandom rnd(seed);
  std::vector<std::string> pool;
  for (size_t i = 0; i < pool_size; i++) pool.push_back(rnd.Bytes(100));
  KVList entries;
  for (size_t i = 0; i < n; i++) {
    const ValueType type = i % 11 == 5 ? kTypeDeletion : kTypeValue;
    entries.emplace_back(
        IKey(absl::StrFormat("user%08d", i * 3 + seed), 5000 + i, type),
        type == kTypeDeletion ? std::string() : pool[rnd.Uniform(pool_size)]);
  }
  return entries;
}

TableOptions DictOptions(size_t dict_bytes, size_t train_bytes,
                         size_t block_size = 4096) {
  TableOptions o;
  o.compression = kZstdCompression;
  o.compression_max_dict_bytes = dict_bytes;
  o.compression_zstd_max_train_bytes = train_bytes;
  o.block_size = block_size;
  return o;
}

// Every entry is found by a seek to its own key, and a seek past the last
// key finds nothing.
void CheckSeeks(const Table& table, const KVList& entries) {
  auto it = table.NewIterator(ReadOptions());
  for (const auto& [k, v] : entries) {
    it->Seek(k);
    ASSERT_TRUE(it->Valid()) << it->status();
    ASSERT_EQ(it->key(), k);
    ASSERT_EQ(it->value(), v);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
}

TEST(CompressionDictTest, TablesRoundTripOverSizesSeedsAndDictionaries) {
  struct Case {
    size_t dict_bytes, train_bytes, block_size;
  };
  // The held-back blocks reach their limit mid-table (small limits) or
  // only at Finish() (large ones).
  const std::vector<Case> cases = {
      {256, 0, 4096},          {1024, 0, 1024},      {4096, 0, 4096},
      {16384, 0, 4096},        {16384, 65536, 4096}, {4096, 1 << 20, 4096},
      {65536, 1 << 20, 16384}, {1024, 8192, 256},
  };
  for (const Case& c : cases) {
    for (size_t n : {1, 2, 40, 900, 6000}) {
      for (uint64_t seed = 1; seed <= 2; seed++) {
        SCOPED_TRACE(absl::StrFormat("dict %d train %d block %d n %d seed %d",
                                     c.dict_bytes, c.train_bytes, c.block_size,
                                     n, seed));
        const TableOptions options =
            DictOptions(c.dict_bytes, c.train_bytes, c.block_size);
        const KVList entries = PooledEntries(n, seed);
        TableProperties props;
        auto contents = test::BuildTable(options, entries, &props);
        ASSERT_TRUE(contents.ok()) << contents.status();
        auto table = OpenTable(options, *contents);
        ASSERT_TRUE(table.ok()) << table.status();
        const ZstdDictionary* dict = (*table)->compression_dictionary();
        EXPECT_EQ((*table)->properties().compression_dict_size,
                  props.compression_dict_size);
        if (dict != nullptr) {
          EXPECT_EQ(dict->bytes().size(), props.compression_dict_size);
          EXPECT_LE(dict->bytes().size(), c.dict_bytes);
          EXPECT_EQ((*table)->footer().format_version,
                    kTableFormatVersionWithDictionary);
          EXPECT_EQ(props.format_version, kTableFormatVersionWithDictionary);
        } else {
          EXPECT_EQ(props.compression_dict_size, 0u);
          EXPECT_EQ((*table)->footer().format_version, kTableFormatVersion);
        }
        // Enough blocks always give a dictionary.
        if (n >= 900) {
          EXPECT_NE(dict, nullptr);
        }
        CheckScan(**table, entries, /*verify=*/false);
        CheckScan(**table, entries, /*verify=*/true);
        CheckSeeks(**table, entries);
        EXPECT_EQ((*table)->properties().num_entries, n);
      }
    }
  }
}

// Values shared across blocks: the table with a dictionary is smaller than
// the same table without one, by at least a tenth here (raw samples and
// trained alike).
TEST(CompressionDictTest, SharedContentMakesSmallerTables) {
  const KVList entries = PooledEntries(20000, 3, /*pool_size=*/256);
  auto plain = test::BuildTable(DictOptions(0, 0), entries);
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (size_t train : {size_t{0}, size_t{1} << 20}) {
    SCOPED_TRACE(absl::StrFormat("train %d", train));
    auto with = test::BuildTable(DictOptions(32768, train), entries);
    ASSERT_TRUE(with.ok()) << with.status();
    EXPECT_LT(with->size() * 10, plain->size() * 9)
        << with->size() << " vs " << plain->size();
  }
}

// A table given another table's dictionary (a compaction's later outputs)
// holds back no blocks, writes the same dictionary (same ID) and reads
// back alone; a dictionary loaded from a table cannot compress, so a
// builder given one builds its own.
TEST(CompressionDictTest, ReusedDictionaryIsStoredAndReadsBack) {
  for (size_t train : {size_t{0}, size_t{1} << 20}) {
    SCOPED_TRACE(absl::StrFormat("train %d", train));
    const TableOptions options = DictOptions(16384, train);
    test::StringSink first_sink;
    TableBuilder first(options, &first_sink);
    for (const auto& [k, v] : PooledEntries(6000, 1)) first.Add(k, v);
    ASSERT_TRUE(first.Finish().ok());
    const std::shared_ptr<const ZstdDictionary> dict = first.dictionary();
    ASSERT_NE(dict, nullptr);

    const KVList entries = PooledEntries(6000, 2);
    test::StringSink sink;
    TableBuilder second(options, &sink);
    second.ReuseDictionary(dict);
    for (const auto& [k, v] : entries) second.Add(k, v);
    // Nothing was held back: the blocks are written as they fill.
    EXPECT_GT(second.FileSize(), 0u);
    ASSERT_TRUE(second.Finish().ok());
    EXPECT_EQ(second.dictionary(), dict);
    auto table = OpenTable(options, sink.contents());
    ASSERT_TRUE(table.ok()) << table.status();
    const ZstdDictionary* stored = (*table)->compression_dictionary();
    ASSERT_NE(stored, nullptr);
    EXPECT_EQ(stored->id(), dict->id());
    EXPECT_EQ(stored->bytes(), dict->bytes());
    CheckScan(**table, entries, /*verify=*/true);
    CheckSeeks(**table, entries);

    // The loaded copy is for decompression only.
    test::StringSink third_sink;
    TableBuilder third(options, &third_sink);
    auto loaded = ZstdDictionary::Load(std::string(dict->bytes()), "test");
    ASSERT_TRUE(loaded.ok()) << loaded.status();
    third.ReuseDictionary(std::move(*loaded));
    for (const auto& [k, v] : entries) third.Add(k, v);
    ASSERT_TRUE(third.Finish().ok());
    ASSERT_NE(third.dictionary(), nullptr);
    EXPECT_NE(third.dictionary()->cdict(), nullptr);
    auto third_table = OpenTable(options, third_sink.contents());
    ASSERT_TRUE(third_table.ok()) << third_table.status();
    CheckScan(**third_table, entries, /*verify=*/true);
  }
}

// A builder without dictionary options ignores a dictionary it is given.
TEST(CompressionDictTest, ReuseIsIgnoredWithoutDictionaryOptions) {
  test::StringSink first_sink;
  TableBuilder first(DictOptions(16384, 0), &first_sink);
  for (const auto& [k, v] : PooledEntries(6000, 1)) first.Add(k, v);
  ASSERT_TRUE(first.Finish().ok());
  ASSERT_NE(first.dictionary(), nullptr);
  for (CompressionType type : {kZstdCompression, kSnappyCompression}) {
    TableOptions options = DictOptions(0, 0);
    options.compression = type;
    test::StringSink sink;
    TableBuilder builder(options, &sink);
    builder.ReuseDictionary(first.dictionary());
    const KVList entries = PooledEntries(900, 2);
    for (const auto& [k, v] : entries) builder.Add(k, v);
    ASSERT_TRUE(builder.Finish().ok());
    EXPECT_EQ(builder.dictionary(), nullptr);
    auto table = OpenTable(options, sink.contents());
    ASSERT_TRUE(table.ok()) << table.status();
    EXPECT_EQ((*table)->compression_dictionary(), nullptr);
    CheckScan(**table, entries, /*verify=*/true);
  }
}

// Dictionary options are ignored by the other types: the tables are the
// ones built without them.
TEST(CompressionDictTest, OtherTypesIgnoreTheDictionaryOptions) {
  const KVList entries = PooledEntries(3000, 4);
  for (CompressionType t :
       {kNoCompression, kSnappyCompression, kLZ4Compression}) {
    TableOptions with = DictOptions(4096, 0);
    with.compression = t;
    TableOptions without = with;
    without.compression_max_dict_bytes = 0;
    TableProperties p1, p2;
    auto a = test::BuildTable(with, entries, &p1);
    auto b = test::BuildTable(without, entries, &p2);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(a->size(), b->size()) << CompressionTypeName(t);
    EXPECT_EQ(p1.compression_dict_size, 0u);
  }
}

// One frame compressed against a dictionary, for the decoding tests.
struct DictFrame {
  std::unique_ptr<ZstdDictionary> dict;
  std::string raw, stored;
};

DictFrame MakeDictFrame(uint64_t seed) {
  DictFrame f;
  const KVList entries = PooledEntries(2000, seed);
  std::string samples;
  std::vector<size_t> sizes;
  for (const auto& [k, v] : entries) {
    samples += k + v;
    sizes.push_back(k.size() + v.size());
  }
  f.dict = ZstdDictionary::Build(samples, sizes, 8192, kDefault,
                                 /*train=*/false);
  for (size_t i = 0; i < 30; i++) f.raw += entries[i].first + entries[i].second;
  if (f.dict != nullptr) {
    CompressBlock(kZstdCompression, kDefault, f.raw, &f.stored, f.dict.get());
  }
  return f;
}

TEST(CompressionDictTest, FrameNeedsItsOwnDictionary) {
  DictFrame a = MakeDictFrame(5), b = MakeDictFrame(6);
  ASSERT_NE(a.dict, nullptr);
  ASSERT_NE(b.dict, nullptr);
  ASSERT_NE(a.dict->id(), b.dict->id());
  auto ok = UncompressBlock(a.stored, kZstdCompression, "t.sst: block at 0",
                            a.dict.get());
  ASSERT_TRUE(ok.ok()) << ok.status();
  EXPECT_EQ(ok->data(), a.raw);
  auto none = UncompressBlock(a.stored, kZstdCompression, "t.sst: block at 0");
  ASSERT_EQ(none.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(none.status().message().find("t.sst: block at 0"),
            absl::string_view::npos);
  EXPECT_NE(none.status().message().find("the table has none"),
            absl::string_view::npos)
      << none.status();
  auto other = UncompressBlock(a.stored, kZstdCompression, "t.sst: block at 0",
                               b.dict.get());
  ASSERT_EQ(other.status().code(), absl::StatusCode::kDataLoss);
  EXPECT_NE(other.status().message().find(
                absl::StrFormat("the table has %d", b.dict->id())),
            absl::string_view::npos)
      << other.status();
  // A frame without a dictionary still decodes in a table that has one.
  std::string plain;
  ASSERT_TRUE(CompressBlock(kZstdCompression, kDefault, a.raw, &plain));
  auto p = UncompressBlock(plain, kZstdCompression, "x", a.dict.get());
  ASSERT_TRUE(p.ok()) << p.status();
  EXPECT_EQ(p->data(), a.raw);
}

TEST(CompressionDictTest, LoadRejectsWhatIsNotADictionary) {
  DictFrame a = MakeDictFrame(7);
  ASSERT_NE(a.dict, nullptr);
  auto loaded = ZstdDictionary::Load(std::string(a.dict->bytes()), "d");
  ASSERT_TRUE(loaded.ok()) << loaded.status();
  EXPECT_EQ((*loaded)->id(), a.dict->id());
  EXPECT_EQ((*loaded)->cdict(), nullptr);
  for (const std::string& bad :
       {std::string(), std::string("abc"), std::string(4096, 'x'),
        std::string(a.dict->bytes().substr(0, 12))}) {
    auto r = ZstdDictionary::Load(bad, "000009.sst: compression dictionary");
    ASSERT_FALSE(r.ok()) << bad.size() << " bytes";
    EXPECT_EQ(r.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(r.status().message().find("000009.sst: compression dictionary"),
              absl::string_view::npos);
  }
}

// Every byte of a table's dictionary block flipped: Open is DataLoss (the
// block's CRC, then zstd), never a table that reads wrong values.
TEST(CompressionDictTest, DamagedDictionaryBlockFailsTheOpen) {
  const TableOptions options = DictOptions(1024, 0);
  const KVList entries = PooledEntries(900, 8);
  TableProperties props;
  auto contents = test::BuildTable(options, entries, &props);
  ASSERT_TRUE(contents.ok()) << contents.status();
  ASSERT_GT(props.compression_dict_size, 0u);
  // The dictionary block follows the data blocks.
  const size_t start = props.data_size;
  for (size_t i = start; i < start + props.compression_dict_size + 5; i++) {
    std::string damaged = *contents;
    damaged[i] ^= 0x01;
    auto table = OpenTable(options, damaged, "000007.sst");
    ASSERT_FALSE(table.ok()) << "byte " << i;
    EXPECT_EQ(table.status().code(), absl::StatusCode::kDataLoss);
    EXPECT_NE(table.status().message().find("000007.sst"),
              absl::string_view::npos);
  }
}

}  // namespace compression_dict_test
}  // namespace siftdb
