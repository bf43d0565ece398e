// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/support/tcp_proxy.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <system_error>
#include <utility>

#include "absl/memory/memory.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"

namespace siftdb::test {

namespace {

// The longest single wait anywhere; bounds how late a stop or cut is seen.
constexpr int kPollMillis = 50;
constexpr absl::Duration kPollSlice = absl::Milliseconds(kPollMillis);
// How long connecting upstream may take (in kPollMillis slices).
constexpr int kConnectSlices = 2000 / kPollMillis;
constexpr size_t kChunkBytes = 16 * 1024;

absl::Status SocketError(const char* call) {
  const int err = errno;
  return absl::InternalError(absl::StrCat(
      call,
      " 127.0.0.1: ", std::error_code(err, std::generic_category()).message()));
}

sockaddr_in Loopback(int port) {
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  return addr;
}

void SetNoDelay(int fd) {
  int one = 1;
  setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

// Closes `fd` with a reset rather than an orderly end-of-file.
void CloseWithReset(int fd) {
  linger l{1, 0};
  setsockopt(fd, SOL_SOCKET, SO_LINGER, &l, sizeof(l));
  close(fd);
}

// A non-blocking socket connected to 127.0.0.1:port, or -1 when the connect
// fails, takes longer than kConnectSlices polls, or `stop` becomes true.
int ConnectLoopback(int port, const std::atomic<bool>& stop) {
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr = Loopback(port);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0) {
    return fd;
  }
  if (errno == EINPROGRESS) {
    for (int i = 0; i < kConnectSlices && !stop; ++i) {
      pollfd p{fd, POLLOUT, 0};
      const int r = poll(&p, 1, kPollMillis);
      if (r < 0 && errno != EINTR) break;
      if (r <= 0) continue;
      int err = 0;
      socklen_t len = sizeof(err);
      if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &len) == 0 && err == 0) {
        return fd;
      }
      break;
    }
  }
  close(fd);
  return -1;
}

bool Retryable(int err) {
  return err == EAGAIN || err == EWOULDBLOCK || err == EINTR;
}

}  // namespace

// One proxied connection: the two sockets, and a thread per direction. The
// sockets stay open until the destructor (after both threads are joined), so
// a cut only shuts them down and no descriptor is reused under a thread.
struct TcpProxy::Connection {
  Connection(int client, int server, uint64_t client_bytes)
      : client_fd(client), server_fd(server), client_bytes_left(client_bytes) {}
  ~Connection() {
    if (to_server.joinable()) to_server.join();
    if (to_client.joinable()) to_client.join();
    close(client_fd);
    close(server_fd);
  }
  void Cut() {
    cut = true;
    shutdown(client_fd, SHUT_RDWR);
    shutdown(server_fd, SHUT_RDWR);
  }

  const int client_fd;
  const int server_fd;
  std::atomic<bool> cut{false};
  std::atomic<int> directions_stopped{0};
  Mutex mu;
  // Client bytes still to forward before the cut; 0 means no limit.
  uint64_t client_bytes_left ABSL_GUARDED_BY(mu);
  // Cut before forwarding client bytes that hold this; empty: never.
  std::string cut_before ABSL_GUARDED_BY(mu);
  std::thread to_server;
  std::thread to_client;
};

absl::StatusOr<std::unique_ptr<TcpProxy>> TcpProxy::Start(int upstream_port) {
  if (upstream_port < 1 || upstream_port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "TcpProxy: upstream port ", upstream_port, " is outside 1..65535"));
  }
  int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd < 0) return SocketError("socket");
  sockaddr_in addr = Loopback(0);
  socklen_t len = sizeof(addr);
  auto* sa = reinterpret_cast<sockaddr*>(&addr);
  if (bind(fd, sa, len) != 0 || listen(fd, 64) != 0 ||
      getsockname(fd, sa, &len) != 0) {
    absl::Status status = SocketError("listen on");
    close(fd);
    return status;
  }
  return absl::WrapUnique(
      new TcpProxy(fd, ntohs(addr.sin_port), upstream_port));
}

TcpProxy::TcpProxy(int listen_fd, int port, int upstream_port)
    : listen_fd_(listen_fd), port_(port), upstream_port_(upstream_port) {
  acceptor_ = std::thread(&TcpProxy::AcceptLoop, this);
}

TcpProxy::~TcpProxy() {
  stopping_ = true;
  acceptor_.join();
  std::list<std::unique_ptr<Connection>> doomed;
  {
    MutexLock lock(&mu_);
    CutAllLocked();
    doomed.swap(connections_);
  }
  doomed.clear();  // Joins each connection's threads and closes its sockets.
  close(listen_fd_);
}

std::string TcpProxy::endpoint() const {
  return absl::StrCat("127.0.0.1:", port_);
}

void TcpProxy::SetUpstream(int upstream_port) {
  MutexLock lock(&mu_);
  upstream_port_ = upstream_port;
}

void TcpProxy::SetDelay(absl::Duration client_to_server,
                        absl::Duration server_to_client) {
  MutexLock lock(&mu_);
  client_to_server_delay_ = client_to_server;
  server_to_client_delay_ = server_to_client;
}

void TcpProxy::CutAll() {
  MutexLock lock(&mu_);
  CutAllLocked();
}

void TcpProxy::CutAllLocked() {
  for (const std::unique_ptr<Connection>& conn : connections_) conn->Cut();
}

