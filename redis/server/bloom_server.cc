// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/server/bloom_server.h"

#include <arpa/inet.h>
#include <event2/event.h>
#include <event2/listener.h>
#include <event2/thread.h>
#include <netdb.h>
#include <netinet/in.h>
#include <sys/un.h>
#include <unistd.h>

#include <cstring>
#include <mutex>
#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace siftdb {

namespace {

// libevent's locking, needed for event_active and loopbreak from other
// threads; process-wide and once.
void UseThreads() {
  static std::once_flag once;
  std::call_once(once, [] { evthread_use_pthreads(); });
}

// The upstream endpoint as a socket address (host names resolved once).
absl::Status ResolveUpstream(const RedisClientOptions& o, ServerContext* c) {
  if (o.tls || !o.master_name.empty()) {
    return absl::InvalidArgumentError(
        "the BF.* server talks to Redis over plain TCP or a unix socket (no "
        "TLS, no Sentinel)");
  }
  absl::StatusOr<RedisEndpoint> ep = RedisEndpoint::Parse(o.endpoint);
  if (!ep.ok()) return ep.status();
  if (!ep->unix_path.empty()) {
    sockaddr_un un{};
    if (ep->unix_path.size() >= sizeof(un.sun_path)) {
      return absl::InvalidArgumentError("unix socket path too long");
    }
    un.sun_family = AF_UNIX;
    std::memcpy(un.sun_path, ep->unix_path.data(), ep->unix_path.size());
    std::memcpy(&c->upstream, &un, sizeof(un));
    c->upstream_len = sizeof(un);
    return absl::OkStatus();
  }
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  const std::string port = absl::StrCat(ep->port);
  const int rc = getaddrinfo(ep->host.c_str(), port.c_str(), &hints, &res);
  if (rc != 0 || res == nullptr) {
    return absl::UnavailableError(
        absl::StrCat("resolve ", ep->host, ": ", gai_strerror(rc)));
  }
  std::memcpy(&c->upstream, res->ai_addr, res->ai_addrlen);
  c->upstream_len = res->ai_addrlen;
  freeaddrinfo(res);
  return absl::OkStatus();
}

// "HOST:PORT" / "[V6]:PORT" with a numeric host; port 0 picks a free one.
bool ParseListen(const std::string& text, sockaddr_storage* addr, int* len) {
  const size_t colon = text.rfind(':');
  if (colon == std::string::npos) return false;
  std::string host = text.substr(0, colon);
  int port = 0;
  if (!absl::SimpleAtoi(text.substr(colon + 1), &port) || port < 0 ||
      port > 65535) {
    return false;
  }
  if (host.size() >= 2 && host.front() == '[' && host.back() == ']') {
    auto* a6 = reinterpret_cast<sockaddr_in6*>(addr);
    a6->sin6_family = AF_INET6;
    a6->sin6_port = htons(static_cast<uint16_t>(port));
    *len = sizeof(*a6);
    return inet_pton(AF_INET6, host.substr(1, host.size() - 2).c_str(),
                     &a6->sin6_addr) == 1;
  }
  auto* a4 = reinterpret_cast<sockaddr_in*>(addr);
  a4->sin_family = AF_INET;
  a4->sin_port = htons(static_cast<uint16_t>(port));
  *len = sizeof(*a4);
  return inet_pton(AF_INET, host.c_str(), &a4->sin_addr) == 1;
}

}  // namespace

BloomServer::BloomServer(BloomServerOptions options)
    : options_(std::move(options)) {}

absl::StatusOr<std::unique_ptr<BloomServer>> BloomServer::Start(
    BloomServerOptions options) {
  UseThreads();
  std::unique_ptr<BloomServer> s(new BloomServer(std::move(options)));
  absl::Status st = s->Init();
  if (!st.ok()) return st;
  s->loop_ = std::thread([base = s->context_.base] {
    event_base_loop(base, EVLOOP_NO_EXIT_ON_EMPTY);
  });
  return s;
}

