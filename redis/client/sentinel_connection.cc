// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/sentinel_connection.h"

#include <hiredis.h>
#include <poll.h>
#include <sys/socket.h>

#include <cerrno>
#include <charconv>
#include <cstring>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "redis/client/hiredis_reply.h"
#include "redis/client/redis_client.h"

namespace siftdb {

namespace {

timeval NonNegativeTimeval(absl::Duration d) {
  return absl::ToTimeval(std::max(d, absl::ZeroDuration()));
}

std::string SentinelName(const std::string& sentinel) {
  return absl::StrCat("sentinel ", sentinel);
}

// The address in a get-master-addr-by-name reply, or an error text.
absl::StatusOr<RedisEndpoint> MasterFromReply(const RedisReply& reply) {
  if (!reply.is_array() || reply.elements().size() != 2 ||
      !reply.elements()[0].is_string() || !reply.elements()[1].is_string()) {
    return absl::NotFoundError("does not know the master");
  }
  RedisEndpoint master;
  master.host = reply.elements()[0].str();
  const std::string& port = reply.elements()[1].str();
  auto [ptr, ec] =
      std::from_chars(port.data(), port.data() + port.size(), master.port);
  if (ec != std::errc() || ptr != port.data() + port.size() ||
      master.port < 1 || master.port > 65535 || master.host.empty()) {
    return absl::DataLossError("the master's address is malformed");
  }
  return master;
}

}  // namespace

SentinelConnection::SentinelConnection(std::string name, redisContext* ctx,
                                       std::unique_ptr<RedisTlsConnection> tls)
    : name_(std::move(name)), ctx_(ctx), tls_(std::move(tls)) {}

SentinelConnection::~SentinelConnection() {
  if (ctx_ != nullptr) redisFree(ctx_);
}

absl::StatusOr<std::unique_ptr<SentinelConnection>> SentinelConnection::Open(
    const SentinelSet& set, const std::string& sentinel) {
  absl::StatusOr<RedisEndpoint> ep = RedisEndpoint::Parse(sentinel);
  if (!ep.ok()) return ep.status();
  const std::string name = SentinelName(sentinel);
  std::unique_ptr<SentinelConnection> c;
  if (set.tls != nullptr) {
    absl::StatusOr<std::unique_ptr<RedisTlsConnection>> tls =
        RedisTlsConnection::Connect(set.tls, ep->host, ep->port, name,
                                    set.connect_timeout, set.command_timeout);
    if (!tls.ok()) return tls.status();
    c.reset(new SentinelConnection(name, nullptr, std::move(*tls)));
  } else {
    redisContext* ctx = redisConnectWithTimeout(
        ep->host.c_str(), ep->port, NonNegativeTimeval(set.connect_timeout));
    if (ctx == nullptr) {
      return absl::ResourceExhaustedError(
          absl::StrFormat("redis %s: connect: out of memory", name));
    }
    c.reset(new SentinelConnection(name, ctx, nullptr));
    if (ctx->err != 0) return c->HiredisError("connect");
    UseRedisReplyBuilder(ctx->reader);
    if (set.command_timeout > absl::ZeroDuration()) {
      redisSetTimeout(ctx, NonNegativeTimeval(set.command_timeout));
    }
  }
  absl::Status s = c->Auth(set);
  if (!s.ok()) return s;
  return c;
}

absl::Status SentinelConnection::Auth(const SentinelSet& set) {
  if (set.password.empty()) return absl::OkStatus();
  std::vector<std::string> auth = {"AUTH"};
  if (!set.username.empty()) auth.push_back(set.username);
  auth.push_back(set.password);
  absl::StatusOr<RedisReply> reply = Run(auth);
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    // A refused AUTH is a configuration error, not an outage.
    return absl::UnauthenticatedError(
        absl::StrFormat("redis %s: AUTH: %s", name_, reply->str()));
  }
  return absl::OkStatus();
}

absl::Status SentinelConnection::HiredisError(std::string_view what) const {
  return absl::UnavailableError(
      absl::StrFormat("redis %s: %s: %s", name_, what,
                      ctx_->errstr[0] != '\0'
                          ? std::string(ctx_->errstr)
                          : absl::StrFormat("hiredis error %d", ctx_->err)));
}

