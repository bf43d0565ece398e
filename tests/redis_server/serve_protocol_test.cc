// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The BF.* server at the protocol level: garbage and half requests get
// Redis's protocol errors without hurting other clients, inline commands
// work, HELLO 3 is refused, BF.* inside MULTI is refused while MULTI/EXEC
// and SUBSCRIBE pass through to Redis.

#include <string>

#include "gtest/gtest.h"
#include "tests/redis_server/serve_test_util.h"

namespace siftdb::test {
namespace serve_protocol_test {

TEST_F(ServeTest, BloomServeGarbageGetsErrorAndOthersUnaffected) {
  std::unique_ptr<RedisClient> good = ConnectServe();
  ASSERT_NE(good, nullptr);
  // A half request left hanging, and one cut off by a close.
  RawSocket half(serve_->port());
  ASSERT_TRUE(half.Send("*3\r\n$6\r\nBF.ADD\r\n$1\r\nf"));
  {
    RawSocket cut(serve_->port());
    ASSERT_TRUE(cut.Send("*3\r\n$6\r\nBF.ADD\r\n$1"));
  }
  struct Case {
    std::string bytes, reply;
  } cases[] = {
      {"*x\r\n", "-ERR Protocol error: invalid multibulk length\r\n"},
      {"*1\r\n+PING\r\n", "-ERR Protocol error: expected '$', got '+'\r\n"},
      {"*1\r\n$-5\r\n", "-ERR Protocol error: invalid bulk length\r\n"},
      {"*1\r\n$99999999999999\r\n",
       "-ERR Protocol error: invalid bulk length\r\n"},
      {"*1\r\n$4\r\nPINGxx",
       "-ERR Protocol error: bulk string not "
       "terminated by CRLF\r\n"},
      {"BF.ADD f \"unbalanced\r\n",
       "-ERR Protocol error: unbalanced quotes in request\r\n"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.bytes);
    RawSocket s(serve_->port());
    ASSERT_TRUE(s.connected());
    ASSERT_TRUE(s.Send(c.bytes));
    EXPECT_EQ(s.Read(c.reply.size()), c.reply);
    EXPECT_TRUE(s.ClosedWithin(absl::Seconds(5)));
  }
  // Random bytes: some error reply or a close, never a crash.
  for (int i = 0; i < 20; i++) {
    RawSocket s(serve_->port());
    std::string junk;
    for (int j = 0; j < 64; j++)
      junk += static_cast<char>((i * 131 + j * 17) % 256);
    s.Send(junk + "\r\n");
    s.Read(1, absl::Milliseconds(200));
  }
  absl::StatusOr<RedisReply> r = good->Command({"BF.ADD", "f", "a"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(*r, RedisReply::Integer(1));
  // The hanging client completes its request later.
  ASSERT_TRUE(half.Send("\r\n$1\r\na\r\n"));
  EXPECT_EQ(half.Read(4), ":0\r\n");
}

TEST_F(ServeTest, BloomServeInlineAndPipelinedInOrder) {
  RawSocket s(serve_->port());
  ASSERT_TRUE(
      s.Send("SET k v\r\nBF.ADD f a\r\nGET k\r\nBF.MADD f a \"b c\"\r\n"
             "*2\r\n$9\r\nBF.EXISTS\r\n$1\r\nf\r\n*1\r\n$4\r\nPING\r\n"
             "BF.EXISTS f 'b c'\r\n"));
  const std::string want =
      "+OK\r\n:1\r\n$1\r\nv\r\n*2\r\n:0\r\n:1\r\n"
      "-ERR wrong number of arguments for 'bf.exists' command\r\n"
      "+PONG\r\n:1\r\n";
  EXPECT_EQ(s.Read(want.size()), want);
}

TEST_F(ServeTest, BloomServeHello3RefusedHello2Passes) {
  RawSocket s(serve_->port());
  ASSERT_TRUE(s.Send("HELLO 3\r\nPING\r\n"));
  const std::string want = "-NOPROTO unsupported protocol version\r\n+PONG\r\n";
  EXPECT_EQ(s.Read(want.size()), want);
  std::unique_ptr<RedisClient> c = ConnectServe();
  ASSERT_NE(c, nullptr);
  absl::StatusOr<RedisReply> r = c->Command({"HELLO", "2"});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_TRUE(r->is_array()) << r->DebugString();
}

TEST_F(ServeTest, BloomServeMultiExecPassesBloomInsideRefused) {
  RawSocket s(serve_->port());
  ASSERT_TRUE(s.Send(
      "MULTI\r\nSET a 1\r\nBF.ADD f x\r\nINCR a\r\nEXEC\r\nBF.ADD f x\r\n"));
  const std::string want =
      "+OK\r\n+QUEUED\r\n"
      "-ERR BF.* and CBF.* commands are not allowed inside MULTI\r\n"
      "+QUEUED\r\n*2\r\n+OK\r\n:2\r\n:1\r\n";
  EXPECT_EQ(s.Read(want.size()), want);
}

TEST_F(ServeTest, BloomServeSubscribePassesThrough) {
  RawSocket sub(serve_->port());
  ASSERT_TRUE(sub.Send("BF.ADD f x\r\nSUBSCRIBE ch\r\n"));
  const std::string subscribed =
      ":1\r\n*3\r\n$9\r\nsubscribe\r\n$2\r\nch\r\n:1\r\n";
  EXPECT_EQ(sub.Read(subscribed.size()), subscribed);
  std::unique_ptr<RedisClient> pub = ConnectServe();
  ASSERT_NE(pub, nullptr);
  absl::StatusOr<RedisReply> n = pub->Command({"PUBLISH", "ch", "hello"});
  ASSERT_TRUE(n.ok()) << n.status();
  EXPECT_EQ(*n, RedisReply::Integer(1));
  const std::string message =
      "*3\r\n$7\r\nmessage\r\n$2\r\nch\r\n$5\r\nhello\r\n";
  EXPECT_EQ(sub.Read(message.size()), message);
  ASSERT_TRUE(sub.Send("PING\r\n"));
  const std::string pong = "*2\r\n$4\r\npong\r\n$0\r\n\r\n";
  EXPECT_EQ(sub.Read(pong.size()), pong);
}

TEST_F(ServeTest, BloomServeBoundedBuffersStillAnswerEverything) {
  // 2,500 pipelined requests, more than the 1,024 pending replies a
  // connection may have: reading pauses and resumes, nothing is lost.
  RawSocket s(serve_->port());
  std::string many;
  std::string want;
  for (int i = 0; i < 2500; i++) {
    many += i % 2 == 0 ? "PING\r\n" : "BF.ADD f x\r\n";
    want += i % 2 == 0 ? "+PONG\r\n" : (i == 1 ? ":1\r\n" : ":0\r\n");
  }
  ASSERT_TRUE(s.Send(many));
  EXPECT_EQ(s.Read(want.size(), absl::Seconds(30)), want);
  // An inline line past 64 KB is refused, and the connection closed.
  RawSocket big(serve_->port());
  big.Send(std::string(70 * 1024, 'a'));
  const std::string err = "-ERR Protocol error: too big inline request\r\n";
  EXPECT_EQ(big.Read(err.size()), err);
  EXPECT_TRUE(big.ClosedWithin(absl::Seconds(5)));
}

}  // namespace serve_protocol_test
}  // namespace siftdb::test
