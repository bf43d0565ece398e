// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/server/server_connection.h"

#include <event2/buffer.h>
#include <event2/bufferevent.h>
#include <event2/event.h>
#include <unistd.h>

#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"

namespace siftdb {

namespace {

// Commands the BF.* interpreter answers itself on a filter's name.
constexpr const char* kKeyCommands[] = {
    "DEL",      "UNLINK",    "EXISTS", "TYPE", "EXPIRE", "PEXPIRE",
    "EXPIREAT", "PEXPIREAT", "TTL",    "PTTL", "PERSIST"};

constexpr const char* kPipeCommands[] = {"SUBSCRIBE", "PSUBSCRIBE",
                                         "SSUBSCRIBE", "MONITOR"};

bool OneOf(const std::string& upper, const auto& list) {
  for (const char* c : list) {
    if (upper == c) return true;
  }
  return false;
}

std::string Encode(const std::vector<std::string>& argv) {
  RedisArgs args;
  for (const std::string& a : argv) args.Add(a);
  return args.Encode();
}

void AppendTo(bufferevent* bev, std::string_view bytes) {
  if (bev != nullptr && !bytes.empty()) {
    bufferevent_write(bev, bytes.data(), bytes.size());
  }
}

size_t OutputLength(bufferevent* bev) {
  return bev == nullptr ? 0 : evbuffer_get_length(bufferevent_get_output(bev));
}

// Moves everything readable from `bev` onto the end of *out.
void Drain(bufferevent* bev, std::string* out) {
  evbuffer* in = bufferevent_get_input(bev);
  const size_t n = evbuffer_get_length(in);
  const size_t old = out->size();
  out->resize(old + n);
  evbuffer_remove(in, out->data() + old, n);
}

}  // namespace

ServerConnection::ServerConnection(ServerContext* context, uint64_t id, int fd)
    : context_(context), id_(id), fd_(fd) {
  resp_limits_.max_bulk = context_->limits.max_query_buffer;
}

ServerConnection::~ServerConnection() {
  if (client_ != nullptr) {
    bufferevent_free(client_);  // closes fd_
  } else {
    close(fd_);
  }
  if (upstream_ != nullptr) bufferevent_free(upstream_);
}

bool ServerConnection::Start() {
  client_ = bufferevent_socket_new(context_->base, fd_, BEV_OPT_CLOSE_ON_FREE);
  upstream_ = bufferevent_socket_new(context_->base, -1, BEV_OPT_CLOSE_ON_FREE);
  if (client_ == nullptr || upstream_ == nullptr) return false;
  bufferevent_setcb(client_, OnClientRead, OnClientWrite, OnClientEvent, this);
  bufferevent_setcb(upstream_, OnUpstreamRead, OnUpstreamWrite, OnUpstreamEvent,
                    this);
  // Write callbacks fire once output drops to half the limit.
  bufferevent_setwatermark(client_, EV_WRITE, context_->limits.max_output / 2,
                           0);
  bufferevent_setwatermark(upstream_, EV_WRITE, context_->limits.max_output / 2,
                           0);
  if (bufferevent_socket_connect(
          upstream_, reinterpret_cast<sockaddr*>(&context_->upstream),
          static_cast<int>(context_->upstream_len)) != 0) {
    return false;
  }
  bufferevent_enable(client_, EV_READ | EV_WRITE);
  bufferevent_enable(upstream_, EV_READ | EV_WRITE);
  const BloomCredentials& c = context_->initial;
  if (!c.password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!c.username.empty()) auth.push_back(c.username);
    auth.push_back(c.password);
    SendHidden(std::move(auth), Action::kAuth, {c.username, c.password, 0});
  }
  if (c.database != 0) {
    BloomCredentials s = credentials_;
    s.database = c.database;
    SendHidden({"SELECT", std::to_string(c.database)}, Action::kSelect, s);
  }
  return true;
}

void ServerConnection::SendHidden(std::vector<std::string> argv, Action action,
                                  BloomCredentials credentials) {
  AppendTo(upstream_, Encode(argv));
  expects_.push_back(Expect{false, 0, action, std::move(credentials), false});
}

void ServerConnection::OnClientRead(bufferevent*, void* arg) {
  auto* c = static_cast<ServerConnection*>(arg);
  c->ReadClient();
  c->Settle();
}

void ServerConnection::OnClientWrite(bufferevent*, void* arg) {
  auto* c = static_cast<ServerConnection*>(arg);
  c->UpdateReading();
  c->Settle();
}

void ServerConnection::OnClientEvent(bufferevent*, short what, void* arg) {
  auto* c = static_cast<ServerConnection*>(arg);
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
    c->close_after_flush_ = false;
    c->Close();
  }
  c->Settle();
}

