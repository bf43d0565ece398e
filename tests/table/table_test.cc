// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Table round trips: TableBuilder -> Table over many sizes and settings,
// point lookups, the filter's effect on reads, properties, approximate
// offsets.

#include "table/table.h"

#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/filter_format.h"
#include "gtest/gtest.h"
#include "table/format.h"
#include "tests/table/table_test_util.h"
#include "util/statistics.h"

namespace siftdb {
namespace table_test {

using test::BuildTable;
using test::CheckScan;
using test::Get;
using test::GetResult;
using test::IKey;
using test::KVList;
using test::MakeEntries;
using test::OpenTable;
using test::TestRandom;

struct RoundTripParam {
  size_t n;
  CompressionType compression;
  bool compressible;
  bool filter;
};

class TableRoundTrip : public testing::TestWithParam<RoundTripParam> {};

TEST_P(TableRoundTrip, ScanGetAndProperties) {
  const RoundTripParam p = GetParam();
  TableOptions options;
  options.compression = p.compression;
  if (p.filter) options.filter_policy = NewBloomFilterPolicy(10);
  const KVList entries = MakeEntries(p.n, p.compressible, p.n);
  TableProperties written;
  auto contents = BuildTable(options, entries, &written);
  ASSERT_TRUE(contents.ok()) << contents.status();
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  const Table& t = **table;

  CheckScan(t, entries, /*verify=*/true);

  // Properties: what the builder reported is what the reader decodes.
  const TableProperties& props = t.properties();
  EXPECT_EQ(props.num_entries, p.n);
  EXPECT_EQ(props.num_entries, written.num_entries);
  EXPECT_EQ(props.num_deletions, (p.n + 3) / 7);
  uint64_t raw_keys = 0, raw_values = 0;
  for (const auto& [k, v] : entries) {
    raw_keys += k.size();
    raw_values += v.size();
  }
  EXPECT_EQ(props.raw_key_size, raw_keys);
  EXPECT_EQ(props.raw_value_size, raw_values);
  EXPECT_EQ(props.num_data_blocks, written.num_data_blocks);
  EXPECT_EQ(props.data_size, written.data_size);
  EXPECT_EQ(props.data_size, t.data_end());
  EXPECT_EQ(props.index_size, t.footer().index_handle.size());
  EXPECT_EQ(props.smallest_key, p.n ? entries.front().first : "");
  EXPECT_EQ(props.largest_key, p.n ? entries.back().first : "");
  EXPECT_EQ(props.format_version, kTableFormatVersion);
  EXPECT_EQ(props.comparator_name, BytewiseComparator()->Name());
  EXPECT_GT(props.creation_time, 1600000000u);
  EXPECT_TRUE(props.unknown.empty());
  if (p.filter) {
    EXPECT_EQ(props.filter_policy_name, "siftdb.BlockedBloom");
    EXPECT_EQ(t.filter_policy_name(), "siftdb.BlockedBloom");
    EXPECT_DOUBLE_EQ(props.filter_bits_per_key, 10);
    EXPECT_EQ(props.filter_num_keys, p.n);
    EXPECT_EQ(props.filter_size, t.filter_data().size());
    EXPECT_GT(t.filter_data().size(), kFilterTrailerSize);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(t.filter_data().data()) % 64, 0u);
  } else {
    EXPECT_EQ(props.filter_policy_name, "");
    EXPECT_TRUE(t.filter_data().empty());
    EXPECT_EQ(props.filter_size, 0u);
  }
  if (p.compression == kNoCompression || !p.compressible) {
    // Raw (incompressible data is stored raw too): only the keys shrink,
    // by prefix compression.
    EXPECT_GE(props.data_size, raw_values);
  } else if (p.n >= 100) {
    EXPECT_LT(props.data_size, (raw_keys + raw_values) / 2);
  }

