// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// LocalRedis: a redis-server child process for the Redis benches, on a
// loopback port, optionally with a TLS port beside it (bench_tls.h), with
// extra flags (--replicaof ...) or as a Sentinel (local_sentinel.h), killed
// and its directory removed when the object goes.
//
// Thread safety: one object per bench process, used from its main thread.

#ifndef SIFTDB_BENCH_LOCAL_REDIS_H_
#define SIFTDB_BENCH_LOCAL_REDIS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <hiredis.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_tls.h"

namespace siftdb::bench {

struct LocalRedisOptions {
  // Also a TLS port (port + 1) with a self-signed certificate.
  bool tls = false;
  // Where the port choice starts (benches run side by side pick different
  // bases); ignored with free_port.
  int port_base = 20000;
  // A port the kernel reports free (several servers of one bench).
  bool free_port = false;
  // Appended to the command line, e.g. {"--replicaof", "127.0.0.1", "P"}.
  std::vector<std::string> extra_args;
  // Not empty: run as a Sentinel (redis-server CONF --sentinel) whose
  // configuration file starts with these lines.
  std::vector<std::string> sentinel_config;
};

// A loopback TCP port nothing listens on now (0 when none is found).
inline int FreeLoopbackPort() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return 0;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = 0;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

class LocalRedis {
 public:
  LocalRedis() = default;
  LocalRedis(const LocalRedis&) = delete;
  LocalRedis& operator=(const LocalRedis&) = delete;

  // With `tls`, also a TLS port (port + 1) with a self-signed certificate.
  // port_base: where this bench's port choice starts (benches run side by
  // side pick different bases).
  bool Start(bool tls = false, int port_base = 20000) {
    LocalRedisOptions options;
    options.tls = tls;
    options.port_base = port_base;
    return Start(options);
  }
  bool Start(const LocalRedisOptions& options) {
    char tmpl[] = "/tmp/siftdb-bench-redis-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return false;
    dir_ = tmpl;
    tls_ = options.tls;
    if (tls_ && !MakeSelfSignedCert(dir_)) {
      std::fprintf(stderr, "openssl could not make a certificate\n");
      return false;
    }
    const std::string conf = dir_ + "/sentinel.conf";
    if (!options.sentinel_config.empty()) {
      FILE* f = std::fopen(conf.c_str(), "w");
      if (f == nullptr) return false;
      for (const std::string& line : options.sentinel_config) {
        std::fprintf(f, "%s\n", line.c_str());
      }
      if (std::fclose(f) != 0) return false;
    }
    for (int attempt = 0; attempt < 5 && pid_ <= 0; attempt++) {
      port_ = options.free_port
                  ? FreeLoopbackPort()
                  : options.port_base + static_cast<int>(getpid() % 20000) +
                        attempt * 7;
      std::vector<std::string> args = {"redis-server"};
      if (!options.sentinel_config.empty()) {
        args.insert(args.end(), {conf, "--sentinel"});
      } else {
        args.insert(args.end(), {"--save", "", "--appendonly", "no"});
      }
      args.insert(args.end(), {"--port", absl::StrCat(port_), "--bind",
                               "127.0.0.1", "--dir", dir_});
      if (tls_) {
        for (const std::string& t : TlsServerArgs(dir_, port_ + 1)) {
          args.push_back(t);
        }
      }
      args.insert(args.end(), options.extra_args.begin(),
                  options.extra_args.end());
      pid_ = fork();
      if (pid_ == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null_fd = open("/dev/null", O_RDWR);
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        dup2(null_fd, 2);
        std::vector<char*> argv;
        for (std::string& arg : args) argv.push_back(arg.data());
        argv.push_back(nullptr);
        execvp("redis-server", argv.data());
        _exit(127);
      }
      for (int i = 0; i < 200; i++) {
        usleep(20000);
        int status;
        if (waitpid(pid_, &status, WNOHANG) == pid_) {
          pid_ = -1;
          break;
        }
        timeval tv{0, 200000};
        redisContext* c = redisConnectWithTimeout("127.0.0.1", port_, tv);
        bool up = c != nullptr && c->err == 0;
        if (c != nullptr) redisFree(c);
        if (up) return true;
      }
    }
    return false;
  }
  ~LocalRedis() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) std::filesystem::remove_all(dir_);
  }
  std::string endpoint() const { return absl::StrCat("127.0.0.1:", port_); }
  int port() const { return port_; }
  // rediss:// to the TLS port (Start(true) only).
  std::string tls_url() const { return TlsUrl(dir_, port_ + 1); }

 private:
  bool tls_ = false;
  std::string dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_LOCAL_REDIS_H_
