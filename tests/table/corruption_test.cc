// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Damaged tables: every byte flipped, every truncation, foreign files. Open
// or reads must return DataLoss naming the file, or the correct data —
// never wrong data, never a crash.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "table/format.h"
#include "table/table.h"
#include "tests/table/table_test_util.h"

namespace siftdb {
namespace corruption_test {

using test::BuildTable;
using test::IKey;
using test::KVList;
using test::OpenTable;
using test::TestRandom;

constexpr char kName[] = "000042.sst";

KVList SmallTable(bool compressible) {
  TestRandom rnd(77);
  KVList entries;
  for (int i = 0; i < 40; i++) {
    char key[16];
    std::snprintf(key, sizeof(key), "user%03d", i);
    entries.emplace_back(
        IKey(key, 100 + i, i % 5 == 0 ? kTypeDeletion : kTypeValue),
        compressible ? rnd.Compressible(30) : rnd.Bytes(20));
  }
  return entries;
}

TableOptions SmallTableOptions() {
  TableOptions options;
  options.block_size = 256;  // several data blocks
  options.block_restart_interval = 4;
  options.filter_policy = NewBloomFilterPolicy(10);
  return options;
}

void ExpectDataLossNamingFile(const absl::Status& s) {
  EXPECT_EQ(s.code(), absl::StatusCode::kDataLoss) << s;
  EXPECT_TRUE(absl::StartsWith(s.message(), kName)) << s;
}

// Reads the whole table (scan forward and backward, Get every key) with
// checksums verified. Returns false when an error was reported; fails the
// test if any entry read differs from `entries`.
bool ReadAll(const Table& table, const KVList& entries) {
  ReadOptions ro;
  ro.verify_checksums = true;
  bool clean = true;
  {
    auto it = table.NewIterator(ro);
    size_t i = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
      EXPECT_LT(i, entries.size());
      if (i >= entries.size()) return false;
      EXPECT_EQ(it->key(), entries[i].first);
      EXPECT_EQ(it->value(), entries[i].second);
    }
    if (!it->status().ok()) {
      ExpectDataLossNamingFile(it->status());
      clean = false;
    } else {
      EXPECT_EQ(i, entries.size()) << "scan ended early without an error";
    }
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
      EXPECT_GT(i, 0u);
      if (i == 0) return false;
      EXPECT_EQ(it->key(), entries[--i].first);
    }
    if (!it->status().ok()) clean = false;
  }
  for (const auto& entry : entries) {
    const std::string& k = entry.first;  // (clang 14 cannot capture a binding)
    const std::string& v = entry.second;
    bool called = false;
    absl::Status s = table.InternalGet(
        ro, IKey(ExtractUserKey(k), kMaxSequenceNumber, kValueTypeForSeek),
        nullptr, [&](std::string_view fk, std::string_view fv) {
          called = true;
          EXPECT_EQ(fk, k);
          EXPECT_EQ(fv, v);
        });
    if (!s.ok()) {
      ExpectDataLossNamingFile(s);
      clean = false;
    } else {
      EXPECT_TRUE(called) << "present key reported absent";
    }
  }
  return clean;
}

class FlipEveryByte : public testing::TestWithParam<bool> {};

TEST_P(FlipEveryByte, ErrorOrCorrectData) {
  const KVList entries = SmallTable(/*compressible=*/GetParam());
  TableOptions options = SmallTableOptions();
  auto good = BuildTable(options, entries);
  ASSERT_TRUE(good.ok());
  {
    auto table = OpenTable(options, *good, kName);
    ASSERT_TRUE(table.ok()) << table.status();
    ASSERT_TRUE(ReadAll(**table, entries));
  }
  int open_errors = 0, read_errors = 0, harmless = 0;
  for (size_t i = 0; i < good->size(); i++) {
    for (uint8_t mask : {0x01, 0x80}) {
      SCOPED_TRACE(testing::Message() << "byte " << i << " ^ " << int(mask));
      std::string bad = *good;
      bad[i] ^= static_cast<char>(mask);
      auto table = OpenTable(options, bad, kName);
      if (!table.ok()) {
        ExpectDataLossNamingFile(table.status());
        open_errors++;
        continue;
      }
      if (ReadAll(**table, entries)) {
        harmless++;
      } else {
        read_errors++;
      }
      if (testing::Test::HasFailure()) return;  // one byte's report is enough
    }
  }
  // Only the footer's padding is unprotected.
  EXPECT_LE(harmless, 2 * 40);
  EXPECT_GT(open_errors, 0);
  EXPECT_GT(read_errors, 0);
}

INSTANTIATE_TEST_SUITE_P(Values, FlipEveryByte, testing::Bool(),
                         [](const testing::TestParamInfo<bool>& info) {
                           return info.param ? "Compressed" : "Raw";
                         });

