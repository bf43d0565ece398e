// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The read_from URL parameter (docs/redis_client.md, "Replicas for reads"):
// accepted on every networked scheme, carried into RedisClientOptions,
// rendered by Redacted(), and refused with InvalidArgument naming it.

#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_url.h"

namespace siftdb {
namespace read_from_url_test {

TEST(ReadFromUrlTest, EveryNetworkedSchemeTakesIt) {
  const char* texts[] = {
      "redis://h:1?read_from=replica_preferred",
      "redis://u:pw@h:1/2?read_from=replica_preferred",
      "rediss://h:1?read_from=replica_preferred&verify=no",
      "redis+sentinel://s1,s2/m?read_from=replica_preferred",
      "redis+sentinel://s1/m/3?sentinel_password=x&read_from=replica_preferred",
      "rediss+sentinel://s1/m?read_from=replica_preferred&ca_cert=%2Fca",
  };
  for (const char* text : texts) {
    absl::StatusOr<RedisUrl> url = ParseRedisUrl(text);
    ASSERT_TRUE(url.ok()) << text << ": " << url.status();
    EXPECT_EQ(url->read_from, RedisReadFrom::kReplicaPreferred) << text;
    EXPECT_NE(url->Redacted().find("read_from=replica_preferred"),
              std::string::npos)
        << url->Redacted();
  }
  absl::StatusOr<RedisUrl> url = ParseRedisUrl("redis://h:1?read_from=master");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_EQ(url->read_from, RedisReadFrom::kMaster);
  url = ParseRedisUrl("redis://h:1");
  ASSERT_TRUE(url.ok()) << url.status();
  EXPECT_FALSE(url->read_from.has_value());
}

TEST(ReadFromUrlTest, AppliedToClientOptions) {
  RedisClientOptions o;
  EXPECT_EQ(o.read_from, RedisReadFrom::kMaster);
  absl::StatusOr<RedisUrl> url =
      ParseRedisUrl("redis+sentinel://s1/m?read_from=replica_preferred");
  ASSERT_TRUE(url.ok()) << url.status();
  ApplyRedisUrl(*url, &o);
  EXPECT_EQ(o.read_from, RedisReadFrom::kReplicaPreferred);
  // A URL without the parameter leaves the field alone.
  url = ParseRedisUrl("redis://h:1");
  ASSERT_TRUE(url.ok());
  ApplyRedisUrl(*url, &o);
  EXPECT_EQ(o.read_from, RedisReadFrom::kReplicaPreferred);
}

TEST(ReadFromUrlTest, BadValuesNameTheParameter) {
  const char* texts[] = {
      "redis://h:1?read_from=replica",
      "redis://h:1?read_from=",
      "redis://h:1?read_from=MASTER",
      "redis://h:1?read_from=replica_preferred%00",
      "redis://h:1?read_from=%zz",
      "redis+sentinel://s1/m?read_from=slave",
  };
  for (const char* text : texts) {
    absl::StatusOr<RedisUrl> url = ParseRedisUrl(text);
    ASSERT_FALSE(url.ok()) << text;
    EXPECT_TRUE(absl::IsInvalidArgument(url.status())) << url.status();
    EXPECT_NE(url.status().message().find("read_from"), std::string::npos)
        << text << ": " << url.status();
  }
  // unix sockets have no replicas: the parameter is not known there.
  absl::StatusOr<RedisUrl> url =
      ParseRedisUrl("unix:///tmp/r.sock?read_from=master");
  ASSERT_FALSE(url.ok());
  EXPECT_NE(url.status().message().find("read_from"), std::string::npos)
      << url.status();
}

TEST(ReadFromUrlTest, ParseRedisReadFrom) {
  EXPECT_EQ(*ParseRedisReadFrom("master"), RedisReadFrom::kMaster);
  EXPECT_EQ(*ParseRedisReadFrom("replica_preferred"),
            RedisReadFrom::kReplicaPreferred);
  absl::StatusOr<RedisReadFrom> bad = ParseRedisReadFrom("nearest");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(bad.status()));
  EXPECT_NE(bad.status().message().find("read_from"), std::string::npos);
  EXPECT_EQ(bad.status().message().find("nearest"), std::string::npos)
      << "the value is not quoted (it could be a misplaced password)";
}

}  // namespace read_from_url_test
}  // namespace siftdb
