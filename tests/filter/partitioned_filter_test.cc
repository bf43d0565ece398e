// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Partitioned filters (kind 'P', docs/filter_format.md section 7): no false
// negatives for keys and prefixes over many sizes, seeds and policies; the
// doc's test vector; "no" past the last partition; "may match" for damaged
// bytes and for readers that do not know kind 'P'.

#include "filter/partitioned_filter.h"

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "filter/filter_format.h"
#include "filter/filter_reader.h"
#include "gtest/gtest.h"
#include "siftdb/filter_policy.h"
#include "tests/filter/filter_test_keys.h"
#include "tests/support/paths.h"

namespace siftdb {
namespace partitioned_filter_test {

using test::SplitMix64;

// n distinct sorted keys of 6..20 bytes drawn from a small alphabet (so
// prefixes repeat).
std::vector<std::string> SortedKeys(size_t n, uint64_t seed) {
  SplitMix64 rng(seed);
  std::set<std::string> keys;
  while (keys.size() < n) {
    std::string k(6 + rng.Uniform(15), '\0');
    for (char& c : k) c = static_cast<char>('a' + rng.Uniform(6));
    keys.insert(k);
  }
  return {keys.begin(), keys.end()};
}

std::string Build(const FilterPolicy& policy, size_t partition_bytes,
                  const std::vector<std::string>& keys, size_t prefix_len,
                  bool whole_keys, size_t* partitions = nullptr) {
  PartitionedFilterBuilder b(&policy, partition_bytes);
  for (const std::string& k : keys) {
    const std::string_view prefix =
        std::string_view(k).substr(0, std::min(prefix_len, k.size()));
    b.Add(k, whole_keys, prefix_len > 0 ? &prefix : nullptr);
  }
  if (partitions != nullptr) *partitions = b.NumPartitions();
  std::string out;
  b.Finish(&out);
  return out;
}

std::vector<std::shared_ptr<const FilterPolicy>> Policies() {
  return {NewBloomFilterPolicy(10), NewRibbonFilterPolicy(10),
          NewClassicBloomFilterPolicy(10)};
}

// Probes like a table does: the partitioned reader, or the ordinary one
// when the builder wrote one partition.
bool MayMatch(const FilterPolicy& policy, std::string_view filter,
              std::string_view key) {
  if (IsPartitionedFilter(filter)) {
    return PartitionedFilterReader(&policy, filter).KeyMayMatch(key);
  }
  return FilterReader(&policy, filter).KeyMayMatch(key);
}

std::vector<size_t> Sizes() {
  std::vector<size_t> sizes;
  for (size_t n = 1; n <= 120; n++) sizes.push_back(n);
  for (size_t n = 130; n <= 10000; n = n * 5 / 4) sizes.push_back(n);
  sizes.push_back(10000);
  return sizes;
}

TEST(PartitionedFilterTest, NoFalseNegativesForKeys) {
  for (const auto& policy : Policies()) {
    for (size_t n : Sizes()) {
      for (uint64_t seed : {1u, 2u}) {
        const size_t part = n % 3 == 0 ? 16 : n % 3 == 1 ? 64 : 512;
        const auto keys = SortedKeys(n, seed * 1000 + n);
        size_t partitions = 0;
        const std::string f = Build(*policy, part, keys, 0, true, &partitions);
        ASSERT_EQ(IsPartitionedFilter(f), partitions > 1);
        if (partitions > 1) {
          PartitionedFilterReader r(policy.get(), f);
          ASSERT_TRUE(r.valid()) << policy->Name() << " n=" << n;
          ASSERT_EQ(r.index().size(), partitions);
        }
        for (const std::string& k : keys) {
          ASSERT_TRUE(MayMatch(*policy, f, k))
              << policy->Name() << " n=" << n << " seed=" << seed << " " << k;
        }
      }
    }
  }
}

TEST(PartitionedFilterTest, FalsePositiveRateStaysNearThePolicys) {
  const auto policy = NewBloomFilterPolicy(10);
  const auto keys = SortedKeys(20000, 7);
  const std::string f = Build(*policy, 512, keys, 0, true);
  ASSERT_TRUE(IsPartitionedFilter(f));
  PartitionedFilterReader r(policy.get(), f);
  SplitMix64 rng(99);
  size_t fp = 0, probes = 0;
  for (int i = 0; i < 20000; i++) {
    std::string k = keys[rng.Uniform(keys.size())];
    k.push_back('z');  // absent (alphabet a..f), inside the key range
    fp += r.KeyMayMatch(k);
    probes++;
  }
  EXPECT_LT(static_cast<double>(fp) / probes, 0.03);
}

// A million keys in 4 KiB partitions, once per policy that partitions
// well: no false negatives, and the rate and size near the policy's own.
TEST(PartitionedFilterTest, OneMillionKeys) {
  constexpr int kN = 1000000;
  for (const auto& policy :
       {NewBloomFilterPolicy(10), NewRibbonFilterPolicy(10)}) {
    SCOPED_TRACE(policy->Name());
    PartitionedFilterBuilder b(policy.get(), 4096);
    char key[16];
    for (int i = 0; i < kN; i++) {
      std::snprintf(key, sizeof(key), "k%09d", 2 * i);
      b.Add(key, true, nullptr);
    }
    std::string f;
    b.Finish(&f);
    ASSERT_TRUE(IsPartitionedFilter(f));
    PartitionedFilterReader r(policy.get(), f);
    ASSERT_TRUE(r.valid());
    EXPECT_GT(r.index().size(), 100u);
    for (int i = 0; i < kN; i++) {
      std::snprintf(key, sizeof(key), "k%09d", 2 * i);
      ASSERT_TRUE(r.KeyMayMatch(key)) << key;
    }
    size_t fp = 0;
    for (int i = 0; i < kN; i++) {  // absent, inside the key range
      std::snprintf(key, sizeof(key), "k%09d", 2 * i + 1);
      fp += r.KeyMayMatch(key);
    }
    // Both policies aim at ~0.96% (about 9,600 hits; 6 sigma ~ 600), and
    // partitioning adds about 3% of bytes (trailers, checksums, index).
    EXPECT_NEAR(static_cast<double>(fp) / kN, 0.0096, 0.0015);
    const double bits_per_key = 8.0 * f.size() / kN;
    EXPECT_LT(bits_per_key,
              policy->Name() == std::string("siftdb.Ribbon") ? 7.6 : 10.6);
  }
}

TEST(PartitionedFilterTest, NoFalseNegativesForPrefixes) {
  for (const auto& policy : Policies()) {
    for (size_t n : {1u, 7u, 50u, 333u, 2000u, 10000u}) {
      for (bool whole : {true, false}) {
        for (size_t prefix_len : {1u, 2u, 4u}) {
          const auto keys = SortedKeys(n, n + prefix_len);
          const std::string f = Build(*policy, 32, keys, prefix_len, whole);
          for (const std::string& k : keys) {
            const std::string p = k.substr(0, prefix_len);
            ASSERT_TRUE(MayMatch(*policy, f, p))
                << policy->Name() << " n=" << n << " prefix " << p;
            if (whole) {
              ASSERT_TRUE(MayMatch(*policy, f, k));
            }
          }
        }
      }
    }
  }
}

TEST(PartitionedFilterTest, PastTheLastPartitionIsNo) {
  const auto policy = NewBloomFilterPolicy(10);
  const auto keys = SortedKeys(3000, 5);
  const std::string f = Build(*policy, 64, keys, 0, true);
  PartitionedFilterReader r(policy.get(), f);
  ASSERT_TRUE(r.valid());
  EXPECT_FALSE(r.KeyMayMatch(keys.back() + "a"));
  EXPECT_FALSE(r.KeyMayMatch("g"));  // after every key (alphabet a..f)
  EXPECT_TRUE(r.KeyMayMatch(keys.back()));
}

TEST(PartitionedFilterTest, DamagedBytesNeverAnswerNo) {
  const auto policy = NewBloomFilterPolicy(10);
  const auto keys = SortedKeys(400, 11);
  const std::string good = Build(*policy, 64, keys, 0, true);
  ASSERT_TRUE(IsPartitionedFilter(good));
  for (size_t pos = 0; pos < good.size(); pos++) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string bad = good;
      bad[pos] = static_cast<char>(bad[pos] ^ flip);
      for (size_t i = 0; i < keys.size(); i += 7) {
        ASSERT_TRUE(MayMatch(*policy, bad, keys[i]))
            << "byte " << pos << " ^ " << int{flip} << " key " << keys[i];
      }
    }
  }
  // Truncations: the trailer goes, or the index no longer fits.
  for (size_t cut = 1; cut < good.size(); cut += 13) {
    const std::string bad = good.substr(0, good.size() - cut);
    for (size_t i = 0; i < keys.size(); i += 17) {
      ASSERT_TRUE(MayMatch(*policy, bad, keys[i])) << "cut " << cut;
    }
  }
}