absl::Status BloomServer::Init() {
  absl::Status st = ResolveUpstream(options_.upstream, &context_);
  if (!st.ok()) return st;
  context_.initial =
      BloomCredentials{options_.upstream.username, options_.upstream.password,
                       options_.upstream.database};
  context_.limits = options_.limits;
  context_.destroy = [this](uint64_t id) { connections_.erase(id); };
  context_.base = event_base_new();
  if (context_.base == nullptr) return absl::InternalError("event_base_new");
  // Priorities: 0 unused, 1 (the default) I/O and replies, 2 the batch
  // hand-over, which so waits for every ready client of the round.
  event_base_priority_init(context_.base, 3);
  wake_ = event_new(context_.base, -1, EV_PERSIST, OnWake, this);
  submit_ = event_new(context_.base, -1, EV_PERSIST, OnSubmit, this);
  event_priority_set(wake_, 1);
  event_priority_set(submit_, 2);
  context_.submit = [this](BloomRequest r) {
    if (to_submit_.empty()) event_active(submit_, EV_READ, 0);
    to_submit_.push_back(std::move(r));
  };
  sockaddr_storage addr{};
  int len = sizeof(addr);
  if (!ParseListen(options_.listen, &addr, &len)) {
    return absl::InvalidArgumentError(
        absl::StrCat("bad listen address ", options_.listen,
                     " (want HOST:PORT with a numeric host, e.g. "
                     "127.0.0.1:6380 or [::1]:6380)"));
  }
  listener_ = evconnlistener_new_bind(
      context_.base, OnAccept, this,
      LEV_OPT_REUSEABLE | LEV_OPT_CLOSE_ON_FREE | LEV_OPT_CLOSE_ON_EXEC, -1,
      reinterpret_cast<sockaddr*>(&addr), len);
  if (listener_ == nullptr) {
    return absl::UnavailableError(absl::StrCat("listen on ", options_.listen,
                                               ": ", std::strerror(errno)));
  }
  sockaddr_storage bound{};
  socklen_t bound_len = sizeof(bound);
  getsockname(evconnlistener_get_fd(listener_),
              reinterpret_cast<sockaddr*>(&bound), &bound_len);
  port_ = bound.ss_family == AF_INET6
              ? ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port)
              : ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port);
  BloomBatcherOptions bo;
  bo.upstream = options_.upstream;
  bo.threads = options_.threads;
  bo.max_lane_batches = options_.lane_batches;
  batcher_ = std::make_unique<BloomBatcher>(
      bo, [this](std::vector<BloomReply> r) { OnReplies(std::move(r)); });
  context_.batcher = batcher_.get();
  return absl::OkStatus();
}

BloomServer::~BloomServer() { Stop(); }

void BloomServer::Stop() {
  if (stopped_.exchange(true)) return;
  if (loop_.joinable()) {
    event_base_loopbreak(context_.base);
    loop_.join();
  }
  if (batcher_ != nullptr) {
    final_batches_ = batcher_->batches();
    final_batched_requests_ = batcher_->batched_requests();
  }
  batcher_.reset();  // joins the workers: no OnReplies after this
  connections_.clear();
  if (listener_ != nullptr) evconnlistener_free(listener_);
  if (wake_ != nullptr) event_free(wake_);
  if (submit_ != nullptr) event_free(submit_);
  if (context_.base != nullptr) event_base_free(context_.base);
  listener_ = nullptr;
  wake_ = nullptr;
  submit_ = nullptr;
  context_.base = nullptr;
}

void BloomServer::OnAccept(evconnlistener*, int fd, sockaddr*, int, void* arg) {
  auto* s = static_cast<BloomServer*>(arg);
  if (s->connections_.size() >= static_cast<size_t>(s->options_.max_clients)) {
    const char kFull[] = "-ERR max number of clients reached\r\n";
    (void)!write(fd, kFull, sizeof(kFull) - 1);
    close(fd);
    return;
  }
  evutil_make_socket_nonblocking(fd);
  const uint64_t id = s->next_id_++;
  auto c = std::make_unique<ServerConnection>(&s->context_, id, fd);
  ServerConnection* raw = c.get();
  s->connections_.emplace(id, std::move(c));
  if (!raw->Start()) s->connections_.erase(id);
}

void BloomServer::OnReplies(std::vector<BloomReply> replies) {
  {
    MutexLock l(&mu_);
    for (BloomReply& r : replies) replies_.push_back(std::move(r));
  }
  event_active(wake_, EV_READ, 0);
}

void BloomServer::OnSubmit(int, short, void* arg) {
  auto* s = static_cast<BloomServer*>(arg);
  std::vector<BloomRequest> batch;
  batch.swap(s->to_submit_);
  s->batcher_->SubmitMany(std::move(batch));
}

void BloomServer::OnWake(int, short, void* arg) {
  auto* s = static_cast<BloomServer*>(arg);
  std::vector<BloomReply> replies;
  {
    MutexLock l(&s->mu_);
    replies.swap(s->replies_);
  }
  for (BloomReply& r : replies) {
    auto it = s->connections_.find(r.connection);
    if (it == s->connections_.end()) continue;  // the client left
    it->second->OnBloomReply(r.slot, std::move(r.reply));
  }
}

}  // namespace siftdb