void ServerConnection::OnUpstreamRead(bufferevent*, void* arg) {
  auto* c = static_cast<ServerConnection*>(arg);
  c->ReadUpstream();
  c->Settle();
}

void ServerConnection::OnUpstreamWrite(bufferevent*, void* arg) {
  auto* c = static_cast<ServerConnection*>(arg);
  c->UpdateReading();
  c->Settle();
}

void ServerConnection::OnUpstreamEvent(bufferevent*, short what, void* arg) {
  auto* c = static_cast<ServerConnection*>(arg);
  if (what & (BEV_EVENT_EOF | BEV_EVENT_ERROR)) {
    if (!c->pipe_) {
      // Replies still owed are lost with the upstream connection.
      AppendTo(c->client_, ErrorReply("ERR upstream Redis connection lost"));
    }
    c->close_after_flush_ = true;
    c->Close();
  }
  c->Settle();
}

void ServerConnection::ReadClient() {
  if (closed_) return;
  if (pipe_) {
    bufferevent_write_buffer(upstream_, bufferevent_get_input(client_));
    UpdateReading();
    return;
  }
  Drain(client_, &in_);
  ParseRequests();
}

void ServerConnection::ParseRequests() {
  size_t pos = 0;
  std::vector<std::string> argv;
  while (!closed_ && !pipe_pending_ && pos < in_.size() &&
         slots_.size() < context_->limits.max_pending_replies) {
    size_t used = 0;
    std::string error;
    const RespParse r = ParseRequest(std::string_view(in_).substr(pos),
                                     resp_limits_, &argv, &used, &error);
    if (r == RespParse::kNeedMore) {
      if (in_.size() - pos > context_->limits.max_query_buffer) {
        ProtocolError("ERR Protocol error: query buffer limit reached");
      }
      break;
    }
    if (r == RespParse::kError) {
      ProtocolError(error);
      break;
    }
    pos += used;
    if (!argv.empty()) Handle(std::move(argv));
  }
  in_.erase(0, pos);
  Dispatch();
  Flush();
  UpdateReading();
}

uint64_t ServerConnection::OpenSlot() {
  slots_.emplace_back();
  return first_slot_ + slots_.size() - 1;
}

void ServerConnection::LocalReply(std::string bytes) {
  const uint64_t s = OpenSlot();
  slots_[s - first_slot_] = Slot{true, std::move(bytes)};
}

void ServerConnection::Handle(std::vector<std::string> argv) {
  const std::string upper = absl::AsciiStrToUpper(argv[0]);
  const bool bloom =
      absl::StartsWith(upper, "BF.") || absl::StartsWith(upper, "CBF.");
  if (upper == "HELLO" && argv.size() >= 2 && argv[1] != "2") {
    LocalReply(ErrorReply("NOPROTO unsupported protocol version"));
    return;
  }
  if (bloom && in_multi_) {
    LocalReply(
        ErrorReply("ERR BF.* and CBF.* commands are not allowed inside MULTI"));
    return;
  }
  if (upper == "QUIT") {
    LocalReply("+OK\r\n");
    close_after_flush_ = true;
    pipe_pending_ = true;  // parse nothing more
    return;
  }
  Route route = Route::kUpstream;
  if (!in_multi_ && (bloom || OneOf(upper, kKeyCommands))) {
    route = Route::kBloom;
  } else if (!in_multi_ && OneOf(upper, kPipeCommands)) {
    route = Route::kPipe;
    pipe_pending_ = true;
  }
  if (upper == "MULTI") in_multi_ = true;
  if (upper == "EXEC" || upper == "DISCARD" || upper == "RESET") {
    in_multi_ = false;
  }
  const uint64_t slot = route == Route::kPipe ? 0 : OpenSlot();
  queued_.push_back(Queued{route, slot, std::move(argv)});
}

void ServerConnection::Dispatch() {
  while (!closed_ && !queued_.empty()) {
    Queued& q = queued_.front();
    if (q.route == Route::kBloom) {
      if (!expects_.empty()) return;
      bloom_in_flight_++;
      context_->submit(
          BloomRequest{id_, q.slot, credentials_, std::move(q.argv)});
    } else {
      if (bloom_in_flight_ > 0) return;
      SendUpstream(std::move(q));
    }
    queued_.pop_front();
  }
}

