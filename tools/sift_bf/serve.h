// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sift_bf --serve: runs a BloomServer (redis/server/bloom_server.h) in the
// foreground until SIGINT or SIGTERM.
//
// Thread safety: called once, from main.

#ifndef SIFTDB_TOOLS_SIFT_BF_SERVE_H_
#define SIFTDB_TOOLS_SIFT_BF_SERVE_H_

#include <string>

#include "redis/client/redis_client.h"

namespace siftdb::sift_bf {

// Listens on `listen` ("HOST:PORT"), prints "sift_bf: serving BF.* on
// HOST:PORT for REDIS" once bound, and returns the exit status.
int Serve(const std::string& listen, int threads, int lane_batches,
          const RedisClientOptions& upstream);

}  // namespace siftdb::sift_bf

#endif  // SIFTDB_TOOLS_SIFT_BF_SERVE_H_
