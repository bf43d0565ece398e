// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomOptions::wait_replicas against a real master and replica on
// loopback: adds acknowledged by WAIT are on the replica; with the replica
// killed an add fails with DeadlineExceeded naming how many replicas
// acknowledged (0 of 1), and still lands on the master.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/redis_bloom.h"
#include "tests/support/redis_server.h"
#include "tests/support/tcp_proxy.h"

namespace siftdb {
namespace wait_test {

using test::RedisServer;

TEST(RedisBloomWaitTest, ShortWaitIsAnErrorNamingTheCount) {
  SIFTDB_REQUIRE_REDIS();
  auto master = RedisServer::Start();
  ASSERT_TRUE(master.ok()) << master.status();
  auto replica = (*master)->StartReplica();
  ASSERT_TRUE(replica.ok()) << replica.status();

  RedisBloomOptions o;
  o.endpoint = (*master)->endpoint();
  o.retry_deadline = absl::ZeroDuration();
  o.wait_replicas = 1;
  o.wait_timeout = absl::Milliseconds(300);
  auto bloom = RedisBloom::Open(o);
  ASSERT_TRUE(bloom.ok()) << bloom.status();

  auto added = (*bloom)->MAdd("f", std::vector<std::string>{"a", "b", "c"});
  ASSERT_TRUE(added.ok()) << added.status();
  // WAIT returned 1: the replica has the filter already, no polling.
  auto on_replica = (*replica)->Call(
      {"EXISTS", RedisBloom::MetaKey("f"), RedisBloom::BitmapKey("f", 0)});
  ASSERT_TRUE(on_replica.ok()) << on_replica.status();
  EXPECT_EQ(*on_replica, "2");
  auto one = (*bloom)->Add("f", "d");
  ASSERT_TRUE(one.ok()) << one.status();

  ASSERT_TRUE((*replica)->Kill().ok());
  auto lost = (*bloom)->MAdd("f", std::vector<std::string>{"e", "g"});
  ASSERT_FALSE(lost.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(lost.status())) << lost.status();
  EXPECT_NE(lost.status().message().find("0 of 1 replicas"), std::string::npos)
      << lost.status();
  auto single = (*bloom)->Add("f", "h");
  ASSERT_FALSE(single.ok());
  EXPECT_TRUE(absl::IsDeadlineExceeded(single.status())) << single.status();
  // The add itself ran on the master.
  auto there = (*bloom)->Exists("f", "e");
  ASSERT_TRUE(there.ok()) << there.status();
  EXPECT_TRUE(*there);

  // Without wait_replicas the same add succeeds (the option is what fails
  // it).
  o.wait_replicas = 0;
  auto plain = RedisBloom::Open(o);
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE((*plain)->MAdd("f", std::vector<std::string>{"i"}).ok());
}

// The WAIT must count the replicas of the server the add ran on. Here the
// connection is cut inside the WAIT command and the reconnect reaches
// another master (B, with a replica) through a proxy: B's WAIT answers 1,
// but the items went to A. The add must run again on B before the call
// succeeds (without that, this test finds the items missing on B).
TEST(RedisBloomWaitTest, AReconnectBetweenAddAndWaitRedoesTheAdd) {
  SIFTDB_REQUIRE_REDIS();
  auto a = RedisServer::Start();
  ASSERT_TRUE(a.ok()) << a.status();
  auto b = RedisServer::Start();
  ASSERT_TRUE(b.ok()) << b.status();
  auto b_replica = (*b)->StartReplica();
  ASSERT_TRUE(b_replica.ok()) << b_replica.status();
  auto proxy = test::TcpProxy::Start((*a)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();

  RedisBloomOptions o;
  o.endpoint = (*proxy)->endpoint();
  o.retry_deadline = absl::Seconds(10);
  o.wait_replicas = 1;
  o.wait_timeout = absl::Milliseconds(200);
  auto bloom = RedisBloom::Open(o);
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  auto items = [](char c) {
    std::vector<std::string> v;
    for (int i = 0; i < 20; i++) v.push_back(absl::StrFormat("%c%03d", c, i));
    return v;
  };
  // A has no replica, so this WAIT times out: DeadlineExceeded.
  ASSERT_TRUE((*bloom)->Reserve("f", 0.01, 1000).ok());
  EXPECT_TRUE(
      absl::IsDeadlineExceeded((*bloom)->MAdd("f", items('x')).status()));

  // Cut the open connection as the next WAIT is sent (the add step before
  // it goes through to A); the reconnect goes to B.
  (*proxy)->SetUpstream((*b)->port());
  (*proxy)->CutOpenBeforeClientSends("$4\r\nWAIT\r\n");
  auto added = (*bloom)->MAdd("f", items('y'));
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(added->ambiguous_retries, 1);
  EXPECT_GE((*proxy)->connections_accepted(), 2u);

  RedisBloomOptions direct;
  direct.endpoint = (*b)->endpoint();
  auto on_b = RedisBloom::Open(direct);
  ASSERT_TRUE(on_b.ok()) << on_b.status();
  auto found = (*on_b)->MExists("f", items('y'));
  ASSERT_TRUE(found.ok()) << found.status();
  for (size_t i = 0; i < found->size(); i++) {
    EXPECT_TRUE((*found)[i]) << "item " << i << " acknowledged, not on B";
  }
}

}  // namespace wait_test
}  // namespace siftdb
