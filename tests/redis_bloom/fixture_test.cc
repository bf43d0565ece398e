// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The redis-server fixture itself (tests/support/redis_server.h): restart
// with and without data, kill, replicas, and a 3-master local cluster.

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/support/redis_server.h"

namespace siftdb::test {
namespace fixture_test {

TEST(RedisServerFixture, RestartKeepsOrDropsDataAndKillStops) {
  SIFTDB_REQUIRE_REDIS();
  absl::StatusOr<std::unique_ptr<RedisServer>> s = RedisServer::Start();
  ASSERT_TRUE(s.ok()) << s.status();
  RedisServer& server = **s;
  const int port = server.port();
  ASSERT_EQ(*server.Call({"SET", "k", "v"}), "OK");
  ASSERT_TRUE(server.Restart(/*keep_data=*/true).ok());
  EXPECT_EQ(server.port(), port);
  EXPECT_EQ(*server.Call({"GET", "k"}), "v");
  ASSERT_TRUE(server.Restart(/*keep_data=*/false).ok());
  EXPECT_EQ(*server.Call({"EXISTS", "k"}), "0");
  ASSERT_TRUE(server.Kill().ok());
  EXPECT_FALSE(server.running());
  EXPECT_FALSE(server.Call({"PING"}).ok());
  ASSERT_TRUE(server.StartAgain().ok());
  EXPECT_EQ(*server.Call({"PING"}), "PONG");
  ASSERT_TRUE(server.FlushAll().ok());
}

TEST(RedisServerFixture, ReplicaFollowsMaster) {
  SIFTDB_REQUIRE_REDIS();
  absl::StatusOr<std::unique_ptr<RedisServer>> master = RedisServer::Start();
  ASSERT_TRUE(master.ok()) << master.status();
  absl::StatusOr<std::unique_ptr<RedisServer>> replica =
      (*master)->StartReplica();
  ASSERT_TRUE(replica.ok()) << replica.status();
  ASSERT_EQ(*(*master)->Call({"SET", "k", "v"}), "OK");
  ASSERT_TRUE((*master)->ReplicateAll(1, absl::Seconds(5)).ok());
  EXPECT_EQ(*(*replica)->Call({"GET", "k"}), "v");
}

TEST(RedisClusterFixture, ThreeMastersCoverAllSlots) {
  SIFTDB_REQUIRE_REDIS();
  if (RedisServer::FindCli().empty()) GTEST_SKIP() << "redis-cli not found";
  absl::StatusOr<std::unique_ptr<RedisCluster>> cluster =
      RedisCluster::Start(3);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  ASSERT_EQ((*cluster)->nodes().size(), 3u);
  for (const auto& node : (*cluster)->nodes()) {
    absl::StatusOr<std::string> info = node->Call({"CLUSTER", "INFO"});
    ASSERT_TRUE(info.ok());
    EXPECT_TRUE(absl::StrContains(*info, "cluster_state:ok"));
    EXPECT_TRUE(absl::StrContains(*info, "cluster_slots_assigned:16384"));
    EXPECT_TRUE(absl::StrContains(*info, "cluster_known_nodes:3"));
  }
  // A key lands on exactly one node; the others redirect with MOVED.
  int served = 0;
  int moved = 0;
  for (const auto& node : (*cluster)->nodes()) {
    absl::StatusOr<std::string> r = node->Call({"SET", "bf:{x}:meta", "1"});
    ASSERT_TRUE(r.ok());
    if (*r == "OK") served++;
    if (absl::StartsWith(*r, "MOVED")) moved++;
  }
  EXPECT_EQ(served, 1);
  EXPECT_EQ(moved, 2);
}

}  // namespace fixture_test
}  // namespace siftdb::test