absl::StatusOr<RedisReply> SentinelConnection::Run(
    const std::vector<std::string>& argv) {
  if (tls_ != nullptr) return tls_->Run(argv);
  return RunOnHiredis(ctx_, argv, name_);
}

absl::Status SentinelConnection::Send(const std::vector<std::string>& argv) {
  RedisArgs args;
  for (const std::string& a : argv) args.Add(a);
  const std::string encoded = args.Encode();
  if (tls_ != nullptr) return tls_->Write(encoded, argv[0]);
  if (redisAppendFormattedCommand(ctx_, encoded.data(), encoded.size()) !=
      REDIS_OK) {
    return HiredisError(argv[0]);
  }
  int done = 0;
  while (done == 0) {
    if (redisBufferWrite(ctx_, &done) != REDIS_OK) return HiredisError(argv[0]);
  }
  return absl::OkStatus();
}

absl::StatusOr<bool> SentinelConnection::ReadReplyWithin(RedisReply* out,
                                                         absl::Duration wait) {
  if (tls_ != nullptr) return tls_->ReadReplyWithin(out, wait, "subscription");
  const absl::Time deadline = absl::Now() + wait;
  while (true) {
    void* raw = nullptr;
    if (redisGetReplyFromReader(ctx_, &raw) != REDIS_OK) {
      return HiredisError("subscription");
    }
    if (raw != nullptr) {
      *out = TakeBuiltReply(raw);
      return true;
    }
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) return false;
    pollfd p = {ctx_->fd, POLLIN, 0};
    const int n = poll(&p, 1,
                       static_cast<int>(absl::ToInt64Milliseconds(
                           left + absl::Milliseconds(1))));
    if (n < 0 && errno != EINTR) {
      return absl::UnavailableError(absl::StrFormat(
          "redis %s: subscription: poll: %s", name_, std::strerror(errno)));
    }
    // Readable (data, or the peer closed: the read then fails).
    if (n > 0 && redisBufferRead(ctx_) != REDIS_OK) {
      return HiredisError("subscription");
    }
  }
}

void SentinelConnection::Shutdown() {
  if (tls_ != nullptr) {
    tls_->Shutdown();
  } else {
    shutdown(ctx_->fd, SHUT_RDWR);
  }
}

absl::StatusOr<RedisEndpoint> ResolveSentinelMaster(const SentinelSet& set,
                                                    size_t* first) {
  std::vector<std::string> errors;
  bool refused = false;
  const size_t n = set.sentinels.size();
  for (size_t i = 0; i < n; i++) {
    // Start from the Sentinel that answered last, so a dead or blackholed
    // one costs a connect timeout once, not on every periodic check.
    const size_t index = (*first + i) % n;
    const std::string& sentinel = set.sentinels[index];
    absl::StatusOr<std::unique_ptr<SentinelConnection>> c =
        SentinelConnection::Open(set, sentinel);
    if (absl::IsInvalidArgument(c.status())) return c.status();
    // A refused AUTH or certificate: try the others, but say so at the end.
    refused |= absl::IsUnauthenticated(c.status());
    if (!c.ok()) {
      errors.push_back(std::string(c.status().message()));
      continue;
    }
    absl::StatusOr<RedisReply> reply =
        (*c)->Run({"SENTINEL", "get-master-addr-by-name", set.master_name});
    if (!reply.ok()) {
      errors.push_back(std::string(reply.status().message()));
      continue;
    }
    if (reply->is_error()) {
      refused |= absl::StartsWith(reply->str(), "NOAUTH") ||
                 absl::StartsWith(reply->str(), "WRONGPASS");
      errors.push_back(absl::StrFormat("%s: %s", sentinel, reply->str()));
      continue;
    }
    absl::StatusOr<RedisEndpoint> master = MasterFromReply(*reply);
    if (!master.ok()) {
      errors.push_back(absl::StrFormat(
          "%s: %s", sentinel,
          absl::IsNotFound(master.status())
              ? absl::StrFormat("does not know master '%s'", set.master_name)
              : master.status().message()));
      continue;
    }
    *first = index;
    return master;
  }
  std::string msg = absl::StrFormat(
      "redis sentinel master '%s': no Sentinel named the master: %s",
      set.master_name, absl::StrJoin(errors, "; "));
  // Retrying cannot help a refused password or certificate.
  return refused ? absl::UnauthenticatedError(msg)
                 : absl::UnavailableError(msg);
}

}  // namespace siftdb
