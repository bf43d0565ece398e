// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The TLS transport of RedisClient (rediss://, rediss+sentinel://), through
// OpenSSL. hiredis 0.14 has no TLS, so this connection owns its socket and
// its TLS session and only borrows hiredis's reply parser (redisReader):
// bytes are written with SSL_write, read with SSL_read and fed to the reader.
// The plain TCP and unix socket path stays on hiredis's redisContext.
//
//   * RedisTlsContext: the SSL_CTX built from RedisTlsOptions (CA bundle,
//     client certificate and key, verification on or off). Immutable after
//     Create; thread-safe to share between connections (OpenSSL allows
//     concurrent SSL_new on one SSL_CTX).
//   * RedisTlsConnection: one TCP connection with a TLS session to one
//     server. Connect makes a non-blocking connect and handshake bounded by
//     the connect timeout; Write and ReadReply are bounded by the command
//     timeout (poll on SSL_ERROR_WANT_READ / WANT_WRITE). With verification
//     on (the default) the server's chain must lead to the CA bundle and its
//     certificate must name the server: the server name when given, else the
//     host connected to (as an IP address when it is one).
//
// Errors are absl::Status values naming the endpoint, the step and
// OpenSSL's reason: UNAUTHENTICATED when a retry cannot help (the server's
// certificate does not verify: "redis 127.0.0.1:6390: TLS handshake:
// certificate verify failed: unable to get local issuer certificate"; or the
// server refused our certificate or its absence), UNAVAILABLE for the rest
// (refused, reset, timed out; but a connection reset before its first reply
// by a server that asked for a client certificate when none is configured is
// UNAUTHENTICATED, saying so), INVALID_ARGUMENT naming the file for a bad CA,
// key or certificate file. No message holds a
// password (this layer never sees one in text form it could print: AUTH
// travels as encoded command bytes).
//
// Thread safety: a RedisTlsConnection is NOT thread-safe (one per
// RedisClient, which is not thread-safe either).

#ifndef SIFTDB_REDIS_CLIENT_REDIS_TLS_H_
#define SIFTDB_REDIS_CLIENT_REDIS_TLS_H_

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redis/client/redis_reply.h"

struct ssl_ctx_st;
struct ssl_st;
struct redisReader;

namespace siftdb {

// TLS settings; URL query parameters of rediss:// map onto them
// (docs/redis_client.md).
struct RedisTlsOptions {
  // PEM CA bundle the server's chain must lead to; empty: OpenSSL's default
  // trust store (/etc/ssl/certs on Debian).
  std::string ca_file;
  // Client certificate and its private key (PEM), for servers that ask for
  // one (redis-server --tls-auth-clients yes). Both or neither.
  std::string cert_file;
  std::string key_file;
  // Sent as SNI and checked against the server's certificate. Empty: the
  // host connected to (no SNI for an IP address, which is checked as an IP).
  std::string server_name;
  // False turns off certificate and name checks: for tests and operators
  // only, never in production (anyone on the path can read everything).
  bool verify_peer = true;
};

class RedisTlsContext {
 public:
  static absl::StatusOr<std::shared_ptr<const RedisTlsContext>> Create(
      const RedisTlsOptions& options);
  RedisTlsContext(const RedisTlsContext&) = delete;
  RedisTlsContext& operator=(const RedisTlsContext&) = delete;
  ~RedisTlsContext();

  const RedisTlsOptions& options() const { return options_; }
  ssl_ctx_st* ctx() const { return ctx_; }

 private:
  RedisTlsContext(const RedisTlsOptions& options, ssl_ctx_st* ctx)
      : options_(options), ctx_(ctx) {}
  const RedisTlsOptions options_;
  ssl_ctx_st* const ctx_;
};

class RedisTlsConnection {
 public:
  // Connects to host:port (resolving host), then makes the TLS handshake,
  // all within connect_timeout. `endpoint` names the server in messages.
  // command_timeout bounds each later Write and ReadReply (zero: none).
  static absl::StatusOr<std::unique_ptr<RedisTlsConnection>> Connect(
      std::shared_ptr<const RedisTlsContext> context, const std::string& host,
      int port, std::string_view endpoint, absl::Duration connect_timeout,
      absl::Duration command_timeout);

  RedisTlsConnection(const RedisTlsConnection&) = delete;
  RedisTlsConnection& operator=(const RedisTlsConnection&) = delete;
  ~RedisTlsConnection();

  // Writes all of `data`. `what` (a command name) goes into messages. Any
  // error leaves the connection unusable.
  absl::Status Write(std::string_view data, std::string_view what);
  // Reads one reply (parsed by hiredis's reader). Any error leaves the
  // connection unusable.
  absl::Status ReadReply(RedisReply* reply, std::string_view what);
  // Reads the next reply if one arrives within `wait` (for subscriptions):
  // true with *reply set; false when none came, the connection still
  // usable (a partly received reply stays buffered); an error otherwise.
  absl::StatusOr<bool> ReadReplyWithin(RedisReply* reply, absl::Duration wait,
                                       std::string_view what);
  // shutdown(2) on the socket, from any thread: a ReadReplyWithin blocked
  // in another thread returns an error at once. The connection is unusable
  // afterwards (destroy it from its own thread).
  void Shutdown();
  // One command: Write, then ReadReply. A server error is a kError reply.
  absl::StatusOr<RedisReply> Run(const std::vector<std::string>& argv);

 private:
  RedisTlsConnection(std::shared_ptr<const RedisTlsContext> context, int fd,
                     ssl_st* ssl, redisReader* reader, std::string endpoint,
                     absl::Duration command_timeout);
  // Waits (bounded by deadline) until the socket is ready for what the
  // last SSL call wants; `ssl_error` is SSL_get_error's answer. A timeout
  // sets *timed_out (when not null) besides returning UNAVAILABLE.
  absl::Status WaitFor(int ssl_error, absl::Time deadline,
                       std::string_view what, bool* timed_out);
  // ReadReply bounded by `deadline` (timed_out as for WaitFor).
  absl::Status ReadReplyBy(RedisReply* reply, absl::Time deadline,
                           std::string_view what, bool* timed_out);
  absl::Status SslError(std::string_view what, int ret, int ssl_error) const;

  const std::shared_ptr<const RedisTlsContext> context_;
  const int fd_;
  ssl_st* const ssl_;
  redisReader* const reader_;
  const std::string endpoint_;
  const absl::Duration command_timeout_;
  // The server asked for a client certificate and none is configured.
  bool certificate_requested_ = false;
  bool replied_ = false;  // a reply has been read on this connection
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_REDIS_TLS_H_
