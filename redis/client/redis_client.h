// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisClient: one synchronous RESP2 connection to one Redis server, built on
// hiredis 0.14 (the portable subset that also compiles against hiredis 1.x).
// It is the base of siftdb's Redis components: the Redis-backed Bloom filter,
// the filter mirror and the cluster-aware reader.
//
// What it does:
//   * Endpoints "host:port", "[ipv6]:port", "unix:/path" or "/path", or a
//     URL (redis://, rediss://, redis+sentinel://, unix://; see
//     redis/client/redis_url.h and docs/redis_client.md).
//   * Sentinel (master_name set): the master's address is asked of the
//     Sentinels (SENTINEL get-master-addr-by-name, each in turn from the
//     one that answered last, with their own AUTH), and every (re)connect
//     checks with ROLE that the node is a master; a node that says it is a
//     replica is never written to. A -READONLY reply (the node was demoted)
//     counts as a connection error: the client reconnects, asking the Sentinels
//     again, and resends. A thread subscribed to the Sentinels'
//     +switch-master channel (redis/client/sentinel_switch_watch.h) makes
//     the next call ask the Sentinels again as soon as a failover is
//     announced; while that subscription is down, the Sentinels are asked
//     before a call once sentinel_check_interval has passed. So a replaced
//     master that is still up (and still says "master") is left at the
//     next call after the announcement, and a failover is followed within
//     retry_deadline.
//   * AUTH user pass (ACL) or AUTH pass, and SELECT, on every (re)connect.
//   * TLS (tls set, or rediss:// / rediss+sentinel://): the connection is a
//     RedisTlsConnection (redis/client/redis_tls.h: OpenSSL, owning its
//     socket, parsing replies with hiredis's reader); with Sentinel, the
//     Sentinel connections use TLS too. Without TLS the connection is a
//     hiredis redisContext, exactly as before.
//   * A connect timeout and a command timeout (SO_RCVTIMEO/SO_SNDTIMEO;
//     over TLS, poll() deadlines around each write and each reply).
//   * Binary-safe commands (RedisArgs) and pipelines (append N, read N).
//   * Replies converted into owned RedisReply trees. A server error reply is
//     a *successful* call returning a RedisReply of type kError: callers see
//     the exact text (siftdb's BF.* interpreter must echo it); turn it into
//     a status with ServerErrorStatus() when that is what you need.
//   * Lua scripts by SHA-1: EVALSHA first; on NOSCRIPT (script cache flushed,
//     server restarted, replica promoted) SCRIPT LOAD and EVALSHA again.
//   * Connection errors (refused, reset, closed, timed out) and the
//     transient server replies LOADING / BUSY / MASTERDOWN make the client
//     drop the connection, back off exponentially (initial_backoff doubling
//     to max_backoff) and reconnect and resend until retry_deadline has
//     passed since the call began. A resent command may therefore run twice
//     (at-least-once): send only commands for which that is harmless.
//   * Errors are absl::Status values naming the endpoint and the command:
//     UNAVAILABLE "redis 127.0.0.1:6390: connect: Connection refused",
//     UNAUTHENTICATED for a refused AUTH, and so on.
//
// Thread safety: a RedisClient is NOT thread-safe (nor is the hiredis context
// beneath it); use one per thread or guard it externally. RedisScript is
// immutable and may be shared.

#ifndef SIFTDB_REDIS_CLIENT_REDIS_CLIENT_H_
#define SIFTDB_REDIS_CLIENT_REDIS_CLIENT_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redis/client/redis_reply.h"
#include "redis/client/redis_tls.h"
#include "redis/client/redis_url.h"
#include "redis/client/sentinel_connection.h"
#include "redis/client/sentinel_switch_watch.h"

struct redisContext;

