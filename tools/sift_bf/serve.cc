// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/sift_bf/serve.h"

#include <signal.h>

#include <cstdio>

#include "redis/server/bloom_server.h"

namespace siftdb::sift_bf {

int Serve(const std::string& listen, int threads, int lane_batches,
          const RedisClientOptions& upstream) {
  // Block the stop signals in every thread, then wait for one here.
  sigset_t stop;
  sigemptyset(&stop);
  sigaddset(&stop, SIGINT);
  sigaddset(&stop, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop, nullptr);
  signal(SIGPIPE, SIG_IGN);

  BloomServerOptions options;
  // "PORT" and ":PORT" listen on 127.0.0.1 (never on every interface
  // unless asked for, e.g. 0.0.0.0:6380).
  options.listen = listen;
  if (listen.find(':') == std::string::npos) {
    options.listen = "127.0.0.1:" + listen;
  } else if (listen[0] == ':') {
    options.listen = "127.0.0.1" + listen;
  }
  options.upstream = upstream;
  options.threads = threads;
  options.lane_batches = lane_batches;
  absl::StatusOr<std::unique_ptr<BloomServer>> server =
      BloomServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "sift_bf: %s\n",
                 std::string(server.status().message()).c_str());
    return 1;
  }
  const size_t colon = options.listen.rfind(':');
  std::printf("sift_bf: serving BF.* on %s:%d for %s\n",
              options.listen.substr(0, colon).c_str(), (*server)->port(),
              upstream.endpoint.c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&stop, &sig);
  (*server)->Stop();
  std::printf(
      "sift_bf: stopped after %llu BF.* batches holding %llu requests\n",
      static_cast<unsigned long long>((*server)->batches()),
      static_cast<unsigned long long>((*server)->batched_requests()));
  return 0;
}

}  // namespace siftdb::sift_bf
