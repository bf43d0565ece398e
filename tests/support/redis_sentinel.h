// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisSentinelGroup: a master, replicas and Sentinels (redis-server
// --sentinel, which is what Debian's redis-sentinel package runs) on free
// loopback ports, for failover tests. Every process is a RedisServer
// (tests/support/redis_server.h): killed with the test, its directory
// removed.
//
// Thread safety: not thread-safe; drive a group from one thread.

#ifndef SIFTDB_TESTS_SUPPORT_REDIS_SENTINEL_H_
#define SIFTDB_TESTS_SUPPORT_REDIS_SENTINEL_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "tests/support/redis_server.h"

namespace siftdb::test {

struct RedisSentinelGroupOptions {
  std::string master_name = "mymaster";
  int replicas = 2;
  int sentinels = 3;
  // Data nodes: requirepass and masterauth (empty: none).
  std::string password;
  // Sentinels: requirepass and sentinel-pass (empty: none).
  std::string sentinel_password;
  int down_after_ms = 1000;
  int failover_timeout_ms = 4000;
};

// RedisSentinelGroup: one master, replicas and Sentinels watching them, all
// on free loopback ports. Start() returns once every Sentinel agrees on the
// master, sees the other Sentinels (CKQUORUM) and knows every replica.
class RedisSentinelGroup {
 public:
  static absl::StatusOr<std::unique_ptr<RedisSentinelGroup>> Start(
      RedisSentinelGroupOptions options = {});

  // The data nodes (index 0 started as master) and the Sentinels.
  const std::vector<std::unique_ptr<RedisServer>>& nodes() const {
    return nodes_;
  }
  const std::vector<std::unique_ptr<RedisServer>>& sentinels() const {
    return sentinels_;
  }
  // redis+sentinel://[:password@]s1,s2,s3/master[?sentinel_password=...]
  std::string Url() const;
  // The master the first answering Sentinel names ("127.0.0.1:port").
  absl::StatusOr<std::string> MasterEndpoint() const;
  // The data node listening on `endpoint`, or null.
  RedisServer* Node(const std::string& endpoint) const;
  // SENTINEL FAILOVER through the first live Sentinel.
  absl::Status Failover();
  // Polls until the Sentinels name a master other than `old_master` and
  // that node's ROLE says master (bounded by `timeout`).
  absl::StatusOr<std::string> WaitForNewMaster(const std::string& old_master,
                                               absl::Duration timeout);

 private:
  RedisSentinelGroup() = default;
  absl::Status WaitUntilReady(absl::Duration timeout);

  RedisSentinelGroupOptions options_;
  std::vector<std::unique_ptr<RedisServer>> nodes_;
  std::vector<std::unique_ptr<RedisServer>> sentinels_;
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_SUPPORT_REDIS_SENTINEL_H_
