// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// LocalRedis: a redis-server child process for the Redis benches, on a
// loopback port, optionally with a TLS port beside it (bench_tls.h), killed
// and its directory removed when the object goes.
//
// Thread safety: one object per bench process, used from its main thread.

#ifndef SIFTDB_BENCH_LOCAL_REDIS_H_
#define SIFTDB_BENCH_LOCAL_REDIS_H_

#include <fcntl.h>
#include <hiredis.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/bench_tls.h"

namespace siftdb::bench {

class LocalRedis {
 public:
  // With `tls`, also a TLS port (port + 1) with a self-signed certificate.
  // port_base: where this bench's port choice starts (benches run side by
  // side pick different bases).
  bool Start(bool tls = false, int port_base = 20000) {
    char tmpl[] = "/tmp/siftdb-bench-redis-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return false;
    dir_ = tmpl;
    tls_ = tls;
    if (tls && !MakeSelfSignedCert(dir_)) {
      std::fprintf(stderr, "openssl could not make a certificate\n");
      return false;
    }
    for (int attempt = 0; attempt < 5 && pid_ <= 0; attempt++) {
      port_ = port_base + static_cast<int>(getpid() % 20000) + attempt * 7;
      pid_ = fork();
      if (pid_ == 0) {
        prctl(PR_SET_PDEATHSIG, SIGKILL);
        int null_fd = open("/dev/null", O_RDWR);
        dup2(null_fd, 0);
        dup2(null_fd, 1);
        dup2(null_fd, 2);
        std::vector<std::string> args = {"redis-server",
                                         "--port",
                                         absl::StrCat(port_),
                                         "--bind",
                                         "127.0.0.1",
                                         "--save",
                                         "",
                                         "--appendonly",
                                         "no",
                                         "--dir",
                                         dir_};
        if (tls_) {
          for (const std::string& t : TlsServerArgs(dir_, port_ + 1)) {
            args.push_back(t);
          }
        }
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
