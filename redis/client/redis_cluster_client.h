// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisConnection: one logical connection to "the Redis that holds a
// mirror", whether that is a standalone server, a replica, or a Redis
// Cluster. Every key of one siftdb mirror carries the hash tag {name}, so
// all of them live in one hash slot: a caller names a routing key and the
// whole pipeline goes to the node that serves that key's slot.
//
//   * Standalone / replica: a RedisClient (redis/client/redis_client.h).
//   * Redis Cluster: the slot map from CLUSTER SLOTS (asked of the seeds, then
//     of any known node), one RedisClient per node, the slot of a key by
//     CRC16-XMODEM of the key or of its non-empty {hash tag} (Redis Cluster
//     specification, "Keys distribution model"), -MOVED followed (the map is
//     refreshed and the redirected commands resent to the new owner), -ASK
//     followed for one command (ASKING first, map unchanged). Commands of a
//     pipeline that were redirected are resent in their original order;
//     commands that were answered are never resent.
//
// ConnectRedis picks the kind by asking the first reachable endpoint for
// CLUSTER SLOTS: an instance with cluster support disabled is standalone.
//
// Errors are absl::Status values that name the endpoint (see RedisClient);
// server error replies other than redirects are returned as kError replies,
// as RedisClient does.
//
// Thread safety: a RedisConnection is NOT thread-safe; one thread at a time.

#ifndef SIFTDB_REDIS_CLIENT_REDIS_CLUSTER_CLIENT_H_
#define SIFTDB_REDIS_CLIENT_REDIS_CLUSTER_CLIENT_H_

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_reply.h"

namespace siftdb {

inline constexpr int kRedisClusterSlots = 16384;

// CRC16-XMODEM (polynomial 0x1021, initial value 0, no reflection), the
// checksum Redis Cluster hashes keys with. RedisCrc16("123456789") == 0x31c3.
uint16_t RedisCrc16(std::string_view data);

// The hash slot of `key`: CRC16 of the part between the first '{' and the
// first '}' after it when that part is non-empty, else of the whole key,
// modulo 16384.
int RedisKeySlot(std::string_view key);

// A parsed -MOVED or -ASK redirect.
struct RedisRedirect {
  bool ask = false;  // -ASK (one command), else -MOVED (the slot moved)
  int slot = 0;
  std::string endpoint;  // "host:port"; the host may be empty (same host)
};
// False when `error_text` is not a redirect.
bool ParseRedisRedirect(std::string_view error_text, RedisRedirect* out);

class RedisConnection {
 public:
  RedisConnection() = default;
  RedisConnection(const RedisConnection&) = delete;
  RedisConnection& operator=(const RedisConnection&) = delete;
  virtual ~RedisConnection() = default;

  // Sends `commands` in one pipeline to the node serving routing_key's slot
  // and returns one reply per command, in order. Every key of every command
  // must hash to that slot.
  virtual absl::StatusOr<std::vector<RedisReply>> Pipeline(
      const std::vector<RedisArgs>& commands, std::string_view routing_key) = 0;

  // Drops every socket; the next call reconnects (and, for a cluster,
  // reloads the slot map).
  virtual void Reset() = 0;

  virtual bool is_cluster() const = 0;
  // The node a pipeline for routing_key would go to now, for messages.
  virtual std::string Describe(std::string_view routing_key) const = 0;

  // Pipelines sent to a server, redirects included (observability).
  int64_t round_trips() const { return round_trips_; }
  int64_t redirects() const { return redirects_; }
  // Standalone / Sentinel: how many times a server connection was opened
  // again after the first. It can grow inside a Pipeline that succeeds:
  // through Sentinel, the client moves to a newly named master before a
  // call without reporting an error. A caller whose correctness depends on
  // talking to one server (the mirror writer's lease) compares it before
  // and after. A cluster connection counts nothing here (0).
  int64_t reconnects() const { return reconnects_; }

 protected:
  int64_t round_trips_ = 0;
  int64_t redirects_ = 0;
  int64_t reconnects_ = 0;
};

struct RedisConnectOptions {
  // Seeds: one standalone server, or any nodes of a cluster.
  std::vector<std::string> endpoints;
  // Per-node settings (its endpoint field is ignored).
  RedisClientOptions client;
  // Redirects followed per pipeline before giving up.
  int max_redirects = 5;
};

// Connects to the first endpoint that answers and decides standalone vs
// cluster. Unavailable when no endpoint answers; Unauthenticated when AUTH
// is refused; InvalidArgument for a malformed endpoint.
absl::StatusOr<std::unique_ptr<RedisConnection>> ConnectRedis(
    const RedisConnectOptions& options);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_REDIS_CLUSTER_CLIENT_H_
