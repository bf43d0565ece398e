// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/redis_client.h"

#include <hiredis.h>
#include <sys/socket.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <charconv>
#include <cstring>
#include <thread>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "redis/client/hiredis_reply.h"
#include "redis/client/redis_url.h"
#include "redis/client/sentinel_connection.h"
#include "util/absl_compat.h"

namespace siftdb {

namespace {

timeval DurationToTimeval(absl::Duration d) {
  if (d < absl::ZeroDuration()) d = absl::ZeroDuration();
  return absl::ToTimeval(d);
}

std::string_view FirstWord(std::string_view text) {
  size_t space = text.find(' ');
  return space == std::string_view::npos ? text : text.substr(0, space);
}

std::string SentinelText(const RedisClientOptions& o) {
  return absl::StrFormat("sentinel master '%s'", o.master_name);
}

}  // namespace

void ApplyRedisUrl(const RedisUrl& url, RedisClientOptions* options) {
  if (url.is_sentinel()) {
    options->sentinels = url.endpoints;
    options->master_name = url.master_name;
    options->endpoint.clear();
    if (url.sentinel_username.has_value()) {
      options->sentinel_username = *url.sentinel_username;
    }
    if (url.sentinel_password.has_value()) {
      options->sentinel_password = *url.sentinel_password;
    }
  } else if (!url.endpoints.empty()) {
    options->endpoint = url.endpoints[0];
  }
  if (url.username.has_value()) options->username = *url.username;
  if (url.password.has_value()) options->password = *url.password;
  if (url.database.has_value()) options->database = *url.database;
  if (url.read_from.has_value()) options->read_from = *url.read_from;
  if (url.is_tls()) {
    options->tls = true;
    options->tls_options.ca_file = url.tls.ca_cert;
    options->tls_options.cert_file = url.tls.cert;
    options->tls_options.key_file = url.tls.key;
    options->tls_options.server_name = url.tls.sni;
    options->tls_options.verify_peer = url.tls.verify_peer;
  }
}

bool IsTransientServerError(std::string_view error_text) {
  std::string_view w = FirstWord(error_text);
  return w == "LOADING" || w == "BUSY" || w == "MASTERDOWN" ||
         w == "TRYAGAIN" || w == "CLUSTERDOWN";
}

absl::StatusOr<RedisEndpoint> RedisEndpoint::Parse(std::string_view text) {
  RedisEndpoint ep;
  if (absl::StartsWith(AsAbsl(text), "unix:")) {
    ep.unix_path = std::string(text.substr(5));
  } else if (!text.empty() && text[0] == '/') {
    ep.unix_path = std::string(text);
  }
  if (!ep.unix_path.empty() || absl::StartsWith(AsAbsl(text), "unix:")) {
    if (ep.unix_path.empty()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("redis endpoint \"%s\": empty socket path", text));
    }
    return ep;
  }
  std::string_view host = text;
  std::string_view port;
  if (!text.empty() && text[0] == '[') {
    size_t close = text.find(']');
    if (close == std::string_view::npos) {
      return absl::InvalidArgumentError(
          absl::StrFormat("redis endpoint \"%s\": unclosed '['", text));
    }
    host = text.substr(1, close - 1);
    std::string_view rest = text.substr(close + 1);
    if (!rest.empty()) {
      if (rest[0] != ':') {
        return absl::InvalidArgumentError(
            absl::StrFormat("redis endpoint \"%s\": junk after ']'", text));
      }
      port = rest.substr(1);
    }
  } else {
    size_t colon = text.rfind(':');
    if (colon != std::string_view::npos) {
      host = text.substr(0, colon);
      port = text.substr(colon + 1);
    }
  }
  if (host.empty()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("redis endpoint \"%s\": empty host", text));
  }
  ep.host = std::string(host);
  if (!port.empty()) {
    int p = 0;
    auto [ptr, ec] = std::from_chars(port.data(), port.data() + port.size(), p);
    if (ec != std::errc() || ptr != port.data() + port.size() || p < 1 ||
        p > 65535) {
      return absl::InvalidArgumentError(
          absl::StrFormat("redis endpoint \"%s\": bad port", text));
    }
    ep.port = p;
  }
  return ep;
}

