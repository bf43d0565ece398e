// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/support/redis_server.h"

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"

namespace siftdb::test {

namespace {

bool IsExecutable(const std::string& path) {
  return !path.empty() && access(path.c_str(), X_OK) == 0;
}

std::string FindProgram(const std::string& name) {
  const char* path = std::getenv("PATH");
  if (path != nullptr) {
    for (absl::string_view dir : absl::StrSplit(path, ':')) {
      if (dir.empty()) continue;
      std::string candidate = absl::StrCat(dir, "/", name);
      if (IsExecutable(candidate)) return candidate;
    }
  }
  for (const char* dir : {"/usr/bin", "/usr/local/bin"}) {
    std::string candidate = absl::StrCat(dir, "/", name);
    if (IsExecutable(candidate)) return candidate;
  }
  return "";
}

bool PortFree(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  bool ok = bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return ok;
}

int BindPortZero() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    socklen_t len = sizeof(addr);
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
      port = ntohs(addr.sin_port);
    }
  }
  close(fd);
  return port;
}

std::string ReadTail(const std::string& path, size_t max_bytes = 2000) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return "(no log)";
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  return all.size() > max_bytes ? all.substr(all.size() - max_bytes) : all;
}

std::string RenderReply(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STRING:
    case REDIS_REPLY_STATUS:
    case REDIS_REPLY_ERROR:
      return std::string(r->str, r->len);
    case REDIS_REPLY_INTEGER:
      return absl::StrCat(r->integer);
    case REDIS_REPLY_ARRAY: {
      std::string out;
      for (size_t i = 0; i < r->elements; i++) {
        if (i > 0) out += "\n";
        out += RenderReply(r->element[i]);
      }
      return out;
    }
    default:
      return "";
  }
}

// Runs argv[0] with argv, stdout+stderr into `log`, killing it after
// `timeout`. Returns its exit status.
absl::Status RunProgram(const std::vector<std::string>& argv,
                        const std::string& log, absl::Duration timeout) {
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int fd = open(log.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    if (fd >= 0) {
      dup2(fd, 1);
      dup2(fd, 2);
    }
    int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) dup2(null_fd, 0);
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  absl::Time deadline = absl::Now() + timeout;
  while (true) {
    int status = 0;
    pid_t r = waitpid(pid, &status, WNOHANG);
    if (r == pid) {
      if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
        return absl::OkStatus();
      return absl::InternalError(absl::StrFormat(
          "%s exited with status %d: %s", argv[0], status, ReadTail(log)));
    }
    if (absl::Now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return absl::DeadlineExceededError(
          absl::StrFormat("%s did not finish within %s: %s", argv[0],
                          absl::FormatDuration(timeout), ReadTail(log)));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

std::string RequirePass(const std::vector<std::string>& args) {
  for (size_t i = 0; i + 1 < args.size(); i++) {
    if (args[i] == "--requirepass") return args[i + 1];
  }
  return "";
}

}  // namespace

std::string RedisServer::FindBinary() { return FindProgram("redis-server"); }
std::string RedisServer::FindCli() { return FindProgram("redis-cli"); }

int RedisServer::PickFreePort(bool with_bus) {
  for (int attempt = 0; attempt < 100; attempt++) {
    int port = BindPortZero();
    if (port <= 0) continue;
    if (!with_bus) return port;
    if (port + 10000 <= 65535 && PortFree(port + 10000)) return port;
  }
  return -1;
}

RedisServer::RedisServer(RedisServerOptions options, int port, std::string dir,
                         bool owns_dir)
    : options_(std::move(options)),
      port_(port),
      dir_(std::move(dir)),
      owns_dir_(owns_dir) {}

RedisServer::~RedisServer() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    int status;
    waitpid(pid_, &status, 0);
    pid_ = -1;
  }
  if (owns_dir_) {
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
}

std::string RedisServer::endpoint() const {
  return absl::StrCat("127.0.0.1:", port_);
}

absl::StatusOr<std::unique_ptr<RedisServer>> RedisServer::Start(
    RedisServerOptions options) {
  if (FindBinary().empty()) {
    return absl::FailedPreconditionError("redis-server not found");
  }
  absl::Status last;
  for (int attempt = 0; attempt < 3; attempt++) {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl =
        std::string(base != nullptr ? base : "/tmp") + "/siftdb-redis-XXXXXX";
    char* made = mkdtemp(tmpl.data());
    if (made == nullptr) {
      return absl::InternalError("mkdtemp failed for " + tmpl);
    }
    // A cluster node also listens on port + 10000 (its bus), so redis-server
    // refuses ports above 55535; pick one whose bus port is free too.
    const bool cluster =
        std::find(options.extra_args.begin(), options.extra_args.end(),
                  "--cluster-enabled") != options.extra_args.end();
    int port = options.port != 0 ? options.port : PickFreePort(cluster);
    if (port <= 0) return absl::InternalError("no free port");
    std::unique_ptr<RedisServer> server(
        new RedisServer(options, port, made, /*owns_dir=*/true));
    last = server->Spawn();
    if (last.ok()) last = server->WaitForPing();
    if (last.ok()) return server;
    if (options.port != 0) break;  // a fixed port will not get better
  }
  return last;
}

absl::Status RedisServer::Spawn() {
  std::string binary = FindBinary();
  std::vector<std::string> argv = {
      binary, "--port", absl::StrCat(port_), "--bind", "127.0.0.1", "--save",
      "", "--appendonly", "no", "--dir", dir_, "--logfile", "redis.log",
      "--daemonize", "no",
      // A replica's full sync starts at once, not after the default 5 s
      // wait for more replicas to share a diskless transfer.
      "--repl-diskless-sync-delay", "0"};
  if (!options_.sentinel_config.empty()) {
    const std::string conf = dir_ + "/sentinel.conf";
    if (!std::filesystem::exists(conf)) {  // a restart keeps its rewrites
      std::ofstream out(conf);
      for (const std::string& line : options_.sentinel_config) {
        out << line << "\n";
      }
      if (!out) return absl::InternalError("cannot write " + conf);
    }
    argv = {
        binary,      conf,          "--sentinel", "--port", absl::StrCat(port_),
        "--bind",    "127.0.0.1",   "--dir",      dir_,     "--logfile",
        "redis.log", "--daemonize", "no"};
  }
  for (const std::string& a : options_.extra_args) argv.push_back(a);
  pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    int null_fd = open("/dev/null", O_RDWR);
    if (null_fd >= 0) {
      dup2(null_fd, 0);
      dup2(null_fd, 1);
    }
    std::vector<char*> args;
    for (const std::string& a : argv)
      args.push_back(const_cast<char*>(a.c_str()));
    args.push_back(nullptr);
    execv(args[0], args.data());
    _exit(127);
  }
  pid_ = pid;
  return absl::OkStatus();
}

