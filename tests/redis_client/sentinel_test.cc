// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisClient through Sentinel, against real processes on loopback: a
// master, two replicas and three Sentinels (tests/support/redis_server.h).
// Discovery with both AUTHs; SENTINEL FAILOVER and a SIGKILLed master while
// a client writes: every write call succeeds (the client follows the new
// master within its retry deadline), the client ends on the node the
// Sentinels name, and no write acknowledged by every replica (WAIT 2) is
// lost.
// Waits poll with generous deadlines; nothing here is timed.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_cluster_client.h"
#include "redis/client/sentinel_switch_watch.h"
#include "tests/support/redis_sentinel.h"
#include "tests/support/redis_server.h"

namespace siftdb {
namespace sentinel_test {

using test::RedisSentinelGroup;
using test::RedisSentinelGroupOptions;

class SentinelTest : public ::testing::Test {
 protected:
  void StartGroup(RedisSentinelGroupOptions o = {}) {
    SIFTDB_REQUIRE_REDIS();
    auto g = RedisSentinelGroup::Start(o);
    ASSERT_TRUE(g.ok()) << g.status();
    group_ = std::move(*g);
  }

  std::unique_ptr<RedisClient> Client(absl::Duration retry_deadline) {
    RedisClientOptions o;
    o.endpoint = group_->Url();
    o.connect_timeout = absl::Milliseconds(500);
    o.command_timeout = absl::Seconds(5);
    o.retry_deadline = retry_deadline;
    o.max_backoff = absl::Milliseconds(200);
    auto c = RedisClient::Connect(o);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(*c) : nullptr;
  }

  // SET key then WAIT for every replica: true when all acknowledged the
  // write (so whichever replica is promoted has it). WAIT 1 is not enough
  // with two replicas: the one that acknowledged may not be promoted.
  bool WriteAcked(RedisClient* c, const std::string& key, int replicas = 2) {
    RedisArgs set({"SET", key, "v"});
    RedisArgs wait({"WAIT", absl::StrCat(replicas), "500"});
    auto r = c->Pipeline({set, wait});
    EXPECT_TRUE(r.ok()) << key << ": " << r.status();
    if (!r.ok()) return false;
    EXPECT_FALSE((*r)[0].is_error()) << key << ": " << (*r)[0].str();
    return !(*r)[0].is_error() && (*r)[1].is_integer() &&
           (*r)[1].integer() >= replicas;
  }

  // Writes until the client has moved off `old_master` (bounded), then a
  // few more; checks every acknowledged key is on the final master.
  void WriteThroughFailover(RedisClient* c, const std::string& old_master,
                            std::vector<std::string>* acked) {
    const absl::Time deadline = absl::Now() + absl::Seconds(60);
    int i = 0;
    while (c->endpoint() == old_master && absl::Now() < deadline) {
      std::string key = absl::StrCat("k", i++);
      if (WriteAcked(c, key)) acked->push_back(key);
      if (HasFailure()) return;
    }
    ASSERT_NE(c->endpoint(), old_master) << "the client never moved";
    auto now = group_->WaitForNewMaster(old_master, absl::Seconds(30));
    ASSERT_TRUE(now.ok()) << now.status();
    EXPECT_EQ(c->endpoint(), *now);
    // On the final master every acknowledged SET stays; no WAIT needed.
    for (int j = 0; j < 20; j++) {
      std::string key = absl::StrCat("k", i++);
      if (WriteAcked(c, key, 0)) acked->push_back(key);
    }
    EXPECT_EQ(c->endpoint(), *now);
    test::RedisServer* master = group_->Node(*now);
    ASSERT_NE(master, nullptr);
    int lost = 0;
    for (const std::string& key : *acked) {
      auto e = master->Call({"EXISTS", key});
      ASSERT_TRUE(e.ok()) << e.status();
      if (*e != "1") lost++;
    }
    EXPECT_EQ(lost, 0) << "of " << acked->size() << " acknowledged writes";
    EXPECT_GT(acked->size(), 20u);
  }

