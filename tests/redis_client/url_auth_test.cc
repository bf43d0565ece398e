// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// URLs against a real redis-server with --requirepass and an ACL user: the
// URL's credentials and database reach AUTH and SELECT, through
// RedisClient::Connect and ConnectRedis alike, and a refused AUTH names the
// endpoint but never the password.

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_cluster_client.h"
#include "tests/support/redis_server.h"

namespace siftdb {
namespace url_auth_test {

class UrlAuthTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SIFTDB_REQUIRE_REDIS();
    test::RedisServerOptions o;
    o.extra_args = {"--requirepass", "def%ault", "--user", "alice", "on",
                    ">al:ce@pw",     "~*",       "+@all"};
    auto s = test::RedisServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    port_ = std::to_string(server_->port());
  }

  absl::StatusOr<std::unique_ptr<RedisClient>> Connect(const std::string& url) {
    RedisClientOptions o;
    o.endpoint = url;
    o.retry_deadline = absl::ZeroDuration();
    return RedisClient::Connect(o);
  }

  std::unique_ptr<test::RedisServer> server_;
  std::string port_;
};

TEST_F(UrlAuthTest, AclUserAndDatabase) {
  // "al:ce@pw" escaped; database 3.
  auto c = Connect("redis://alice:al%3Ace%40pw@127.0.0.1:" + port_ + "/3");
  ASSERT_TRUE(c.ok()) << c.status();
  auto who = (*c)->Command({"ACL", "WHOAMI"});
  ASSERT_TRUE(who.ok());
  EXPECT_EQ(who->str(), "alice");
  ASSERT_TRUE((*c)->Command({"SET", "k", "v3"}).ok());
  auto db3 = server_->Call({"SELECT", "3"});
  ASSERT_TRUE(db3.ok());
  // The key landed in database 3, not 0.
  EXPECT_EQ(*server_->Call({"EXISTS", "k"}), "0");
  auto in3 = Connect("redis://:def%25ault@127.0.0.1:" + port_ + "/3");
  ASSERT_TRUE(in3.ok()) << in3.status();
  EXPECT_EQ((*in3)->Command({"GET", "k"})->str(), "v3");
}

TEST_F(UrlAuthTest, DefaultUserPasswordOnly) {
  auto c = Connect("redis://def%25ault@127.0.0.1:" + port_);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->Command({"ACL", "WHOAMI"})->str(), "default");
}

TEST_F(UrlAuthTest, RefusedAuthNeverShowsThePassword) {
  for (const std::string& url :
       {"redis://alice:WrongHunter2@127.0.0.1:" + port_,
        "redis://:WrongHunter2@127.0.0.1:" + port_ + "/1"}) {
    auto c = Connect(url);
    ASSERT_FALSE(c.ok());
    EXPECT_EQ(c.status().code(), absl::StatusCode::kUnauthenticated)
        << c.status();
    EXPECT_EQ(c.status().message().find("WrongHunter2"), std::string::npos)
        << c.status();
    EXPECT_NE(c.status().message().find("127.0.0.1:" + port_),
              std::string::npos)
        << c.status();
  }
  auto c = Connect("redis://127.0.0.1:" + port_);
  ASSERT_TRUE(c.ok());  // connecting needs no AUTH; commands do
  auto r = (*c)->Command({"PING"});
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(r->is_error());
}

TEST_F(UrlAuthTest, ConnectRedisTakesAUrl) {
  RedisConnectOptions o;
  o.endpoints = {"redis://alice:al%3Ace%40pw@127.0.0.1:" + port_ + "/2"};
  o.client.retry_deadline = absl::ZeroDuration();
  auto conn = ConnectRedis(o);
  ASSERT_TRUE(conn.ok()) << conn.status();
  EXPECT_FALSE((*conn)->is_cluster());
  auto r = (*conn)->Pipeline({RedisArgs({"ACL", "WHOAMI"})}, "k");
  ASSERT_TRUE(r.ok());
  EXPECT_EQ((*r)[0].str(), "alice");
  // Describe() is for messages: no password there.
  EXPECT_EQ((*conn)->Describe("k").find("al:ce@pw"), std::string::npos);
  // A URL does not mix with other endpoints.
  o.endpoints.push_back("127.0.0.1:1");
  auto mixed = ConnectRedis(o);
  ASSERT_FALSE(mixed.ok());
  EXPECT_EQ(mixed.status().code(), absl::StatusCode::kInvalidArgument);
}

TEST_F(UrlAuthTest, UnixSocketUrl) {
  // A second server listening on a socket in the first one's directory.
  const std::string sock = server_->dir() + "/r.sock";
  test::RedisServerOptions with_sock;
  with_sock.extra_args = {"--unixsocket", sock};
  auto s = test::RedisServer::Start(with_sock);
  ASSERT_TRUE(s.ok()) << s.status();
  auto c = Connect("unix://" + sock + "?db=4");
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Command({"SET", "u", "1"}).ok());
  EXPECT_EQ(*(*s)->Call({"EXISTS", "u"}), "0");  // database 0
  EXPECT_EQ((*c)->Command({"EXISTS", "u"})->integer(), 1);
}

}  // namespace url_auth_test
}  // namespace siftdb
