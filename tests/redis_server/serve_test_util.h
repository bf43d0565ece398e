// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fixtures of the BF.* server suite: a real redis-server (shared per
// process, flushed per test) with an in-process BloomServer in front of
// it, clients of that server, and a raw socket for protocol-level tests.
//
// Thread safety: a fixture belongs to its test's thread; a RawSocket to
// one thread.

#ifndef SIFTDB_TESTS_REDIS_SERVER_SERVE_TEST_UTIL_H_
#define SIFTDB_TESTS_REDIS_SERVER_SERVE_TEST_UTIL_H_

#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redis/server/bloom_server.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"

namespace siftdb::test {

class ServeTest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    BloomServerOptions o;
    o.upstream.endpoint = server_->endpoint();
    absl::StatusOr<std::unique_ptr<BloomServer>> s = BloomServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    serve_ = std::move(*s);
  }
  void TearDown() override {
    if (serve_ != nullptr) serve_->Stop();
  }

  // A RedisClient talking to the BF.* server (no retries: a dropped
  // connection must show).
  std::unique_ptr<RedisClient> ConnectServe(const std::string& user = "",
                                            const std::string& pass = "") {
    RedisClientOptions o;
    o.endpoint = absl::StrCat("127.0.0.1:", serve_->port());
    o.username = user;
    o.password = pass;
    o.retry_deadline = absl::ZeroDuration();
    o.command_timeout = absl::Seconds(20);
    absl::StatusOr<std::unique_ptr<RedisClient>> c = RedisClient::Connect(o);
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(*c) : nullptr;
  }

  std::unique_ptr<BloomServer> serve_;
};

// A plain TCP client for requests no client library would send.
class RawSocket {
 public:
  explicit RawSocket(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ = connect(fd_, reinterpret_cast<sockaddr*>(&a), sizeof(a)) == 0;
  }
  ~RawSocket() { close(fd_); }
  RawSocket(const RawSocket&) = delete;
  RawSocket& operator=(const RawSocket&) = delete;

  bool connected() const { return connected_; }
  bool Send(const std::string& bytes) {
    return write(fd_, bytes.data(), bytes.size()) ==
           static_cast<ssize_t>(bytes.size());
  }
  // Reads until `want` bytes arrived, the peer closed, or `timeout`.
  std::string Read(size_t want, absl::Duration timeout = absl::Seconds(5)) {
    const absl::Time end = absl::Now() + timeout;
    while (buf_.size() < want && !eof_) {
      const absl::Duration left = end - absl::Now();
      if (left <= absl::ZeroDuration()) break;
      pollfd p{fd_, POLLIN, 0};
      if (poll(&p, 1, static_cast<int>(absl::ToInt64Milliseconds(left)) + 1) <=
          0) {
        continue;
      }
      char tmp[4096];
      const ssize_t n = read(fd_, tmp, sizeof(tmp));
      if (n <= 0) {
        eof_ = true;
      } else {
        buf_.append(tmp, static_cast<size_t>(n));
      }
    }
    std::string out = buf_.substr(0, std::min(want, buf_.size()));
    buf_.erase(0, out.size());
    return out;
  }
  // True when the peer closed the connection within `timeout`.
  bool ClosedWithin(absl::Duration timeout) {
    Read(SIZE_MAX, timeout);
    return eof_;
  }

 private:
  int fd_ = -1;
  bool connected_ = false;
  bool eof_ = false;
  std::string buf_;
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_REDIS_SERVER_SERVE_TEST_UTIL_H_
