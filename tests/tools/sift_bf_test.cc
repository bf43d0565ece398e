// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sift_bf's redis-cli options against a real redis-server that requires a
// password: -h/-p/-a/--user/-n, -u redis:// URLs (and the schemes it
// refuses), REDISCLI_AUTH, options ending at the command; and the shared
// forms of sift_bf and sift_probe. Built only with SIFTDB_WITH_REDIS.

#include <cstdlib>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/redis_server.h"
#include "tests/support/redis_tls.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/common_forms.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::test {
namespace sift_bf_test {

using ::testing::HasSubstr;
using ::testing::Not;

class SiftBfOptionsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SIFTDB_REQUIRE_REDIS();
    unsetenv("REDISCLI_AUTH");
    tool_ = FindTool("tools/sift_bf");
    ASSERT_FALSE(tool_.empty()) << "sift_bf is not built";
    RedisServerOptions o;
    o.extra_args = {"--requirepass", "secret"};
    auto server = RedisServer::Start(o);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    port_ = std::to_string(server_->port());
  }
  void TearDown() override { unsetenv("REDISCLI_AUTH"); }
  ToolResult Run(const std::vector<std::string>& args) {
    return RunTool(tool_, args, dir_.path());
  }

  TempDir dir_;
  std::string tool_;
  std::unique_ptr<RedisServer> server_;
  std::string port_;
};