void ServerConnection::SendUpstream(Queued q) {
  Expect e{true, q.slot, Action::kNone, credentials_, q.route == Route::kPipe};
  const std::string upper = absl::AsciiStrToUpper(q.argv[0]);
  const size_t n = q.argv.size();
  if (upper == "AUTH" && (n == 2 || n == 3)) {
    e.action = Action::kAuth;
    e.credentials.username = n == 3 ? q.argv[1] : "";
    e.credentials.password = q.argv[n - 1];
  } else if (upper == "HELLO") {
    for (size_t i = 2; i + 2 < n; i++) {
      if (absl::AsciiStrToUpper(q.argv[i]) == "AUTH") {
        e.action = Action::kAuth;
        e.credentials.username = q.argv[i + 1];
        e.credentials.password = q.argv[i + 2];
        break;
      }
    }
  } else if (upper == "SELECT" && n == 2) {
    int db = 0;
    if (absl::SimpleAtoi(q.argv[1], &db)) {
      e.action = Action::kSelect;
      e.credentials.database = db;
    }
  } else if (upper == "RESET") {
    e.action = Action::kReset;
  }
  AppendTo(upstream_, Encode(q.argv));
  expects_.push_back(std::move(e));
}

void ServerConnection::ApplyAction(const Expect& e, std::string_view reply) {
  if (reply.empty() || reply[0] == '-') return;
  switch (e.action) {
    case Action::kAuth:
      credentials_.username = e.credentials.username;
      credentials_.password = e.credentials.password;
      break;
    case Action::kSelect:
      credentials_.database = e.credentials.database;
      break;
    case Action::kReset:
      credentials_ = BloomCredentials();
      break;
    case Action::kNone:
      break;
  }
}

void ServerConnection::ReadUpstream() {
  if (closed_) return;
  if (pipe_) {
    bufferevent_write_buffer(client_, bufferevent_get_input(upstream_));
    UpdateReading();
    return;
  }
  Drain(upstream_, &up_in_);
  size_t pos = 0;
  while (!expects_.empty()) {
    if (expects_.front().pipe) {
      expects_.pop_front();
      up_in_.erase(0, pos);
      pos = 0;
      EnterPipe();
      return;
    }
    const long len = ReplyLength(std::string_view(up_in_).substr(pos));
    if (len == 0) break;
    if (len < 0) {
      AppendTo(client_, ErrorReply("ERR upstream Redis sent a bad reply"));
      close_after_flush_ = true;
      Close();
      return;
    }
    const std::string_view reply(up_in_.data() + pos, static_cast<size_t>(len));
    const Expect e = std::move(expects_.front());
    expects_.pop_front();
    ApplyAction(e, reply);
    if (e.to_client) {
      slots_[e.slot - first_slot_] = Slot{true, std::string(reply)};
    }
    pos += static_cast<size_t>(len);
  }
  up_in_.erase(0, pos);
  Flush();
  Dispatch();
  ParseRequests();
}

void ServerConnection::OnBloomReply(uint64_t slot, RedisReply reply) {
  if (closed_) return;
  bloom_in_flight_--;
  Slot& s = slots_[slot - first_slot_];
  s.ready = true;
  AppendReply(reply, &s.bytes);
  Flush();
  Dispatch();
  ParseRequests();
  Settle();
}

void ServerConnection::EnterPipe() {
  Flush();  // every earlier reply is in: the lanes were drained
  pipe_ = true;
  AppendTo(client_, up_in_);
  up_in_.clear();
  AppendTo(upstream_, in_);
  in_.clear();
  UpdateReading();
}

void ServerConnection::Flush() {
  while (!slots_.empty() && slots_.front().ready) {
    AppendTo(client_, slots_.front().bytes);
    slots_.pop_front();
    first_slot_++;
  }
}

void ServerConnection::UpdateReading() {
  if (closed_) return;
  const size_t max_out = context_->limits.max_output;
  const bool client_ok = !close_after_flush_ &&
                         slots_.size() < context_->limits.max_pending_replies &&
                         OutputLength(client_) <= max_out &&
                         OutputLength(upstream_) <= max_out;
  if (client_ok) {
    bufferevent_enable(client_, EV_READ);
  } else {
    bufferevent_disable(client_, EV_READ);
  }
  if (pipe_ && OutputLength(client_) > max_out) {
    bufferevent_disable(upstream_, EV_READ);
  } else {
    bufferevent_enable(upstream_, EV_READ);
  }
}

void ServerConnection::ProtocolError(const std::string& text) {
  LocalReply(ErrorReply(text));
  Flush();
  close_after_flush_ = true;
  pipe_pending_ = true;
}

void ServerConnection::Close() {
  if (closed_) return;
  closed_ = true;
  if (upstream_ != nullptr) {
    bufferevent_free(upstream_);
    upstream_ = nullptr;
  }
  if (client_ != nullptr) bufferevent_disable(client_, EV_READ);
}

void ServerConnection::Settle() {
  if (close_after_flush_ && !closed_ && slots_.empty()) Close();
  if (!closed_) return;
  if (close_after_flush_ && client_ != nullptr && OutputLength(client_) > 0) {
    return;  // OnClientWrite comes back when it is written
  }
  context_->destroy(id_);  // deletes this: nothing may follow
}

}  // namespace siftdb
