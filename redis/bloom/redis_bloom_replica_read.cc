// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomImpl's replica reads (read_from=replica_preferred;
// docs/redis_bloom.md, "Replicas for reads"). A Bloom filter must never
// read an acknowledged add as absent, and a replica may lag the master, so
// every read call is fenced: the master's INFO replication gives its
// replication ID and offset O as the call begins; the replica's gives the
// ID it follows and the offset R it has applied. Only when the IDs match,
// its link is up and R >= O does the replica answer the call: every add
// acknowledged before the call began was in the master's stream at or
// before O (Redis writes a command to the stream before it replies), so the
// replica has applied it, and it applies the stream in order. Otherwise the
// master answers. The fence costs two small round trips per read call, so
// it pays for large MExists batches, not single Exists calls.

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/client/redis_replica_read.h"
#include "util/absl_compat.h"

namespace siftdb {

namespace {

// The fields of INFO replication that the fence reads.
struct ReplicationState {
  std::string role;
  std::string replid;                 // master_replid
  std::string link;                   // master_link_status (replicas)
  int64_t master_offset = -1;         // master_repl_offset
  int64_t applied_offset = -1;        // slave_repl_offset (replicas)
  std::vector<std::string> replicas;  // "ip:port" of online replicas
};

absl::StatusOr<ReplicationState> Replication(RedisClient* client) {
  absl::StatusOr<RedisReply> reply = client->Command({"INFO", "replication"});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return client->ServerErrorStatus("INFO", *reply);
  if (!reply->is_string()) {
    return absl::UnavailableError(absl::StrCat(
        "redis ", client->endpoint(), ": INFO replication: not a string"));
  }
  ReplicationState s;
  for (absl::string_view line : absl::StrSplit(reply->str(), '\n')) {
    line = absl::StripSuffix(line, "\r");
    const size_t colon = line.find(':');
    if (colon == absl::string_view::npos) continue;
    const absl::string_view key = line.substr(0, colon);
    const absl::string_view value = line.substr(colon + 1);
    if (key == "role") {
      s.role = std::string(value);
    } else if (key == "master_replid") {
      s.replid = std::string(value);
    } else if (key == "master_link_status") {
      s.link = std::string(value);
    } else if (key == "master_repl_offset") {
      if (!absl::SimpleAtoi(value, &s.master_offset)) s.master_offset = -1;
    } else if (key == "slave_repl_offset") {
      if (!absl::SimpleAtoi(value, &s.applied_offset)) s.applied_offset = -1;
    } else if (absl::StartsWith(key, "slave") &&
               absl::StrContains(value, "state=online")) {
      // slaveN:ip=127.0.0.1,port=6380,state=online,offset=...,lag=...
      std::string ip, port;
      for (absl::string_view field : absl::StrSplit(value, ',')) {
        if (absl::ConsumePrefix(&field, "ip=")) ip = std::string(field);
        if (absl::ConsumePrefix(&field, "port=")) port = std::string(field);
      }
      if (!ip.empty() && !port.empty()) {
        s.replicas.push_back(ip.find(':') == std::string::npos
                                 ? absl::StrCat(ip, ":", port)
                                 : absl::StrCat("[", ip, "]:", port));
      }
    }
  }
  return s;
}

}  // namespace

void RedisBloomImpl::DropReplica() {
  replica_.reset();
  replica_retry_at_ = absl::Now() + replica_retry_interval_;
}

RedisClient* RedisBloomImpl::ReadClient() {
  if (!replica_reads_) return client_;
  if (replica_ == nullptr && absl::Now() < replica_retry_at_) {
    // No replica and none to look for yet: no fence to pay for.
    master_reads_served_++;
    return client_;
  }
  absl::StatusOr<ReplicationState> master = Replication(client_);
  if (replica_ == nullptr && absl::Now() >= replica_retry_at_) {
    // Candidates: the Sentinels' replicas, else the master's online ones.
    std::vector<std::string> candidates;
    if (master.ok()) candidates = master->replicas;
    absl::StatusOr<std::unique_ptr<RedisClient>> found =
        FindReadReplica(client_->options(), candidates);
    if (found.ok()) {
      replica_ = std::move(*found);
    } else {
      replica_retry_at_ = absl::Now() + replica_retry_interval_;
    }
  }
  if (replica_ != nullptr && master.ok() && master->role == "master" &&
      master->master_offset >= 0) {
    absl::StatusOr<ReplicationState> replica = Replication(replica_.get());
    if (!replica.ok()) {
      DropReplica();
    } else if (replica->role == "slave" && replica->link == "up" &&
               replica->replid == master->replid &&
               replica->applied_offset >= master->master_offset) {
      replica_reads_served_++;
      return replica_.get();
    }
  }
  master_reads_served_++;
  return client_;
}

}  // namespace siftdb