std::string RedisEndpoint::ToString() const {
  if (!unix_path.empty()) return "unix:" + unix_path;
  if (host.find(':') != std::string::npos) {
    return absl::StrCat("[", host, "]:", port);
  }
  return absl::StrCat(host, ":", port);
}

RedisScript::RedisScript(std::string source)
    : source_(std::move(source)), id_([] {
        static std::atomic<uint64_t> next{1};
        return next.fetch_add(1, std::memory_order_relaxed);
      }()) {}

RedisClient::RedisClient(const RedisClientOptions& options,
                         RedisEndpoint endpoint,
                         std::shared_ptr<const RedisTlsContext> tls_context)
    : options_(options),
      endpoint_(std::move(endpoint)),
      endpoint_text_(!options.master_name.empty()  ? SentinelText(options)
                     : endpoint_.unix_path.empty() ? endpoint_.ToString()
                                                   : endpoint_.unix_path),
      tls_context_(std::move(tls_context)) {
  sentinel_set_.sentinels = options_.sentinels;
  sentinel_set_.master_name = options_.master_name;
  sentinel_set_.username = options_.sentinel_username;
  sentinel_set_.password = options_.sentinel_password;
  sentinel_set_.tls = tls_context_;
  sentinel_set_.connect_timeout = options_.connect_timeout;
  sentinel_set_.command_timeout = options_.connect_timeout;
  if (via_sentinel() && options_.sentinel_subscribe) {
    watch_ = std::make_unique<SentinelSwitchWatch>(sentinel_set_);
  }
}

RedisClient::~RedisClient() { Close(); }

void RedisClient::Close() {
  if (ctx_ != nullptr) {
    redisFree(ctx_);
    ctx_ = nullptr;
  }
  tls_.reset();
}

absl::StatusOr<RedisReply> RedisClient::RunOnConnection(
    const std::vector<std::string>& argv) {
  if (tls_ != nullptr) return tls_->Run(argv);
  return RunOnHiredis(ctx_, argv, endpoint_text_);
}

absl::Status RedisClient::ContextError(std::string_view what) const {
  std::string detail = ctx_ == nullptr ? "out of memory"
                       : ctx_->errstr[0] != '\0'
                           ? std::string(ctx_->errstr)
                           : absl::StrFormat("hiredis error %d", ctx_->err);
  return absl::UnavailableError(
      absl::StrFormat("redis %s: %s: %s", endpoint_text_, what, detail));
}

absl::StatusOr<RedisEndpoint> RedisClient::ResolveMaster() {
  if (watch_ != nullptr) watch_seen_ = watch_->generation();
  last_resolve_ = absl::Now();
  return ResolveSentinelMaster(sentinel_set_, &sentinel_first_);
}

bool RedisClient::MasterMayHaveMoved() const {
  if (watch_ != nullptr) {
    if (watch_->generation() != watch_seen_) return true;
    // A live subscription tells of every switch: no need to poll.
    if (watch_->subscribed()) return false;
  }
  return absl::Now() - last_resolve_ >= options_.sentinel_check_interval;
}

absl::Status RedisClient::VerifyMaster() {
  absl::StatusOr<RedisReply> role = RunOnConnection({"ROLE"});
  if (!role.ok()) return role.status();
  if (role->is_error()) return ServerErrorStatus("ROLE", *role);
  if (!role->is_array() || role->elements().empty() ||
      !role->elements()[0].is_string()) {
    return absl::UnavailableError(absl::StrFormat(
        "redis %s: ROLE: the reply is not a role", endpoint_text_));
  }
  const std::string& name = role->elements()[0].str();
  if (name != "master") {
    // The Sentinels have not caught up with a failover yet: ask again.
    return absl::UnavailableError(absl::StrFormat(
        "redis %s: %s named it master of '%s' but ROLE says '%s'",
        endpoint_text_, SentinelText(options_), options_.master_name, name));
  }
  return absl::OkStatus();
}

