// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/server/bloom_batcher.h"

#include <utility>

#include "absl/container/flat_hash_set.h"
#include "redis/server/bloom_batch.h"

namespace siftdb {

// A worker's upstream sessions, one per credentials (owned by its thread).
class BloomBatcher::Worker {
 public:
  explicit Worker(const BloomBatcherOptions& options) : options_(options) {}

  // The session for `c`, opened on first use; an error reply when it
  // cannot be opened (bad credentials, Redis down).
  absl::StatusOr<BloomSession*> Session(const BloomCredentials& c) {
    auto it = sessions_.find(c);
    if (it != sessions_.end()) return it->second.get();
    if (sessions_.size() >= options_.max_sessions_per_worker) {
      sessions_.erase(sessions_.begin());
    }
    RedisClientOptions o = options_.upstream;
    o.username = c.username;
    o.password = c.password;
    o.database = c.database;
    absl::StatusOr<std::unique_ptr<BloomSession>> s = BloomSession::Open(o);
    if (!s.ok()) return s.status();
    BloomSession* raw = s->get();
    sessions_.emplace(c, std::move(*s));
    return raw;
  }

 private:
  const BloomBatcherOptions& options_;
  absl::flat_hash_map<BloomCredentials, std::unique_ptr<BloomSession>>
      sessions_;
};

BloomBatcher::BloomBatcher(BloomBatcherOptions options, DoneFn done)
    : options_(std::move(options)), done_(std::move(done)) {
  const int n = options_.threads < 1 ? 1 : options_.threads;
  for (int i = 0; i < n; i++) {
    workers_.push_back(std::make_unique<Worker>(options_));
  }
  for (int i = 0; i < n; i++) {
    threads_.emplace_back([this, i] { WorkerLoop(workers_[i].get()); });
  }
}

BloomBatcher::~BloomBatcher() {
  {
    MutexLock l(&mu_);
    stop_ = true;
  }
  work_cv_.SignalAll();
  for (std::thread& t : threads_) t.join();
}

void BloomBatcher::Submit(BloomRequest request) {
  {
    MutexLock l(&mu_);
    const BloomCredentials c = request.credentials;
    Lane& lane = lanes_[c];
    lane.pending.push_back(std::move(request));
    MaybeQueue(c, &lane);
  }
  work_cv_.Signal();
}

void BloomBatcher::SubmitMany(std::vector<BloomRequest> requests) {
  {
    MutexLock l(&mu_);
    for (BloomRequest& r : requests) {
      const BloomCredentials c = r.credentials;
      Lane& lane = lanes_[c];
      lane.pending.push_back(std::move(r));
      MaybeQueue(c, &lane);
    }
  }
  work_cv_.SignalAll();
}

void BloomBatcher::MaybeQueue(const BloomCredentials& c, Lane* lane) {
  if (!lane->queued && !lane->pending.empty() &&
      lane->running < options_.max_lane_batches) {
    lane->queued = true;
    ready_.push_back(c);
  }
}

uint64_t BloomBatcher::batches() const {
  MutexLock l(&mu_);
  return batches_;
}

uint64_t BloomBatcher::batched_requests() const {
  MutexLock l(&mu_);
  return batched_requests_;
}

std::vector<BloomRequest> BloomBatcher::TakeBatch(Lane* lane) {
  std::vector<BloomRequest> batch;
  std::deque<BloomRequest> rest;
  // Connections in the batch: true while all their requests in it are adds.
  absl::flat_hash_map<uint64_t, bool> in_batch;
  absl::flat_hash_set<uint64_t> blocked;  // a request of theirs waits
  size_t items = 0;
  while (!lane->pending.empty()) {
    BloomRequest r = std::move(lane->pending.front());
    lane->pending.pop_front();
    const bool add = ClassifyBloomRequest(r.argv) == BloomRequestKind::kAdd;
    auto it = in_batch.find(r.connection);
    const bool full =
        batch.size() >= options_.max_batch_requests ||
        (!batch.empty() && items + r.argv.size() > options_.max_batch_items);
    if (full || blocked.contains(r.connection) ||
        lane->busy.contains(r.connection) ||
        (it != in_batch.end() && !(it->second && add))) {
      blocked.insert(r.connection);
      rest.push_back(std::move(r));
      continue;
    }
    in_batch[r.connection] = add && (it == in_batch.end() || it->second);
    lane->busy.insert(r.connection);
    items += r.argv.size();
    batch.push_back(std::move(r));
  }
  lane->pending = std::move(rest);
  return batch;
}

void BloomBatcher::WorkerLoop(Worker* worker) {
  for (;;) {
    BloomCredentials credentials;
    std::vector<BloomRequest> batch;
    {
      MutexLock l(&mu_);
      while (!stop_ && ready_.empty()) work_cv_.Wait(&mu_);
      if (stop_) return;
      credentials = std::move(ready_.front());
      ready_.pop_front();
      Lane& lane = lanes_[credentials];
      lane.queued = false;
      batch = TakeBatch(&lane);
      // Nothing admissible: a running batch holds those connections, and
      // its Finish queues the lane again.
      if (batch.empty()) continue;
      lane.running++;
      batches_++;
      batched_requests_ += batch.size();
    }
    absl::StatusOr<BloomSession*> session = worker->Session(credentials);
    std::vector<RedisReply> results;
    if (session.ok()) {
      std::vector<const std::vector<std::string>*> argvs;
      for (const BloomRequest& r : batch) argvs.push_back(&r.argv);
      results = ExecuteBloomBatch(*session, argvs);
    } else {
      results.assign(batch.size(), BloomErrorReply(session.status()));
    }
    std::vector<BloomReply> replies(batch.size());
    for (size_t i = 0; i < batch.size(); i++) {
      replies[i] =
          BloomReply{batch[i].connection, batch[i].slot, std::move(results[i])};
    }
    // Replies are handed over before the connections are released, so a
    // connection's next request cannot overtake them.
    done_(std::move(replies));
    Finish(credentials, batch);
  }
}

void BloomBatcher::Finish(const BloomCredentials& c,
                          const std::vector<BloomRequest>& batch) {
  {
    MutexLock l(&mu_);
    auto it = lanes_.find(c);
    Lane& lane = it->second;
    lane.running--;
    for (const BloomRequest& r : batch) lane.busy.erase(r.connection);
    if (lane.pending.empty() && lane.running == 0) {
      if (!lane.queued) lanes_.erase(it);
      return;
    }
    MaybeQueue(c, &lane);
  }
  work_cv_.Signal();
}

}  // namespace siftdb
