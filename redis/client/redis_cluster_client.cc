// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/redis_cluster_client.h"

#include <algorithm>
#include <array>
#include <charconv>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/client/redis_replica_read.h"
#include "redis/client/redis_url.h"
#include "util/absl_compat.h"

namespace siftdb {

namespace {

// CRC16-XMODEM table for polynomial 0x1021 (computed, not copied).
constexpr std::array<uint16_t, 256> MakeCrc16Table() {
  std::array<uint16_t, 256> table{};
  for (int i = 0; i < 256; i++) {
    uint16_t crc = static_cast<uint16_t>(i << 8);
    for (int bit = 0; bit < 8; bit++) {
      crc = (crc & 0x8000) ? static_cast<uint16_t>((crc << 1) ^ 0x1021)
                           : static_cast<uint16_t>(crc << 1);
    }
    table[i] = crc;
  }
  return table;
}
constexpr std::array<uint16_t, 256> kCrc16Table = MakeCrc16Table();

bool ParseInt(std::string_view text, int64_t* out) {
  auto [ptr, ec] =
      std::from_chars(text.data(), text.data() + text.size(), *out);
  return ec == std::errc() && ptr == text.data() + text.size();
}

// "host:port" with IPv6 hosts bracketed, as RedisEndpoint::Parse reads it.
std::string JoinHostPort(std::string_view host, int64_t port) {
  if (host.find(':') != std::string_view::npos) {
    return absl::StrFormat("[%s]:%d", host, port);
  }
  return absl::StrFormat("%s:%d", host, port);
}

std::string HostOf(std::string_view endpoint) {
  absl::StatusOr<RedisEndpoint> ep = RedisEndpoint::Parse(endpoint);
  return ep.ok() ? ep->host : std::string();
}

// --- Standalone server or replica ---------------------------------------

class StandaloneConnection final : public RedisConnection {
 public:
  StandaloneConnection(RedisClientOptions options,
                       std::unique_ptr<RedisClient> client)
      : options_(std::move(options)),
        client_(std::move(client)),
        connected_once_(client_ != nullptr) {}

  absl::StatusOr<std::vector<RedisReply>> Pipeline(
      const std::vector<RedisArgs>& commands,
      std::string_view routing_key) override {
    if (client_ == nullptr) {
      absl::StatusOr<std::unique_ptr<RedisClient>> c =
          RedisClient::Connect(options_);
      if (!c.ok()) return c.status();
      client_ = std::move(*c);
      if (connected_once_) reconnects_++;
      connected_once_ = true;
    }
    round_trips_++;
    const int64_t before = client_->reconnects();
    absl::StatusOr<std::vector<RedisReply>> r = client_->Pipeline(commands);
    reconnects_ += client_->reconnects() - before;
    return r;
  }

  void Reset() override { client_.reset(); }
  bool is_cluster() const override { return false; }
  std::string Describe(std::string_view) const override {
    if (client_ != nullptr) return client_->endpoint();
    return options_.master_name.empty()
               ? options_.endpoint
               : "sentinel master '" + options_.master_name + "'";
  }

 private:
  const RedisClientOptions options_;
  std::unique_ptr<RedisClient> client_;  // null: reconnect on next use
  bool connected_once_;                  // a client was made before
};

// --- Redis Cluster --------------------------------------------------------

class ClusterConnection final : public RedisConnection {
 public:
  ClusterConnection(RedisConnectOptions options)
      : options_(std::move(options)), slot_owner_(kRedisClusterSlots, -1) {}

  // Loads the slot map from the first node that answers CLUSTER SLOTS.
  absl::Status RefreshSlots() {
    std::vector<std::string> candidates = nodes_;
    for (const std::string& s : options_.endpoints) {
      if (std::find(candidates.begin(), candidates.end(), s) ==
          candidates.end()) {
        candidates.push_back(s);
      }
    }
    absl::Status last = absl::UnavailableError("redis cluster: no seed nodes");
    for (const std::string& endpoint : candidates) {
      absl::StatusOr<RedisClient*> client = Client(endpoint);
      if (!client.ok()) {
        last = client.status();
        if (absl::IsUnauthenticated(last)) return last;
        continue;
      }
      round_trips_++;
      absl::StatusOr<RedisReply> reply =
          (*client)->Command({"CLUSTER", "SLOTS"});
      if (!reply.ok()) {
        DropClient(endpoint);
        last = reply.status();
        continue;
      }
      if (reply->is_error()) {
        last = (*client)->ServerErrorStatus("CLUSTER SLOTS", *reply);
        continue;
      }
      absl::Status s = LoadSlots(*reply, HostOf(endpoint));
      if (s.ok()) return s;
      last = absl::Status(
          s.code(), absl::StrFormat("redis %s: %s", endpoint, s.message()));
    }
    return last;
  }