TEST(PartitionedFilterTest, ReadersThatDoNotKnowKindPAnswerMaybe) {
  const auto keys = SortedKeys(2000, 3);
  for (const auto& policy : Policies()) {
    const std::string f = Build(*policy, 64, keys, 0, true);
    ASSERT_TRUE(IsPartitionedFilter(f));
    const FilterReader plain(policy.get(), f);
    for (const std::string& k :
         {std::string("zzz"), std::string("q"), keys.front(), keys.back()}) {
      EXPECT_TRUE(plain.KeyMayMatch(k)) << policy->Name();
      EXPECT_TRUE(policy->KeyMayMatch(k, f)) << policy->Name();
    }
  }
}

TEST(PartitionedFilterTest, IndexRejectsInconsistentBytes) {
  const auto policy = NewBloomFilterPolicy(10);
  const std::string f = Build(*policy, 64, SortedKeys(500, 4), 0, true);
  FilterPartitionIndex index;
  ASSERT_TRUE(FilterPartitionIndex::Parse(f, &index));
  EXPECT_GT(index.size(), 3u);
  // A partition count the index does not hold.
  std::string bad = f;
  bad[bad.size() - kFilterTrailerSize] ^= 1;
  EXPECT_FALSE(FilterPartitionIndex::Parse(bad, &index));
  // An index size beyond the block.
  bad = f;
  bad[bad.size() - kPartitionedFooterSize + 3] = '\x7f';
  EXPECT_FALSE(FilterPartitionIndex::Parse(bad, &index));
  EXPECT_FALSE(FilterPartitionIndex::Parse("", &index));
}

