// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteCachedFilter::Decode, the remote reader's decoder of fetched table
// filters: Ribbon tables (kind 'R') are decoded and answer like the local
// reader, the Bloom kinds are unaffected, and anything it cannot decode
// (unknown kind, corrupt tail, foreign policy) answers "maybe". Partitioned
// filters (kind 'P') of each inner kind answer like the local reader, for
// keys and prefixes, and "maybe" when damaged.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/filter_hash.h"
#include "filter/filter_reader.h"
#include "filter/partitioned_filter.h"
#include "gtest/gtest.h"
#include "redis/mirror/remote_filter_cache.h"
#include "siftdb/filter_policy.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace siftdb {
namespace remote_filter_cache_kinds_test {

std::string Key(int k) { return absl::StrFormat("key%07d", k); }

std::string Build(const FilterPolicy& policy, int n) {
  auto builder = policy.NewBuilder();
  for (int k = 0; k < n; k += 2) builder->AddKey(Key(k));
  std::string filter;
  builder->Finish(&filter);
  return filter;
}

TEST(RemoteFilterCacheKindsTest, DecodesEachKindLikeTheLocalReader) {
  struct Case {
    std::shared_ptr<const FilterPolicy> policy;
    RemoteInnerFilter::Kind kind;
  };
  const std::vector<Case> cases = {
      {NewBloomFilterPolicy(10), RemoteInnerFilter::Kind::kBlocked},
      {NewClassicBloomFilterPolicy(10), RemoteInnerFilter::Kind::kClassic},
      {NewRibbonFilterPolicy(10), RemoteInnerFilter::Kind::kRibbon},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.policy->Name());
    RemoteCachedFilter f;
    f.bytes = Build(*c.policy, 4000);
    f.Decode(c.policy->Name());
    EXPECT_EQ(f.whole.kind, c.kind);
    const FilterReader local(c.policy.get(), f.bytes);
    int rejected = 0;
    for (int k = 0; k < 4000; ++k) {
      const uint64_t h = FilterKeyHash(Key(k));
      EXPECT_EQ(f.MayMatch(Key(k), h), local.HashMayMatch(h)) << k;
      if (k % 2 == 0) {
        ASSERT_TRUE(f.MayMatch(Key(k), h)) << k;
      }
      rejected += !f.MayMatch(Key(k), h);
    }
    EXPECT_GT(rejected, 1800);
    // Prefix-only tables decode the same bytes but answer maybe for keys.
    RemoteCachedFilter p;
    p.bytes = f.bytes;
    p.Decode(std::string("prefixonly.") + c.policy->Name());
    EXPECT_EQ(p.whole.kind, c.kind);
    EXPECT_TRUE(p.MayMatch(Key(1), FilterKeyHash(Key(1))));
  }
}

TEST(RemoteFilterCacheKindsTest, UndecodableRibbonIsMaybe) {
  const auto policy = NewRibbonFilterPolicy(10);
  const std::string good = Build(*policy, 2000);
  std::vector<std::string> bad = {
      good.substr(0, good.size() - 1),
      good.substr(1),
      good + "x",
      std::string(),
  };
  std::string unknown_kind = good;
  unknown_kind[unknown_kind.size() - 2] = 'Z';  // a kind no reader knows
  bad.push_back(unknown_kind);
  for (const std::string& bytes : bad) {
    RemoteCachedFilter f;
    f.bytes = bytes;
    f.Decode(policy->Name());
    EXPECT_EQ(f.whole.kind, RemoteInnerFilter::Kind::kAlwaysMaybe);
    for (int k = 1; k < 200; k += 2) {
      EXPECT_TRUE(f.MayMatch(Key(k), FilterKeyHash(Key(k))));
    }
  }
  // A policy that is not siftdb's: maybe, whatever the bytes.
  RemoteCachedFilter foreign;
  foreign.bytes = good;
  foreign.Decode("other.Ribbon");
  EXPECT_EQ(foreign.whole.kind, RemoteInnerFilter::Kind::kAlwaysMaybe);
  EXPECT_TRUE(foreign.MayMatch(Key(1), FilterKeyHash(Key(1))));
}

// A partitioned filter over the even keys, with their 4-byte prefixes
// ("key0", ...) too; partitions of about 256 bytes.
std::string BuildPartitioned(const FilterPolicy& policy, int n) {
  PartitionedFilterBuilder b(&policy, 256);
  for (int k = 0; k < n; k += 2) {
    const std::string key = Key(k);
    const std::string_view prefix = std::string_view(key).substr(0, 6);
    b.Add(key, true, &prefix);
  }
  std::string filter;
  b.Finish(&filter);
  return filter;
}