TEST_F(SiftBfOptionsTest, CommonForms) {
  ExpectCommonForms(tool_, "sift_bf", "-u URL", {"-p", "65536x", "PING"},
                    dir_.path());
  ToolResult r = Run({"-n", "-1", "PING"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("bad database number '-1'"));
  r = Run({"-p"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("-p needs a value"));
}

TEST_F(SiftBfOptionsTest, HostPortPasswordUserAndDb) {
  ToolResult r =
      Run({"-h", "127.0.0.1", "-p", port_, "-a", "secret", "BF.ADD", "k", "x"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "1\n");
  r = Run({"-h", "127.0.0.1", "-p", port_, "--user", "default", "-a", "secret",
           "-n", "3", "SET", "only3", "v"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Run({"-p", port_, "-a", "secret", "-n", "3", "EXISTS", "only3"});
  EXPECT_EQ(r.out, "1\n");
  r = Run({"-p", port_, "-a", "secret", "EXISTS", "only3"});  // db 0
  EXPECT_EQ(r.out, "0\n");
  // Options end at the command: -0.01 is BF.RESERVE's (bad) error rate.
  r = Run({"-p", port_, "-a", "secret", "BF.RESERVE", "f", "-0.01", "100"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, ::testing::Not(HasSubstr("unknown option")));
  // No password: the server refuses the command.
  r = Run({"-p", port_, "--retry=0", "PING"});
  EXPECT_NE(r.exit_code, 0);
}

// A filter is one object for the key-space commands redis-cli users type.
TEST_F(SiftBfOptionsTest, KeySpaceCommandsOnAFilterName) {
  auto run = [&](std::vector<std::string> command) {
    std::vector<std::string> args = {"-p", port_, "-a", "secret"};
    args.insert(args.end(), command.begin(), command.end());
    ToolResult r = Run(args);
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    return r.out;
  };
  EXPECT_EQ(run({"BF.ADD", "f", "x"}), "1\n");
  EXPECT_EQ(run({"TYPE", "f"}), "MBbloom--\n");
  EXPECT_EQ(run({"EXPIRE", "f", "100"}), "1\n");
  EXPECT_EQ(run({"TTL", "f"}), "100\n");
  EXPECT_EQ(run({"PERSIST", "f"}), "1\n");
  EXPECT_EQ(run({"DEL", "f"}), "1\n");
  EXPECT_EQ(run({"BF.EXISTS", "f", "x"}), "0\n");
  EXPECT_EQ(run({"TYPE", "f"}), "none\n");
}

TEST_F(SiftBfOptionsTest, PasswordFromRedisCliAuth) {
  setenv("REDISCLI_AUTH", "secret", 1);
  ToolResult r = Run({"-p", port_, "PING"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "PONG\n");
  // -a wins over the environment.
  r = Run({"-p", port_, "-a", "wrong", "--retry=0", "PING"});
  EXPECT_NE(r.exit_code, 0);
}

TEST_F(SiftBfOptionsTest, RedisUrls) {
  ToolResult r = Run(
      {"-u", "redis://:secret@127.0.0.1:" + port_ + "/5", "SET", "u5", "v"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  r = Run({"-u", "redis://default:secr%65t@127.0.0.1:" + port_ + "/5", "EXISTS",
           "u5"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "1\n");
  // A later -n overrides the URL's database.
  r = Run({"-u", "redis://:secret@127.0.0.1:" + port_ + "/5", "-n", "0",
           "EXISTS", "u5"});
  EXPECT_EQ(r.out, "0\n");
  struct Bad {
    std::string url;
    const char* message;
  };
  for (const Bad& b : std::vector<Bad>{
           {"http://127.0.0.1:" + port_, "scheme 'http' is not one of"},
           {"127.0.0.1:" + port_, "-u expects a URL"},
           {"redis://127.0.0.1:99999", "port: not a number in 1..65535"},
           {"redis://127.0.0.1:" + port_ + "/x", "database: not a number"},
           {"redis+sentinel://127.0.0.1:1", "master name: missing"},
       }) {
    r = Run({"-u", b.url, "PING"});
    EXPECT_EQ(r.exit_code, 2) << b.url;
    EXPECT_THAT(r.err, HasSubstr(b.message)) << b.url;
    ExpectOneLine(r.err);
  }
  // rediss:// to a port that does not speak TLS: the handshake fails
  // (exit 1), and the message does not quote the password.
  r = Run(
      {"--retry", "0", "-u", "rediss://:secret@127.0.0.1:" + port_, "PING"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("TLS handshake"));
  EXPECT_THAT(r.err, Not(HasSubstr("secret")));
  // The TLS flags need TLS.
  r = Run({"--cacert", "/ca.pem", "-p", port_, "PING"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("need --tls"));
  // No message quotes the password, whatever the mistake.
  r = Run({"-u", "redis://u:Hunter2Pass@127.0.0.1:0", "PING"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, Not(HasSubstr("Hunter2Pass")));
}

TEST_F(SiftBfOptionsTest, PasswordFile) {
  TempDir dir;
  const std::string file = dir.path() + "/pw";
  {
    std::ofstream out(file);
    out << "secret\n";
  }
  ToolResult r = Run({"-p", port_, "--password_file", file, "PING"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "PONG\n");
  r = Run({"-p", port_, "--password_file", dir.path() + "/none", "PING"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("cannot read the password file"));
}

TEST(SiftProbeFormsTest, CommonForms) {
  TempDir dir;
  ExpectCommonForms(FindTool("tools/sift_probe"), "sift_probe", "--batch",
                    {"--redis=127.0.0.1:1", "--name=n", "--batch=abc"},
                    dir.path());
}

// redis-cli's TLS flags, and -u rediss://, against redis-server --tls-port
// with a CA made by the test.
TEST(SiftBfTlsTest, TlsFlagsAndUrl) {
  SIFTDB_REQUIRE_REDIS_TLS();
  unsetenv("REDISCLI_AUTH");
  const std::string tool = FindTool("tools/sift_bf");
  ASSERT_FALSE(tool.empty()) << "sift_bf is not built";
  TempDir dir;
  auto files = MakeTestTlsFiles(dir.path());
  ASSERT_TRUE(files.ok()) << files.status();
  auto tls = StartTlsRedisServer(*files, "optional", {"--requirepass", "pw"});
  ASSERT_TRUE(tls.ok()) << tls.status();
  const std::string port = std::to_string(tls->tls_port);
  auto run = [&](std::vector<std::string> args) {
    args.insert(args.begin(), {"--retry", "0", "-a", "pw"});
    return RunTool(tool, args, dir.path());
  };
  ToolResult r = run(
      {"--tls", "--cacert", files->ca_cert, "-p", port, "BF.ADD", "f", "x"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "1\n");
  r = run({"-u", "rediss://127.0.0.1:" + port + "?ca_cert=" + files->ca_cert,
           "BF.EXISTS", "f", "x"});
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(r.out, "1\n");
  r = run({"--tls", "--cacert", files->other_ca_cert, "-p", port, "PING"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("certificate verify failed"));
  r = run({"--tls", "--cacert", files->other_ca_cert, "--insecure", "-p", port,
           "PING"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "PONG\n");
  r = run({"--tls", "--cacert", files->ca_cert, "--sni", "localhost", "--cert",
           files->client_cert, "--key", files->client_key, "-p", port, "PING"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

}  // namespace sift_bf_test
}  // namespace siftdb::test
