// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteCachedFilter::Decode, the remote reader's decoder of fetched table
// filters: Ribbon tables (kind 'R') are decoded and answer like the local
// reader, the Bloom kinds are unaffected, and anything it cannot decode
// (unknown kind, corrupt tail, foreign policy) answers "maybe".

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/filter_hash.h"
#include "filter/filter_reader.h"
#include "gtest/gtest.h"
#include "redis/mirror/remote_filter_cache.h"
#include "siftdb/filter_policy.h"

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
    RemoteCachedFilter::Kind kind;
  };
  const std::vector<Case> cases = {
      {NewBloomFilterPolicy(10), RemoteCachedFilter::Kind::kBlocked},
      {NewClassicBloomFilterPolicy(10), RemoteCachedFilter::Kind::kClassic},
      {NewRibbonFilterPolicy(10), RemoteCachedFilter::Kind::kRibbon},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.policy->Name());
    RemoteCachedFilter f;
    f.bytes = Build(*c.policy, 4000);
    f.Decode(c.policy->Name());
    EXPECT_EQ(f.kind, c.kind);
    const FilterReader local(c.policy.get(), f.bytes);
    int rejected = 0;
    for (int k = 0; k < 4000; ++k) {
      const uint64_t h = FilterKeyHash(Key(k));
      EXPECT_EQ(f.MayMatch(h), local.HashMayMatch(h)) << k;
      if (k % 2 == 0) {
        ASSERT_TRUE(f.MayMatch(h)) << k;
      }
      rejected += !f.MayMatch(h);
    }
    EXPECT_GT(rejected, 1800);
    // Prefix-only tables decode the same bytes but answer maybe for keys.
    RemoteCachedFilter p;
    p.bytes = f.bytes;
    p.Decode(std::string("prefixonly.") + c.policy->Name());
    EXPECT_EQ(p.kind, c.kind);
    EXPECT_TRUE(p.MayMatch(FilterKeyHash(Key(1))));
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
    EXPECT_EQ(f.kind, RemoteCachedFilter::Kind::kAlwaysMaybe);
    for (int k = 1; k < 200; k += 2) {
      EXPECT_TRUE(f.MayMatch(FilterKeyHash(Key(k))));
    }
  }
  // A policy that is not siftdb's: maybe, whatever the bytes.
  RemoteCachedFilter foreign;
  foreign.bytes = good;
  foreign.Decode("other.Ribbon");
  EXPECT_EQ(foreign.kind, RemoteCachedFilter::Kind::kAlwaysMaybe);
  EXPECT_TRUE(foreign.MayMatch(FilterKeyHash(Key(1))));
}

}  // namespace remote_filter_cache_kinds_test
}  // namespace siftdb
