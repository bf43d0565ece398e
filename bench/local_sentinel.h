// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// LocalSentinelGroup: what the Redis benches' --sentinel mode runs against:
// a master, two replicas (--replicaof the master) and three Sentinels
// (redis-server --sentinel, monitoring the master with quorum 2 and
// down-after 5000 ms), each a LocalRedis child on a free loopback port.
// Start() returns once every Sentinel names the master and lists both
// replicas, and both replicas' links to the master are up.
// WaitReplicated() waits until both replicas have applied everything the
// master has so far, so that reads timed on a replica see the data.
//
// Thread safety: one object per bench process, used from its main thread.

#ifndef SIFTDB_BENCH_LOCAL_SENTINEL_H_
#define SIFTDB_BENCH_LOCAL_SENTINEL_H_

#include <hiredis.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "bench/local_redis.h"

namespace siftdb::bench {

class LocalSentinelGroup {
 public:
  static constexpr int kReplicas = 2;
  static constexpr int kSentinels = 3;

  bool Start(const std::string& master_name = "benchmaster") {
    name_ = master_name;
    LocalRedisOptions master;
    master.free_port = true;
    if (!Add(&nodes_, master)) return false;
    const std::string mport = absl::StrCat(nodes_[0]->port());
    for (int i = 0; i < kReplicas; i++) {
      LocalRedisOptions replica = master;
      replica.extra_args = {"--replicaof", "127.0.0.1", mport};
      if (!Add(&nodes_, replica)) return false;
    }
    for (int i = 0; i < kSentinels; i++) {
      LocalRedisOptions s = master;
      s.sentinel_config = {
          absl::StrCat("sentinel monitor ", name_, " 127.0.0.1 ", mport, " 2"),
          absl::StrCat("sentinel down-after-milliseconds ", name_, " 5000")};
      if (!Add(&sentinels_, s)) return false;
    }
    return WaitUntilReady(30);
  }

  // redis+sentinel://127.0.0.1:s1,127.0.0.1:s2,127.0.0.1:s3/<name>
  std::string url() const {
    std::string url = "redis+sentinel://";
    for (size_t i = 0; i < sentinels_.size(); i++) {
      absl::StrAppend(&url, i == 0 ? "" : ",", sentinels_[i]->endpoint());
    }
    return absl::StrCat(url, "/", name_);
  }
  std::string master_endpoint() const { return nodes_[0]->endpoint(); }
  std::string replica_endpoint(int i) const {
    return nodes_[1 + i]->endpoint();
  }

  // True once every replica's replication offset has reached the master's
  // as it was on entry (polled for up to `seconds`).
  bool WaitReplicated(int seconds = 30) const {
    const long long target =
        InfoField(nodes_[0]->port(), "replication", "master_repl_offset");
    if (target < 0) return false;
    for (int i = 1; i <= kReplicas; i++) {
      if (!PollUntil(seconds, [&] {
            return InfoField(nodes_[i]->port(), "replication",
                             "slave_repl_offset") >= target;
          })) {
        return false;
      }
    }
    return true;
  }

  // Calls of `command` (lower case) the data node at `endpoint` has run
  // so far (INFO commandstats), or -1: to tell which server a workload's
  // reads reached.
  long long CommandCalls(const std::string& endpoint,
                         const std::string& command) const {
    for (const auto& n : nodes_) {
      if (n->endpoint() != endpoint) continue;
      const std::string stat =
          InfoText(n->port(), "commandstats", "cmdstat_" + command);
      const size_t at = stat.find("calls=");
      return at == std::string::npos ? 0 : std::atoll(stat.c_str() + at + 6);
    }
    return -1;
  }

 private:
  static bool Add(std::vector<std::unique_ptr<LocalRedis>>* to,
                  const LocalRedisOptions& options) {
    to->push_back(std::make_unique<LocalRedis>());
    if (to->back()->Start(options)) return true;
    std::fprintf(stderr, "could not start redis-server %s\n",
                 options.sentinel_config.empty() ? "" : "--sentinel");
    return false;
  }

