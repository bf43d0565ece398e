// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisClient against a real redis-server: unreachable endpoints, unix
// sockets, AUTH with a password and an ACL user, pipelines, command timeouts,
// replies of every shape (built straight into RedisReply by hiredis's
// reader) and requests larger than the socket buffers (written straight to
// the socket).

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"
#include "tests/support/tcp_proxy.h"
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

TEST_F(RedisClientTest, RepliesOfEveryShape) {
  // A script's table becomes nested arrays; false becomes nil.
  const char kScript[] =
      "return {1, 'a\\0b', {2, {}, {'x'}}, false, redis.status_reply('S'), "
      "redis.error_reply('E oops')}";
  absl::StatusOr<RedisReply> nested = client_->Command({"EVAL", kScript, "0"});
  ASSERT_TRUE(nested.ok()) << nested.status();
  EXPECT_EQ(
      *nested,
      RedisReply::Array(
          {RedisReply::Integer(1), RedisReply::String(std::string("a\0b", 3)),
           RedisReply::Array({RedisReply::Integer(2), RedisReply::Array({}),
                              RedisReply::Array({RedisReply::String("x")})}),
           RedisReply::Nil(), RedisReply::Status("S"),
           RedisReply::Error("E oops")}))
      << nested->DebugString();
  std::vector<RedisArgs> cmds = {
      RedisArgs{"GET", "missing"},
      RedisArgs{"LRANGE", "missing", "0", "-1"},
      RedisArgs{"SET", "k", std::string("\r\n\0", 3)},
      RedisArgs{"GET", "k"},
      RedisArgs{"NOSUCHCOMMAND"},
      RedisArgs{"MULTI"},
      RedisArgs{"INCR", "n"},
      RedisArgs{"EXEC"}};
  absl::StatusOr<std::vector<RedisReply>> r = client_->Pipeline(cmds);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->size(), cmds.size());
  EXPECT_TRUE((*r)[0].is_nil());
  EXPECT_EQ((*r)[1], RedisReply::Array({}));
  EXPECT_EQ((*r)[2], RedisReply::Status("OK"));
  EXPECT_EQ((*r)[3], RedisReply::String(std::string("\r\n\0", 3)));
  EXPECT_TRUE((*r)[4].is_error());
  EXPECT_THAT((*r)[4].str(), HasSubstr("unknown command"));
  EXPECT_EQ((*r)[6], RedisReply::Status("QUEUED"));
  EXPECT_EQ((*r)[7], RedisReply::Array({RedisReply::Integer(1)}));

  // A long array of integers (the shape of a BITFIELD reply), inside EXEC.
  RedisArgs bits{"BITFIELD", "bits"};
  for (int i = 0; i < 20000; i++) {
    bits.Add("SET").Add("u1").AddInt(i * 3).Add(i % 2 == 0 ? "1" : "0");
  }
  absl::StatusOr<std::vector<RedisReply>> tx =
      client_->Pipeline({RedisArgs{"MULTI"}, bits, RedisArgs{"EXEC"}});
  ASSERT_TRUE(tx.ok()) << tx.status();
  ASSERT_TRUE(tx->back().is_array());
  ASSERT_EQ(tx->back().elements().size(), 1u);
  EXPECT_EQ(tx->back().elements()[0].elements().size(), 20000u);
  RedisArgs get{"BITFIELD_RO", "bits"};
  for (int i = 0; i < 20000; i++) get.Add("GET").Add("u1").AddInt(i * 3);
  absl::StatusOr<RedisReply> read = client_->Command(get);
  ASSERT_TRUE(read.ok()) << read.status();
  ASSERT_EQ(read->elements().size(), 20000u);
  for (int i = 0; i < 20000; i++) {
    ASSERT_EQ(read->elements()[i].integer(), i % 2 == 0 ? 1 : 0) << i;
  }
}

TEST_F(RedisClientTest, RequestsLargerThanTheSocketBuffers) {
  // 24 MiB in one request and in one pipeline: many partial writes.
  const std::string value(24 << 20, 'v');
  absl::StatusOr<RedisReply> set = client_->Command({"SET", "big", value});
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_EQ(*set, RedisReply::Status("OK"));
  absl::StatusOr<std::vector<RedisReply>> r = client_->Pipeline(
      {RedisArgs{"APPEND", "big", value}, RedisArgs{"STRLEN", "big"},
       RedisArgs{"GETRANGE", "big", "-3", "-1"}});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ((*r)[1], RedisReply::Integer(48 << 20));
  EXPECT_EQ((*r)[2], RedisReply::String("vvv"));
}

TEST_F(RedisClientTest, AWriteThatCannotFinishTimesOut) {
  // A proxy that holds what the client sends for 3 s: a request larger
  // than every buffer on the way cannot be written within the 200 ms
  // command timeout.
  absl::StatusOr<std::unique_ptr<TcpProxy>> proxy =
      TcpProxy::Start(server_->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  RedisClientOptions o = ClientOptions();
  o.endpoint = absl::StrCat("127.0.0.1:", (*proxy)->port());
  o.command_timeout = absl::Milliseconds(200);
  o.retry_deadline = absl::ZeroDuration();
  absl::StatusOr<std::unique_ptr<RedisClient>> c = RedisClient::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status();
  (*proxy)->SetDelay(absl::Seconds(3), absl::ZeroDuration());
  const absl::Time start = absl::Now();
  absl::StatusOr<RedisReply> r =
      (*c)->Command({"SET", "stuck", std::string(64 << 20, 's')});
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr(absl::StrCat("redis ", o.endpoint, ": SET: write: ")));
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
  (*proxy)->SetDelay(absl::ZeroDuration(), absl::ZeroDuration());
}

}  // namespace client_test
}  // namespace siftdb::test
