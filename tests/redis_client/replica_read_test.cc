// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// read_from = replica_preferred against real processes on loopback
// (docs/redis_client.md, "Replicas for reads"): reads land on the replica
// (INFO commandstats of each server), a killed replica or one whose
// master link is down sends reads to the master, and through Sentinel the
// replicas come from SENTINEL replicas. Bounds on time are generous
// correctness bounds (a fallback must not wait for a retry deadline), not
// speed targets.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redis/client/redis_cluster_client.h"
#include "redis/client/redis_replica_read.h"
#include "tests/support/redis_sentinel.h"
#include "tests/support/redis_server.h"

namespace siftdb {
namespace replica_read_test {

using test::RedisServer;

// Calls of `command` since the last CONFIG RESETSTAT, from INFO
// commandstats; -1 when the server cannot be asked.
int64_t Calls(RedisServer* server, const std::string& command) {
  absl::StatusOr<std::string> info = server->Call({"INFO", "commandstats"});
  if (!info.ok()) return -1;
  const std::string tag = "cmdstat_" + command + ":calls=";
  const size_t at = info->find(tag);
  if (at == std::string::npos) return 0;
  const size_t begin = at + tag.size();
  const size_t end = info->find(',', begin);
  int64_t n = 0;
  if (!absl::SimpleAtoi(info->substr(begin, end - begin), &n)) return -1;
  return n;
}

RedisConnectOptions ReadOptions(std::vector<std::string> endpoints) {
  RedisConnectOptions o;
  o.endpoints = std::move(endpoints);
  o.client.read_from = RedisReadFrom::kReplicaPreferred;
  o.client.connect_timeout = absl::Milliseconds(500);
  o.client.command_timeout = absl::Seconds(1);
  o.client.retry_deadline = absl::ZeroDuration();
  o.client.replica_retry_interval = absl::Milliseconds(200);
  return o;
}

// GET key through `conn`; the value, or the error as text.
std::string Get(RedisConnection* conn, const std::string& key) {
  auto r = conn->Pipeline({RedisArgs({"GET", key})}, key);
  if (!r.ok()) return r.status().ToString();
  return (*r)[0].is_string() ? (*r)[0].str() : (*r)[0].DebugString();
}

class ReplicaReadTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SIFTDB_REQUIRE_REDIS();
    auto m = RedisServer::Start();
    ASSERT_TRUE(m.ok()) << m.status();
    master_ = std::move(*m);
    auto r = master_->StartReplica();
    ASSERT_TRUE(r.ok()) << r.status();
    replica_ = std::move(*r);
    ASSERT_TRUE(master_->Call({"SET", "k", "v"}).ok());
    absl::Status acked = master_->ReplicateAll(1, absl::Seconds(5));
    ASSERT_TRUE(acked.ok()) << acked;
    ResetStats();
  }

  void ResetStats() {
    ASSERT_TRUE(master_->Call({"CONFIG", "RESETSTAT"}).ok());
    ASSERT_TRUE(replica_->Call({"CONFIG", "RESETSTAT"}).ok());
  }

  std::unique_ptr<RedisServer> master_;
  std::unique_ptr<RedisServer> replica_;
};

TEST_F(ReplicaReadTest, ReadsLandOnTheReplica) {
  // Either order: ROLE tells the replica from the master.
  for (bool replica_first : {false, true}) {
    ResetStats();
    auto conn = ConnectRedis(ReadOptions(
        replica_first ? std::vector<std::string>{replica_->endpoint(),
                                                 master_->endpoint()}
                      : std::vector<std::string>{master_->endpoint(),
                                                 replica_->endpoint()}));
    ASSERT_TRUE(conn.ok()) << conn.status();
    for (int i = 0; i < 20; i++) ASSERT_EQ(Get(conn->get(), "k"), "v");
    EXPECT_EQ(Calls(replica_.get(), "get"), 20) << replica_first;
    EXPECT_EQ(Calls(master_.get(), "get"), 0) << replica_first;
    EXPECT_NE((*conn)->Describe("k").find(replica_->endpoint()),
              std::string::npos)
        << (*conn)->Describe("k");
  }
}

TEST_F(ReplicaReadTest, ReadFromMasterIsUnchanged) {
  RedisConnectOptions o =
      ReadOptions({master_->endpoint(), replica_->endpoint()});
  o.client.read_from = RedisReadFrom::kMaster;
  auto conn = ConnectRedis(o);
  ASSERT_TRUE(conn.ok()) << conn.status();
  for (int i = 0; i < 5; i++) ASSERT_EQ(Get(conn->get(), "k"), "v");
  EXPECT_EQ(Calls(master_.get(), "get"), 5);
  EXPECT_EQ(Calls(replica_.get(), "get"), 0);
}

TEST_F(ReplicaReadTest, KilledReplicaFallsBackToTheMaster) {
  auto conn =
      ConnectRedis(ReadOptions({master_->endpoint(), replica_->endpoint()}));
  ASSERT_TRUE(conn.ok()) << conn.status();
  ASSERT_EQ(Get(conn->get(), "k"), "v");
  ASSERT_EQ(Calls(replica_.get(), "get"), 1);
  ASSERT_TRUE(replica_->Kill().ok());
  // Every read succeeds: the one that meets the dead replica goes to the
  // master in the same call, within a command timeout, not a retry loop.
  const absl::Time start = absl::Now();
  ASSERT_EQ(Get(conn->get(), "k"), "v");
  EXPECT_LT(absl::Now() - start, absl::Seconds(5));
  for (int i = 0; i < 10; i++) ASSERT_EQ(Get(conn->get(), "k"), "v");
  EXPECT_EQ(Calls(master_.get(), "get"), 11);
  EXPECT_NE((*conn)->Describe("k").find(master_->endpoint()), std::string::npos)
      << (*conn)->Describe("k");
}

