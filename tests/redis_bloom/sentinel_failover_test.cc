// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloom through a redis+sentinel:// URL while Sentinel fails the master
// over (SENTINEL FAILOVER, and a SIGKILLed master), with every add asking
// WAIT for both replicas (RedisBloomOptions::wait_replicas): every call
// succeeds or fails DeadlineExceeded (the client follows the new master
// within its retry deadline), and no item of a successful call is lost.
// WAIT for every replica is what makes that hold: with two replicas, the
// one that acknowledged a WAIT 1 may not be the one promoted.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "siftdb/redis_bloom.h"
#include "tests/support/redis_sentinel.h"
#include "tests/support/redis_server.h"

namespace siftdb {
namespace sentinel_failover_test {

std::vector<std::string> Items(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; i++) out.push_back(absl::StrCat(prefix, i));
  return out;
}

// Adds through a failover, each call asking WAIT for both replicas:
// `kill` SIGKILLs the master, else SENTINEL FAILOVER. Every call either
// succeeds (acknowledged: its items must survive) or fails DeadlineExceeded
// (WAIT not satisfied: the items may be lost); nothing else. At the end a
// fresh client on the new master finds every acknowledged item.
void AddThroughFailover(bool kill) {
  auto g = test::RedisSentinelGroup::Start();
  ASSERT_TRUE(g.ok()) << g.status();
  RedisBloomOptions o;
  o.endpoint = (*g)->Url();
  o.connect_timeout = absl::Milliseconds(500);
  o.command_timeout = absl::Seconds(5);
  o.retry_deadline = absl::Seconds(30);
  o.wait_replicas = 2;
  o.wait_timeout = absl::Milliseconds(500);
  auto bloom = RedisBloom::Open(o);
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  ASSERT_TRUE((*bloom)->Reserve("bf", 0.001, 100000).ok());
  std::vector<std::string> acked;
  int unacked = 0;
  // Adds `items`; true when acknowledged.
  auto add = [&](const std::vector<std::string>& items) {
    auto r = (*bloom)->MAdd("bf", items);
    if (r.ok()) {
      acked.insert(acked.end(), items.begin(), items.end());
      return true;
    }
    EXPECT_TRUE(absl::IsDeadlineExceeded(r.status())) << r.status();
    unacked++;
    return false;
  };
  {
    auto r = (*bloom)->MAdd("bf", Items("before", 500));
    ASSERT_TRUE(r.ok()) << r.status();
  }

  auto old_master = (*g)->MasterEndpoint();
  ASSERT_TRUE(old_master.ok()) << old_master.status();
  if (kill) {
    ASSERT_TRUE((*g)->Node(*old_master)->Kill().ok());
  } else {
    ASSERT_TRUE((*g)->Failover().ok());
  }
  // Add batches until the Sentinels name a new master.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  absl::StatusOr<std::string> now = absl::UnavailableError("not yet");
  for (int batch = 0; !now.ok() || *now == *old_master; batch++) {
    ASSERT_LT(absl::Now(), deadline) << "no failover seen";
    add(Items(absl::StrCat("during", batch, "-"), 50));
    if (::testing::Test::HasFailure()) return;
    now = (*g)->MasterEndpoint();
    absl::SleepFor(absl::Milliseconds(10));
  }
  auto new_master = (*g)->WaitForNewMaster(*old_master, absl::Seconds(30));
  ASSERT_TRUE(new_master.ok()) << new_master.status();
  // A fresh client reaches the new master. Keep adding markers until one
  // batch shows there: from then on the adding client is on the new master
  // too (the old one does not replicate to it).
  auto reader = RedisBloom::Open(o);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (int i = 0;; i++) {
    ASSERT_LT(absl::Now(), deadline) << "the client never moved";
    // 20 markers, all present: not a Bloom false positive by chance.
    const std::vector<std::string> markers =
        Items(absl::StrCat("marker", i, "-"), 20);
    add(markers);
    auto seen = (*reader)->MExists("bf", markers);
    ASSERT_TRUE(seen.ok()) << seen.status();
    bool all = true;
    for (bool f : *seen) all &= f;
    if (all) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  // After a SENTINEL FAILOVER the old master rejoins as a replica (once
  // Sentinel has reconfigured it and it has synced), so WAIT 2 is met
  // again; after a kill one replica is left and it never is.
  if (kill) {
    EXPECT_FALSE(add(Items("after", 500)));
  } else {
    for (int i = 0; !add(Items(absl::StrCat("after", i, "-"), 500)); i++) {
      ASSERT_LT(absl::Now(), deadline) << "WAIT 2 never met again";
      absl::SleepFor(absl::Milliseconds(100));
    }
  }
  auto found = (*reader)->MExists("bf", acked);
  ASSERT_TRUE(found.ok()) << found.status();
  int missing = 0;
  for (bool f : *found) missing += f ? 0 : 1;
  EXPECT_EQ(missing, 0) << "of " << acked.size() << " acknowledged items ("
                        << unacked << " calls unacknowledged)";
}

TEST(RedisBloomSentinelTest, AcknowledgedAddsSurviveSentinelFailover) {
  SIFTDB_REQUIRE_REDIS();
  AddThroughFailover(/*kill=*/false);
}

TEST(RedisBloomSentinelTest, AcknowledgedAddsSurviveAKilledMaster) {
  SIFTDB_REQUIRE_REDIS();
  AddThroughFailover(/*kill=*/true);
}

}  // namespace sentinel_failover_test
}  // namespace siftdb
