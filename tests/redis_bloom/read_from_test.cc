// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloom with read_from=replica_preferred (docs/redis_bloom.md,
// "Replicas for reads"), against a real master and a replica on loopback
// whose replication stream is delayed by a TCP proxy: an add acknowledged
// by the master is never read as absent (the fence sends reads the replica
// cannot yet answer to the master), reads do go to the replica once it has
// caught up, and a dead replica costs nothing but a fallback.
// RedisCountingBloom refuses replica_preferred (its reads have no fence),
// before any connection.

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_partitioned.h"
#include "siftdb/redis_bloom.h"
#include "tests/support/redis_server.h"
#include "tests/support/tcp_proxy.h"

namespace siftdb {
namespace read_from_test {

using test::RedisServer;
using test::RedisServerOptions;
using test::TcpProxy;

TEST(RedisBloomReadFromTest, CountingRefusesReplicaPreferred) {
  RedisBloomOptions o;
  o.endpoint = "redis://127.0.0.1:1?read_from=replica_preferred";
  o.retry_deadline = absl::ZeroDuration();
  auto counting = RedisCountingBloom::Open(o);
  ASSERT_FALSE(counting.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(counting.status())) << counting.status();
  EXPECT_NE(counting.status().message().find("read_from"), std::string::npos)
      << counting.status();
}

TEST(RedisBloomReadFromTest, MasterIsAcceptedAndBadValuesNamed) {
  RedisBloomOptions o;
  // Nothing listens on port 1: the URL passes the check and the connect
  // fails as usual.
  o.endpoint = "redis://127.0.0.1:1?read_from=master";
  o.retry_deadline = absl::ZeroDuration();
  o.connect_timeout = absl::Milliseconds(200);
  auto bloom = RedisBloom::Open(o);
  ASSERT_FALSE(bloom.ok());
  EXPECT_TRUE(absl::IsUnavailable(bloom.status())) << bloom.status();
  o.endpoint = "redis://127.0.0.1:1?read_from=nearest";
  bloom = RedisBloom::Open(o);
  ASSERT_FALSE(bloom.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(bloom.status())) << bloom.status();
  EXPECT_NE(bloom.status().message().find("read_from"), std::string::npos);
}

std::vector<std::string> Items(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; i++) out.push_back(absl::StrCat(prefix, i));
  return out;
}

int Missing(RedisBloom* bloom, const std::vector<std::string>& items) {
  auto found = bloom->MExists("f", items);
  EXPECT_TRUE(found.ok()) << found.status();
  if (!found.ok()) return -1;
  int missing = 0;
  for (bool f : *found) missing += f ? 0 : 1;
  return missing;
}

TEST(RedisBloomReadFromTest, ALaggingReplicaNeverHidesAnAcknowledgedAdd) {
  SIFTDB_REQUIRE_REDIS();
  auto master = RedisServer::Start();
  ASSERT_TRUE(master.ok()) << master.status();
  // The replica follows the master through a proxy that holds the stream
  // back 300 ms, so every fresh add is missing there for a while.
  auto proxy = TcpProxy::Start((*master)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  (*proxy)->SetDelay(absl::ZeroDuration(), absl::Milliseconds(300));
  RedisServerOptions ro;
  ro.extra_args = {"--replicaof", "127.0.0.1", absl::StrCat((*proxy)->port())};
  auto replica = RedisServer::Start(ro);
  ASSERT_TRUE(replica.ok()) << replica.status();
  ASSERT_TRUE((*master)->WaitForReplicas(absl::Seconds(30)).ok());

  RedisBloomOptions o;
  o.endpoint = (*master)->endpoint();
  auto writer = RedisBloom::Open(o);
  ASSERT_TRUE(writer.ok()) << writer.status();
  o.endpoint = absl::StrCat("redis://", (*master)->endpoint(),
                            "?read_from=replica_preferred");
  auto opened = RedisBloom::Open(o);
  ASSERT_TRUE(opened.ok()) << opened.status();
  auto* reader =
      static_cast<RedisBloomPartitioned*>(opened->get())->seed_bloom();

  ASSERT_TRUE((*writer)->Reserve("f", 0.001, 10000).ok());
  std::vector<std::string> all;
  for (int round = 0; round < 20; round++) {
    const std::vector<std::string> fresh = Items(absl::StrCat("r", round), 20);
    ASSERT_TRUE((*writer)->MAdd("f", fresh).ok());
    EXPECT_EQ(Missing(reader, fresh), 0) << "round " << round;
    all.insert(all.end(), fresh.begin(), fresh.end());
  }
  // The replica was behind for every fresh read: the master answered.
  EXPECT_EQ(reader->master_reads(), 20);
  EXPECT_EQ(reader->replica_reads(), 0);

  // Caught up, the replica answers.
  ASSERT_TRUE((*master)->ReplicateAll(1, absl::Seconds(10)).ok());
  EXPECT_EQ(Missing(reader, all), 0);
  EXPECT_EQ(reader->replica_reads(), 1);
  auto probes = (*replica)->Call({"INFO", "commandstats"});
  ASSERT_TRUE(probes.ok());
  EXPECT_NE(probes->find("cmdstat_evalsha"), std::string::npos) << *probes;

  // A dead replica: the master answers, nothing is missed.
  ASSERT_TRUE((*replica)->Kill().ok());
  EXPECT_EQ(Missing(reader, all), 0);
  const std::vector<std::string> later = Items("later", 20);
  ASSERT_TRUE((*writer)->MAdd("f", later).ok());
  EXPECT_EQ(Missing(reader, later), 0);
}

}  // namespace read_from_test
}  // namespace siftdb
