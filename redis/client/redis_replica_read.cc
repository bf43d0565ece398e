// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/redis_replica_read.h"

#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"

namespace siftdb {
namespace {

// `options` for one attempt at one plain endpoint.
RedisClientOptions OneAttempt(const RedisClientOptions& options,
                              const std::string& endpoint) {
  RedisClientOptions o = options;
  o.endpoint = endpoint;
  o.sentinels.clear();
  o.master_name.clear();
  o.read_from = RedisReadFrom::kMaster;
  o.retry_deadline = absl::ZeroDuration();
  return o;
}

// The value of `key` in a flat [k1, v1, k2, v2, ...] reply, or "".
std::string Field(const RedisReply& flat, std::string_view key) {
  const std::vector<RedisReply>& e = flat.elements();
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    if (e[i].is_string() && e[i].str() == key && e[i + 1].is_string()) {
      return e[i + 1].str();
    }
  }
  return "";
}

// Healthy as Sentinel sees it: no s_down, o_down or disconnected flag.
// Sentinel's "master-link-status" is not consulted: Sentinel refreshes it
// from the replica's INFO only every 10 s, so a replica that has just
// synced reads "err" there for up to 10 s; ROLE, asked of the replica
// itself, is current and decides.
bool SentinelSaysHealthy(const RedisReply& replica) {
  const std::string flags = Field(replica, "flags");
  for (absl::string_view flag : absl::StrSplit(flags, ',')) {
    if (flag == "s_down" || flag == "o_down" || flag == "disconnected") {
      return false;
    }
  }
  return true;
}

class ReplicaReadConnection final : public RedisConnection {
 public:
  ReplicaReadConnection(const RedisClientOptions& master,
                        std::vector<std::string> endpoints,
                        std::unique_ptr<RedisClient> master_client)
      : master_options_(master),
        endpoints_(std::move(endpoints)),
        master_(std::move(master_client)),
        master_connected_once_(master_ != nullptr) {}

  absl::StatusOr<std::vector<RedisReply>> Pipeline(
      const std::vector<RedisArgs>& commands,
      std::string_view routing_key) override {
    if (RedisClient* replica = Replica(); replica != nullptr) {
      round_trips_++;
      absl::StatusOr<std::vector<RedisReply>> r = replica->Pipeline(commands);
      if (r.ok() || !absl::IsUnavailable(r.status())) return r;
      // The replica failed: this pipeline goes to the master now.
      DropReplica();
    }
    return MasterPipeline(commands);
  }

  void Reset() override {
    replica_.reset();
    master_.reset();
  }
  bool is_cluster() const override { return false; }
  std::string Describe(std::string_view) const override {
    if (replica_ != nullptr) return replica_->endpoint() + " (replica)";
    if (master_ != nullptr) return master_->endpoint();
    return master_options_.master_name.empty()
               ? absl::StrJoin(endpoints_, ",")
               : "master '" + master_options_.master_name + "'";
  }

 private:
  // The replica to read from now, or null (then: the master).
  RedisClient* Replica() {
    const absl::Time now = absl::Now();
    if (replica_ != nullptr && now >= next_check_) {
      if (VerifyHealthyReplica(replica_.get()).ok()) {
        next_check_ = now + master_options_.replica_retry_interval;
      } else {
        DropReplica();
      }
    }
    if (replica_ == nullptr && now >= next_search_) {
      absl::StatusOr<std::unique_ptr<RedisClient>> found =
          FindReadReplica(master_options_, endpoints_);
      if (found.ok()) {
        replica_ = std::move(*found);
        next_check_ = now + master_options_.replica_retry_interval;
      } else {
        next_search_ = now + master_options_.replica_retry_interval;
      }
    }
    return replica_.get();
  }

  void DropReplica() {
    replica_.reset();
    next_search_ = absl::Now() + master_options_.replica_retry_interval;
  }

  absl::StatusOr<std::vector<RedisReply>> MasterPipeline(
      const std::vector<RedisArgs>& commands) {
    if (master_ == nullptr) {
      absl::StatusOr<std::unique_ptr<RedisClient>> c = ConnectMaster();
      if (!c.ok()) return c.status();
      master_ = std::move(*c);
      if (master_connected_once_) reconnects_++;
      master_connected_once_ = true;
    }
    round_trips_++;
    const int64_t before = master_->reconnects();
    absl::StatusOr<std::vector<RedisReply>> r = master_->Pipeline(commands);
    reconnects_ += master_->reconnects() - before;
    return r;
  }

  // Sentinel: the master they name (ROLE-checked by RedisClient). A plain
  // list: the first endpoint whose ROLE says master, else the first one.
  absl::StatusOr<std::unique_ptr<RedisClient>> ConnectMaster() {
    RedisClientOptions o = master_options_;
    o.read_from = RedisReadFrom::kMaster;
    if (!o.master_name.empty() || endpoints_.size() <= 1) {
      if (o.master_name.empty() && !endpoints_.empty()) {
        o.endpoint = endpoints_[0];
      }
      return RedisClient::Connect(o);
    }
    for (const std::string& endpoint : endpoints_) {
      absl::StatusOr<std::unique_ptr<RedisClient>> c =
          RedisClient::Connect(OneAttempt(o, endpoint));
      if (!c.ok()) continue;
      absl::StatusOr<RedisReply> role = (*c)->Command({"ROLE"});
      if (role.ok() && role->is_array() && !role->elements().empty() &&
          role->elements()[0].is_string() &&
          role->elements()[0].str() == "master") {
        o.endpoint = endpoint;
        return RedisClient::Connect(o);
      }
    }
    o.endpoint = endpoints_[0];
    return RedisClient::Connect(o);
  }

