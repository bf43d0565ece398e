// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// TcpProxy (tests/support/tcp_proxy.h) in front of real redis-server
// processes: plain forwarding, added latency, cuts, the blackhole, switching
// upstream, and a cut in the middle of a pipeline. Clients are hiredis, or a
// raw socket where the exact bytes matter. Every wait is bounded (hiredis and
// socket timeouts of a few seconds).

#include "tests/support/tcp_proxy.h"

#include <hiredis/hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "tests/support/redis_server.h"

namespace siftdb::test {
namespace tcp_proxy_test {

struct ContextDeleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
using ContextPtr = std::unique_ptr<redisContext, ContextDeleter>;
struct ReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, ReplyDeleter>;

constexpr timeval kTimeout{2, 0};

ContextPtr Connect(int port) {
  ContextPtr c(redisConnectWithTimeout("127.0.0.1", port, kTimeout));
  if (c != nullptr && c->err == 0) redisSetTimeout(c.get(), kTimeout);
  return c;
}

// Runs one command; the reply as text, or Unavailable when the connection
// fails (hiredis then keeps the context in its error state).
absl::StatusOr<std::string> Command(redisContext* c,
                                    const std::vector<std::string>& argv) {
  if (c == nullptr) return absl::UnavailableError("no hiredis context");
  if (c->err != 0) return absl::UnavailableError(c->errstr);
  std::vector<const char*> args;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    args.push_back(a.data());
    lens.push_back(a.size());
  }
  ReplyPtr reply(static_cast<redisReply*>(redisCommandArgv(
      c, static_cast<int>(args.size()), args.data(), lens.data())));
  if (reply == nullptr) return absl::UnavailableError(c->errstr);
  if (reply->type == REDIS_REPLY_INTEGER) return absl::StrCat(reply->integer);
  if (reply->type == REDIS_REPLY_NIL) return std::string("(nil)");
  return std::string(reply->str, reply->len);
}

// A blocking socket to 127.0.0.1:port whose reads time out after 3 s.
class RawSocket {
 public:
  explicit RawSocket(int port) : fd_(socket(AF_INET, SOCK_STREAM, 0)) {
    timeval tv{3, 0};
    setsockopt(fd_, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    addr.sin_port = htons(static_cast<uint16_t>(port));
    connected_ =
        connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  }
  ~RawSocket() { close(fd_); }
  bool connected() const { return connected_; }
  bool Send(const std::string& data) {
    return send(fd_, data.data(), data.size(), MSG_NOSIGNAL) ==
           static_cast<ssize_t>(data.size());
  }
  // Reads `n` bytes; fewer when the connection ends or the read times out.
  std::string Read(size_t n) {
    std::string out;
    char buf[4096];
    while (out.size() < n) {
      ssize_t r = recv(fd_, buf, std::min(sizeof(buf), n - out.size()), 0);
      if (r <= 0) break;
      out.append(buf, static_cast<size_t>(r));
    }
    return out;
  }
  // Reads until the peer ends the connection: true on end-of-file or reset,
  // false when a read times out first. `got` receives the bytes read.
  bool ReadUntilClosed(std::string* got) {
    char buf[4096];
    while (true) {
      ssize_t r = recv(fd_, buf, sizeof(buf), 0);
      if (r > 0) {
        got->append(buf, static_cast<size_t>(r));
        continue;
      }
      return r == 0 || errno == ECONNRESET;
    }
  }

 private:
  int fd_;
  bool connected_ = false;
};

class TcpProxyTest : public ::testing::Test {
 protected:
  // hiredis 0.14 writes with write(2): a write to a reset socket must fail
  // with EPIPE rather than kill the test with SIGPIPE.
  void SetUp() override { signal(SIGPIPE, SIG_IGN); }
};

TEST_F(TcpProxyTest, ForwardsPingSetGet) {
  SIFTDB_REQUIRE_REDIS();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto proxy = TcpProxy::Start((*server)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  EXPECT_EQ((*proxy)->endpoint(), absl::StrCat("127.0.0.1:", (*proxy)->port()));

  ContextPtr c = Connect((*proxy)->port());
  EXPECT_EQ(Command(c.get(), {"PING"}).value_or("error"), "PONG");
  EXPECT_EQ(Command(c.get(), {"SET", "k", "v"}).value_or("error"), "OK");
  EXPECT_EQ(Command(c.get(), {"GET", "k"}).value_or("error"), "v");
  EXPECT_EQ((*server)->Call({"GET", "k"}).value_or("error"), "v");
  EXPECT_EQ((*proxy)->connections_accepted(), 1u);
}

TEST_F(TcpProxyTest, RejectsAnInvalidUpstreamPort) {
  EXPECT_EQ(TcpProxy::Start(0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(TcpProxy::Start(70000).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST_F(TcpProxyTest, DelayIsAddedToEachDirection) {
  SIFTDB_REQUIRE_REDIS();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto proxy = TcpProxy::Start((*server)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ContextPtr c = Connect((*proxy)->port());
  ASSERT_EQ(Command(c.get(), {"PING"}).value_or("error"), "PONG");

  const absl::Duration kDelay = absl::Milliseconds(200);
  for (bool to_server : {true, false}) {
    SCOPED_TRACE(to_server ? "client->server" : "server->client");
    (*proxy)->SetDelay(to_server ? kDelay : absl::ZeroDuration(),
                       to_server ? absl::ZeroDuration() : kDelay);
    const absl::Time start = absl::Now();
    EXPECT_EQ(Command(c.get(), {"PING"}).value_or("error"), "PONG");
    EXPECT_GE(absl::Now() - start, kDelay);
  }
  (*proxy)->SetDelay(absl::ZeroDuration(), absl::ZeroDuration());
  const absl::Time start = absl::Now();
  EXPECT_EQ(Command(c.get(), {"PING"}).value_or("error"), "PONG");
  EXPECT_LT(absl::Now() - start, kDelay);
}

TEST_F(TcpProxyTest, CutAllBreaksOpenConnectionsOnly) {
  SIFTDB_REQUIRE_REDIS();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto proxy = TcpProxy::Start((*server)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ContextPtr old_conn = Connect((*proxy)->port());
  ASSERT_EQ(Command(old_conn.get(), {"PING"}).value_or("error"), "PONG");

  (*proxy)->CutAll();
  EXPECT_FALSE(Command(old_conn.get(), {"PING"}).ok());
  ContextPtr new_conn = Connect((*proxy)->port());
  EXPECT_EQ(Command(new_conn.get(), {"PING"}).value_or("error"), "PONG");
  EXPECT_EQ((*proxy)->connections_accepted(), 2u);
}

TEST_F(TcpProxyTest, BlackholeCutsAndRefusesUntilLifted) {
  SIFTDB_REQUIRE_REDIS();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto proxy = TcpProxy::Start((*server)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ContextPtr open_conn = Connect((*proxy)->port());
  ASSERT_EQ(Command(open_conn.get(), {"PING"}).value_or("error"), "PONG");

  (*proxy)->SetBlackhole(true);
  EXPECT_FALSE(Command(open_conn.get(), {"PING"}).ok());
  ContextPtr refused = Connect((*proxy)->port());
  EXPECT_FALSE(Command(refused.get(), {"SET", "k", "v"}).ok());
  EXPECT_EQ((*server)->Call({"EXISTS", "k"}).value_or("error"), "0");

  (*proxy)->SetBlackhole(false);
  ContextPtr after = Connect((*proxy)->port());
  EXPECT_EQ(Command(after.get(), {"PING"}).value_or("error"), "PONG");
}

TEST_F(TcpProxyTest, SetUpstreamMovesNewConnectionsOnly) {
  SIFTDB_REQUIRE_REDIS();
  auto first = RedisServer::Start();
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = RedisServer::Start();
  ASSERT_TRUE(second.ok()) << second.status();
  ASSERT_TRUE((*first)->Call({"SET", "who", "first"}).ok());
  ASSERT_TRUE((*second)->Call({"SET", "who", "second"}).ok());
  auto proxy = TcpProxy::Start((*first)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  ContextPtr old_conn = Connect((*proxy)->port());
  ASSERT_EQ(Command(old_conn.get(), {"GET", "who"}).value_or("error"), "first");

  (*proxy)->SetUpstream((*second)->port());
  ContextPtr new_conn = Connect((*proxy)->port());
  EXPECT_EQ(Command(new_conn.get(), {"GET", "who"}).value_or("error"),
            "second");
  EXPECT_EQ(Command(old_conn.get(), {"GET", "who"}).value_or("error"), "first");
}

TEST_F(TcpProxyTest, CutAfterClientBytesCutsMidPipeline) {
  SIFTDB_REQUIRE_REDIS();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto proxy = TcpProxy::Start((*server)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  const std::string incr = "*2\r\n$4\r\nINCR\r\n$1\r\nn\r\n";
  RawSocket conn((*proxy)->port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send(incr));
  ASSERT_EQ(conn.Read(4), ":1\r\n");

  // The open connection may send two more commands and half of a third.
  (*proxy)->CutAfterClientBytes(2 * incr.size() + incr.size() / 2);
  std::string pipeline;
  for (int i = 0; i < 5; ++i) pipeline += incr;
  ASSERT_TRUE(conn.Send(pipeline));
  std::string replies;
  EXPECT_TRUE(conn.ReadUntilClosed(&replies));
  EXPECT_EQ(std::string(":2\r\n:3\r\n").substr(0, replies.size()), replies);

  // The server ran exactly the two whole commands (it may still be reading
  // them when the client sees the cut, so wait a little).
  std::string n;
  for (absl::Time deadline = absl::Now() + absl::Seconds(3);
       absl::Now() < deadline; absl::SleepFor(absl::Milliseconds(20))) {
    n = (*server)->Call({"GET", "n"}).value_or("error");
    if (n == "3") break;
  }
  EXPECT_EQ(n, "3");

  (*proxy)->CutAfterClientBytes(0);
  ContextPtr c = Connect((*proxy)->port());
  EXPECT_EQ(Command(c.get(), {"INCR", "n"}).value_or("error"), "4");
}

TEST_F(TcpProxyTest, UnreachableUpstreamClosesTheClient) {
  const int dead_port = RedisServer::PickFreePort();
  ASSERT_GT(dead_port, 0);
  auto proxy = TcpProxy::Start(dead_port);
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  RawSocket conn((*proxy)->port());
  ASSERT_TRUE(conn.connected());
  std::string got;
  EXPECT_TRUE(conn.ReadUntilClosed(&got));
  EXPECT_EQ(got, "");
  EXPECT_EQ((*proxy)->connections_accepted(), 1u);
}

TEST_F(TcpProxyTest, DestructorIsPromptWithHeldBytes) {
  SIFTDB_REQUIRE_REDIS();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto proxy = TcpProxy::Start((*server)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  (*proxy)->SetDelay(absl::Seconds(30), absl::Seconds(30));
  RawSocket conn((*proxy)->port());
  ASSERT_TRUE(conn.connected());
  ASSERT_TRUE(conn.Send("PING\r\n"));
  absl::SleepFor(absl::Milliseconds(100));  // Let the proxy hold the bytes.

  const absl::Time start = absl::Now();
  proxy->reset();
  EXPECT_LT(absl::Now() - start, absl::Seconds(1));
  std::string got;
  EXPECT_TRUE(conn.ReadUntilClosed(&got));
  EXPECT_EQ(got, "");
}

}  // namespace tcp_proxy_test
}  // namespace siftdb::test