TEST_F(ReplicaReadTest, ReplicaWithItsLinkDownIsNotUsed) {
  // Point the replica at a port where nothing listens: ROLE then reports a
  // state other than "connected", and it serves possibly stale data.
  const int dead = RedisServer::PickFreePort();
  ASSERT_TRUE(
      replica_->Call({"REPLICAOF", "127.0.0.1", absl::StrCat(dead)}).ok());
  auto conn =
      ConnectRedis(ReadOptions({master_->endpoint(), replica_->endpoint()}));
  ASSERT_TRUE(conn.ok()) << conn.status();
  for (int i = 0; i < 5; i++) ASSERT_EQ(Get(conn->get(), "k"), "v");
  EXPECT_EQ(Calls(master_.get(), "get"), 5);
  EXPECT_EQ(Calls(replica_.get(), "get"), 0);

  // A link that goes down while the replica is in use: left once ROLE is
  // asked again (replica_retry_interval, 200 ms here).
  ASSERT_TRUE(
      replica_->Call({"REPLICAOF", "127.0.0.1", absl::StrCat(master_->port())})
          .ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (Calls(replica_.get(), "get") == 0 && absl::Now() < deadline) {
    ASSERT_EQ(Get(conn->get(), "k"), "v");
    absl::SleepFor(absl::Milliseconds(50));
  }
  ASSERT_GT(Calls(replica_.get(), "get"), 0) << "the replica was never used";
  ASSERT_TRUE(
      replica_->Call({"REPLICAOF", "127.0.0.1", absl::StrCat(dead)}).ok());
  absl::SleepFor(absl::Milliseconds(400));
  ResetStats();
  for (int i = 0; i < 5; i++) ASSERT_EQ(Get(conn->get(), "k"), "v");
  EXPECT_EQ(Calls(replica_.get(), "get"), 0);
  EXPECT_EQ(Calls(master_.get(), "get"), 5);
}

TEST_F(ReplicaReadTest, NoReplicaReadsFromTheMaster) {
  auto conn = ConnectRedis(ReadOptions({master_->endpoint()}));
  ASSERT_TRUE(conn.ok()) << conn.status();
  for (int i = 0; i < 3; i++) ASSERT_EQ(Get(conn->get(), "k"), "v");
  EXPECT_EQ(Calls(master_.get(), "get"), 3);
}

TEST(ReplicaReadSentinelTest, ReadsGoToAReplicaTheSentinelsList) {
  SIFTDB_REQUIRE_REDIS();
  auto g = test::RedisSentinelGroup::Start();
  ASSERT_TRUE(g.ok()) << g.status();
  test::RedisSentinelGroup& group = **g;
  RedisServer* master = group.nodes()[0].get();
  ASSERT_TRUE(master->Call({"SET", "k", "v"}).ok());
  absl::Status acked = master->ReplicateAll(2, absl::Seconds(5));
  ASSERT_TRUE(acked.ok()) << acked;
  for (const auto& node : group.nodes()) {
    ASSERT_TRUE(node->Call({"CONFIG", "RESETSTAT"}).ok());
  }
  const std::string url = group.Url();
  RedisConnectOptions o =
      ReadOptions({url + (url.find('?') == std::string::npos ? "?" : "&") +
                   "read_from=replica_preferred"});
  o.client.read_from = RedisReadFrom::kMaster;  // the URL's parameter wins
  auto conn = ConnectRedis(o);
  ASSERT_TRUE(conn.ok()) << conn.status();
  for (int i = 0; i < 20; i++) ASSERT_EQ(Get(conn->get(), "k"), "v");
  EXPECT_EQ(Calls(master, "get"), 0);
  RedisServer* used = nullptr;
  for (size_t i = 1; i < group.nodes().size(); i++) {
    if (Calls(group.nodes()[i].get(), "get") == 20) {
      used = group.nodes()[i].get();
    }
  }
  ASSERT_NE(used, nullptr) << "no replica served the 20 reads";

  // Kill it: reads keep succeeding, on the master or the other replica
  // (whichever the connection meets first: the dead one is skipped as
  // soon as it refuses a connection).
  ASSERT_TRUE(used->Kill().ok());
  for (const auto& node : group.nodes()) {
    if (node.get() != used) {
      ASSERT_TRUE(node->Call({"CONFIG", "RESETSTAT"}).ok());
    }
  }
  for (int i = 0; i < 20; i++) ASSERT_EQ(Get(conn->get(), "k"), "v");
  int64_t served = 0;
  for (const auto& node : group.nodes()) {
    if (node.get() != used) served += Calls(node.get(), "get");
  }
  EXPECT_EQ(served, 20);

  // The Sentinel list itself: only healthy replicas.
  RedisClientOptions client;
  absl::StatusOr<RedisUrl> parsed = ParseRedisUrl(url);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ApplyRedisUrl(*parsed, &client);
  client.connect_timeout = absl::Milliseconds(500);
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  std::vector<std::string> listed;
  while (absl::Now() < deadline) {
    auto replicas = SentinelReplicas(client);
    ASSERT_TRUE(replicas.ok()) << replicas.status();
    listed = *replicas;
    if (listed.size() == 1) break;  // the dead one is flagged s_down
    absl::SleepFor(absl::Milliseconds(200));
  }
  ASSERT_EQ(listed.size(), 1u);
  EXPECT_NE(listed[0], used->endpoint());
}

}  // namespace replica_read_test
}  // namespace siftdb