  const RedisClientOptions master_options_;
  const std::vector<std::string> endpoints_;
  std::unique_ptr<RedisClient> replica_;
  std::unique_ptr<RedisClient> master_;
  bool master_connected_once_ = false;
  absl::Time next_search_ = absl::InfinitePast();
  absl::Time next_check_ = absl::InfinitePast();
};

}  // namespace

absl::StatusOr<std::vector<std::string>> SentinelReplicas(
    const RedisClientOptions& options) {
  std::vector<std::string> errors;
  for (const std::string& sentinel : options.sentinels) {
    RedisClientOptions o = OneAttempt(options, sentinel);
    o.username = options.sentinel_username;
    o.password = options.sentinel_password;
    o.database = 0;
    absl::StatusOr<std::unique_ptr<RedisClient>> c = RedisClient::Connect(o);
    if (!c.ok()) {
      errors.push_back(std::string(c.status().message()));
      continue;
    }
    absl::StatusOr<RedisReply> reply =
        (*c)->Command({"SENTINEL", "replicas", options.master_name});
    if (!reply.ok()) {
      errors.push_back(std::string(reply.status().message()));
      continue;
    }
    if (!reply->is_array()) {
      errors.push_back(
          absl::StrFormat("redis sentinel %s: SENTINEL replicas: %s", sentinel,
                          reply->is_error() ? reply->str() : "not a list"));
      continue;
    }
    std::vector<std::string> out;
    for (const RedisReply& r : reply->elements()) {
      if (!r.is_array() || !SentinelSaysHealthy(r)) continue;
      const std::string ip = Field(r, "ip");
      const std::string port = Field(r, "port");
      if (ip.empty() || port.empty()) continue;
      absl::StatusOr<RedisEndpoint> ep =
          RedisEndpoint::Parse(ip.find(':') != std::string::npos
                                   ? absl::StrFormat("[%s]:%s", ip, port)
                                   : absl::StrFormat("%s:%s", ip, port));
      if (ep.ok()) out.push_back(ep->ToString());
    }
    return out;
  }
  return absl::UnavailableError(
      absl::StrFormat("redis: no Sentinel listed the replicas of '%s': %s",
                      options.master_name, absl::StrJoin(errors, "; ")));
}

absl::Status VerifyHealthyReplica(RedisClient* client) {
  absl::StatusOr<RedisReply> role = client->Command({"ROLE"});
  if (!role.ok()) return role.status();
  if (role->is_error()) return client->ServerErrorStatus("ROLE", *role);
  const std::vector<RedisReply>& e = role->elements();
  if (!role->is_array() || e.size() < 4 || !e[0].is_string() ||
      !e[3].is_string()) {
    return absl::UnavailableError(
        absl::StrFormat("redis %s: ROLE: not a replica", client->endpoint()));
  }
  if (e[0].str() != "slave" || e[3].str() != "connected") {
    return absl::UnavailableError(absl::StrFormat(
        "redis %s: ROLE says '%s' (link '%s'), not a connected replica",
        client->endpoint(), e[0].str(), e[3].str()));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RedisClient>> ConnectHealthyReplica(
    const RedisClientOptions& options,
    const std::vector<std::string>& candidates) {
  std::vector<std::string> errors;
  for (const std::string& endpoint : candidates) {
    absl::StatusOr<std::unique_ptr<RedisClient>> c =
        RedisClient::Connect(OneAttempt(options, endpoint));
    absl::Status s = c.ok() ? VerifyHealthyReplica(c->get()) : c.status();
    if (s.ok()) return std::move(*c);
    // A refused AUTH is a configuration error: say so rather than hide it
    // behind "no replica".
    if (absl::IsUnauthenticated(s) || absl::IsInvalidArgument(s)) return s;
    errors.push_back(std::string(s.message()));
  }
  return absl::UnavailableError(absl::StrFormat(
      "redis: no healthy replica among %d candidates%s%s", candidates.size(),
      errors.empty() ? "" : ": ", absl::StrJoin(errors, "; ")));
}

absl::StatusOr<std::unique_ptr<RedisClient>> FindReadReplica(
    const RedisClientOptions& client,
    const std::vector<std::string>& endpoints) {
  if (client.master_name.empty()) {
    return ConnectHealthyReplica(client, endpoints);
  }
  absl::StatusOr<std::vector<std::string>> replicas = SentinelReplicas(client);
  if (!replicas.ok()) return replicas.status();
  return ConnectHealthyReplica(client, *replicas);
}

std::unique_ptr<RedisConnection> NewReplicaReadConnection(
    const RedisClientOptions& master, std::vector<std::string> endpoints,
    std::unique_ptr<RedisClient> master_client) {
  return std::make_unique<ReplicaReadConnection>(master, std::move(endpoints),
                                                 std::move(master_client));
}

}  // namespace siftdb
