// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// BloomBatcher: the worker threads behind the BF.* server. The event loop
// Submit()s BF.* requests tagged with the client's Redis credentials
// (user, password, database); requests of the same credentials form one
// lane. A free worker takes everything pending in a lane (within limits)
// as one batch and runs it with ExecuteBloomBatch (redis/server/
// bloom_batch.h) on an upstream session of exactly those credentials; up
// to max_lane_batches batches of a lane run at once. So adds of many
// clients of one user coalesce into one MAdd while earlier batches are in
// flight (group commit), and a batch never mixes users or databases.
//
// Order: a connection's requests are answered in the order submitted: a
// lane is FIFO; a connection with a request in a running batch has no
// request in another one; and a batch holds a connection's requests only
// while they are all adds, which MAdd keeps in order, else one of them.
//
// Thread safety: Submit may be called from any thread; `done` runs on a
// worker thread, once per batch, and must not call back into the batcher.
// The destructor stops the workers after their current batch; requests
// still queued are dropped unanswered.

#ifndef SIFTDB_REDIS_SERVER_BLOOM_BATCHER_H_
#define SIFTDB_REDIS_SERVER_BLOOM_BATCHER_H_

#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/hash/hash.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_reply.h"
#include "util/mutex.h"

namespace siftdb {

// Who a request runs as upstream.
struct BloomCredentials {
  std::string username;  // empty: AUTH password only (or none)
  std::string password;  // empty: no AUTH
  int database = 0;

  bool operator==(const BloomCredentials& o) const {
    return username == o.username && password == o.password &&
           database == o.database;
  }
  template <typename H>
  friend H AbslHashValue(H h, const BloomCredentials& c) {
    return H::combine(std::move(h), c.username, c.password, c.database);
  }
};

struct BloomRequest {
  uint64_t connection = 0;  // the caller's tags, handed back in BloomReply
  uint64_t slot = 0;
  BloomCredentials credentials;
  std::vector<std::string> argv;
};

struct BloomReply {
  uint64_t connection = 0;
  uint64_t slot = 0;
  RedisReply reply;
};

struct BloomBatcherOptions {
  // Upstream endpoint and timeouts; user, password and database come from
  // each request's credentials.
  RedisClientOptions upstream;
  int threads = 4;
  // Batches of one lane (credentials) running at once.
  int max_lane_batches = 1;
  // Batch limits: requests and items (adds and probes) per batch.
  size_t max_batch_requests = 4096;
  size_t max_batch_items = 16384;
  // Sessions (upstream connections) each worker keeps open.
  size_t max_sessions_per_worker = 32;
};

class BloomBatcher {
 public:
  using DoneFn = std::function<void(std::vector<BloomReply>)>;

  BloomBatcher(BloomBatcherOptions options, DoneFn done);
  BloomBatcher(const BloomBatcher&) = delete;
  BloomBatcher& operator=(const BloomBatcher&) = delete;
  ~BloomBatcher();

  void Submit(BloomRequest request);
  // Several at once (one lock, one wake-up per lane): what the event loop
  // gathered in one round.
  void SubmitMany(std::vector<BloomRequest> requests);

  // Batches run and requests they held (observability and tests).
  uint64_t batches() const;
  uint64_t batched_requests() const;

 private:
  struct Lane {
    std::deque<BloomRequest> pending;
    int running = 0;      // batches in flight
    bool queued = false;  // in ready_
    // Connections with a request in a running batch.
    absl::flat_hash_set<uint64_t> busy;
  };
  class Worker;

  void WorkerLoop(Worker* worker);
  // Moves the next batch out of `lane` (see the ordering rule above).
  std::vector<BloomRequest> TakeBatch(Lane* lane)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Puts `lane` in ready_ when it has work and room for another batch.
  void MaybeQueue(const BloomCredentials& c, Lane* lane)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // A batch of `c` finished.
  void Finish(const BloomCredentials& c, const std::vector<BloomRequest>& b);

  const BloomBatcherOptions options_;
  const DoneFn done_;
  mutable Mutex mu_;
  CondVar work_cv_;
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  absl::flat_hash_map<BloomCredentials, Lane> lanes_ ABSL_GUARDED_BY(mu_);
  // Lanes with pending requests and room for a batch.
  std::deque<BloomCredentials> ready_ ABSL_GUARDED_BY(mu_);
  uint64_t batches_ ABSL_GUARDED_BY(mu_) = 0;
  uint64_t batched_requests_ ABSL_GUARDED_BY(mu_) = 0;
  std::vector<std::unique_ptr<Worker>> workers_;
  std::vector<std::thread> threads_;
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_SERVER_BLOOM_BATCHER_H_