absl::Status RedisClient::Open() {
  Close();
  if (via_sentinel()) {
    absl::StatusOr<RedisEndpoint> master = ResolveMaster();
    if (!master.ok()) return master.status();
    endpoint_ = std::move(*master);
    endpoint_text_ = endpoint_.ToString();
  }
  if (tls_context_ != nullptr) {
    absl::StatusOr<std::unique_ptr<RedisTlsConnection>> conn =
        RedisTlsConnection::Connect(
            tls_context_, endpoint_.host, endpoint_.port, endpoint_text_,
            options_.connect_timeout, options_.command_timeout);
    if (!conn.ok()) return conn.status();
    tls_ = std::move(*conn);
  } else {
    timeval tv = DurationToTimeval(options_.connect_timeout);
    ctx_ = endpoint_.unix_path.empty()
               ? redisConnectWithTimeout(endpoint_.host.c_str(), endpoint_.port,
                                         tv)
               : redisConnectUnixWithTimeout(endpoint_.unix_path.c_str(), tv);
    if (ctx_ == nullptr || ctx_->err != 0) {
      absl::Status s = ContextError("connect");
      Close();
      return s;
    }
    UseRedisReplyBuilder(ctx_->reader);
    if (options_.command_timeout > absl::ZeroDuration()) {
      redisSetTimeout(ctx_, DurationToTimeval(options_.command_timeout));
    }
    if (endpoint_.unix_path.empty()) redisEnableKeepAlive(ctx_);
  }

  auto simple = [&](const std::vector<std::string>& argv,
                    std::string_view what) -> absl::Status {
    absl::StatusOr<RedisReply> reply = RunOnConnection(argv);
    absl::Status s =
        !reply.ok() ? (tls_ != nullptr ? reply.status() : ContextError(what))
        : reply->is_error() ? ServerErrorStatus(what, *reply)
                            : absl::OkStatus();
    if (!s.ok()) Close();
    return s;
  };
  if (!options_.password.empty()) {
    std::vector<std::string> auth = {"AUTH"};
    if (!options_.username.empty()) auth.push_back(options_.username);
    auth.push_back(options_.password);
    absl::Status s = simple(auth, "AUTH");
    if (!s.ok()) return s;
  }
  if (options_.database != 0) {
    absl::Status s =
        simple({"SELECT", absl::StrCat(options_.database)}, "SELECT");
    if (!s.ok()) return s;
  }
  if (via_sentinel()) {
    absl::Status s = VerifyMaster();
    if (!s.ok()) {
      Close();
      return s;
    }
  }
  if (connects_++ > 0) reconnects_++;
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RedisClient>> RedisClient::Connect(
    const RedisClientOptions& given) {
  RedisClientOptions options = given;
  if (IsRedisUrl(options.endpoint)) {
    absl::StatusOr<RedisUrl> url = ParseRedisUrl(options.endpoint);
    if (!url.ok()) return url.status();
    ApplyRedisUrl(*url, &options);
  }
  RedisEndpoint ep;
  if (options.master_name.empty()) {
    absl::StatusOr<RedisEndpoint> parsed =
        RedisEndpoint::Parse(options.endpoint);
    if (!parsed.ok()) return parsed.status();
    ep = std::move(*parsed);
  } else {
    if (options.sentinels.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "redis %s: no Sentinel endpoint given", SentinelText(options)));
    }
    for (const std::string& s : options.sentinels) {
      absl::StatusOr<RedisEndpoint> parsed = RedisEndpoint::Parse(s);
      if (!parsed.ok()) return parsed.status();
      if (!parsed->unix_path.empty()) {
        return absl::InvalidArgumentError(
            "redis: a Sentinel endpoint must be host:port");
      }
    }
  }
  std::shared_ptr<const RedisTlsContext> tls_context;
  if (options.tls) {
    if (!ep.unix_path.empty()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "redis %s: TLS is for TCP endpoints, not unix sockets",
          ep.ToString()));
    }
    absl::StatusOr<std::shared_ptr<const RedisTlsContext>> made =
        RedisTlsContext::Create(options.tls_options);
    if (!made.ok()) return made.status();
    tls_context = std::move(*made);
  }
  std::unique_ptr<RedisClient> client(
      new RedisClient(options, ep, std::move(tls_context)));
  absl::Time deadline = absl::Now() + options.retry_deadline;
  absl::Duration backoff = options.initial_backoff;
  while (true) {
    absl::Status s = client->Open();
    if (s.ok()) return client;
    if (!absl::IsUnavailable(s) || absl::Now() + backoff > deadline) return s;
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, options.max_backoff);
  }
}

