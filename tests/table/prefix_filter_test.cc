// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Prefix entries in a table's filter (TableOptions::prefix_extractor and
// whole_key_filtering): what the builder records, and what a reader with
// the same, another or no extractor may conclude from them. Never a false
// "no".

#include <memory>
#include <set>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/filter_policy.h"
#include "siftdb/slice_transform.h"
#include "table/format.h"
#include "tests/table/table_test_util.h"

namespace siftdb {
namespace prefix_filter_test {

using test::BuildTable;
using test::IKey;
using test::KVList;
using test::OpenTable;

// Keys "p<prefix 3 digits>-<n>": prefixes of 4 bytes "p000".."p999"; only
// even prefixes are present, 5 keys each.
KVList PrefixedEntries(int prefixes) {
  KVList entries;
  for (int p = 0; p < prefixes; p += 2) {
    for (int n = 0; n < 5; n++) {
      entries.emplace_back(IKey(absl::StrFormat("p%03d-%d", p, n), 1), "v");
    }
  }
  return entries;
}

TableOptions WithPrefixes(size_t n, bool whole_keys) {
  TableOptions o;
  o.filter_policy = NewBloomFilterPolicy(10);
  o.prefix_extractor = NewFixedPrefixTransform(n);
  o.whole_key_filtering = whole_keys;
  return o;
}

TEST(SliceTransformTest, FixedAndCappedPrefixes) {
  auto fixed = NewFixedPrefixTransform(3);
  EXPECT_STREQ(fixed->Name(), "siftdb.FixedPrefix.3");
  EXPECT_TRUE(fixed->InDomain("abc"));
  EXPECT_FALSE(fixed->InDomain("ab"));
  EXPECT_EQ(fixed->Transform("abcdef"), "abc");
  auto capped = NewCappedPrefixTransform(3);
  EXPECT_STREQ(capped->Name(), "siftdb.CappedPrefix.3");
  EXPECT_TRUE(capped->InDomain(""));
  EXPECT_EQ(capped->Transform("ab"), "ab");
  EXPECT_EQ(capped->Transform("abcdef"), "abc");
}

TEST(PrefixFilterTableTest, WholeKeysAndPrefixesAnswerBoth) {
  const KVList entries = PrefixedEntries(1000);
  const TableOptions options = WithPrefixes(4, /*whole_keys=*/true);
  TableProperties props;
  auto contents = BuildTable(options, entries, &props);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(props.filter_prefix_extractor, "siftdb.FixedPrefix.4");
  EXPECT_EQ(props.filter_policy_name, "siftdb.BlockedBloom");
  // 500 prefixes and 2,500 keys.
  EXPECT_EQ(props.filter_num_keys, 3000u);
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_EQ((*table)->properties().filter_prefix_extractor,
            "siftdb.FixedPrefix.4");
  int absent_prefix_maybes = 0;
  for (int p = 0; p < 1000; p++) {
    const std::string prefix = absl::StrFormat("p%03d", p);
    const bool may = (*table)->PrefixMayMatch(prefix);
    if (p % 2 == 0) {
      EXPECT_TRUE(may) << prefix;
      EXPECT_TRUE((*table)->UserKeyMayMatch(prefix + "-3", nullptr));
    } else if (may) {
      absent_prefix_maybes++;
    }
  }
  EXPECT_LT(absent_prefix_maybes, 25) << "about 1% of 500 expected";
}

TEST(PrefixFilterTableTest, PrefixOnlyFilterIsTaggedAndProbedByPrefix) {
  const KVList entries = PrefixedEntries(1000);
  const TableOptions options = WithPrefixes(4, /*whole_keys=*/false);
  TableProperties props;
  auto contents = BuildTable(options, entries, &props);
  ASSERT_TRUE(contents.ok()) << contents.status();
  EXPECT_EQ(props.filter_policy_name,
            std::string(kPrefixOnlyFilterTag) + "siftdb.BlockedBloom");
  EXPECT_EQ(props.filter_num_keys, 500u);
  auto table = OpenTable(options, *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  int absent_key_maybes = 0;
  for (int p = 0; p < 1000; p++) {
    const std::string key = absl::StrFormat("p%03d-7", p);
    // Present prefixes: every key of them may match (by its prefix).
    if (p % 2 == 0) {
      EXPECT_TRUE((*table)->UserKeyMayMatch(key, nullptr)) << key;
      EXPECT_TRUE((*table)->PrefixMayMatch(key.substr(0, 4)));
    } else if ((*table)->UserKeyMayMatch(key, nullptr)) {
      absent_key_maybes++;
    }
  }
  EXPECT_LT(absent_key_maybes, 25);
  // A key outside the domain cannot be probed by prefix: maybe.
  EXPECT_TRUE((*table)->UserKeyMayMatch("p1", nullptr));
}

// A reader whose extractor differs (or is absent) draws no conclusion from
// the prefixes, and a prefix-only filter then answers "maybe" for keys.
TEST(PrefixFilterTableTest, AnotherExtractorNeverConcludes) {
  const KVList entries = PrefixedEntries(200);
  for (bool whole_keys : {true, false}) {
    auto contents = BuildTable(WithPrefixes(4, whole_keys), entries);
    ASSERT_TRUE(contents.ok()) << contents.status();
    TableOptions other = WithPrefixes(3, whole_keys);
    TableOptions none;
    none.filter_policy = NewBloomFilterPolicy(10);
    for (const TableOptions* reader : {&other, &none}) {
      auto table = OpenTable(*reader, *contents);
      ASSERT_TRUE(table.ok()) << table.status();
      for (int p = 0; p < 200; p++) {
        const std::string key = absl::StrFormat("p%03d-7", p);
        EXPECT_TRUE((*table)->PrefixMayMatch(key.substr(0, 4)));
        EXPECT_TRUE((*table)->PrefixMayMatch(key.substr(0, 3)));
        if (!whole_keys) {
          EXPECT_TRUE((*table)->UserKeyMayMatch(key, nullptr)) << key;
        }
      }
    }
  }
}

// A table without prefixes (built before extractors, or without one) never
// rejects a prefix.
TEST(PrefixFilterTableTest, TableWithoutPrefixesSaysMaybe) {
  TableOptions plain;
  plain.filter_policy = NewBloomFilterPolicy(10);
  auto contents = BuildTable(plain, PrefixedEntries(200));
  ASSERT_TRUE(contents.ok()) << contents.status();
  auto table = OpenTable(WithPrefixes(4, true), *contents);
  ASSERT_TRUE(table.ok()) << table.status();
  EXPECT_TRUE((*table)->properties().filter_prefix_extractor.empty());
  for (int p = 0; p < 200; p++) {
    EXPECT_TRUE((*table)->PrefixMayMatch(absl::StrFormat("p%03d", p)));
  }
}

// What a reader that predates the tag sees: a policy name it cannot
// resolve, hence no policy and "maybe" for every key.
TEST(PrefixFilterTableTest, TaggedNameIsNoPolicyForOlderReaders) {
  EXPECT_FALSE(
      FilterPolicyFromName(
          std::string(kPrefixOnlyFilterTag) + "siftdb.BlockedBloom", 10)
          .ok());
}

// Property sweep: no prefix or key of the table is ever rejected, for
// several prefix lengths, key counts and both filter kinds.
TEST(PrefixFilterTableTest, NoFalseNegativesSweep) {
  for (size_t n : {1, 2, 5}) {
    for (int count : {1, 10, 1000}) {
      for (bool whole_keys : {true, false}) {
        KVList entries;
        std::set<std::string> keys;
        for (int i = 0; i < count; i++) {
          keys.insert(absl::StrFormat("%x", i * 2654435761u));
        }
        for (const std::string& k : keys) entries.emplace_back(IKey(k, 1), "");
        const TableOptions options = WithPrefixes(n, whole_keys);
        auto contents = BuildTable(options, entries);
        ASSERT_TRUE(contents.ok()) << contents.status();
        auto table = OpenTable(options, *contents);
        ASSERT_TRUE(table.ok()) << table.status();
        for (const std::string& k : keys) {
          EXPECT_TRUE((*table)->UserKeyMayMatch(k, nullptr)) << k;
          if (k.size() >= n) {
            EXPECT_TRUE((*table)->PrefixMayMatch(k.substr(0, n))) << k;
          }
        }
      }
    }
  }
}

}  // namespace prefix_filter_test
}  // namespace siftdb