  std::unique_ptr<RedisSentinelGroup> group_;
};

// The payload's first word is the master's name; other masters' switches
// and malformed payloads are ignored.
TEST(SentinelSwitchWatchTest, NamesMaster) {
  EXPECT_TRUE(SentinelSwitchWatch::NamesMaster(
      "mymaster 127.0.0.1 6379 127.0.0.1 6380", "mymaster"));
  EXPECT_FALSE(SentinelSwitchWatch::NamesMaster(
      "mymaster2 127.0.0.1 6379 127.0.0.1 6380", "mymaster"));
  EXPECT_FALSE(SentinelSwitchWatch::NamesMaster(
      "other 127.0.0.1 6379 127.0.0.1 6380", "mymaster"));
  EXPECT_FALSE(SentinelSwitchWatch::NamesMaster("mymaster", "mymaster"));
  EXPECT_FALSE(SentinelSwitchWatch::NamesMaster("", "mymaster"));
}

TEST_F(SentinelTest, DiscoversTheMasterWithBothAuths) {
  RedisSentinelGroupOptions o;
  o.password = "data-pw";
  o.sentinel_password = "sentinel-pw";
  StartGroup(o);
  if (group_ == nullptr) return;
  auto c = Client(absl::Seconds(10));
  ASSERT_NE(c, nullptr);
  EXPECT_TRUE(c->via_sentinel());
  auto master = group_->MasterEndpoint();
  ASSERT_TRUE(master.ok()) << master.status();
  EXPECT_EQ(c->endpoint(), *master);
  auto r = c->Command({"SET", "a", "1"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_FALSE(r->is_error()) << r->str();

  // A wrong Sentinel password: Unauthenticated at once, password unquoted.
  RedisClientOptions bad;
  bad.endpoint = "redis+sentinel://:data-pw@" +
                 group_->sentinels()[0]->endpoint() +
                 "/mymaster?sentinel_password=WrongHunter2";
  bad.retry_deadline = absl::Seconds(5);
  auto refused = RedisClient::Connect(bad);
  ASSERT_FALSE(refused.ok());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kUnauthenticated)
      << refused.status();
  EXPECT_EQ(refused.status().message().find("WrongHunter2"), std::string::npos);

  // A master the Sentinels do not know: Unavailable, naming it.
  RedisClientOptions unknown;
  unknown.endpoint = "redis+sentinel://" + group_->sentinels()[0]->endpoint() +
                     "/nosuchmaster?sentinel_password=sentinel-pw";
  unknown.retry_deadline = absl::ZeroDuration();
  auto missing = RedisClient::Connect(unknown);
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(missing.status().message().find("nosuchmaster"), std::string::npos)
      << missing.status();
}

TEST_F(SentinelTest, SkipsDeadSentinels) {
  StartGroup();
  if (group_ == nullptr) return;
  ASSERT_TRUE(group_->sentinels()[0]->Kill().ok());
  auto c = Client(absl::Seconds(10));
  ASSERT_NE(c, nullptr);
  auto r = c->Command({"PING"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->str(), "PONG");
}

TEST_F(SentinelTest, FollowsSentinelFailover) {
  StartGroup();
  if (group_ == nullptr) return;
  auto c = Client(absl::Seconds(30));
  ASSERT_NE(c, nullptr);
  const std::string old_master = c->endpoint();
  std::vector<std::string> acked;
  for (int i = 0; i < 10; i++) {
    if (WriteAcked(c.get(), absl::StrCat("before", i))) {
      acked.push_back(absl::StrCat("before", i));
    }
  }
  ASSERT_TRUE(group_->Failover().ok());
  WriteThroughFailover(c.get(), old_master, &acked);
  // The replaced master may still say "master" here: Sentinel demotes it
  // only some seconds later. The client left it anyway (the +switch-master
  // announcement, or failing that the periodic check, made it ask the
  // Sentinels again), which is what kept every acknowledged write.
}

// The +switch-master subscription alone moves a client: with periodic
// checks off, a client that only reads (GET succeeds on a demoted master,
// so no error would move it) is on the new master at its first call after
// the announcement. A client without the subscription stays on the old
// node, which shows the test can tell. Two of the three Sentinels are
// killed first, so the subscription must also have moved to the third.
TEST_F(SentinelTest, FollowsAnAnnouncedFailoverWithoutErrorsOrPolling) {
  StartGroup();
  if (group_ == nullptr) return;
  RedisClientOptions o;
  o.endpoint = group_->Url();
  o.connect_timeout = absl::Milliseconds(500);
  o.command_timeout = absl::Seconds(5);
  o.sentinel_check_interval = absl::InfiniteDuration();
  auto watching = RedisClient::Connect(o);
  ASSERT_TRUE(watching.ok()) << watching.status();
  o.sentinel_subscribe = false;
  auto blind = RedisClient::Connect(o);
  ASSERT_TRUE(blind.ok()) << blind.status();
  const std::string old_master = (*watching)->endpoint();
  EXPECT_EQ((*blind)->endpoint(), old_master);
  ASSERT_TRUE(group_->sentinels()[0]->Kill().ok());
  ASSERT_TRUE(group_->sentinels()[1]->Kill().ok());
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  auto wait_for = [&](auto done, const char* what) {
    while (!done()) {
      ASSERT_LT(absl::Now(), deadline) << what;
      absl::SleepFor(absl::Milliseconds(20));
    }
  };
  wait_for([&] { return (*watching)->switch_subscribed(); }, "subscribed");
  ASSERT_TRUE(group_->Failover().ok());
  auto now = group_->WaitForNewMaster(old_master, absl::Seconds(30));
  ASSERT_TRUE(now.ok()) << now.status();
  wait_for([&] { return (*watching)->switch_messages() > 0; },
           "no +switch-master seen");
  EXPECT_FALSE((*blind)->switch_subscribed());
  EXPECT_EQ((*blind)->switch_messages(), 0);
  for (auto* c : {watching->get(), blind->get()}) {
    auto r = c->Command({"GET", "k"});
    ASSERT_TRUE(r.ok()) << r.status();
  }
  EXPECT_EQ((*watching)->endpoint(), *now);
  EXPECT_EQ((*watching)->master_moves(), 1);
  EXPECT_EQ((*blind)->endpoint(), old_master);
  EXPECT_EQ((*blind)->master_moves(), 0);
}

TEST_F(SentinelTest, FollowsAKilledMaster) {
  RedisSentinelGroupOptions o;
  o.password = "data-pw";
  StartGroup(o);
  if (group_ == nullptr) return;
  auto c = Client(absl::Seconds(30));
  ASSERT_NE(c, nullptr);
  const std::string old_master = c->endpoint();
  std::vector<std::string> acked;
  for (int i = 0; i < 10; i++) {
    if (WriteAcked(c.get(), absl::StrCat("before", i))) {
      acked.push_back(absl::StrCat("before", i));
    }
  }
  ASSERT_TRUE(group_->Node(old_master)->Kill().ok());
  WriteThroughFailover(c.get(), old_master, &acked);
  EXPECT_GT(c->reconnects(), 0);
}

// A master demoted behind the Sentinels' back: the client's write gets
// -READONLY, the Sentinels still name the node, ROLE says "slave", so the
// client refuses it and the call fails Unavailable; nothing is written.
TEST_F(SentinelTest, NeverWritesToANodeThatSaysReplica) {
  StartGroup();
  if (group_ == nullptr) return;
  auto c = Client(absl::Seconds(1));
  ASSERT_NE(c, nullptr);
  const std::string master = c->endpoint();
  test::RedisServer* node = group_->Node(master);
  test::RedisServer* replica = group_->nodes()[1].get();
  ASSERT_TRUE(
      node->Call({"REPLICAOF", "127.0.0.1", absl::StrCat(replica->port())})
          .ok());
  auto r = c->Command({"SET", "never", "1"});
  ASSERT_FALSE(r.ok()) << (r.ok() ? r->str() : "");
  EXPECT_EQ(r.status().code(), absl::StatusCode::kUnavailable) << r.status();
  EXPECT_NE(r.status().message().find("ROLE says"), std::string::npos)
      << r.status();
  for (const auto& n : group_->nodes()) {
    auto e = n->Call({"EXISTS", "never"});
    ASSERT_TRUE(e.ok());
    EXPECT_EQ(*e, "0") << n->endpoint();
  }
}

// ConnectRedis (the mirror's and RemoteFilter's way in) with a Sentinel URL
// is a standalone connection that follows the master.
TEST_F(SentinelTest, ConnectRedisFollowsFailover) {
  StartGroup();
  if (group_ == nullptr) return;
  RedisConnectOptions o;
  o.endpoints = {group_->Url()};
  o.client.retry_deadline = absl::Seconds(30);
  o.client.max_backoff = absl::Milliseconds(200);
  auto conn = ConnectRedis(o);
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_FALSE((*conn)->is_cluster());
  const std::string old_master = (*conn)->Describe("k");
  ASSERT_TRUE(group_->Failover().ok());
  auto now = group_->WaitForNewMaster(old_master, absl::Seconds(30));
  ASSERT_TRUE(now.ok()) << now.status();
  // Within sentinel_check_interval (1 s) of the switch the connection
  // moves; poll with a generous bound.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while ((*conn)->Describe("k") != *now && absl::Now() < deadline) {
    auto r = (*conn)->Pipeline({RedisArgs({"SET", "after", "1"})}, "after");
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_FALSE((*r)[0].is_error()) << (*r)[0].str();
    absl::SleepFor(absl::Milliseconds(20));
  }
  EXPECT_EQ((*conn)->Describe("k"), *now);
}

}  // namespace sentinel_test
}  // namespace siftdb
