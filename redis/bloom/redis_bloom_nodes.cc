// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/bloom/redis_bloom_nodes.h"

#include <thread>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "redis/client/redis_cluster_client.h"
#include "siftdb/redis_bloom.h"

namespace siftdb::redis_bloom {

struct BloomNodes::Node {
  std::unique_ptr<RedisClient> client;
  std::unique_ptr<RedisBloomImpl> bloom;
};

BloomNodes::BloomNodes(RedisClient* client, RedisBloomImpl* primary,
                       RedisClientOptions options, Configure configure)
    : seed_(client),
      primary_(primary),
      options_(std::move(options)),
      configure_(std::move(configure)) {}

BloomNodes::~BloomNodes() = default;

absl::Status BloomNodes::Probe() {
  if (probed_) return absl::OkStatus();
  if (seed_->via_sentinel()) {
    probed_ = true;
    return absl::OkStatus();
  }
  absl::StatusOr<RedisReply> slots = seed_->Command({"CLUSTER", "SLOTS"});
  if (!slots.ok()) return slots.status();
  probed_ = true;
  // "ERR This instance has cluster support disabled" (or an ACL that
  // forbids CLUSTER): standalone.
  if (slots->is_error()) return absl::OkStatus();
  absl::StatusOr<RedisEndpoint> seed = RedisEndpoint::Parse(seed_->endpoint());
  absl::Status s = LoadSlots(*slots, seed.ok() ? seed->host : "");
  if (s.ok()) cluster_ = true;
  return s;
}

absl::Status BloomNodes::Refresh() {
  if (!probed_) return Probe();
  if (!cluster_) return absl::OkStatus();
  absl::Status last = absl::UnavailableError("no cluster node answered");
  // Any node that answers will do; the seed first.
  std::vector<RedisClient*> askers = {seed_};
  for (auto& [endpoint, node] : nodes_) askers.push_back(node->client.get());
  for (RedisClient* c : askers) {
    absl::StatusOr<RedisReply> slots = c->Command({"CLUSTER", "SLOTS"});
    if (!slots.ok()) {
      last = slots.status();
      continue;
    }
    if (slots->is_error()) {
      last = c->ServerErrorStatus("CLUSTER SLOTS", *slots);
      continue;
    }
    absl::StatusOr<RedisEndpoint> ep = RedisEndpoint::Parse(c->endpoint());
    return LoadSlots(*slots, ep.ok() ? ep->host : "");
  }
  return last;
}

absl::Status BloomNodes::LoadSlots(const RedisReply& reply,
                                   std::string_view host) {
  if (!reply.is_array()) {
    return absl::InternalError("CLUSTER SLOTS: not an array");
  }
  std::vector<std::string> owner(kRedisClusterSlots);
  for (const RedisReply& range : reply.elements()) {
    const auto& e = range.elements();
    if (!range.is_array() || e.size() < 3 || !e[0].is_integer() ||
        !e[1].is_integer() || !e[2].is_array() || e[2].elements().size() < 2 ||
        !e[2].elements()[1].is_integer()) {
      return absl::InternalError("CLUSTER SLOTS: malformed entry " +
                                 range.DebugString());
    }
    const int64_t lo = e[0].integer(), hi = e[1].integer();
    if (lo < 0 || hi >= kRedisClusterSlots || lo > hi) {
      return absl::InternalError("CLUSTER SLOTS: bad range");
    }
    RedisEndpoint ep;
    ep.host = e[2].elements()[0].str();
    if (ep.host.empty() || ep.host == "?") ep.host = std::string(host);
    ep.port = static_cast<int>(e[2].elements()[1].integer());
    const std::string text = ep.ToString();
    for (int64_t s = lo; s <= hi; s++) owner[s] = text;
  }
  slot_owner_ = std::move(owner);
  return absl::OkStatus();
}

int BloomNodes::SlotOf(std::string_view filter) const {
  return RedisKeySlot(RedisBloom::MetaKey(filter));
}

absl::StatusOr<BloomNodes::Node*> BloomNodes::NodeAt(
    const std::string& endpoint) {
  auto it = nodes_.find(endpoint);
  if (it != nodes_.end()) return it->second.get();
  RedisClientOptions o = options_;
  o.endpoint = endpoint;
  absl::StatusOr<std::unique_ptr<RedisClient>> client = RedisClient::Connect(o);
  if (!client.ok()) return client.status();
  auto node = std::make_unique<Node>();
  node->client = std::move(*client);
  node->bloom = std::make_unique<RedisBloomImpl>(node->client.get());
  if (configure_) configure_(node->bloom.get());
  Node* out = node.get();
  nodes_[endpoint] = std::move(node);
  return out;
}

absl::StatusOr<RedisBloomImpl*> BloomNodes::BloomFor(std::string_view filter) {
  if (!cluster_) return primary_;
  const std::string& endpoint = slot_owner_[SlotOf(filter)];
  if (endpoint.empty()) {
    return absl::UnavailableError(absl::StrFormat(
        "redis cluster: no node serves slot %d", SlotOf(filter)));
  }
  absl::StatusOr<Node*> node = NodeAt(endpoint);
  if (!node.ok()) return node.status();
  return (*node)->bloom.get();
}

absl::StatusOr<RedisClient*> BloomNodes::ClientFor(std::string_view filter) {
  if (!cluster_) return seed_;
  absl::StatusOr<RedisBloomImpl*> bloom = BloomFor(filter);
  if (!bloom.ok()) return bloom.status();
  return nodes_[slot_owner_[SlotOf(filter)]]->client.get();
}

std::string BloomNodes::EndpointFor(std::string_view filter) const {
  if (!cluster_) return seed_->endpoint();
  return slot_owner_[SlotOf(filter)];
}

absl::Status BloomNodes::RunParallel(
    const std::vector<std::string>& filters,
    const std::vector<std::function<void(RedisBloomImpl*)>>& tasks) {
  // Group by node, keeping each node's tasks in order.
  std::vector<RedisBloomImpl*> order;
  std::map<RedisBloomImpl*, std::vector<size_t>> groups;
  for (size_t i = 0; i < tasks.size(); i++) {
    absl::StatusOr<RedisBloomImpl*> bloom = BloomFor(filters[i]);
    if (!bloom.ok()) return bloom.status();
    if (groups.find(*bloom) == groups.end()) order.push_back(*bloom);
    groups[*bloom].push_back(i);
  }
  auto run = [&](RedisBloomImpl* bloom) {
    for (size_t i : groups.at(bloom)) tasks[i](bloom);
  };
  std::vector<std::thread> threads;
  for (size_t g = 1; g < order.size(); g++) {
    threads.emplace_back(run, order[g]);
  }
  if (!order.empty()) run(order[0]);
  for (std::thread& t : threads) t.join();
  return absl::OkStatus();
}

namespace {

// Whether `m` has `word` followed by a space and a digit (a slot number),
// so a filter whose name merely contains the word is not taken for one.
bool HasRedirectWord(absl::string_view m, absl::string_view word) {
  for (size_t at = m.find(word); at != absl::string_view::npos;
       at = m.find(word, at + 1)) {
    const size_t digit = at + word.size();
    if (digit < m.size() && m[digit] >= '0' && m[digit] <= '9') return true;
  }
  return false;
}

}  // namespace

bool BloomNodes::IsRedirect(const absl::Status& status, bool cluster_known) {
  if (status.ok()) return false;
  const absl::string_view m = status.message();
  if (HasRedirectWord(m, "MOVED ") || HasRedirectWord(m, "ASK ") ||
      absl::StrContains(m, "TRYAGAIN") || absl::StrContains(m, "CLUSTERDOWN")) {
    return true;
  }
  // EXECABORT: a redirect inside MULTI. "non local key": a script (its
  // meta hash still here) touched a sub-filter key already migrated.
  return cluster_known && (absl::StrContains(m, "EXECABORT") ||
                           absl::StrContains(m, "non local key"));
}

}  // namespace siftdb::redis_bloom
