// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Talking to Redis Sentinels, for RedisClient (redis/client/redis_client.h):
//
//   * SentinelConnection: one connection to one Sentinel, plain (a hiredis
//     redisContext) or TLS (redis/client/redis_tls.h), with the Sentinel's
//     own AUTH. Run sends a command and reads its reply; Send and
//     ReadReplyWithin serve a subscription (SUBSCRIBE, then messages read as
//     they come, waiting at most a given time without spoiling the
//     connection).
//   * ResolveSentinelMaster: asks each Sentinel in turn (starting from the
//     one that answered last) for a master's address with SENTINEL
//     get-master-addr-by-name.
//
// Errors name the Sentinel ("redis sentinel 127.0.0.1:26379: ...") and
// never hold a password. A refused AUTH is UNAUTHENTICATED (a
// configuration error, not an outage); the rest is UNAVAILABLE.
//
// Thread safety: a SentinelConnection is used by one thread at a time,
// except Shutdown, which any thread may call to wake a reader blocked in
// ReadReplyWithin (the connection is unusable afterwards).
// ResolveSentinelMaster is thread-safe if `first` is not shared.

#ifndef SIFTDB_REDIS_CLIENT_SENTINEL_CONNECTION_H_
#define SIFTDB_REDIS_CLIENT_SENTINEL_CONNECTION_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redis/client/redis_reply.h"
#include "redis/client/redis_tls.h"

struct redisContext;

namespace siftdb {

struct RedisEndpoint;

// Where the Sentinels are and how to reach them: RedisClientOptions'
// Sentinel fields and timeouts (redis/client/redis_client.h).
struct SentinelSet {
  std::vector<std::string> sentinels;  // "host:port" each
  std::string master_name;
  std::string username;  // AUTH to the Sentinels (both optional)
  std::string password;
  std::shared_ptr<const RedisTlsContext> tls;  // null: plain TCP
  absl::Duration connect_timeout = absl::Seconds(2);
  absl::Duration command_timeout = absl::Seconds(5);
};

class SentinelConnection {
 public:
  // Connects to `sentinel` ("host:port") and sends AUTH when the set has a
  // password.
  static absl::StatusOr<std::unique_ptr<SentinelConnection>> Open(
      const SentinelSet& set, const std::string& sentinel);

  SentinelConnection(const SentinelConnection&) = delete;
  SentinelConnection& operator=(const SentinelConnection&) = delete;
  ~SentinelConnection();

  // One command, one reply (a server error is a kError reply).
  absl::StatusOr<RedisReply> Run(const std::vector<std::string>& argv);
  // Writes one command without reading its reply.
  absl::Status Send(const std::vector<std::string>& argv);
  // Reads the next reply if one arrives within `wait`: true with *out set,
  // false when none came (the connection stays usable), an error when the
  // connection failed.
  absl::StatusOr<bool> ReadReplyWithin(RedisReply* out, absl::Duration wait);
  // Shuts the socket down (not closing it): a ReadReplyWithin blocked in
  // another thread returns at once with an error.
  void Shutdown();

  const std::string& name() const { return name_; }

 private:
  SentinelConnection(std::string name, redisContext* ctx,
                     std::unique_ptr<RedisTlsConnection> tls);
  absl::Status Auth(const SentinelSet& set);
  absl::Status HiredisError(std::string_view what) const;

  const std::string name_;
  redisContext* const ctx_;                        // plain, or null
  const std::unique_ptr<RedisTlsConnection> tls_;  // TLS, or null
};

// The master's address as the first Sentinel that knows it says, trying
// each Sentinel once, starting at index *first (updated to the one that
// answered). UNAVAILABLE lists why each Sentinel failed.
absl::StatusOr<RedisEndpoint> ResolveSentinelMaster(const SentinelSet& set,
                                                    size_t* first);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_SENTINEL_CONNECTION_H_
