// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Replicas for reads (read_from = replica_preferred): finding a healthy
// replica of a master, and a RedisConnection that sends its pipelines to
// one, falling back to the master. Rules (docs/redis_client.md, "Replicas
// for reads"):
//
//   * Candidates. Through Sentinel: SENTINEL replicas <master-name> (asked
//     of each Sentinel in turn), skipping any flagged s_down, o_down or
//     disconnected (Sentinel's master-link-status is refreshed only every
//     10 s, so the link is checked with ROLE instead). Otherwise:
//     the endpoints given (a plain host:port list), the master among them
//     included; ROLE sorts them out.
//   * Verification. A candidate is used only when it answers AUTH/SELECT
//     and its ROLE says "slave" with the replication state "connected" (its
//     link to the master is up). ROLE is asked again before every pipeline
//     once replica_retry_interval has passed, so a replica that lost its
//     master, or was promoted, is left within that interval.
//   * Fallback. When no candidate qualifies, or the replica in use fails a
//     pipeline with a connection error (Unavailable: refused, reset, timed
//     out after command_timeout), the pipeline goes to the master at once,
//     and replicas are looked for again after replica_retry_interval. So a
//     dead replica costs at most one command_timeout per interval.
//   * Writes: nothing here writes. A caller that writes keeps its own
//     master connection (ConnectRedis with read_from = master).
//
// Redis Cluster is not covered (reads go to each slot's master).
//
// Thread safety: functions are thread-compatible; a connection is NOT
// thread-safe (one thread at a time), as every RedisConnection.

#ifndef SIFTDB_REDIS_CLIENT_REDIS_REPLICA_READ_H_
#define SIFTDB_REDIS_CLIENT_REDIS_REPLICA_READ_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_cluster_client.h"

namespace siftdb {

// The replica endpoints ("host:port") the Sentinels of `options` (which
// must have master_name set) report healthy. Unavailable when no Sentinel
// answers; an empty list when none is healthy.
absl::StatusOr<std::vector<std::string>> SentinelReplicas(
    const RedisClientOptions& options);

// Unavailable unless `client`'s server says ROLE slave with its master
// link connected.
absl::Status VerifyHealthyReplica(RedisClient* client);

// Connects (one attempt each, no retries) to the first of `candidates`
// that is a healthy replica; `options` gives AUTH, SELECT, TLS and the
// timeouts (its endpoint and Sentinel fields are ignored). Unavailable
// listing each candidate's reason when none is.
absl::StatusOr<std::unique_ptr<RedisClient>> ConnectHealthyReplica(
    const RedisClientOptions& options,
    const std::vector<std::string>& candidates);

// Chooses a replica for `client`'s reads: Sentinel replicas when
// master_name is set, else `endpoints`.
absl::StatusOr<std::unique_ptr<RedisClient>> FindReadReplica(
    const RedisClientOptions& client,
    const std::vector<std::string>& endpoints);

// A RedisConnection for read-only pipelines with read_from =
// replica_preferred: `master` is the server's options (plain endpoint or
// Sentinel fields, URL already applied); `endpoints` the plain candidates;
// `master_client`, when not null, an open connection to the master.
std::unique_ptr<RedisConnection> NewReplicaReadConnection(
    const RedisClientOptions& master, std::vector<std::string> endpoints,
    std::unique_ptr<RedisClient> master_client = nullptr);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_REDIS_REPLICA_READ_H_
