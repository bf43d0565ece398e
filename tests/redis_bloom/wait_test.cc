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
#include "gtest/gtest.h"
#include "siftdb/redis_bloom.h"
#include "tests/support/redis_server.h"

namespace siftdb {
namespace {

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

}  // namespace
}  // namespace siftdb