  // Point lookups: every key by its own sequence, and at a newer snapshot.
  const size_t step = std::max<size_t>(1, p.n / 500);
  for (size_t i = 0; i < p.n; i += step) {
    const std::string user_key(ExtractUserKey(entries[i].first));
    GetResult r = Get(t, IKey(user_key, kMaxSequenceNumber, kValueTypeForSeek));
    ASSERT_TRUE(r.called);
    ASSERT_EQ(r.key, entries[i].first);
    ASSERT_EQ(r.value, entries[i].second);
    EXPECT_TRUE(t.UserKeyMayMatch(user_key, nullptr));
  }
  // Absent keys: found() either not called or called with another user key.
  for (size_t i = 0; i < 200; i++) {
    const std::string user_key = "key" + std::to_string(i) + "x";
    GetResult r = Get(t, IKey(user_key, kMaxSequenceNumber, kValueTypeForSeek));
    if (r.called) {
      EXPECT_NE(ExtractUserKey(r.key), user_key);
    }
  }
}

std::string ParamName(const testing::TestParamInfo<RoundTripParam>& info) {
  const RoundTripParam& p = info.param;
  return absl::StrFormat("n%d_%s_%s_%s", p.n,
                         p.compression == kSnappyCompression ? "snappy" : "raw",
                         p.compressible ? "compressible" : "random",
                         p.filter ? "filter" : "nofilter");
}

std::vector<RoundTripParam> RoundTripParams() {
  std::vector<RoundTripParam> out;
  for (size_t n : {1, 2, 10, 100, 1000, 20000}) {
    for (CompressionType c : {kNoCompression, kSnappyCompression}) {
      for (bool compressible : {false, true}) {
        for (bool filter : {false, true}) {
          out.push_back({n, c, compressible, filter});
        }
      }
    }
  }
  out.push_back({100000, kSnappyCompression, true, true});
  return out;
}

INSTANTIATE_TEST_SUITE_P(Sweep, TableRoundTrip,
                         testing::ValuesIn(RoundTripParams()), ParamName);

TEST(TableTest, EmptyTable) {
  TableOptions options;
  options.filter_policy = NewBloomFilterPolicy(10);
  auto contents = BuildTable(options, {});
  ASSERT_TRUE(contents.ok()) << contents.status();
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  CheckScan(**table, {});
  EXPECT_EQ((*table)->properties().num_entries, 0u);
  EXPECT_EQ((*table)->properties().num_data_blocks, 0u);
  EXPECT_FALSE(Get(**table, IKey("a", 1)).called);
}

TEST(TableTest, ManyVersionsOfOneKeyAcrossBlocks) {
  // Versions of one user key spanning many blocks: lookups at every
  // snapshot find the newest version at or below it.
  TableOptions options;
  options.block_size = 256;
  options.filter_policy = NewBloomFilterPolicy(10);
  KVList entries;
  entries.emplace_back(IKey("a", 5), "a5");
  for (SequenceNumber seq = 1000; seq >= 10; seq -= 10) {
    entries.emplace_back(IKey("k", seq), "v" + std::to_string(seq));
  }
  entries.emplace_back(IKey("z", 1), "z1");
  TableProperties props;
  auto contents = BuildTable(options, entries, &props);
  ASSERT_TRUE(contents.ok());
  EXPECT_GT(props.num_data_blocks, 5u);
  EXPECT_EQ(props.filter_num_keys, 3u);  // distinct user keys
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  CheckScan(**table, entries);
  for (SequenceNumber snap = 5; snap <= 1005; snap += 1) {
    GetResult r = Get(**table, IKey("k", snap, kValueTypeForSeek));
    ASSERT_TRUE(r.called);
    ParsedInternalKey parsed;
    ASSERT_TRUE(ParseInternalKey(r.key, &parsed));
    if (snap < 10) {
      EXPECT_EQ(parsed.user_key, "z");
    } else {
      EXPECT_EQ(parsed.user_key, "k");
      EXPECT_EQ(parsed.sequence,
                std::min<SequenceNumber>(1000, snap / 10 * 10));
    }
  }
}

TEST(TableTest, LargeValuesAndKeys) {
  TableOptions options;
  TestRandom rnd(5);
  KVList entries;
  for (int i = 0; i < 50; i++) {
    std::string user_key = absl::StrFormat("%03d", i) + rnd.Bytes(i * 80);
    entries.emplace_back(IKey(user_key, 7), i % 2 ? rnd.Bytes(i * 1000)
                                                  : rnd.Compressible(i * 5000));
  }
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  CheckScan(**table, entries, true);
}

TEST(TableTest, BuilderRejectsOutOfOrderAndMalformedKeys) {
  test::StringSink sink;
  {
    TableBuilder builder(TableOptions(), &sink);
    builder.Add(IKey("b", 1), "");
    builder.Add(IKey("a", 1), "");
    EXPECT_EQ(builder.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(builder.Finish().code(), absl::StatusCode::kInvalidArgument);
  }
  {
    TableBuilder builder(TableOptions(), &sink);
    builder.Add(IKey("a", 1), "");
    builder.Add(IKey("a", 1), "");  // duplicate
    EXPECT_EQ(builder.status().code(), absl::StatusCode::kInvalidArgument);
    builder.Abandon();
  }
  {
    TableBuilder builder(TableOptions(), &sink);
    builder.Add("short", "");
    EXPECT_EQ(builder.status().code(), absl::StatusCode::kInvalidArgument);
    builder.Abandon();
  }
}

TEST(TableTest, CompressionOnlyWhenItSavesAnEighth) {
  // Incompressible values: every block stored raw even with snappy on.
  TableOptions options;
  const KVList entries = MakeEntries(500, /*compressible=*/false, 9);
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok());
  auto index = (*table)->NewIndexIterator();
  int blocks = 0;
  for (index->SeekToFirst(); index->Valid(); index->Next(), blocks++) {
    BlockHandle h;
    std::string_view v = index->value();
    ASSERT_TRUE(h.DecodeFrom(&v));
    EXPECT_EQ((*contents)[h.offset() + h.size()], kNoCompression);
  }
  EXPECT_GT(blocks, 1);
  // Compressible values: stored snappy.
  const KVList entries2 = MakeEntries(500, /*compressible=*/true, 9);
  contents = BuildTable(options, entries2);
  ASSERT_TRUE(contents.ok());
  table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok());
  index = (*table)->NewIndexIterator();
  index->SeekToFirst();
  ASSERT_TRUE(index->Valid());
  BlockHandle h;
  std::string_view v = index->value();
  ASSERT_TRUE(h.DecodeFrom(&v));
  EXPECT_EQ((*contents)[h.offset() + h.size()], kSnappyCompression);
}

TEST(TableTest, ApproximateOffsets) {
  TableOptions options;
  options.compression = kNoCompression;
  const KVList entries = MakeEntries(10000, false, 3, 100);
  auto contents = BuildTable(options, entries);
  ASSERT_TRUE(contents.ok());
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok());
  const Table& t = **table;
  EXPECT_EQ(t.ApproximateOffsetOf(IKey("", kMaxSequenceNumber)), 0u);
  uint64_t prev = 0;
  for (size_t i = 0; i < entries.size(); i += 100) {
    const uint64_t off = t.ApproximateOffsetOf(entries[i].first);
    EXPECT_GE(off, prev);
    // ~130 bytes per entry; within one block (4 KiB) of proportional.
    const double want = static_cast<double>(i) * t.data_end() / entries.size();
    EXPECT_NEAR(static_cast<double>(off), want, 8192) << i;
    prev = off;
  }
  EXPECT_EQ(t.ApproximateOffsetOf(IKey("zzz", 1)), t.data_end());
}

}  // namespace table_test
}  // namespace siftdb