absl::Status RedisServer::WaitForPing() {
  absl::Time deadline = absl::Now() + options_.start_timeout;
  while (true) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::InternalError(
          absl::StrFormat("redis-server on port %d exited (status %d): %s",
                          port_, status, ReadTail(dir_ + "/redis.log")));
    }
    timeval tv{0, 200000};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
    if (c != nullptr && c->err == 0) {
      redisSetTimeout(c, tv);
      auto* r = static_cast<redisReply*>(redisCommand(c, "PING"));
      bool up = false;
      if (r != nullptr) {
        std::string text(r->str != nullptr ? r->str : "", r->len);
        up = text == "PONG" || absl::StartsWith(text, "NOAUTH");
        freeReplyObject(r);
      }
      redisFree(c);
      if (up) return absl::OkStatus();
    } else if (c != nullptr) {
      redisFree(c);
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(absl::StrFormat(
          "redis-server on port %d did not answer PING within %s: %s", port_,
          absl::FormatDuration(options_.start_timeout),
          ReadTail(dir_ + "/redis.log")));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

absl::Status RedisServer::WaitForExit(absl::Duration timeout) {
  absl::Time deadline = absl::Now() + timeout;
  while (pid_ > 0) {
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      return absl::OkStatus();
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrFormat("redis-server on port %d did not exit", port_));
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  return absl::OkStatus();
}

absl::Status RedisServer::Stop(bool save) {
  if (pid_ <= 0) return absl::OkStatus();
  // SHUTDOWN closes the connection without a reply; ignore the result.
  (void)Call({"SHUTDOWN", save ? "SAVE" : "NOSAVE"});
  absl::Status s = WaitForExit(absl::Seconds(15));
  if (!s.ok()) {
    Kill().IgnoreError();
    return s;
  }
  return absl::OkStatus();
}

absl::Status RedisServer::Kill() {
  if (pid_ <= 0) return absl::OkStatus();
  kill(pid_, SIGKILL);
  int status;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return absl::OkStatus();
}

absl::Status RedisServer::StartAgain() {
  if (pid_ > 0) return absl::FailedPreconditionError("server still running");
  absl::Status s = Spawn();
  if (s.ok()) s = WaitForPing();
  return s;
}

absl::Status RedisServer::Restart(bool keep_data) {
  absl::Status s = Stop(keep_data);
  if (!s.ok()) return s;
  if (!keep_data) {
    std::error_code ec;
    std::filesystem::remove(dir_ + "/dump.rdb", ec);
  }
  return StartAgain();
}

absl::StatusOr<std::string> RedisServer::Call(
    const std::vector<std::string>& argv) {
  absl::StatusOr<std::vector<std::string>> r = CallAll({argv});
  if (!r.ok()) return r.status();
  return std::move((*r)[0]);
}

absl::StatusOr<std::vector<std::string>> RedisServer::CallAll(
    const std::vector<std::vector<std::string>>& commands) {
  timeval tv{5, 0};
  redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
  if (c == nullptr || c->err != 0) {
    std::string err = c != nullptr ? c->errstr : "out of memory";
    if (c != nullptr) redisFree(c);
    return absl::UnavailableError(
        absl::StrFormat("redis 127.0.0.1:%d: connect: %s", port_, err));
  }
  redisSetTimeout(c, tv);
  std::string pass = RequirePass(options_.extra_args);
  if (!pass.empty()) {
    auto* r =
        static_cast<redisReply*>(redisCommand(c, "AUTH %s", pass.c_str()));
    if (r != nullptr) freeReplyObject(r);
  }
  std::vector<std::string> out;
  for (const std::vector<std::string>& argv : commands) {
    std::vector<const char*> ptrs;
    std::vector<size_t> lens;
    for (const std::string& a : argv) {
      ptrs.push_back(a.data());
      lens.push_back(a.size());
    }
    auto* r = static_cast<redisReply*>(redisCommandArgv(
        c, static_cast<int>(argv.size()), ptrs.data(), lens.data()));
    if (r == nullptr) {
      std::string err = c->errstr;
      redisFree(c);
      return absl::UnavailableError(
          absl::StrFormat("redis 127.0.0.1:%d: %s: %s", port_,
                          argv.empty() ? "" : argv[0], err));
    }
    out.push_back(RenderReply(r));
    freeReplyObject(r);
  }
  redisFree(c);
  return out;
}

absl::Status RedisServer::FlushAll() {
  absl::StatusOr<std::string> r = Call({"FLUSHALL"});
  if (!r.ok()) return r.status();
  if (*r != "OK") return absl::InternalError("FLUSHALL: " + *r);
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RedisServer>> RedisServer::StartReplica() {
  RedisServerOptions opts;
  opts.extra_args = {"--replicaof", "127.0.0.1", absl::StrCat(port_)};
  std::string pass = RequirePass(options_.extra_args);
  if (!pass.empty()) {
    opts.extra_args.push_back("--masterauth");
    opts.extra_args.push_back(pass);
  }
  absl::StatusOr<std::unique_ptr<RedisServer>> replica = Start(opts);
  if (!replica.ok()) return replica.status();
  absl::Time deadline = absl::Now() + absl::Seconds(15);
  while (true) {
    absl::StatusOr<std::string> info =
        (*replica)->Call({"INFO", "replication"});
    if (info.ok() && absl::StrContains(*info, "master_link_status:up")) {
      break;
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          "replica did not connect to its master within 15s");
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
  absl::Status s = WaitForReplicas(absl::Seconds(15));
  if (!s.ok()) return s;
  return replica;
}

absl::Status RedisServer::ReplicateAll(int replicas, absl::Duration timeout) {
  // WAIT waits for its own connection's writes (on a connection that wrote
  // nothing it returns at once), and the stream is ordered: a write that
  // leaves nothing behind, then WAIT, on one connection.
  const std::string count = absl::StrCat(replicas);
  absl::StatusOr<std::vector<std::string>> r =
      CallAll({{"SET", "siftdb-test:fence", "1"},
               {"DEL", "siftdb-test:fence"},
               {"WAIT", count,
                absl::StrCat(std::max<int64_t>(
                    1, absl::ToInt64Milliseconds(timeout)))}});
  if (!r.ok()) return r.status();
  if ((*r)[2] != count) {
    return absl::DeadlineExceededError(
        absl::StrFormat("redis %s: WAIT %s: %s replicas acknowledged",
                        endpoint(), count, (*r)[2]));
  }
  return absl::OkStatus();
}

absl::Status RedisServer::WaitForReplicas(absl::Duration timeout) {
  // After a full sync the master streams writes to a replica only once the
  // replica has acknowledged (it does so about once a second), and until
  // then WAIT does not count it: wait until WAIT counts every replica.
  const absl::Time deadline = absl::Now() + timeout;
  while (true) {
    absl::StatusOr<std::string> info = Call({"INFO", "replication"});
    std::string connected;
    if (info.ok()) {
      for (absl::string_view line : absl::StrSplit(*info, '\n')) {
        line = absl::StripSuffix(line, "\r");
        if (absl::ConsumePrefix(&line, "connected_slaves:")) {
          connected = std::string(line);
        }
      }
    }
    if (!connected.empty() && connected != "0") {
      int n = 0;
      if (absl::SimpleAtoi(connected, &n) &&
          ReplicateAll(n, absl::Seconds(1)).ok()) {
        return absl::OkStatus();
      }
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrFormat("redis %s: replicas not acknowledging within %s",
                          endpoint(), absl::FormatDuration(timeout)));
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
}

absl::StatusOr<std::unique_ptr<RedisCluster>> RedisCluster::Start(int masters) {
  std::string cli = RedisServer::FindCli();
  if (cli.empty()) return absl::FailedPreconditionError("redis-cli not found");
  if (masters < 3) {
    return absl::InvalidArgumentError("a Redis Cluster needs >= 3 masters");
  }
  std::unique_ptr<RedisCluster> cluster(new RedisCluster());
  for (int i = 0; i < masters; i++) {
    RedisServerOptions opts;
    opts.port = RedisServer::PickFreePort(/*with_bus=*/true);
    if (opts.port <= 0) return absl::InternalError("no free port pair");
    opts.extra_args = {"--cluster-enabled",      "yes",
                       "--cluster-config-file",  "nodes.conf",
                       "--cluster-node-timeout", "5000"};
    absl::StatusOr<std::unique_ptr<RedisServer>> node =
        RedisServer::Start(opts);
    if (!node.ok()) return node.status();
    cluster->nodes_.push_back(std::move(*node));
  }
  std::vector<std::string> argv = {cli, "--cluster", "create"};
  for (const std::string& ep : cluster->endpoints()) argv.push_back(ep);
  argv.push_back("--cluster-replicas");
  argv.push_back("0");
  argv.push_back("--cluster-yes");
  absl::Status s = RunProgram(argv, cluster->nodes_[0]->dir() + "/create.log",
                              absl::Seconds(60));
  if (!s.ok()) return s;
  absl::Time deadline = absl::Now() + absl::Seconds(30);
  for (const auto& node : cluster->nodes_) {
    while (true) {
      absl::StatusOr<std::string> info = node->Call({"CLUSTER", "INFO"});
      if (info.ok() && absl::StrContains(*info, "cluster_state:ok")) break;
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(absl::StrFormat(
            "cluster node %s not ok within 30s", node->endpoint()));
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  }
  return cluster;
}

absl::Status RedisCluster::MoveSlot(int slot, RedisServer* from,
                                    RedisServer* to, int keys_per_step,
                                    absl::Duration pause) {
  absl::StatusOr<std::string> from_id = from->Call({"CLUSTER", "MYID"});
  absl::StatusOr<std::string> to_id = to->Call({"CLUSTER", "MYID"});
  if (!from_id.ok()) return from_id.status();
  if (!to_id.ok()) return to_id.status();
  const std::string s = std::to_string(slot);
  auto expect_ok = [&](RedisServer* node, std::vector<std::string> argv,
                       const char* step) -> absl::Status {
    absl::StatusOr<std::string> r = node->Call(argv);
    if (!r.ok()) return r.status();
    if (*r != "OK") {
      return absl::InternalError(
          absl::StrFormat("moving slot %d: %s: %s", slot, step, *r));
    }
    return absl::OkStatus();
  };
  absl::Status st = expect_ok(
      to, {"CLUSTER", "SETSLOT", s, "IMPORTING", *from_id}, "IMPORTING");
  if (!st.ok()) return st;
  st = expect_ok(from, {"CLUSTER", "SETSLOT", s, "MIGRATING", *to_id},
                 "MIGRATING");
  if (!st.ok()) return st;
  while (true) {
    absl::StatusOr<std::string> keys = from->Call(
        {"CLUSTER", "GETKEYSINSLOT", s, std::to_string(keys_per_step)});
    if (!keys.ok()) return keys.status();
    if (keys->empty()) break;
    std::vector<std::string> argv = {
        "MIGRATE", "127.0.0.1", std::to_string(to->port()), "", "0", "5000",
        "REPLACE", "KEYS"};
    for (absl::string_view k : absl::StrSplit(*keys, '\n')) {
      argv.emplace_back(k);
    }
    absl::StatusOr<std::string> r = from->Call(argv);
    if (!r.ok()) return r.status();
    absl::SleepFor(pause);
  }
  for (RedisServer* node : {to, from}) {
    st = expect_ok(node, {"CLUSTER", "SETSLOT", s, "NODE", *to_id}, "NODE");
    if (!st.ok()) return st;
  }
  for (const auto& node : nodes_) {
    if (node.get() == to || node.get() == from) continue;
    node->Call({"CLUSTER", "SETSLOT", s, "NODE", *to_id}).IgnoreError();
  }
  return absl::OkStatus();
}

std::vector<std::string> RedisCluster::endpoints() const {
  std::vector<std::string> out;
  for (const auto& node : nodes_) out.push_back(node->endpoint());
  return out;
}

}  // namespace siftdb::test