void TcpProxy::SetBlackhole(bool on) {
  MutexLock lock(&mu_);
  blackhole_ = on;
  if (on) CutAllLocked();
}

void TcpProxy::CutAfterClientBytes(uint64_t bytes) {
  MutexLock lock(&mu_);
  cut_after_client_bytes_ = bytes;
  for (const std::unique_ptr<Connection>& conn : connections_) {
    MutexLock conn_lock(&conn->mu);
    conn->client_bytes_left = bytes;
  }
}

void TcpProxy::CutOpenBeforeClientSends(std::string_view bytes) {
  MutexLock lock(&mu_);
  for (const std::unique_ptr<Connection>& conn : connections_) {
    MutexLock conn_lock(&conn->mu);
    conn->cut_before = std::string(bytes);
  }
}

void TcpProxy::AcceptLoop() {
  while (!stopping_) {
    ReapFinished();
    pollfd p{listen_fd_, POLLIN, 0};
    if (poll(&p, 1, kPollMillis) <= 0) continue;
    const int fd =
        accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) continue;
    ++connections_accepted_;
    HandleAccepted(fd);
  }
}

void TcpProxy::HandleAccepted(int client_fd) {
  int upstream_port;
  {
    MutexLock lock(&mu_);
    if (blackhole_) {
      CloseWithReset(client_fd);
      return;
    }
    upstream_port = upstream_port_;
  }
  const int server_fd = ConnectLoopback(upstream_port, stopping_);
  if (server_fd < 0) {
    CloseWithReset(client_fd);
    return;
  }
  SetNoDelay(client_fd);
  SetNoDelay(server_fd);
  Connection* conn;
  {
    // Checked again: the blackhole may have gone on while connecting.
    MutexLock lock(&mu_);
    if (blackhole_) {
      CloseWithReset(client_fd);
      close(server_fd);
      return;
    }
    connections_.push_back(std::make_unique<Connection>(
        client_fd, server_fd, cut_after_client_bytes_));
    conn = connections_.back().get();
  }
  // Only this thread (or the destructor, after joining it) reaps, so `conn`
  // stays alive here.
  conn->to_server = std::thread(&TcpProxy::Pump, this, conn, true);
  conn->to_client = std::thread(&TcpProxy::Pump, this, conn, false);
}

void TcpProxy::ReapFinished() {
  std::list<std::unique_ptr<Connection>> done;
  {
    MutexLock lock(&mu_);
    for (auto it = connections_.begin(); it != connections_.end();) {
      auto next = std::next(it);
      if ((*it)->directions_stopped == 2)
        done.splice(done.end(), connections_, it);
      it = next;
    }
  }
  // `done` joins and closes on destruction, outside the lock.
}

bool TcpProxy::Running(const Connection& conn) const {
  return !stopping_ && !conn.cut;
}

bool TcpProxy::Hold(const Connection& conn, absl::Duration delay) const {
  const absl::Time until = absl::Now() + delay;
  for (absl::Time now = absl::Now(); now < until; now = absl::Now()) {
    if (!Running(conn)) return false;
    absl::SleepFor(std::min(until - now, kPollSlice));
  }
  return Running(conn);
}

bool TcpProxy::SendAll(const Connection& conn, int fd, const char* data,
                       size_t len) {
  while (len > 0) {
    if (!Running(conn)) return false;
    const ssize_t n = send(fd, data, len, MSG_NOSIGNAL);
    if (n > 0) {
      data += n;
      len -= static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && !Retryable(errno)) return false;
    pollfd p{fd, POLLOUT, 0};
    poll(&p, 1, kPollMillis);
  }
  return true;
}

void TcpProxy::Pump(Connection* conn, bool client_to_server) {
  const int in = client_to_server ? conn->client_fd : conn->server_fd;
  const int out = client_to_server ? conn->server_fd : conn->client_fd;
  char buf[kChunkBytes];
  bool end_of_file = false;
  while (Running(*conn)) {
    pollfd p{in, POLLIN, 0};
    const int r = poll(&p, 1, kPollMillis);
    if (r == 0 || (r < 0 && errno == EINTR)) continue;
    if (r < 0) break;
    const ssize_t n = recv(in, buf, sizeof(buf), 0);
    if (n < 0 && Retryable(errno)) continue;
    if (n <= 0) {
      end_of_file = n == 0;
      break;
    }
    absl::Duration delay;
    {
      MutexLock lock(&mu_);
      delay =
          client_to_server ? client_to_server_delay_ : server_to_client_delay_;
    }
    if (!Hold(*conn, delay)) break;
    size_t len = static_cast<size_t>(n);
    bool cut_after = false;
    if (client_to_server) {
      MutexLock lock(&conn->mu);
      const size_t at = conn->cut_before.empty()
                            ? std::string_view::npos
                            : std::string_view(buf, len).find(conn->cut_before);
      if (at != std::string_view::npos) {
        len = at;  // what comes before the match, then the cut
        cut_after = true;
      }
      if (conn->client_bytes_left > 0) {
        if (len >= conn->client_bytes_left) {
          len = static_cast<size_t>(conn->client_bytes_left);
          cut_after = true;
        }
        conn->client_bytes_left -= len;
      }
    }
    if (!SendAll(*conn, out, buf, len) || cut_after) break;
  }
  if (end_of_file && Running(*conn)) {
    shutdown(out, SHUT_WR);  // Pass the half-close on; the other way goes on.
  } else {
    conn->Cut();
  }
  ++conn->directions_stopped;
}

}  // namespace siftdb::test
