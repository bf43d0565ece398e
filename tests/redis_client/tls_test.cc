// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisClient over TLS against a real redis-server started with --tls-port
// and a CA made by the test: commands and pipelines, certificate and name
// verification (a wrong CA and a wrong name refused with the cause named,
// verify=no accepting both), client certificates, the command timeout over
// TLS against a stopped server, and rediss+sentinel:// through a TLS
// Sentinel.

#include <signal.h>

#include <memory>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_cluster_client.h"
#include "tests/support/redis_server.h"
#include "tests/support/redis_tls.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace tls_test {

class TlsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SIFTDB_REQUIRE_REDIS_TLS();
    auto f = test::MakeTestTlsFiles(dir_.path());
    ASSERT_TRUE(f.ok()) << f.status();
    files_ = *f;
  }

  void StartServer(const std::string& auth_clients = "optional",
                   std::vector<std::string> extra = {}) {
    auto s = test::StartTlsRedisServer(files_, auth_clients, std::move(extra));
    ASSERT_TRUE(s.ok()) << s.status();
    tls_ = std::move(*s);
  }

  std::string Url(const std::string& query) const {
    return absl::StrCat("rediss://", tls_.tls_endpoint(), "?", query);
  }

  absl::StatusOr<std::unique_ptr<RedisClient>> Connect(const std::string& url) {
    RedisClientOptions o;
    o.endpoint = url;
    o.retry_deadline = absl::ZeroDuration();
    return RedisClient::Connect(o);
  }

  test::TempDir dir_;
  test::TestTlsFiles files_;
  test::TlsRedisServer tls_;
};

TEST_F(TlsTest, CommandsAndPipelines) {
  StartServer();
  auto c = Connect(Url("ca_cert=" + files_.ca_cert));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->Command({"PING"})->str(), "PONG");
  ASSERT_TRUE((*c)->Command({"SET", "k", std::string(100000, 'x')}).ok());
  EXPECT_EQ((*c)->Command({"GET", "k"})->str(), std::string(100000, 'x'));
  std::vector<RedisArgs> p;
  for (int i = 0; i < 500; i++) {
    p.push_back(RedisArgs{"INCR", "n"});
  }
  auto replies = (*c)->Pipeline(p);
  ASSERT_TRUE(replies.ok()) << replies.status();
  ASSERT_EQ(replies->size(), 500u);
  EXPECT_EQ(replies->back().integer(), 500);
  // Through the plain port the server holds what TLS wrote.
  EXPECT_EQ(*tls_.server->Call({"GET", "n"}), "500");
  // The struct fields work like the URL.
  RedisClientOptions o;
  o.endpoint = tls_.tls_endpoint();
  o.tls = true;
  o.tls_options.ca_file = files_.ca_cert;
  o.tls_options.server_name = "localhost";
  auto byfields = RedisClient::Connect(o);
  ASSERT_TRUE(byfields.ok()) << byfields.status();
  EXPECT_EQ((*byfields)->Command({"GET", "n"})->str(), "500");
}

TEST_F(TlsTest, WrongCaRefusedWithTheCause) {
  StartServer();
  auto c = Connect(Url("ca_cert=" + files_.other_ca_cert));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(c.status())) << c.status();
  EXPECT_NE(c.status().message().find(tls_.tls_endpoint()), std::string::npos)
      << c.status();
  EXPECT_NE(c.status().message().find("certificate verify failed"),
            std::string::npos)
      << c.status();
  // Unauthenticated is not retried: even with a long retry deadline the
  // answer is immediate.
  RedisClientOptions o;
  o.endpoint = Url("ca_cert=" + files_.other_ca_cert);
  o.retry_deadline = absl::Seconds(30);
  const absl::Time start = absl::Now();
  EXPECT_FALSE(RedisClient::Connect(o).ok());
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST_F(TlsTest, HostnameMismatchRefused) {
  StartServer();
  auto bad = Connect(Url("ca_cert=" + files_.ca_cert + "&sni=wrong.example"));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(bad.status())) << bad.status();
  EXPECT_NE(bad.status().message().find("hostname mismatch"), std::string::npos)
      << bad.status();
  // The name the certificate carries is accepted.
  auto good = Connect(Url("ca_cert=" + files_.ca_cert + "&sni=localhost"));
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ((*good)->Command({"PING"})->str(), "PONG");
}

TEST_F(TlsTest, VerifyOffAcceptsAnyCertificate) {
  StartServer();
  auto c = Connect(
      Url("ca_cert=" + files_.other_ca_cert + "&sni=wrong.example&verify=0"));
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ((*c)->Command({"PING"})->str(), "PONG");
}

TEST_F(TlsTest, ClientCertificateRequiredByTheServer) {
  StartServer("yes");
  auto with =
      Connect(Url("ca_cert=" + files_.ca_cert + "&cert=" + files_.client_cert +
                  "&key=" + files_.client_key));
  ASSERT_TRUE(with.ok()) << with.status();
  EXPECT_EQ((*with)->Command({"PING"})->str(), "PONG");

  // Without one: TLS 1.3 finishes the client's side of the handshake, and
  // the server's refusal arrives with the first reply.
  absl::Status s;
  auto without = Connect(Url("ca_cert=" + files_.ca_cert));
  if (!without.ok()) {
    s = without.status();
  } else {
    s = (*without)->Command({"PING"}).status();
  }
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(s)) << s;
  EXPECT_NE(s.message().find("certificate"), std::string::npos) << s;
  EXPECT_NE(s.message().find(tls_.tls_endpoint()), std::string::npos) << s;
}

