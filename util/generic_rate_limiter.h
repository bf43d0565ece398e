// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// GenericRateLimiter: the token bucket behind NewGenericRateLimiter
// (siftdb/rate_limiter.h gives the contract). Declared here so that tests
// can drive it with a clock of their own.
//
// How it waits: a request that the bucket cannot serve joins a FIFO queue.
// One waiter at a time (the "leader") sleeps on the clock until the next
// refill time, refills the bucket and grants queued requests in order while
// the bucket holds enough; the others wait on a condition variable. Refills
// are at least one period apart and each adds at most one period's bytes
// (the bucket never holds more), so over any span T at most
// burst * (1 + T / period) bytes are granted.
//
// Thread safety: as RateLimiter. The clock must outlive the limiter.

#ifndef SIFTDB_UTIL_GENERIC_RATE_LIMITER_H_
#define SIFTDB_UTIL_GENERIC_RATE_LIMITER_H_

#include <cstdint>
#include <deque>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "siftdb/rate_limiter.h"
#include "util/mutex.h"

namespace siftdb {

class GenericRateLimiter final : public RateLimiter {
 public:
  // Time source and sleep; thread-safe.
  class Clock {
   public:
    virtual ~Clock() = default;
    virtual uint64_t NowMicros() = 0;
    virtual void SleepForMicroseconds(int64_t micros) = 0;
  };

  // clock == nullptr: the real (steady) clock.
  GenericRateLimiter(int64_t rate_bytes_per_sec, int64_t refill_period_us,
                     Clock* clock);

  void Request(int64_t bytes) override;
  int64_t GetBytesPerSecond() const override;
  absl::Status SetBytesPerSecond(int64_t bytes_per_second) override;
  int64_t GetSingleBurstBytes() const override;
  int64_t GetTotalBytesThrough() const override;
  int64_t GetTotalRequests() const override;

 private:
  struct Waiter {
    int64_t bytes;
    bool granted = false;
  };

  void RequestChunk(int64_t bytes);
  // Starts a new period: refills the bucket, grants what it can in order.
  void RefillAndGrant() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  Clock* const clock_;
  const int64_t refill_period_us_;
  mutable Mutex mu_;
  CondVar granted_cv_;  // signalled after every refill
  int64_t rate_ ABSL_GUARDED_BY(mu_);
  int64_t burst_ ABSL_GUARDED_BY(mu_);      // bytes per refill
  int64_t available_ ABSL_GUARDED_BY(mu_);  // in [0, burst_]
  uint64_t next_refill_us_ ABSL_GUARDED_BY(mu_);
  bool leader_waiting_ ABSL_GUARDED_BY(mu_) = false;
  std::deque<Waiter*> queue_ ABSL_GUARDED_BY(mu_);
  int64_t total_bytes_ ABSL_GUARDED_BY(mu_) = 0;
  int64_t total_requests_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_UTIL_GENERIC_RATE_LIMITER_H_