absl::Status RedisClient::TryRoundtrip(const std::string& encoded, size_t count,
                                       std::string_view name,
                                       std::vector<RedisReply>* replies) {
  replies->clear();
  replies->reserve(count);
  if (tls_ != nullptr) {
    absl::Status s = tls_->Write(encoded, name);
    for (size_t i = 0; s.ok() && i < count; i++) {
      RedisReply reply;
      s = tls_->ReadReply(&reply, name);
      if (!s.ok()) break;
      replies->push_back(std::move(reply));
    }
    return s;
  }
  if (absl::Status s = WriteAll(encoded, name); !s.ok()) return s;
  for (size_t i = 0; i < count; i++) {
    void* raw = nullptr;
    if (redisGetReply(ctx_, &raw) != REDIS_OK || raw == nullptr) {
      return ContextError(name);
    }
    replies->push_back(TakeBuiltReply(raw));
  }
  return absl::OkStatus();
}

absl::Status RedisClient::WriteAll(const std::string& encoded,
                                   std::string_view name) {
  // Straight to the socket rather than through hiredis's output buffer,
  // which copies the request and, on each partial write of a large one,
  // moves the unwritten rest to the buffer's front (quadratic in the
  // request's size). The socket is blocking with SO_SNDTIMEO set to the
  // command timeout (redisSetTimeout), so a stalled server ends in EAGAIN.
  size_t done = 0;
  while (done < encoded.size()) {
    const ssize_t n = ::send(ctx_->fd, encoded.data() + done,
                             encoded.size() - done, MSG_NOSIGNAL);
    if (n > 0) {
      done += static_cast<size_t>(n);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    const int err = n < 0 ? errno : EPIPE;
    return absl::UnavailableError(absl::StrFormat(
        "redis %s: %s: write: %s", endpoint_text_, name,
        err == EAGAIN || err == EWOULDBLOCK ? "timed out"
                                            : std::strerror(err)));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<RedisReply>> RedisClient::Roundtrip(
    const std::string& encoded, size_t count, std::string_view name) {
  const absl::Time deadline = absl::Now() + options_.retry_deadline;
  absl::Duration backoff = options_.initial_backoff;
  int attempts = 0;
  std::vector<RedisReply> replies;
  while (true) {
    attempts++;
    if (via_sentinel() && connected() && MasterMayHaveMoved()) {
      // Has a failover replaced our master? If the Sentinels cannot be
      // asked, keep the connection we have (ROLE checked it).
      absl::StatusOr<RedisEndpoint> master = ResolveMaster();
      if (master.ok() && master->ToString() != endpoint_text_) {
        Close();
        master_moves_++;
      }
    }
    absl::Status s = !connected() ? Open() : absl::OkStatus();
    if (s.ok()) {
      s = TryRoundtrip(encoded, count, name, &replies);
      if (!s.ok()) {
        Close();  // a failed hiredis context is dead
      } else {
        const RedisReply* transient = nullptr;
        bool demoted = false;
        for (const RedisReply& r : replies) {
          if (!r.is_error()) continue;
          if (IsTransientServerError(r.str())) transient = &r;
          // Through Sentinel, -READONLY means the node was demoted by a
          // failover: ask the Sentinels again and resend (the refused
          // writes did not run).
          if (via_sentinel() && FirstWord(r.str()) == "READONLY") {
            transient = &r;
            demoted = true;
          }
        }
        if (transient == nullptr) return replies;
        s = ServerErrorStatus(name, *transient);
        if (demoted) {
          s = absl::UnavailableError(s.message());
          Close();
        }
      }
    }
    if (!absl::IsUnavailable(s)) return s;  // e.g. AUTH refused
    if (absl::Now() + backoff > deadline) {
      if (attempts == 1) return s;
      return absl::UnavailableError(absl::StrFormat(
          "%s (gave up after %d attempts)", s.message(), attempts));
    }
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, options_.max_backoff);
  }
}

absl::StatusOr<RedisReply> RedisClient::Command(const RedisArgs& args) {
  if (args.empty()) return absl::InvalidArgumentError("redis: empty command");
  absl::StatusOr<std::vector<RedisReply>> r =
      Roundtrip(args.Encode(), 1, args.name());
  if (!r.ok()) return r.status();
  return std::move((*r)[0]);
}

absl::StatusOr<RedisReply> RedisClient::Command(
    std::initializer_list<std::string_view> a) {
  return Command(RedisArgs(a));
}

absl::StatusOr<RedisReply> RedisClient::Command(
    const std::vector<std::string>& argv) {
  RedisArgs args;
  for (const std::string& a : argv) args.Add(a);
  return Command(args);
}

absl::StatusOr<std::vector<RedisReply>> RedisClient::Pipeline(
    const std::vector<RedisArgs>& commands) {
  if (commands.empty()) return std::vector<RedisReply>();
  size_t bytes = 0;
  for (const RedisArgs& c : commands) {
    if (c.empty()) return absl::InvalidArgumentError("redis: empty command");
    bytes += c.body_bytes() + 24;
  }
  std::string encoded;
  encoded.reserve(bytes);
  for (const RedisArgs& c : commands) c.AppendEncodedTo(&encoded);
  return Roundtrip(encoded, commands.size(),
                   commands.size() == 1 ? commands[0].name() : "pipeline");
}

absl::StatusOr<RedisReply> RedisClient::Eval(
    const RedisScript& script, const std::vector<std::string>& keys,
    const RedisArgs& args) {
  for (int attempt = 0;; attempt++) {
    auto known = script_sha_.find(script.id());
    if (known == script_sha_.end()) {
      // First use on this client, or the server lost its scripts (restart,
      // failover, SCRIPT FLUSH): load it and learn its name.
      absl::StatusOr<RedisReply> loaded =
          Command({"SCRIPT", "LOAD", script.source()});
      if (!loaded.ok()) return loaded.status();
      if (loaded->is_error()) return ServerErrorStatus("SCRIPT LOAD", *loaded);
      if (!loaded->is_string() || loaded->str().empty()) {
        return absl::InternalError(absl::StrFormat(
            "redis %s: SCRIPT LOAD: the reply is not a script name",
            endpoint_text_));
      }
      known = script_sha_.insert_or_assign(script.id(), loaded->str()).first;
    }
    RedisArgs cmd;
    cmd.Add("EVALSHA").Add(known->second).AddUint(keys.size());
    for (const std::string& k : keys) cmd.Add(k);
    cmd.Append(args);
    absl::StatusOr<RedisReply> reply = Command(cmd);
    if (!reply.ok()) return reply;
    if (!reply->is_error() || !absl::StartsWith(reply->str(), "NOSCRIPT") ||
        attempt >= 3) {
      return reply;
    }
    script_sha_.erase(script.id());
  }
}

absl::Status RedisClient::ServerErrorStatus(std::string_view command,
                                            const RedisReply& reply) const {
  std::string msg =
      absl::StrFormat("redis %s: %s: %s", endpoint_text_, command, reply.str());
  std::string_view w = FirstWord(reply.str());
  if (w == "WRONGTYPE") return absl::FailedPreconditionError(msg);
  if (w == "NOAUTH" || w == "WRONGPASS") return absl::UnauthenticatedError(msg);
  if (w == "NOPERM") return absl::PermissionDeniedError(msg);
  if (w == "OOM") return absl::ResourceExhaustedError(msg);
  if (IsTransientServerError(reply.str())) return absl::UnavailableError(msg);
  return absl::InvalidArgumentError(msg);
}

}  // namespace siftdb
