// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// BloomServer: a RESP2 server that answers BF.* and CBF.* (RedisBloom
// 2.8.20's replies, redis/bloom/redis_bloom_command.h) on top of plain
// Redis and passes every other command through, so redis-cli, redis-py's
// r.bf(), Jedis or Redisson use Bloom filters on a Redis without modules.
// `sift_bf --serve=HOST:PORT` runs one (docs/redis_bloom.md, "The BF.*
// server").
//
// Guarantees:
//   * Each client has its own upstream connection: MULTI/EXEC, WATCH,
//     SELECT, SUBSCRIBE, blocking commands behave as against Redis.
//   * A client's replies come in the order of its requests.
//   * BF.* requests run as the Redis user the client authenticated as
//     (AUTH, verified by Redis on the client's own upstream connection) on
//     its selected database; concurrent BF.ADD / BF.MADD (and BF.EXISTS /
//     BF.MEXISTS) of one user, database and filter are group-committed
//     into one MAdd (MExists) call, never mixing users or databases
//     (redis/server/bloom_batcher.h), each client getting the reply
//     RedisBloom gives for its own command.
//   * HELLO 3 is refused with NOPROTO (clients stay on RESP2), BF.* inside
//     MULTI with an error. Bounded memory per connection; a malformed
//     request gets Redis's protocol error and the connection is closed
//     (redis/server/server_connection.h).
// Limits: upstream TLS and Sentinel are not supported (plain TCP or a unix
// socket); after SUBSCRIBE or MONITOR a connection is a plain pipe.
//
// Thread safety: Start/Stop/accessors from any one thread. The server runs
// one event-loop thread (libevent) and BloomServerOptions::threads workers.

#ifndef SIFTDB_REDIS_SERVER_BLOOM_SERVER_H_
#define SIFTDB_REDIS_SERVER_BLOOM_SERVER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "redis/client/redis_client.h"
#include "redis/server/bloom_batcher.h"
#include "redis/server/server_connection.h"
#include "util/mutex.h"

struct event;
struct evconnlistener;

namespace siftdb {

struct BloomServerOptions {
  // Where to listen: "HOST:PORT" (IPv4 or [IPv6]); port 0 picks one.
  std::string listen = "127.0.0.1:0";
  // Upstream Redis: endpoint ("host:port" or a unix socket path), initial
  // credentials and database of every client connection (as if each had
  // sent AUTH and SELECT), timeouts.
  RedisClientOptions upstream;
  // Worker threads running BF.* batches.
  int threads = 4;
  // BF.* batches of one user and database running at once (at most
  // threads): more overlaps round trips, fewer makes larger batches.
  int lane_batches = 1;
  int max_clients = 10000;
  ServerLimits limits;
};

class BloomServer {
 public:
  // Binds, starts the loop and the workers.
  static absl::StatusOr<std::unique_ptr<BloomServer>> Start(
      BloomServerOptions options);

  BloomServer(const BloomServer&) = delete;
  BloomServer& operator=(const BloomServer&) = delete;
  ~BloomServer();  // Stop()

  // Closes every connection and stops the threads; idempotent.
  void Stop();

  int port() const { return port_; }
  // BF.* batches run and the requests they held.
  // (After Stop: the final counts.)
  uint64_t batches() const {
    return batcher_ != nullptr ? batcher_->batches() : final_batches_;
  }
  uint64_t batched_requests() const {
    return batcher_ != nullptr ? batcher_->batched_requests()
                               : final_batched_requests_;
  }

 private:
  explicit BloomServer(BloomServerOptions options);

  absl::Status Init();
  static void OnAccept(evconnlistener* listener, int fd, sockaddr* addr,
                       int len, void* arg);
  static void OnWake(int fd, short what, void* arg);
  // Lowest priority: runs after every client read of the loop's round.
  static void OnSubmit(int fd, short what, void* arg);
  // Batcher callback (worker threads).
  void OnReplies(std::vector<BloomReply> replies);

  const BloomServerOptions options_;
  ServerContext context_;
  std::unique_ptr<BloomBatcher> batcher_;
  evconnlistener* listener_ = nullptr;
  event* wake_ = nullptr;
  event* submit_ = nullptr;
  std::vector<BloomRequest> to_submit_;  // loop thread
  int port_ = 0;
  uint64_t final_batches_ = 0;
  uint64_t final_batched_requests_ = 0;
  std::thread loop_;
  std::atomic<bool> stopped_{false};
  uint64_t next_id_ = 1;  // loop thread
  absl::flat_hash_map<uint64_t, std::unique_ptr<ServerConnection>>
      connections_;  // loop thread
  Mutex mu_;
  std::vector<BloomReply> replies_ ABSL_GUARDED_BY(mu_);
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_SERVER_BLOOM_SERVER_H_