TEST(RemoteFilterCacheKindsTest, PartitionedAnswersLikeTheLocalReader) {
  for (const auto& policy :
       {NewBloomFilterPolicy(10), NewRibbonFilterPolicy(10),
        NewClassicBloomFilterPolicy(10)}) {
    SCOPED_TRACE(policy->Name());
    RemoteCachedFilter f;
    f.bytes = BuildPartitioned(*policy, 4000);
    ASSERT_TRUE(IsPartitionedFilter(f.bytes));
    f.Decode(policy->Name());
    ASSERT_TRUE(f.partitioned);
    EXPECT_GT(f.partitions.size(), 3u);
    const PartitionedFilterReader local(policy.get(), f.bytes);
    ASSERT_TRUE(local.valid());
    int rejected = 0;
    for (int k = 0; k < 4100; ++k) {
      const std::string key = Key(k);
      const uint64_t h = FilterKeyHash(key);
      EXPECT_EQ(f.MayMatch(key, h), local.KeyMayMatch(key)) << k;
      if (k % 2 == 0 && k < 4000) {
        ASSERT_TRUE(f.MayMatch(key, h)) << k;
      }
      rejected += !f.MayMatch(key, h);
      const std::string prefix = key.substr(0, 6);
      if (k < 4000) {
        ASSERT_TRUE(f.PrefixMayMatch(prefix, FilterKeyHash(prefix))) << k;
      }
    }
    EXPECT_GT(rejected, 1800);
    // Past the last partition: no.
    EXPECT_FALSE(f.MayMatch("zzz", FilterKeyHash("zzz")));
    // Damage: a flipped byte anywhere never turns a present key into "no".
    for (size_t pos = 0; pos < f.bytes.size(); pos += 37) {
      RemoteCachedFilter bad;
      bad.bytes = f.bytes;
      bad.bytes[pos] ^= 0x5a;
      bad.Decode(policy->Name());
      for (int k = 0; k < 4000; k += 38) {
        ASSERT_TRUE(bad.MayMatch(Key(k), FilterKeyHash(Key(k))))
            << "byte " << pos << " key " << k;
      }
    }
  }
}

TEST(RemoteFilterCacheKindsTest, DescribesPartitionedFilterBytes) {
  const auto policy = NewBloomFilterPolicy(10);
  const std::string bytes = BuildPartitioned(*policy, 20000);
  FilterPartitionIndex index;
  ASSERT_TRUE(FilterPartitionIndex::Parse(bytes, &index));
  uint64_t bits = 0;
  for (size_t i = 0; i < index.size(); i++) {
    bits += (index.entry(i).size - 8) * 8;  // minus each inner trailer
  }
  // 10000 keys (and a few shared prefixes, "key000" ...).
  const FilterBytesInfo info = DescribeFilterBytes(bytes, 10000);
  EXPECT_TRUE(info.valid);
  EXPECT_EQ(info.kind, 'P');
  EXPECT_EQ(info.bitmap_bits, bits);
  EXPECT_EQ(info.k, 7);
  EXPECT_GT(info.error_rate, 0.003);
  EXPECT_LT(info.error_rate, 0.03);
  std::string bad = bytes;
  bad[bad.size() - 12] ^= 1;  // the index crc
  EXPECT_FALSE(DescribeFilterBytes(bad, 20000).valid);

  // A well-formed 'P' whose one partition is itself a 'P': refused, and
  // the remote reader answers maybe for it.
  std::string nested = bytes;
  PutFixed32(&nested, crc32c::Mask(crc32c::Value(bytes.data(), bytes.size())));
  std::string entries;
  PutFixed32(&entries, 0);
  PutFixed32(&entries, static_cast<uint32_t>(bytes.size()));
  PutFixed32(&entries, 3);
  entries += "zzz";
  nested += entries;
  PutFixed32(&nested, static_cast<uint32_t>(entries.size()));
  PutFixed32(&nested,
             crc32c::Mask(crc32c::Value(entries.data(), entries.size())));
  FilterTrailer t;
  t.param = 1;
  t.k = 0;
  t.kind = FilterKind::kPartitioned;
  char trailer[kFilterTrailerSize];
  EncodeFilterTrailer(t, trailer);
  nested.append(trailer, sizeof(trailer));
  FilterPartitionIndex outer;
  ASSERT_TRUE(FilterPartitionIndex::Parse(nested, &outer));
  EXPECT_FALSE(DescribeFilterBytes(nested, 10000).valid);
  RemoteCachedFilter f;
  f.bytes = nested;
  f.Decode(policy->Name());
  EXPECT_TRUE(f.MayMatch("key0000001", FilterKeyHash("key0000001")));
}

}  // namespace remote_filter_cache_kinds_test
}  // namespace siftdb
