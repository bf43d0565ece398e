// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Compression by output level (Options::compression_per_level,
// bottommost_compression, compression_opts): which type each flush and
// compaction writes, checked through every live table's siftdb.compression
// property and its blocks' trailers; a DB written with one type reads back
// under another (mixed tables); and a damaged LZ4 or zstd block is DataLoss
// naming the file and offset through Get and iterators, checksums on or off.

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "db/db_impl.h"
#include "db/output_compression.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "table/table.h"
#include "tests/db/live_tables.h"
#include "tests/support/temp_dir.h"
#include "util/absl_compat.h"

namespace siftdb {
namespace compression_per_level_test {

std::string Key(int i) { return absl::StrFormat("key%06d", i); }
// Compresses well (every type saves far more than an eighth).
std::string Value(int i) {
  return absl::StrFormat("value-%06d-", i) + std::string(90, 'a' + i % 3);
}

Options BaseOptions() {
  Options o;
  o.create_if_missing = true;
  o.disable_auto_compactions = true;
  return o;
}

void PutRange(DB* db, int from, int to) {
  for (int i = from; i < to; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), Key(i), Value(i)).ok());
  }
}

void ExpectHolds(DB* db, int from, int to,
                 const ReadOptions& ro = ReadOptions()) {
  for (int i = from; i < to; i++) {
    std::string v;
    absl::Status s = db->Get(ro, Key(i), &v);
    ASSERT_TRUE(s.ok()) << Key(i) << ": " << s;
    ASSERT_EQ(v, Value(i));
  }
  auto it = db->NewIterator(ro);
  int i = from;
  for (it->Seek(Key(from)); it->Valid() && i < to; it->Next(), i++) {
    ASSERT_EQ(it->key(), Key(i));
    ASSERT_EQ(it->value(), Value(i));
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(i, to);
}

struct LiveTable {
  int level;
  std::string compression;             // the siftdb.compression property
  std::map<uint8_t, int> block_types;  // data block trailers by type
};

// Every live table (from siftdb.sstables) with its level, recorded
// compression and the types its data blocks are stored with.
std::vector<LiveTable> LiveTables(DB* db, const std::string& path) {
  std::vector<LiveTable> out;
  for (const OpenedLiveTable& live : OpenLiveTables(db, path)) {
    LiveTable t{live.level, live.table->properties().compression_name, {}};
    std::string bytes(live.file_size, '\0');
    std::ifstream(live.file, std::ios::binary).read(bytes.data(), bytes.size());
    auto index = live.table->NewIndexIterator();
    for (index->SeekToFirst(); index->Valid(); index->Next()) {
      BlockHandle h;
      std::string_view v = index->value();
      EXPECT_TRUE(h.DecodeFrom(&v));
      t.block_types[static_cast<uint8_t>(bytes[h.offset() + h.size()])]++;
    }
    out.push_back(std::move(t));
  }
  return out;
}

// Each table at `level` records `name` and stores every data block so.
void ExpectLevel(const std::vector<LiveTable>& tables, int level,
                 CompressionType type) {
  int n = 0;
  for (const LiveTable& t : tables) {
    if (t.level != level) continue;
    n++;
    EXPECT_EQ(t.compression, CompressionTypeName(type)) << "level " << level;
    for (const auto& [stored, count] : t.block_types) {
      EXPECT_EQ(stored, type) << "level " << level << ": " << count
                              << " blocks stored " << int{stored};
    }
  }
  EXPECT_GT(n, 0) << "no table at level " << level;
}

TEST(OutputCompressionTest, RulesOfPerLevelAndBottommost) {
  Options o;
  o.compression = kLZ4Compression;
  EXPECT_EQ(OutputCompression(o, 0, false), kLZ4Compression);
  EXPECT_EQ(OutputCompression(o, 6, true), kLZ4Compression);
  o.compression_per_level = {kNoCompression, kSnappyCompression,
                             kZstdCompression};
  EXPECT_EQ(OutputCompression(o, 0, false), kNoCompression);
  EXPECT_EQ(OutputCompression(o, 1, false), kSnappyCompression);
  EXPECT_EQ(OutputCompression(o, 2, false), kZstdCompression);
  EXPECT_EQ(OutputCompression(o, 6, false), kZstdCompression);  // the last
  o.bottommost_compression = kLZ4Compression;
  EXPECT_EQ(OutputCompression(o, 1, true), kLZ4Compression);
  EXPECT_EQ(OutputCompression(o, 1, false), kSnappyCompression);
  o.compression_per_level.clear();
  EXPECT_EQ(OutputCompression(o, 3, true), kLZ4Compression);
  o.compression = kZstdCompression;
  EXPECT_EQ(OutputCompression(o, 3, false), kZstdCompression);
  o.compression_opts.level = 9;
  TableOptions t = OutputTableOptions(TableOptions(), o, 2, 2, true);
  EXPECT_EQ(t.compression, kLZ4Compression);
  EXPECT_EQ(t.compression_level, 9);
}

// Flushes write level 0's type; a compaction writes its output level's.
TEST(CompressionPerLevelTest, FlushAndCompactionUseTheirLevelsType) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = BaseOptions();
  o.compression_per_level = {kNoCompression, kLZ4Compression, kZstdCompression};
  o.compression_opts.level = 5;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  PutRange(db->get(), 0, 2000);
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  auto tables = LiveTables(db->get(), path);
  ASSERT_EQ(tables.size(), 1u);
  ExpectLevel(tables, 0, kNoCompression);
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  tables = LiveTables(db->get(), path);
  ExpectLevel(tables, 1, kLZ4Compression);
  ExpectHolds(db->get(), 0, 2000);
}