TEST_F(TlsTest, BadFilesNamed) {
  StartServer();
  auto c = Connect(Url("ca_cert=" + dir_.Join("missing.pem")));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << c.status();
  EXPECT_NE(c.status().message().find("missing.pem"), std::string::npos);
  // A key that does not belong to the certificate.
  c = Connect(Url("ca_cert=" + files_.ca_cert + "&cert=" + files_.client_cert +
                  "&key=" + files_.server_key));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << c.status();
  // A certificate without its key.
  c = Connect(Url("cert=" + files_.client_cert));
  ASSERT_FALSE(c.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(c.status())) << c.status();
  // TLS over a unix socket is refused, not attempted.
  RedisClientOptions o;
  o.endpoint = "unix:/tmp/none.sock";
  o.tls = true;
  EXPECT_TRUE(absl::IsInvalidArgument(RedisClient::Connect(o).status()));
}

TEST_F(TlsTest, PasswordNeverInMessages) {
  StartServer("optional", {"--requirepass", "s3cret-pw"});
  auto good = Connect(absl::StrCat("rediss://:s3cret-pw@", tls_.tls_endpoint(),
                                   "?ca_cert=", files_.ca_cert));
  ASSERT_TRUE(good.ok()) << good.status();
  EXPECT_EQ((*good)->Command({"PING"})->str(), "PONG");
  auto bad = Connect(absl::StrCat("rediss://:wrong-pw@", tls_.tls_endpoint(),
                                  "?ca_cert=", files_.ca_cert));
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(bad.status())) << bad.status();
  EXPECT_EQ(bad.status().message().find("wrong-pw"), std::string::npos);
}

// Resumes a SIGSTOPped server however the test ends.
struct Resume {
  int pid;
  ~Resume() { kill(pid, SIGCONT); }
};

TEST_F(TlsTest, CommandTimeoutAgainstAStoppedServer) {
  StartServer();
  RedisClientOptions o;
  o.endpoint = Url("ca_cert=" + files_.ca_cert);
  o.command_timeout = absl::Milliseconds(300);
  o.connect_timeout = absl::Milliseconds(300);
  o.retry_deadline = absl::ZeroDuration();
  auto c = RedisClient::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Command({"PING"}).ok());
  auto pid = test::RedisServerPid(tls_.server.get());
  ASSERT_TRUE(pid.ok()) << pid.status();
  ASSERT_EQ(kill(*pid, SIGSTOP), 0);
  Resume resume{*pid};
  const absl::Time start = absl::Now();
  auto r = (*c)->Command({"PING"});
  const absl::Duration took = absl::Now() - start;
  ASSERT_FALSE(r.ok());
  EXPECT_TRUE(absl::IsUnavailable(r.status())) << r.status();
  EXPECT_NE(r.status().message().find("timed out"), std::string::npos)
      << r.status();
  EXPECT_GE(took, absl::Milliseconds(250));
  EXPECT_LT(took, absl::Seconds(5));
  // A fresh connection's handshake is bounded by the connect timeout (the
  // kernel accepts the TCP connection; the stopped server never answers).
  const absl::Time start2 = absl::Now();
  auto c2 = RedisClient::Connect(o);
  EXPECT_FALSE(c2.ok());
  EXPECT_LT(absl::Now() - start2, absl::Seconds(5));
  kill(*pid, SIGCONT);
  // The client reconnects once the server is back.
  o.retry_deadline = absl::Seconds(5);
  auto c3 = RedisClient::Connect(o);
  ASSERT_TRUE(c3.ok()) << c3.status();
  EXPECT_EQ((*c3)->Command({"PING"})->str(), "PONG");
}

TEST_F(TlsTest, ConnectRedisTakesTheUrl) {
  StartServer();
  RedisConnectOptions o;
  o.endpoints = {Url("ca_cert=" + files_.ca_cert)};
  o.client.retry_deadline = absl::ZeroDuration();
  auto conn = ConnectRedis(o);
  ASSERT_TRUE(conn.ok()) << conn.status();
}

TEST_F(TlsTest, SentinelOverTls) {
  StartServer();
  // A Sentinel listening for TLS that reaches the master over TLS too.
  absl::Status last;
  std::unique_ptr<test::RedisServer> sentinel;
  int sentinel_tls_port = 0;
  for (int attempt = 0; attempt < 3 && sentinel == nullptr; attempt++) {
    sentinel_tls_port = test::RedisServer::PickFreePort();
    test::RedisServerOptions so;
    so.sentinel_config = {absl::StrCat("sentinel monitor tlsmaster 127.0.0.1 ",
                                       tls_.tls_port, " 1"),
                          "sentinel down-after-milliseconds tlsmaster 1000"};
    so.extra_args =
        test::RedisTlsServerArgs(files_, sentinel_tls_port, "optional");
    so.extra_args.push_back("--tls-replication");
    so.extra_args.push_back("yes");
    auto s = test::RedisServer::Start(so);
    if (s.ok()) {
      sentinel = std::move(*s);
    } else {
      last = s.status();
    }
  }
  ASSERT_NE(sentinel, nullptr) << last;
  const std::string url =
      absl::StrCat("rediss+sentinel://127.0.0.1:", sentinel_tls_port,
                   "/tlsmaster?ca_cert=", files_.ca_cert);
  auto c = Connect(url);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE((*c)->Command({"SET", "via", "sentinel"}).ok());
  EXPECT_EQ(*tls_.server->Call({"GET", "via"}), "sentinel");
  // Through the plain Sentinel port with TLS asked for, the handshake
  // fails: every Sentinel connection really is TLS.
  auto plain = Connect(absl::StrCat("rediss+sentinel://", sentinel->endpoint(),
                                    "/tlsmaster?ca_cert=", files_.ca_cert));
  EXPECT_FALSE(plain.ok());
}

}  // namespace tls_test
}  // namespace siftdb