  absl::StatusOr<std::vector<RedisReply>> Pipeline(
      const std::vector<RedisArgs>& commands,
      std::string_view routing_key) override {
    const int slot = RedisKeySlot(routing_key);
    if (slot_owner_[slot] < 0) {
      absl::Status s = RefreshSlots();
      if (!s.ok()) return s;
      if (slot_owner_[slot] < 0) {
        return absl::UnavailableError(absl::StrFormat(
            "redis cluster: no node serves slot %d (key \"%s\")", slot,
            absl::CHexEscape(AsAbsl(routing_key))));
      }
    }
    std::string target = nodes_[slot_owner_[slot]];
    bool ask = false;
    std::vector<size_t> pending(commands.size());
    for (size_t i = 0; i < pending.size(); i++) pending[i] = i;
    std::vector<RedisReply> replies(commands.size());
    for (int hop = 0;; hop++) {
      absl::StatusOr<RedisClient*> client = Client(target);
      if (!client.ok()) {
        ForgetSlots();
        return client.status();
      }
      std::vector<RedisArgs> batch;
      batch.reserve(pending.size() * (ask ? 2 : 1));
      for (size_t i : pending) {
        if (ask) batch.push_back(RedisArgs{"ASKING"});
        batch.push_back(commands[i]);
      }
      round_trips_++;
      absl::StatusOr<std::vector<RedisReply>> got = (*client)->Pipeline(batch);
      if (!got.ok()) {
        DropClient(target);
        ForgetSlots();
        return got.status();
      }
      std::vector<size_t> redirected;
      RedisRedirect redirect;
      bool have_redirect = false;
      for (size_t j = 0; j < pending.size(); j++) {
        RedisReply& r = (*got)[ask ? 2 * j + 1 : j];
        RedisRedirect rd;
        if (r.is_error() && ParseRedisRedirect(r.str(), &rd)) {
          redirected.push_back(pending[j]);
          if (!have_redirect) {
            redirect = rd;
            have_redirect = true;
          }
        } else {
          replies[pending[j]] = std::move(r);
        }
      }
      if (redirected.empty()) return replies;
      if (hop >= options_.max_redirects) {
        return absl::UnavailableError(absl::StrFormat(
            "redis cluster: gave up after %d redirects for slot %d (last: "
            "%s %d %s)",
            hop + 1, slot, redirect.ask ? "ASK" : "MOVED", redirect.slot,
            redirect.endpoint));
      }
      redirects_++;
      std::string next = redirect.endpoint;
      if (!next.empty() && next[0] == ':') next = HostOf(target) + next;
      if (!redirect.ask) {
        // The slot moved: remember the new owner now, and reload the whole
        // map (other slots probably moved too).
        slot_owner_[redirect.slot] = NodeIndex(next);
        RefreshSlots().IgnoreError();
        slot_owner_[redirect.slot] = NodeIndex(next);
      }
      ask = redirect.ask;
      target = next;
      pending = std::move(redirected);
    }
  }

  void Reset() override {
    clients_.clear();
    ForgetSlots();
  }
  bool is_cluster() const override { return true; }
  std::string Describe(std::string_view routing_key) const override {
    int owner = slot_owner_[RedisKeySlot(routing_key)];
    return owner >= 0 ? nodes_[owner]
                      : absl::StrCat("cluster seeds ", options_.endpoints[0]);
  }

 private:
  absl::StatusOr<RedisClient*> Client(const std::string& endpoint) {
    auto it = clients_.find(endpoint);
    if (it != clients_.end()) return it->second.get();
    RedisClientOptions o = options_.client;
    o.endpoint = endpoint;
    absl::StatusOr<std::unique_ptr<RedisClient>> c = RedisClient::Connect(o);
    if (!c.ok()) return c.status();
    RedisClient* raw = c->get();
    clients_[endpoint] = std::move(*c);
    return raw;
  }
  void DropClient(const std::string& endpoint) { clients_.erase(endpoint); }
  void ForgetSlots() { std::fill(slot_owner_.begin(), slot_owner_.end(), -1); }

  int NodeIndex(const std::string& endpoint) {
    auto it = std::find(nodes_.begin(), nodes_.end(), endpoint);
    if (it != nodes_.end()) return static_cast<int>(it - nodes_.begin());
    nodes_.push_back(endpoint);
    return static_cast<int>(nodes_.size() - 1);
  }

  // CLUSTER SLOTS: [[start, end, [host, port, id, ...], replicas...], ...].
  absl::Status LoadSlots(const RedisReply& reply,
                         const std::string& asked_host) {
    if (!reply.is_array()) {
      return absl::InvalidArgumentError("CLUSTER SLOTS: not an array");
    }
    std::vector<int> owner(kRedisClusterSlots, -1);
    for (const RedisReply& range : reply.elements()) {
      const auto& e = range.elements();
      if (!range.is_array() || e.size() < 3 || !e[0].is_integer() ||
          !e[1].is_integer() || !e[2].is_array() ||
          e[2].elements().size() < 2 || !e[2].elements()[1].is_integer()) {
        return absl::InvalidArgumentError(absl::StrFormat(
            "CLUSTER SLOTS: malformed entry %s", range.DebugString()));
      }
      int64_t lo = e[0].integer(), hi = e[1].integer();
      if (lo < 0 || hi >= kRedisClusterSlots || lo > hi) {
        return absl::InvalidArgumentError(
            absl::StrFormat("CLUSTER SLOTS: bad range %d-%d", lo, hi));
      }
      std::string host = e[2].elements()[0].str();
      if (host.empty() || host == "?") host = asked_host;
      int node = NodeIndex(JoinHostPort(host, e[2].elements()[1].integer()));
      for (int64_t s = lo; s <= hi; s++) owner[s] = node;
    }
    slot_owner_ = std::move(owner);
    return absl::OkStatus();
  }

