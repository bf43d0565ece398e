// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisClient against a real redis-server: unreachable endpoints, unix
// sockets, AUTH with a password and an ACL user, pipelines, command timeouts.

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace client_test {

using ::testing::HasSubstr;

class RedisClientTest : public RedisConnectedTest {};

TEST_F(RedisClientTest, UnreachableServerGivesUnavailableNamingEndpoint) {
  int port = RedisServer::PickFreePort();
  RedisClientOptions o;
  o.endpoint = absl::StrCat("127.0.0.1:", port);
  o.retry_deadline = absl::Milliseconds(50);
  absl::StatusOr<std::unique_ptr<RedisClient>> c = RedisClient::Connect(o);
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsUnavailable(c.status()));
  EXPECT_THAT(std::string(c.status().message()),
              HasSubstr(absl::StrCat("redis 127.0.0.1:", port,
                                     ": connect: Connection refused")));
}

TEST(RedisClientUnixSocket, ConnectsAndServesFilters) {
  SIFTDB_REQUIRE_REDIS();
  TempDir dir;
  const std::string sock = dir.Join("redis.sock");
  RedisServerOptions so;
  so.extra_args = {"--unixsocket", sock, "--unixsocketperm", "700"};
  absl::StatusOr<std::unique_ptr<RedisServer>> server = RedisServer::Start(so);
  ASSERT_TRUE(server.ok()) << server.status();
  for (const std::string& ep : {"unix:" + sock, sock}) {
    RedisBloomOptions bo;
    bo.endpoint = ep;
    absl::StatusOr<std::unique_ptr<RedisBloom>> bloom = RedisBloom::Open(bo);
    ASSERT_TRUE(bloom.ok()) << bloom.status();
    EXPECT_TRUE((*bloom)->Add("u", ep).ok());
    EXPECT_TRUE(*(*bloom)->Exists("u", ep));
  }
  EXPECT_EQ(
      *(*server)->Call({"HGET", RedisBloom::MetaKey("u"), "inserted_count"}),
      "2");
}

TEST(RedisClientAuth, PasswordAndAclUser) {
  SIFTDB_REQUIRE_REDIS();
  RedisServerOptions so;
  so.extra_args = {"--requirepass", "s3cret"};
  absl::StatusOr<std::unique_ptr<RedisServer>> server = RedisServer::Start(so);
  ASSERT_TRUE(server.ok()) << server.status();
  RedisClientOptions o;
  o.endpoint = (*server)->endpoint();
  o.retry_deadline = absl::ZeroDuration();
  // No password: commands are refused with NOAUTH.
  absl::StatusOr<std::unique_ptr<RedisClient>> anon = RedisClient::Connect(o);
  ASSERT_TRUE(anon.ok());
  absl::StatusOr<RedisReply> r = (*anon)->Command({"PING"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->is_error());
  EXPECT_TRUE(absl::IsUnauthenticated((*anon)->ServerErrorStatus("PING", *r)));
  o.password = "wrong";
  absl::StatusOr<std::unique_ptr<RedisClient>> bad = RedisClient::Connect(o);
  EXPECT_TRUE(absl::IsUnauthenticated(bad.status())) << bad.status();
  o.password = "s3cret";
  absl::StatusOr<std::unique_ptr<RedisClient>> good = RedisClient::Connect(o);
  ASSERT_TRUE(good.ok()) << good.status();
  ASSERT_EQ((*good)
                ->Command({"ACL", "SETUSER", "bob", "on", ">pw", "~*", "+@all"})
                ->str(),
            "OK");
  RedisBloomOptions bo;
  bo.endpoint = (*server)->endpoint();
  bo.username = "bob";
  bo.password = "pw";
  absl::StatusOr<std::unique_ptr<RedisBloom>> bloom = RedisBloom::Open(bo);
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  EXPECT_TRUE(*(*bloom)->Add("auth", "x"));
}

TEST_F(RedisClientTest, ClientPipelineAndCommandTimeout) {
  std::vector<RedisArgs> cmds = {RedisArgs{"SET", "a", "1"},
                                 RedisArgs{"INCR", "a"}, RedisArgs{"GET", "a"},
                                 RedisArgs{"HGET", "a", "f"}};
  absl::StatusOr<std::vector<RedisReply>> r = client_->Pipeline(cmds);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), 4u);
  EXPECT_EQ((*r)[0], RedisReply::Status("OK"));
  EXPECT_EQ((*r)[1], RedisReply::Integer(2));
  EXPECT_EQ((*r)[2], RedisReply::String("2"));
  EXPECT_TRUE((*r)[3].is_error());
  EXPECT_TRUE(
      absl::IsFailedPrecondition(client_->ServerErrorStatus("HGET", (*r)[3])));

  RedisClientOptions o = ClientOptions();
  o.command_timeout = absl::Milliseconds(100);
  o.retry_deadline = absl::ZeroDuration();
  auto slow = RedisClient::Connect(o);
  ASSERT_TRUE(slow.ok());
  absl::StatusOr<RedisReply> blocked =
      (*slow)->Command({"BLPOP", "nothing", "5"});
  EXPECT_TRUE(absl::IsUnavailable(blocked.status())) << blocked.status();
  EXPECT_THAT(std::string(blocked.status().message()), HasSubstr("BLPOP"));
  // The next command reconnects.
  EXPECT_EQ((*slow)->Command({"PING"})->str(), "PONG");
}

}  // namespace client_test
}  // namespace siftdb::test
