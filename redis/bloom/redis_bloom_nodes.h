// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// BloomNodes: reaches the Redis node that serves a filter's keys, for the
// partitioned front end (redis_bloom_partitioned.h). Contract:
//   * Standalone (or Sentinel, or a client given to it): one node, the
//     RedisBloomImpl it was built with; every name maps to it.
//   * Redis Cluster: learnt lazily, the first time Probe() runs (a
//     partitioned Reserve, or a redirect seen on the standalone path). Then
//     one RedisClient + RedisBloomImpl per master, and the slot map from
//     CLUSTER SLOTS, reloaded by Refresh() after a redirect.
//   * Redirects: a RedisBloomImpl talks to one node and returns a -MOVED /
//     -ASK / -TRYAGAIN / -CLUSTERDOWN reply (or the -EXECABORT a redirect
//     inside MULTI causes, or the "non local key" error of a script whose
//     meta hash is still here while a sub-filter key has already migrated)
//     as an error status. IsRedirect() recognises
//     them; the caller refreshes the map and resends the whole call to the
//     slot's owner once the slot has settled (no ASKING: a call is several
//     commands, and Redis refuses to run any command of a migrating slot
//     on a node that lacks one of its keys, so waiting is always safe).
//   * RunParallel runs one task group per node, each on its own thread
//     (the calling thread takes the first), so a batch reaches all masters
//     at once; tasks of one node run in turn on that node's connection.
//
// Ownership: owns every connection it opens; the standalone node's
// RedisBloomImpl is owned, or borrowed when built on a borrowed client.
// Thread safety: not thread-safe, except that during RunParallel each
// node's RedisBloomImpl is used by exactly one thread.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_NODES_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_NODES_H_

#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/client/redis_client.h"

namespace siftdb::redis_bloom {

class BloomNodes {
 public:
  // Configures a RedisBloomImpl of a cluster node (WAIT settings).
  using Configure = std::function<void(RedisBloomImpl*)>;

  // `primary` talks to `client` (the seed); both are borrowed and must
  // outlive this object. `options` opens the connections to cluster nodes.
  BloomNodes(RedisClient* client, RedisBloomImpl* primary,
             RedisClientOptions options, Configure configure);
  ~BloomNodes();
  BloomNodes(const BloomNodes&) = delete;
  BloomNodes& operator=(const BloomNodes&) = delete;

  // Asks the seed for CLUSTER SLOTS once: an error reply means standalone.
  absl::Status Probe();
  // Reloads the slot map (no-op when standalone).
  absl::Status Refresh();
  bool is_cluster() const { return cluster_; }

  // The node that serves `filter`'s keys (connecting to it if needed).
  absl::StatusOr<RedisBloomImpl*> BloomFor(std::string_view filter);
  absl::StatusOr<RedisClient*> ClientFor(std::string_view filter);
  // "host:port" of the node serving `filter` ("" when not connected yet).
  std::string EndpointFor(std::string_view filter) const;

  // Runs tasks[i] with BloomFor(filters[i]); tasks of distinct nodes run
  // in parallel. Returns the first connection failure (no task ran then).
  absl::Status RunParallel(
      const std::vector<std::string>& filters,
      const std::vector<std::function<void(RedisBloomImpl*)>>& tasks);

  // Whether `status` reports a redirect (see above); `cluster_known` says
  // whether -EXECABORT counts (on a standalone server it is a real error).
  static bool IsRedirect(const absl::Status& status, bool cluster_known);

 private:
  struct Node;
  absl::StatusOr<Node*> NodeAt(const std::string& endpoint);
  absl::Status LoadSlots(const RedisReply& reply, std::string_view host);
  int SlotOf(std::string_view filter) const;

  RedisClient* const seed_;
  RedisBloomImpl* const primary_;
  const RedisClientOptions options_;
  const Configure configure_;
  bool probed_ = false;
  bool cluster_ = false;
  std::vector<std::string> slot_owner_;  // slot -> endpoint
  std::map<std::string, std::unique_ptr<Node>> nodes_;
};

}  // namespace siftdb::redis_bloom

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_NODES_H_
