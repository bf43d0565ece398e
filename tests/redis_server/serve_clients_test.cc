// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Real client programs against the BF.* server: redis-cli runs every
// recorded RedisBloom command (its printed reply must be redis-cli's text
// for RedisBloom's reply), and redis-py (Debian's python3-redis) drives the
// `sift_bf --serve` program itself through serve_redis_py.py.

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>

#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/redis_server/serve_test_util.h"
#include "tests/support/paths.h"
#include "tools/sift_bf/redis_cli_text.h"

extern char** environ;

namespace siftdb::test {
namespace serve_clients_test {

std::string ShellQuote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

// redis-cli's stdout for one command (its human format, --no-raw).
std::string RedisCli(int port, const std::vector<std::string>& argv) {
  std::string cmd = absl::StrCat(ShellQuote(RedisServer::FindCli()), " -p ",
                                 port, " --no-raw");
  for (const std::string& a : argv) cmd += " " + ShellQuote(a);
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) return "popen failed";
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), p)) > 0) out.append(buf, n);
  pclose(p);
  return out;
}

bool HasNul(const std::vector<std::string>& argv) {
  for (const std::string& a : argv) {
    if (a.find('\0') != std::string::npos) return true;
  }
  return false;
}

TEST_F(ServeTest, BloomServeRedisCliGetsEveryRecordedReply) {
  // scripts/setup.sh installs both: a missing one is a failure, not a skip.
  ASSERT_FALSE(RedisServer::FindCli().empty())
      << "redis-cli not found (Debian's redis-tools)";
  JsonValue all = LoadVector("replies.json");
  int ran = 0;
  for (const JsonValue& cs : all["cases"].array()) {
    SCOPED_TRACE(cs["name"].str() + ": " + cs["command"].str());
    std::vector<std::vector<std::string>> steps;
    std::vector<RedisReply> wants;
    for (const JsonValue& step : cs["setup"].array()) {
      std::vector<std::string> args = JsonStrings(step["args"]);
      if (args.size() == 3 && args[0] == "SET") {
        args[1] = RedisBloom::MetaKey(args[1]);
      }
      steps.push_back(args);
      wants.push_back(JsonToReply(step["reply"]));
    }
    steps.push_back(JsonStrings(cs["args"]));
    wants.push_back(JsonToReply(cs["reply"]));
    bool nul = false;
    for (const auto& s : steps) nul = nul || HasNul(s);
    if (nul) continue;  // a process argument cannot hold NUL bytes
    ASSERT_TRUE(server_->FlushAll().ok());
    for (size_t i = 0; i < steps.size(); i++) {
      EXPECT_EQ(RedisCli(serve_->port(), steps[i]), FormatReplyTty(wants[i]))
          << steps[i][0];
    }
    ran++;
  }
  EXPECT_GE(ran, 70);
}

// Starts `sift_bf --redis ... --serve 127.0.0.1:PORT`; waits until it
// accepts connections.
class SiftBfServe {
 public:
  SiftBfServe(const std::string& redis, int port) {
    const std::string bin = BinaryDir() + "/tools/sift_bf";
    const std::string serve = absl::StrCat("127.0.0.1:", port);
    std::vector<std::string> args = {bin, "--redis", redis, "--serve", serve};
    std::vector<char*> argv;
    for (std::string& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, bin.c_str(), nullptr, nullptr, argv.data(),
                    environ) != 0) {
      pid_ = -1;
      return;
    }
    for (int i = 0; i < 200 && !ready_; i++) {
      ready_ = RawSocket(port).connected();
      if (!ready_) absl::SleepFor(absl::Milliseconds(50));
    }
  }
  ~SiftBfServe() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
  }
  bool ready() const { return ready_; }
  // SIGTERM; the exit status (0 expected).
  int Stop() {
    int status = -1;
    kill(pid_, SIGTERM);
    waitpid(pid_, &status, 0);
    pid_ = -1;
    return status;
  }

 private:
  pid_t pid_ = -1;
  bool ready_ = false;
};

std::string Python() {
  // Debian's interpreter is where python3-redis lives.
  return access("/usr/bin/python3", X_OK) == 0 ? "/usr/bin/python3" : "python3";
}

TEST_F(ServeTest, BloomServeRedisPyDrivesSiftBfServe) {
  const std::string py = Python();
  ASSERT_EQ(std::system((py + " -c 'import redis' 2>/dev/null").c_str()), 0)
      << "python3-redis not installed (scripts/setup.sh installs it)";
  const int port = RedisServer::PickFreePort();
  SiftBfServe serve(server_->endpoint(), port);
  ASSERT_TRUE(serve.ready()) << "sift_bf --serve did not start";
  const std::string cmd = absl::StrCat(py, " ", SourceDir(),
                                       "/tests/redis_server/serve_redis_py.py ",
                                       port, " ", RedisBloomTestDataDir());
  EXPECT_EQ(std::system(cmd.c_str()), 0) << cmd;
  const int status = serve.Stop();
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << status;
}

}  // namespace serve_clients_test
}  // namespace siftdb::test