namespace siftdb {

struct RedisClientOptions {
  // "host:port", "[v6addr]:port", "host" (port 6379), "unix:/path", "/path",
  // or a URL (Connect applies it with ApplyRedisUrl; its parts win over the
  // fields below). Ignored when master_name is set.
  std::string endpoint = "127.0.0.1:6379";
  // AUTH on connect when password is set; with a username, ACL-style
  // AUTH username password.
  std::string username;
  std::string password;
  // SELECT on connect when nonzero.
  int database = 0;
  // Sentinel: when master_name is set, the server is the master that these
  // Sentinels ("host:port") name, verified with ROLE on every connect.
  std::vector<std::string> sentinels;
  std::string master_name;
  std::string sentinel_username;  // AUTH to the Sentinels (both optional)
  std::string sentinel_password;
  // Subscribe to +switch-master (one thread and one Sentinel connection
  // per client) and ask the Sentinels again when it announces a failover
  // of this master.
  bool sentinel_subscribe = true;
  // While no subscription is live (sentinel_subscribe off, or no Sentinel
  // reachable for it): before a call, when this long has passed since the
  // Sentinels were last asked, ask again and move to the master they name
  // if it changed. This bounds how long the client keeps writing to a
  // replaced master that has not been demoted yet (Sentinel demotes it only
  // when it next sees it). Zero: ask before every call.
  absl::Duration sentinel_check_interval = absl::Seconds(1);
  // Where reads go (URL: ?read_from=). RedisClient itself always talks to
  // the one server it names; ConnectRedis (the remote filter reader)
  // honours kReplicaPreferred for a standalone server or a Sentinel-managed
  // master; RedisBloom refuses it, since a lagging replica would answer
  // "absent" for an acknowledged add (redis/client/redis_replica_read.h,
  // docs/redis_client.md "Replicas for reads").
  RedisReadFrom read_from = RedisReadFrom::kMaster;
  // kReplicaPreferred: after no healthy replica was found, or the one in
  // use failed, reads go to the master for this long before replicas are
  // looked for again.
  absl::Duration replica_retry_interval = absl::Seconds(1);
  // TLS to the server (and, with Sentinel, to the Sentinels); set by
  // rediss:// and rediss+sentinel:// URLs, whose query parameters fill
  // tls_options. Not for unix sockets.
  bool tls = false;
  RedisTlsOptions tls_options;
  absl::Duration connect_timeout = absl::Seconds(2);
  // Per command (socket read/write timeout). A timed-out command counts as a
  // connection error and is retried.
  absl::Duration command_timeout = absl::Seconds(30);
  // How long one call keeps retrying connection errors; zero: one attempt.
  absl::Duration retry_deadline = absl::Seconds(10);
  absl::Duration initial_backoff = absl::Milliseconds(5);
  absl::Duration max_backoff = absl::Milliseconds(500);
};

// A parsed endpoint.
struct RedisEndpoint {
  std::string host;  // empty for a unix socket
  int port = 6379;
  std::string unix_path;  // set for a unix socket

  static absl::StatusOr<RedisEndpoint> Parse(std::string_view text);
  std::string ToString() const;
};

// A Lua script. Redis names a script by the SHA-1 of its source; a client
// learns that name from SCRIPT LOAD's reply (RedisClient::Eval), so siftdb
// never computes it. id() tells scripts apart within a process (never
// reused, unlike an address).
class RedisScript {
 public:
  explicit RedisScript(std::string source);
  RedisScript(const RedisScript&) = delete;
  RedisScript& operator=(const RedisScript&) = delete;
  const std::string& source() const { return source_; }
  uint64_t id() const { return id_; }

 private:
  const std::string source_;
  const uint64_t id_;
};

class RedisClient {
 public:
  // Connects (retrying until options.retry_deadline) and authenticates.
  static absl::StatusOr<std::unique_ptr<RedisClient>> Connect(
      const RedisClientOptions& options);

  RedisClient(const RedisClient&) = delete;
  RedisClient& operator=(const RedisClient&) = delete;
  ~RedisClient();

  // Sends one command and returns its reply (possibly a kError reply).
  absl::StatusOr<RedisReply> Command(const RedisArgs& args);
  absl::StatusOr<RedisReply> Command(std::initializer_list<std::string_view> a);
  absl::StatusOr<RedisReply> Command(const std::vector<std::string>& argv);

  // Sends all commands in one write and reads one reply per command, in
  // order. A connection error resends the whole pipeline.
  absl::StatusOr<std::vector<RedisReply>> Pipeline(
      const std::vector<RedisArgs>& commands);

  // EVALSHA script numkeys keys... args.... The script's name comes from
  // SCRIPT LOAD, sent on its first use on this client and again after a
  // NOSCRIPT reply (the server restarted, failed over or flushed scripts).
  absl::StatusOr<RedisReply> Eval(const RedisScript& script,
                                  const std::vector<std::string>& keys,
                                  const RedisArgs& args);