  const RedisConnectOptions options_;
  std::vector<std::string> nodes_;  // endpoints, indexed by slot_owner_
  std::vector<int> slot_owner_;     // slot -> index into nodes_, -1 unknown
  std::map<std::string, std::unique_ptr<RedisClient>> clients_;
};

}  // namespace

uint16_t RedisCrc16(std::string_view data) {
  uint16_t crc = 0;
  for (unsigned char c : data) {
    crc = static_cast<uint16_t>((crc << 8) ^
                                kCrc16Table[((crc >> 8) ^ c) & 0xff]);
  }
  return crc;
}

int RedisKeySlot(std::string_view key) {
  size_t open = key.find('{');
  if (open != std::string_view::npos) {
    size_t close = key.find('}', open + 1);
    if (close != std::string_view::npos && close > open + 1) {
      key = key.substr(open + 1, close - open - 1);
    }
  }
  return RedisCrc16(key) & (kRedisClusterSlots - 1);
}

bool ParseRedisRedirect(std::string_view error_text, RedisRedirect* out) {
  bool ask;
  if (absl::StartsWith(AsAbsl(error_text), "MOVED ")) {
    ask = false;
  } else if (absl::StartsWith(AsAbsl(error_text), "ASK ")) {
    ask = true;
  } else {
    return false;
  }
  std::string_view rest = error_text.substr(ask ? 4 : 6);
  size_t space = rest.find(' ');
  if (space == std::string_view::npos) return false;
  int64_t slot;
  if (!ParseInt(rest.substr(0, space), &slot) || slot < 0 ||
      slot >= kRedisClusterSlots) {
    return false;
  }
  std::string_view endpoint = rest.substr(space + 1);
  if (endpoint.empty() || endpoint.find(' ') != std::string_view::npos) {
    return false;
  }
  out->ask = ask;
  out->slot = static_cast<int>(slot);
  out->endpoint = std::string(endpoint);
  return true;
}

absl::StatusOr<std::unique_ptr<RedisConnection>> ConnectRedis(
    const RedisConnectOptions& options) {
  if (options.endpoints.empty()) {
    return absl::InvalidArgumentError("redis: no endpoint given");
  }
  for (const std::string& endpoint : options.endpoints) {
    if (IsRedisUrl(endpoint) && options.endpoints.size() > 1) {
      return absl::InvalidArgumentError(
          "redis: a URL must be the only endpoint given");
    }
  }
  if (IsRedisUrl(options.endpoints[0])) {
    absl::StatusOr<RedisUrl> url = ParseRedisUrl(options.endpoints[0]);
    if (!url.ok()) return url.status();
    RedisConnectOptions applied = options;
    ApplyRedisUrl(*url, &applied.client);
    if (url->is_sentinel()) {
      // A Sentinel-managed master is never a cluster node.
      absl::StatusOr<std::unique_ptr<RedisClient>> client =
          RedisClient::Connect(applied.client);
      if (!client.ok()) return client.status();
      if (applied.client.read_from == RedisReadFrom::kReplicaPreferred) {
        // Connected first, so a refused AUTH or an unknown master is an
        // error of the connect, as with read_from = master.
        return NewReplicaReadConnection(applied.client, {}, std::move(*client));
      }
      return std::unique_ptr<RedisConnection>(
          new StandaloneConnection(applied.client, std::move(*client)));
    }
    applied.endpoints = url->endpoints;
    return ConnectRedis(applied);
  }
  absl::Status last;
  for (const std::string& endpoint : options.endpoints) {
    RedisClientOptions o = options.client;
    o.endpoint = endpoint;
    absl::StatusOr<std::unique_ptr<RedisClient>> client =
        RedisClient::Connect(o);
    if (!client.ok()) {
      last = client.status();
      if (!absl::IsUnavailable(last)) return last;
      continue;
    }
    absl::StatusOr<RedisReply> slots = (*client)->Command({"CLUSTER", "SLOTS"});
    if (!slots.ok()) {
      last = slots.status();
      continue;
    }
    if (slots->is_error()) {
      // "ERR This instance has cluster support disabled" (or an ACL that
      // forbids CLUSTER): talk to it as a standalone server.
      if (o.read_from == RedisReadFrom::kReplicaPreferred) {
        return NewReplicaReadConnection(o, options.endpoints);
      }
      return std::unique_ptr<RedisConnection>(
          new StandaloneConnection(o, std::move(*client)));
    }
    auto cluster = std::make_unique<ClusterConnection>(options);
    absl::Status s = cluster->RefreshSlots();
    if (!s.ok()) return s;
    return std::unique_ptr<RedisConnection>(std::move(cluster));
  }
  return last;
}

}  // namespace siftdb
