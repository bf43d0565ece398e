// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/sift_bf/serve.h"

#include <signal.h>

#include <cstdio>

#include "redis/server/bloom_server.h"

namespace siftdb::sift_bf {

int Serve(const std::string& listen, int threads,
          const RedisClientOptions& upstream) {
  // Block the stop signals in every thread, then wait for one here.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);

  BloomServerOptions options;
  options.listen = listen;
  options.upstream = upstream;
  options.threads = threads;
  absl::StatusOr<std::unique_ptr<BloomServer>> server =
      BloomServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "sift_bf: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  const size_t colon = listen.rfind(':');
  std::printf("sift_bf: serving BF.* on %s:%d for %s\n",
              listen.substr(0, colon).c_str(), (*server)->port(),
              upstream.endpoint.c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  (*server)->Stop();
  return 0;
}

}  // namespace siftdb::sift_bf