TEST(CorruptionTest, EveryTruncationFailsToOpen) {
  const KVList entries = SmallTable(true);
  TableOptions options = SmallTableOptions();
  auto good = BuildTable(options, entries);
  ASSERT_TRUE(good.ok());
  for (size_t n = 0; n < good->size(); n++) {
    auto table = OpenTable(options, good->substr(0, n), kName);
    ASSERT_FALSE(table.ok()) << "opened a table truncated to " << n;
    ExpectDataLossNamingFile(table.status());
  }
}

TEST(CorruptionTest, ForeignFilesAreNotTables) {
  TestRandom rnd(5);
  for (size_t n : {0, 1, 51, 52, 53, 4096}) {
    auto table = OpenTable(TableOptions(), rnd.Bytes(n), kName);
    ASSERT_FALSE(table.ok());
    ExpectDataLossNamingFile(table.status());
  }
  auto table = OpenTable(TableOptions(), std::string(100, '\0'), kName);
  ASSERT_FALSE(table.ok());
  EXPECT_NE(table.status().message().find("not a siftdb table"),
            std::string_view::npos)
      << table.status();
}

// No CRC covers the footer: a footer whose index handle names another
// intact block (a data block, the metaindex) used to open, and a lookup past
// that block's keys answered "absent" for keys the table holds. The sizes
// in the properties now expose the wrong handle.
TEST(CorruptionTest, FooterNamingAnotherIntactBlockFailsToOpen) {
  const KVList entries = SmallTable(false);
  TableOptions options = SmallTableOptions();
  auto good = BuildTable(options, entries);
  ASSERT_TRUE(good.ok());
  auto table = OpenTable(options, *good, kName);
  ASSERT_TRUE(table.ok()) << table.status();
  const Footer footer = (*table)->footer();
  std::vector<BlockHandle> data_blocks;
  auto index = (*table)->NewIndexIterator();
  for (index->SeekToFirst(); index->Valid(); index->Next()) {
    std::string_view v = index->value();
    ASSERT_TRUE(data_blocks.emplace_back().DecodeFrom(&v));
  }
  ASSERT_GE(data_blocks.size(), 2u);
  for (const BlockHandle& wrong :
       {data_blocks.front(), data_blocks.back(), footer.metaindex_handle}) {
    SCOPED_TRACE(testing::Message() << "index -> block at " << wrong.offset());
    Footer bad_footer = footer;
    bad_footer.index_handle = wrong;
    std::string encoded;
    bad_footer.EncodeTo(&encoded);
    std::string bad = *good;
    bad.replace(bad.size() - kFooterSize, kFooterSize, encoded);
    auto damaged = OpenTable(options, bad, kName);
    ASSERT_FALSE(damaged.ok()) << "opened with a data block as its index";
    ExpectDataLossNamingFile(damaged.status());
    EXPECT_TRUE(absl::StrContains(
        damaged.status().message(),
        absl::StrFormat("footer at offset %d", bad.size() - kFooterSize)))
        << damaged.status();
  }
}

TEST(CorruptionTest, ChecksumMismatchNamesFileAndOffset) {
  const KVList entries = SmallTable(false);
  TableOptions options = SmallTableOptions();
  options.filter_policy = nullptr;
  auto good = BuildTable(options, entries);
  ASSERT_TRUE(good.ok());
  auto table = OpenTable(options, *good, kName);
  ASSERT_TRUE(table.ok());
  // Damage the second data block's contents.
  auto index = (*table)->NewIndexIterator();
  index->SeekToFirst();
  index->Next();
  ASSERT_TRUE(index->Valid());
  BlockHandle h;
  std::string_view v = index->value();
  ASSERT_TRUE(h.DecodeFrom(&v));
  std::string bad = *good;
  bad[h.offset() + 3] ^= 0x10;
  auto damaged = OpenTable(options, bad, kName);
  ASSERT_TRUE(damaged.ok());  // data blocks are read on demand
  ReadOptions ro;
  ro.verify_checksums = true;
  auto it = (*damaged)->NewIterator(ro);
  it->SeekToFirst();
  while (it->Valid()) it->Next();
  EXPECT_EQ(it->status().code(), absl::StatusCode::kDataLoss);
  EXPECT_EQ(it->status().message(),
            absl::StrFormat("%s: block at offset %d: checksum mismatch", kName,
                            h.offset()));
  // paranoid_checks verifies without the read option.
  TableOptions paranoid = options;
  paranoid.paranoid_checks = true;
  auto damaged2 = OpenTable(paranoid, bad, kName);
  ASSERT_TRUE(damaged2.ok());
  auto it2 = (*damaged2)->NewIterator(ReadOptions());
  for (it2->SeekToFirst(); it2->Valid(); it2->Next()) {
  }
  EXPECT_EQ(it2->status().code(), absl::StatusCode::kDataLoss);
}

}  // namespace corruption_test
}  // namespace siftdb