// The doc's vector (docs/filter_format.md section 7.4): classic Bloom at 10
// bits per key, one key per partition, keys "apple" and "banana".
constexpr char kVectorHex[] =
    "c00600200100080040000000070143537d2dbeef000842001080002140000000"
    "07014353aea0d9550000000010000000050000006170706c6514000000100000"
    "000600000062616e616e6123000000ec49b6100200000000015053";

std::string VectorFilter() {
  const auto policy = NewClassicBloomFilterPolicy(10);
  return Build(*policy, 1, {"apple", "banana"}, 0, true);
}

TEST(PartitionedFilterTest, FormatVector) {
  const std::string f = VectorFilter();
  EXPECT_EQ(absl::BytesToHexString(f), kVectorHex);
  const auto policy = NewClassicBloomFilterPolicy(10);
  PartitionedFilterReader r(policy.get(), f);
  ASSERT_TRUE(r.valid());
  ASSERT_EQ(r.index().size(), 2u);
  EXPECT_EQ(r.index().entry(0).last_key, "apple");
  EXPECT_EQ(r.index().entry(1).last_key, "banana");
  EXPECT_TRUE(r.KeyMayMatch("apple"));
  EXPECT_TRUE(r.KeyMayMatch("banana"));
  EXPECT_FALSE(r.KeyMayMatch("cherry"));  // past the last partition
}

TEST(PartitionedFilterTest, DocCarriesTheVector) {
  auto contents = test::ReadSourceFile("docs/filter_format.md");
  ASSERT_TRUE(contents.ok()) << contents.status();
  std::string doc = *std::move(contents);
  // The doc wraps the hex over lines of 64 characters.
  std::string wrapped;
  const std::string hex = kVectorHex;
  for (size_t i = 0; i < hex.size(); i += 64) {
    wrapped += hex.substr(i, 64) + "\n";
  }
  EXPECT_NE(doc.find(wrapped), std::string::npos)
      << "docs/filter_format.md must carry:\n"
      << wrapped;
}

}  // namespace partitioned_filter_test
}  // namespace siftdb
