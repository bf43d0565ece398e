// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/db_crashtest/redis_faults.h"

#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <thread>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/client/redis_client.h"

namespace siftdb::crashtest {
namespace {

void SleepMs(uint64_t ms) {
  std::this_thread::sleep_for(std::chrono::milliseconds(ms));
}

// A port on 127.0.0.1 that was free a moment ago.
int FreePort() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = 0;
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

}  // namespace

const char* RedisFaultName(RedisFault fault) {
  switch (fault) {
    case RedisFault::kNone:
      return "none";
    case RedisFault::kOlderSnapshot:
      return "older-snapshot";
    case RedisFault::kRestartEmpty:
      return "restart-empty";
    case RedisFault::kFlushAll:
      return "flushall";
    case RedisFault::kLeaseDeleted:
      return "lease-deleted";
    case RedisFault::kClientsPaused:
      return "clients-paused";
    case RedisFault::kCrashTogether:
      return "crash-together";
    case RedisFault::kNumKinds:
      break;
  }
  return "?";
}

RedisFault DrawRedisFault(Random* rnd) {
  return static_cast<RedisFault>(
      rnd->Uniform(static_cast<uint32_t>(RedisFault::kNumKinds)));
}

ManagedRedis::ManagedRedis(std::string binary, std::string dir, int port)
    : binary_(std::move(binary)), dir_(std::move(dir)), port_(port) {}

ManagedRedis::~ManagedRedis() { Kill().IgnoreError(); }

absl::StatusOr<std::unique_ptr<ManagedRedis>> ManagedRedis::Start(
    const std::string& binary, const std::string& dir) {
  std::error_code ec;
  std::filesystem::create_directories(dir, ec);
  if (ec) {
    return absl::InternalError(
        absl::StrFormat("cannot create %s: %s", dir, ec.message()));
  }
  const int port = FreePort();
  if (port <= 0) return absl::UnavailableError("no free loopback port");
  std::unique_ptr<ManagedRedis> redis(new ManagedRedis(binary, dir, port));
  absl::Status s = redis->Spawn();
  if (!s.ok()) return s;
  return redis;
}

std::string ManagedRedis::endpoint() const {
  return absl::StrCat("127.0.0.1:", port_);
}

absl::Status ManagedRedis::Spawn() {
  const std::vector<std::string> argv = {
      binary_,  "--port",    absl::StrCat(port_), "--bind",      "127.0.0.1",
      "--save", "",          "--appendonly",      "no",          "--dir",
      dir_,     "--logfile", "redis.log",         "--daemonize", "no"};
  const pid_t pid = fork();
  if (pid < 0) return absl::InternalError("fork failed");
  if (pid == 0) {
    std::vector<char*> cargv;
    for (const std::string& a : argv) {
      cargv.push_back(const_cast<char*>(a.c_str()));
    }
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  pid_ = pid;
  return WaitForPing();
}

absl::Status ManagedRedis::WaitForPing() {
  const auto deadline =
      std::chrono::steady_clock::now() + std::chrono::seconds(20);
  absl::Status last;
  while (std::chrono::steady_clock::now() < deadline) {
    last = Command({"PING"});
    if (last.ok()) return absl::OkStatus();
    SleepMs(20);
  }
  return absl::UnavailableError(
      absl::StrFormat("redis-server on %s did not answer PING: %s", endpoint(),
                      last.ToString()));
}

absl::Status ManagedRedis::Kill() {
  if (pid_ <= 0) return absl::OkStatus();
  kill(pid_, SIGKILL);
  int status = 0;
  waitpid(pid_, &status, 0);
  pid_ = -1;
  return absl::OkStatus();
}

absl::Status ManagedRedis::KillAndRestart(bool keep_dump) {
  absl::Status s = Kill();
  if (!s.ok()) return s;
  if (!keep_dump) {
    std::error_code ec;
    std::filesystem::remove(dir_ + "/dump.rdb", ec);
  }
  return Spawn();
}

absl::Status ManagedRedis::Command(const std::vector<std::string>& argv) {
  RedisClientOptions o;
  o.endpoint = endpoint();
  o.connect_timeout = absl::Seconds(1);
  o.command_timeout = absl::Seconds(10);
  o.retry_deadline = absl::ZeroDuration();
  auto client = RedisClient::Connect(o);
  if (!client.ok()) return client.status();
  auto reply = (*client)->Command(argv);
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    return (*client)->ServerErrorStatus(argv.empty() ? "" : argv[0], *reply);
  }
  return absl::OkStatus();
}

absl::Status InjectDuringRun(RedisFault fault, uint64_t run_ms,
                             const std::string& lease_key, Random* rnd,
                             ManagedRedis* redis) {
  const auto start = std::chrono::steady_clock::now();
  const uint32_t third =
      static_cast<uint32_t>(std::max<uint64_t>(run_ms / 3, 1));
  absl::Status s;
  SleepMs(rnd->Uniform(third));
  switch (fault) {
    case RedisFault::kNone:
      break;
    case RedisFault::kOlderSnapshot:
      s = redis->Command({"SAVE"});
      if (s.ok()) {
        SleepMs(rnd->Uniform(std::min<uint32_t>(third, 400)));
        s = redis->KillAndRestart(/*keep_dump=*/true);
      }
      break;
    case RedisFault::kRestartEmpty:
      s = redis->KillAndRestart(/*keep_dump=*/false);
      break;
    case RedisFault::kFlushAll:
      s = redis->Command({"FLUSHALL"});
      break;
    case RedisFault::kLeaseDeleted:
      s = redis->Command({"DEL", lease_key});
      break;
    case RedisFault::kClientsPaused:
      s = redis->Command(
          {"CLIENT", "PAUSE", absl::StrCat(200 + rnd->Uniform(1301)), "ALL"});
      break;
    case RedisFault::kCrashTogether:
      s = redis->Command({"SAVE"});
      break;
    case RedisFault::kNumKinds:
      break;
  }
  if (!s.ok()) {
    return absl::Status(
        s.code(), absl::StrFormat("injecting %s: %s", RedisFaultName(fault),
                                  s.message()));
  }
  const auto elapsed = std::chrono::duration_cast<std::chrono::milliseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  if (static_cast<uint64_t>(elapsed) < run_ms) SleepMs(run_ms - elapsed);
  return absl::OkStatus();
}

absl::Status AfterKill(RedisFault fault, ManagedRedis* redis) {
  if (fault != RedisFault::kCrashTogether) return absl::OkStatus();
  absl::Status s = redis->KillAndRestart(/*keep_dump=*/true);
  if (!s.ok()) {
    return absl::Status(
        s.code(), absl::StrFormat("crash-together restart: %s", s.message()));
  }
  return absl::OkStatus();
}

}  // namespace siftdb::crashtest