  template <typename Pred>
  static bool PollUntil(int seconds, const Pred& done) {
    for (int i = 0; i < seconds * 20; i++) {
      if (done()) return true;
      usleep(50000);
    }
    return false;
  }

  // The reply to `args` from 127.0.0.1:port on a fresh connection (1 s
  // timeouts; null on failure); free it with freeReplyObject.
  static redisReply* Call(int port, const std::vector<std::string>& args) {
    timeval tv{1, 0};
    redisContext* c = redisConnectWithTimeout("127.0.0.1", port, tv);
    if (c == nullptr || c->err != 0 || redisSetTimeout(c, tv) != REDIS_OK) {
      if (c != nullptr) redisFree(c);
      return nullptr;
    }
    std::vector<const char*> argv;
    std::vector<size_t> lens;
    for (const std::string& a : args) {
      argv.push_back(a.data());
      lens.push_back(a.size());
    }
    void* r = redisCommandArgv(c, static_cast<int>(args.size()), argv.data(),
                               lens.data());
    redisFree(c);
    return static_cast<redisReply*>(r);
  }

  // The value of `field` in INFO `section` ("" when missing).
  static std::string InfoText(int port, const std::string& section,
                              const std::string& field) {
    redisReply* r = Call(port, {"INFO", section});
    std::string value;
    if (r != nullptr && r->type == REDIS_REPLY_STRING) {
      const std::string text(r->str, r->len);
      const size_t at = text.find("\n" + field + ":");
      if (at != std::string::npos) {
        const size_t begin = at + field.size() + 2;
        value = text.substr(begin, text.find_first_of("\r\n", begin) - begin);
      }
    }
    if (r != nullptr) freeReplyObject(r);
    return value;
  }

  // The integer `field` of INFO `section`, or -1.
  static long long InfoField(int port, const std::string& section,
                             const std::string& field) {
    const std::string text = InfoText(port, section, field);
    return text.empty() ? -1 : std::atoll(text.c_str());
  }

  // Every Sentinel names the master and lists both replicas flagged plain
  // "slave" (not down, not disconnected), and both replicas' links are
  // up (each replica's master_link_status).
  bool WaitUntilReady(int seconds) const {
    const std::string master = master_endpoint();
    for (const auto& s : sentinels_) {
      const bool ready = PollUntil(seconds, [&] {
        std::string named;
        redisReply* r =
            Call(s->port(), {"SENTINEL", "get-master-addr-by-name", name_});
        if (r != nullptr && r->type == REDIS_REPLY_ARRAY && r->elements == 2) {
          named = absl::StrCat(
              std::string(r->element[0]->str, r->element[0]->len), ":",
              std::string(r->element[1]->str, r->element[1]->len));
        }
        if (r != nullptr) freeReplyObject(r);
        int known = 0;
        r = Call(s->port(), {"SENTINEL", "replicas", name_});
        if (r != nullptr && r->type == REDIS_REPLY_ARRAY) {
          for (size_t i = 0; i < r->elements; i++) {
            const redisReply* fields = r->element[i];
            for (size_t j = 0; j + 1 < fields->elements; j += 2) {
              if (std::string(fields->element[j]->str) == "flags" &&
                  std::string(fields->element[j + 1]->str) == "slave") {
                known++;
              }
            }
          }
        }
        if (r != nullptr) freeReplyObject(r);
        return named == master && known == kReplicas;
      });
      if (!ready) {
        std::fprintf(stderr, "sentinel %s not ready within %d s\n",
                     s->endpoint().c_str(), seconds);
        return false;
      }
    }
    const bool linked = PollUntil(seconds, [&] {
      for (int i = 1; i <= kReplicas; i++) {
        if (InfoText(nodes_[i]->port(), "replication", "master_link_status") !=
            "up") {
          return false;
        }
      }
      return true;
    });
    if (!linked) std::fprintf(stderr, "replicas not linked to the master\n");
    return linked;
  }

  std::string name_;
  // nodes_[0] the master, then the replicas.
  std::vector<std::unique_ptr<LocalRedis>> nodes_;
  std::vector<std::unique_ptr<LocalRedis>> sentinels_;
};

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_LOCAL_SENTINEL_H_
