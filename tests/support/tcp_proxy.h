// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// TcpProxy: a fault-injecting TCP forwarder for tests. It listens on
// 127.0.0.1:<free port> and forwards each accepted connection, byte for byte,
// to 127.0.0.1:<upstream port>. While traffic flows a test can add latency
// per direction, cut every connection, partition (cut and refuse), send new
// connections to another upstream, or cut each connection after N more
// client bytes (to break a pipeline in the middle).
//
// What the peers see: a cut shuts both sockets down, so the client and the
// server each read end-of-file; the sockets are closed once both directions
// have stopped. A connection refused by the blackhole, or one whose upstream
// cannot be reached, is accepted and closed at once with a reset. End-of-file
// from one side is passed on as a half-close (shutdown(SHUT_WR)) to the other.
//
// Delays: each chunk read from one side is held for the delay of its
// direction (the value set when the chunk was read) before it is written to
// the other side. A direction reads nothing while it holds a chunk, so bytes
// arriving meanwhile wait too (good enough for request/response latency).
//
// Threads: one acceptor thread and two per connection (one per direction).
// Every wait is a poll() or sleep of at most 50 ms that rechecks whether to
// stop, and connecting upstream gives up after 2 s, so the destructor returns
// promptly even with connections open and delays pending.
//
// Thread safety: every method may be called from any thread, concurrently
// with the traffic. Locks are util/mutex.h (std::mutex, which
// ThreadSanitizer sees; Debian's absl::Mutex it does not). Ownership: the proxy
// owns its sockets and threads; destroying it closes and joins all of them.

#ifndef SIFTDB_TESTS_SUPPORT_TCP_PROXY_H_
#define SIFTDB_TESTS_SUPPORT_TCP_PROXY_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <string>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "util/mutex.h"

namespace siftdb::test {

class TcpProxy {
 public:
  // Listens on 127.0.0.1:<free port> and forwards every accepted connection
  // to 127.0.0.1:<upstream_port>. InvalidArgument for a port outside
  // 1..65535; Internal when the listening socket cannot be made.
  static absl::StatusOr<std::unique_ptr<TcpProxy>> Start(int upstream_port);

  TcpProxy(const TcpProxy&) = delete;
  TcpProxy& operator=(const TcpProxy&) = delete;
  // Stops accepting, cuts every connection, joins every thread.
  ~TcpProxy();

  int port() const { return port_; }
  std::string endpoint() const;  // "127.0.0.1:<port>"

  // Where NEW connections go; open ones keep their upstream.
  void SetUpstream(int upstream_port);
  // Latency added from now on to client->server and server->client bytes.
  void SetDelay(absl::Duration client_to_server,
                absl::Duration server_to_client);
  // Cuts every open connection (both sides) now; new ones are still accepted.
  void CutAll();
  // While on, open connections are cut and new ones are accepted and reset at
  // once: nothing is forwarded (a partition, as far as a test can tell).
  void SetBlackhole(bool on);
  // Cuts each connection, open or new, once it has forwarded `bytes` more
  // bytes client->server (exactly that many reach the server); 0 disables.
  void CutAfterClientBytes(uint64_t bytes);
  // Cuts each connection open now (not later ones) when the client sends
  // `bytes` (found within one read): what precedes them is forwarded, they
  // and the rest are not.
  void CutOpenBeforeClientSends(std::string_view bytes);
  // Connections accepted so far, including those refused by the blackhole.
  uint64_t connections_accepted() const { return connections_accepted_; }

 private:
  struct Connection;

  TcpProxy(int listen_fd, int port, int upstream_port);

  void AcceptLoop();
  void HandleAccepted(int client_fd);
  // Joins and closes connections whose both directions have stopped.
  void ReapFinished();
  // Forwards one direction of `conn` until end-of-file, an error or a cut.
  void Pump(Connection* conn, bool client_to_server);
  bool Running(const Connection& conn) const;
  // Sleeps `delay` in short slices; false when stopped or cut meanwhile.
  bool Hold(const Connection& conn, absl::Duration delay) const;
  bool SendAll(const Connection& conn, int fd, const char* data, size_t len);
  void CutAllLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int listen_fd_;
  const int port_;
  std::atomic<bool> stopping_{false};
  std::atomic<uint64_t> connections_accepted_{0};
  std::thread acceptor_;

  mutable Mutex mu_;
  int upstream_port_ ABSL_GUARDED_BY(mu_);
  absl::Duration client_to_server_delay_ ABSL_GUARDED_BY(mu_);
  absl::Duration server_to_client_delay_ ABSL_GUARDED_BY(mu_);
  bool blackhole_ ABSL_GUARDED_BY(mu_) = false;
  uint64_t cut_after_client_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  std::list<std::unique_ptr<Connection>> connections_ ABSL_GUARDED_BY(mu_);
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_SUPPORT_TCP_PROXY_H_
