// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/support/redis_sentinel.h"

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"

namespace siftdb::test {

absl::StatusOr<std::unique_ptr<RedisSentinelGroup>> RedisSentinelGroup::Start(
    RedisSentinelGroupOptions options) {
  std::unique_ptr<RedisSentinelGroup> g(new RedisSentinelGroup());
  g->options_ = options;
  std::vector<std::string> auth;
  if (!options.password.empty()) {
    auth = {"--requirepass", options.password, "--masterauth",
            options.password};
  }
  RedisServerOptions mo;
  mo.extra_args = auth;
  absl::StatusOr<std::unique_ptr<RedisServer>> master = RedisServer::Start(mo);
  if (!master.ok()) return master.status();
  g->nodes_.push_back(std::move(*master));
  const std::string mport = absl::StrCat(g->nodes_[0]->port());
  for (int i = 0; i < options.replicas; i++) {
    RedisServerOptions ro;
    ro.extra_args = auth;
    ro.extra_args.insert(ro.extra_args.end(),
                         {"--replicaof", "127.0.0.1", mport});
    absl::StatusOr<std::unique_ptr<RedisServer>> r = RedisServer::Start(ro);
    if (!r.ok()) return r.status();
    g->nodes_.push_back(std::move(*r));
  }
  const std::string& m = options.master_name;
  for (int i = 0; i < options.sentinels; i++) {
    RedisServerOptions so;
    so.sentinel_config = {
        absl::StrCat("sentinel monitor ", m, " 127.0.0.1 ", mport, " 2"),
        absl::StrCat("sentinel down-after-milliseconds ", m, " ",
                     options.down_after_ms),
        absl::StrCat("sentinel failover-timeout ", m, " ",
                     options.failover_timeout_ms),
        absl::StrCat("sentinel parallel-syncs ", m, " 1")};
    if (!options.password.empty()) {
      so.sentinel_config.push_back(
          absl::StrCat("sentinel auth-pass ", m, " ", options.password));
    }
    if (!options.sentinel_password.empty()) {
      so.sentinel_config.push_back("requirepass " + options.sentinel_password);
      so.sentinel_config.push_back("sentinel sentinel-pass " +
                                   options.sentinel_password);
      // RedisServer::Call authenticates with --requirepass.
      so.extra_args = {"--requirepass", options.sentinel_password};
    }
    absl::StatusOr<std::unique_ptr<RedisServer>> s = RedisServer::Start(so);
    if (!s.ok()) return s.status();
    g->sentinels_.push_back(std::move(*s));
  }
  // Replicas in sync first: until then WAIT counts none of them.
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (true) {
    absl::StatusOr<std::string> info =
        g->nodes_[0]->Call({"INFO", "replication"});
    if (info.ok() && absl::StrContains(*info, absl::StrCat("connected_slaves:",
                                                           options.replicas))) {
      break;
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError("replicas not connected within 30s");
    }
    absl::SleepFor(absl::Milliseconds(20));
  }
  if (options.replicas > 0) {
    absl::Status synced = g->nodes_[0]->WaitForReplicas(absl::Seconds(30));
    if (!synced.ok()) return synced;
  }
  absl::Status s = g->WaitUntilReady(absl::Seconds(30));
  if (!s.ok()) return s;
  return g;
}

absl::Status RedisSentinelGroup::WaitUntilReady(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  const std::string& m = options_.master_name;
  for (const auto& sentinel : sentinels_) {
    while (true) {
      absl::StatusOr<std::string> quorum =
          sentinel->Call({"SENTINEL", "CKQUORUM", m});
      absl::StatusOr<std::string> replicas =
          sentinel->Call({"SENTINEL", "REPLICAS", m});
      int known = 0;
      if (replicas.ok()) {
        // Each replica is a flat list of fields, starting with "name";
        // count those whose flags say it is a plain, reachable replica.
        std::vector<std::string> lines = absl::StrSplit(*replicas, '\n');
        for (size_t i = 0; i + 1 < lines.size(); i++) {
          if (lines[i] == "flags" && lines[i + 1] == "slave") known++;
        }
      }
      const std::string usable =
          absl::StrCat("OK ", sentinels_.size(), " usable");
      if (quorum.ok() && absl::StrContains(*quorum, usable) &&
          known == options_.replicas) {
        break;
      }
      if (absl::Now() > deadline) {
        return absl::DeadlineExceededError(absl::StrFormat(
            "sentinel %s not ready within %s: CKQUORUM %s, %d replicas known",
            sentinel->endpoint(), absl::FormatDuration(timeout),
            quorum.ok() ? *quorum : quorum.status().ToString(), known));
      }
      absl::SleepFor(absl::Milliseconds(50));
    }
  }
  return absl::OkStatus();
}

std::string RedisSentinelGroup::Url() const {
  std::string url = "redis+sentinel://";
  if (!options_.password.empty()) {
    absl::StrAppend(&url, ":", options_.password, "@");
  }
  for (size_t i = 0; i < sentinels_.size(); i++) {
    absl::StrAppend(&url, i == 0 ? "" : ",", sentinels_[i]->endpoint());
  }
  absl::StrAppend(&url, "/", options_.master_name);
  if (!options_.sentinel_password.empty()) {
    absl::StrAppend(&url, "?sentinel_password=", options_.sentinel_password);
  }
  return url;
}

absl::StatusOr<std::string> RedisSentinelGroup::MasterEndpoint() const {
  absl::Status last = absl::UnavailableError("no sentinel running");
  for (const auto& sentinel : sentinels_) {
    if (!sentinel->running()) continue;
    absl::StatusOr<std::string> r = sentinel->Call(
        {"SENTINEL", "get-master-addr-by-name", options_.master_name});
    if (!r.ok()) {
      last = r.status();
      continue;
    }
    std::vector<std::string> parts = absl::StrSplit(*r, '\n');
    if (parts.size() != 2) {
      last = absl::UnavailableError("sentinel answered: " + *r);
      continue;
    }
    return absl::StrCat(parts[0], ":", parts[1]);
  }
  return last;
}

RedisServer* RedisSentinelGroup::Node(const std::string& endpoint) const {
  for (const auto& n : nodes_) {
    if (n->endpoint() == endpoint) return n.get();
  }
  return nullptr;
}

absl::Status RedisSentinelGroup::Failover() {
  for (const auto& sentinel : sentinels_) {
    if (!sentinel->running()) continue;
    absl::StatusOr<std::string> r =
        sentinel->Call({"SENTINEL", "FAILOVER", options_.master_name});
    if (!r.ok()) return r.status();
    if (*r != "OK") return absl::InternalError("SENTINEL FAILOVER: " + *r);
    return absl::OkStatus();
  }
  return absl::UnavailableError("no sentinel running");
}

absl::StatusOr<std::string> RedisSentinelGroup::WaitForNewMaster(
    const std::string& old_master, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string seen;
  while (true) {
    absl::StatusOr<std::string> now = MasterEndpoint();
    if (now.ok()) {
      seen = *now;
      RedisServer* node = Node(*now);
      if (*now != old_master && node != nullptr && node->running()) {
        absl::StatusOr<std::string> role = node->Call({"ROLE"});
        if (role.ok() && absl::StartsWith(*role, "master")) return *now;
      }
    }
    if (absl::Now() > deadline) {
      return absl::DeadlineExceededError(
          absl::StrFormat("no new master within %s (sentinels name '%s')",
                          absl::FormatDuration(timeout), seen));
    }
    absl::SleepFor(absl::Milliseconds(50));
  }
}

}  // namespace siftdb::test