// The bottommost override applies to a compaction whose output level has
// nothing below it, and not to one with a deeper level holding tables.
TEST(CompressionPerLevelTest, BottommostOverride) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = BaseOptions();
  o.compression_per_level = {kNoCompression, kLZ4Compression};
  o.bottommost_compression = kZstdCompression;
  // Phase 1: automatic compactions push level 1 (4 KiB at most) into
  // level 2 (4 MiB): every output is bottommost when written.
  o.disable_auto_compactions = false;
  o.max_bytes_for_level_base = 4096;
  o.max_bytes_for_level_multiplier = 1000;
  o.max_file_size = 8192;
  {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    PutRange(db->get(), 0, 3000);
    ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
    ExpectLevel(LiveTables(db->get(), path), 0, kNoCompression);
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE(static_cast<DBImpl*>(db->get())->WaitForBackgroundWork().ok());
    const auto tables = LiveTables(db->get(), path);
    ExpectLevel(tables, 2, kZstdCompression);
    for (const LiveTable& t : tables) {
      EXPECT_GE(t.level, 1);
      EXPECT_EQ(t.compression, "zstd") << "level " << t.level;
    }
    ExpectHolds(db->get(), 0, 3000);
  }
  // Phase 2 (no automatic compactions): new keys compacted into level 1,
  // above level 2's tables, get level 1's own type.
  o.disable_auto_compactions = true;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  PutRange(db->get(), 5000, 5030);
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  const std::string begin = Key(5000), end = Key(5030);
  const std::string_view b(begin), e(end);
  ASSERT_TRUE((*db)->CompactRange(&b, &e).ok());
  const auto tables = LiveTables(db->get(), path);
  int lz4 = 0;
  for (const LiveTable& t : tables) {
    if (t.compression == "lz4") {
      EXPECT_EQ(t.level, 1);
      lz4++;
    }
  }
  EXPECT_EQ(lz4, 1);
  ExpectHolds(db->get(), 0, 3000);
  ExpectHolds(db->get(), 5000, 5030);
}

// A DB written with Snappy reads back under zstd settings, with tables of
// both kinds live at once, and after compacting them together.
TEST(CompressionPerLevelTest, ReopenUnderAnotherTypeReadsMixedTables) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = BaseOptions();
  o.compression = kSnappyCompression;
  {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    PutRange(db->get(), 0, 1000);
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  }
  o.compression = kZstdCompression;
  o.compression_per_level = {kLZ4Compression, kZstdCompression};
  o.bottommost_compression = kZstdCompression;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  ExpectHolds(db->get(), 0, 1000);
  PutRange(db->get(), 500, 1500);  // overlaps the Snappy table
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  auto tables = LiveTables(db->get(), path);
  ExpectLevel(tables, 0, kLZ4Compression);
  ExpectLevel(tables, 1, kSnappyCompression);
  ExpectHolds(db->get(), 0, 1500);
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  ExpectLevel(LiveTables(db->get(), path), 1, kZstdCompression);
  ExpectHolds(db->get(), 0, 1500);
}

// A byte flipped inside the first data block of an LZ4 or zstd table:
// Get and iterators report DataLoss naming the table and the block's
// offset, with checksums verified or not (these blocks are always checked).
TEST(CompressionPerLevelTest, DamagedCompressedBlockIsDataLoss) {
  for (CompressionType type : {kLZ4Compression, kZstdCompression}) {
    SCOPED_TRACE(CompressionTypeName(type));
    test::TempDir dir;
    const std::string path = dir.Join("db");
    Options o = BaseOptions();
    o.compression = type;
    std::string table_name;
    {
      auto db = DB::Open(o, path);
      ASSERT_TRUE(db.ok()) << db.status();
      PutRange(db->get(), 0, 500);
      ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
      auto tables = LiveTables(db->get(), path);
      ASSERT_EQ(tables.size(), 1u);
      ASSERT_EQ(tables[0].block_types.count(type), 1u);
    }
    for (const auto& e : std::filesystem::directory_iterator(path)) {
      if (e.path().extension() == ".sst") table_name = e.path().filename();
    }
    ASSERT_FALSE(table_name.empty());
    {
      std::fstream f(path + "/" + table_name,
                     std::ios::in | std::ios::out | std::ios::binary);
      f.seekg(12);
      char c;
      f.read(&c, 1);
      c ^= 0x10;
      f.seekp(12);
      f.write(&c, 1);
    }
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    for (bool verify : {true, false}) {
      ReadOptions ro;
      ro.verify_checksums = verify;
      ro.fill_cache = false;
      std::string v;
      absl::Status s = (*db)->Get(ro, Key(0), &v);
      EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
      EXPECT_NE(s.message().find(AsAbsl(table_name + ": block at offset 0")),
                absl::string_view::npos)
          << s;
      auto it = (*db)->NewIterator(ro);
      it->SeekToFirst();
      EXPECT_FALSE(it->Valid());
      EXPECT_EQ(it->status().code(), absl::StatusCode::kDataLoss)
          << it->status();
      EXPECT_NE(it->status().message().find(
                    AsAbsl(table_name + ": block at offset 0")),
                absl::string_view::npos)
          << it->status();
    }
  }
}

}  // namespace compression_per_level_test
}  // namespace siftdb