  // Status for a kError reply to `command`: WRONGTYPE -> FailedPrecondition,
  // NOAUTH/WRONGPASS -> Unauthenticated, NOPERM -> PermissionDenied, OOM ->
  // ResourceExhausted, LOADING/BUSY/MASTERDOWN/TRYAGAIN/CLUSTERDOWN ->
  // Unavailable, anything else -> InvalidArgument. The message names the
  // endpoint and command and quotes the server's text.
  absl::Status ServerErrorStatus(std::string_view command,
                                 const RedisReply& reply) const;

  const std::string& endpoint() const { return endpoint_text_; }
  const RedisClientOptions& options() const { return options_; }
  // True when the server is found through Sentinels.
  bool via_sentinel() const { return !options_.master_name.empty(); }
  // Connections made after the first one (observability and tests).
  int64_t reconnects() const { return reconnects_; }
  // Via Sentinel: times a check (announced or periodic) found the master
  // moved while the client was connected; the +switch-master messages seen
  // for this master; whether the subscription is live.
  int64_t master_moves() const { return master_moves_; }
  int64_t switch_messages() const {
    return watch_ == nullptr ? 0 : watch_->switches();
  }
  bool switch_subscribed() const {
    return watch_ != nullptr && watch_->subscribed();
  }

 private:
  RedisClient(const RedisClientOptions& options, RedisEndpoint endpoint,
              std::shared_ptr<const RedisTlsContext> tls_context);

  // Opens and authenticates a fresh connection into ctx_ or tls_ (asking the
  // Sentinels first, and checking ROLE after, when via_sentinel()).
  absl::Status Open();
  // Asks each Sentinel in turn for the master's address.
  absl::StatusOr<RedisEndpoint> ResolveMaster();
  // Via Sentinel: the subscription announced a change, or (with no live
  // subscription) sentinel_check_interval has passed.
  bool MasterMayHaveMoved() const;
  // ROLE says "master", else Unavailable.
  absl::Status VerifyMaster();
  void Close();
  bool connected() const { return ctx_ != nullptr || tls_ != nullptr; }
  // One command on the open connection (plain or TLS); Unavailable when the
  // connection failed, a server error as a kError reply.
  absl::StatusOr<RedisReply> RunOnConnection(
      const std::vector<std::string>& argv);
  // Sends `encoded` (count commands) and reads their replies, retrying
  // connection errors until the deadline.
  absl::StatusOr<std::vector<RedisReply>> Roundtrip(const std::string& encoded,
                                                    size_t count,
                                                    std::string_view name);
  // One attempt on an open connection; a non-OK status means the
  // connection is unusable.
  absl::Status TryRoundtrip(const std::string& encoded, size_t count,
                            std::string_view name,
                            std::vector<RedisReply>* replies);
  absl::Status ContextError(std::string_view what) const;
  // Writes a whole encoded request to the plain connection's socket.
  absl::Status WriteAll(const std::string& encoded, std::string_view name);

  const RedisClientOptions options_;
  RedisEndpoint endpoint_;  // changes when a Sentinel names a new master
  std::string endpoint_text_;
  redisContext* ctx_ = nullptr;  // plain TCP or unix socket
  // options_.tls only: the SSL_CTX (made once) and the open connection.
  std::shared_ptr<const RedisTlsContext> tls_context_;
  std::unique_ptr<RedisTlsConnection> tls_;
  // RedisScript::id() -> the SHA-1 name SCRIPT LOAD returned on this client.
  absl::flat_hash_map<uint64_t, std::string> script_sha_;
  // via_sentinel() only: where the Sentinels are, the one to ask first,
  // when they were last asked and the watch's generation then.
  SentinelSet sentinel_set_;
  size_t sentinel_first_ = 0;
  absl::Time last_resolve_ = absl::InfinitePast();
  std::unique_ptr<SentinelSwitchWatch> watch_;
  uint64_t watch_seen_ = 0;
  int64_t master_moves_ = 0;
  int64_t connects_ = 0;
  int64_t reconnects_ = 0;
};

// Applies a parsed URL to `options`: endpoint (or the Sentinel fields),
// and the user, password, database, TLS flag and TLS options the URL names.
// Fields the URL leaves out keep their values (a TLS URL sets every field of
// tls_options).
void ApplyRedisUrl(const RedisUrl& url, RedisClientOptions* options);

// True for server error replies worth retrying after a pause (the server is
// loading its dataset, busy with a script, or its master is down).
bool IsTransientServerError(std::string_view error_text);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_REDIS_CLIENT_H_
