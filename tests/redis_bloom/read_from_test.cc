// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloom refuses read_from=replica_preferred (docs/redis_client.md,
// "Replicas for reads"): a Bloom filter read on a replica that lags behind
// acknowledged adds would say "absent" for them, and RedisBloom has no
// trust check to turn that into "maybe". The refusal names the parameter
// and comes before any connection (no server needed).

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "siftdb/redis_bloom.h"

namespace siftdb {
namespace {

TEST(RedisBloomReadFromTest, ReplicaPreferredIsRefused) {
  RedisBloomOptions o;
  o.endpoint = "redis://127.0.0.1:1?read_from=replica_preferred";
  o.retry_deadline = absl::ZeroDuration();
  auto bloom = RedisBloom::Open(o);
  ASSERT_FALSE(bloom.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(bloom.status())) << bloom.status();
  EXPECT_NE(bloom.status().message().find("read_from"), std::string::npos)
      << bloom.status();
  auto counting = RedisCountingBloom::Open(o);
  ASSERT_FALSE(counting.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(counting.status())) << counting.status();
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

}  // namespace
}  // namespace siftdb
