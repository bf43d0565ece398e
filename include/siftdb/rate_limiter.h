// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RateLimiter: caps the bytes per second that flushes and compactions write
// to table files (Options::rate_limiter), so that background writes leave
// disk bandwidth to foreground reads. The names and meaning follow
// RocksDB's GenericRateLimiter: a token bucket refilled every refill period
// with rate * period bytes.
//
// What is limited: every byte appended to a table file by a flush or a
// compaction (each part of a split compaction too). Not limited: the WAL
// and the MANIFEST (they are foreground writes), repair and checkpoints.
//
// Thread safety: every method may be called from many threads at once. One
// limiter may be shared by several DBs (and by anything else that calls
// Request); they then share its rate.
// Ownership: held through std::shared_ptr; the DB keeps its own reference.
//
// fairness: RocksDB uses it to let low-priority requests through ahead of
// high-priority ones now and then. siftdb has one priority (every request
// is a background table write), so it is accepted for compatibility and
// has no effect: waiting requests are granted strictly in arrival order.

#ifndef SIFTDB_INCLUDE_RATE_LIMITER_H_
#define SIFTDB_INCLUDE_RATE_LIMITER_H_

#include <cstdint>
#include <memory>

#include "absl/status/status.h"
#include "siftdb/export.h"

namespace siftdb {

class SIFTDB_EXPORT RateLimiter {
 public:
  RateLimiter() = default;
  RateLimiter(const RateLimiter&) = delete;
  RateLimiter& operator=(const RateLimiter&) = delete;
  virtual ~RateLimiter() = default;

  // Blocks until `bytes` may be written. A request larger than one
  // period's refill (GetSingleBurstBytes) is granted in chunks of at most
  // that size, one refill at a time. bytes <= 0 returns at once. On a
  // limiter whose rate or period is invalid (see NewGenericRateLimiter)
  // it returns at once, still counting the bytes.
  virtual void Request(int64_t bytes) = 0;

  // The rate in bytes per second.
  virtual int64_t GetBytesPerSecond() const = 0;
  // Changes the rate; applies from the next refill (within one refill
  // period). InvalidArgument, leaving the rate as it was, when
  // bytes_per_second <= 0. (RocksDB's returns nothing and asserts.)
  virtual absl::Status SetBytesPerSecond(int64_t bytes_per_second) = 0;
  // Bytes granted per refill period: rate * period, at least 1; 0 when the
  // rate or the period is <= 0.
  virtual int64_t GetSingleBurstBytes() const = 0;
  // Bytes granted so far (the sum of every Request's bytes).
  virtual int64_t GetTotalBytesThrough() const = 0;
  // Request calls so far (one per call, however many chunks it took).
  virtual int64_t GetTotalRequests() const = 0;
};

// A token-bucket limiter of rate_bytes_per_sec, refilled every
// refill_period_us microseconds with rate * period / 1e6 bytes; unused
// bytes do not accumulate beyond one refill, so after an idle spell at
// most one period's worth passes at once. fairness: no effect (see above).
// A rate or period <= 0 yields a limiter that DB::Open refuses with
// InvalidArgument naming Options::rate_limiter.
SIFTDB_EXPORT std::shared_ptr<RateLimiter> NewGenericRateLimiter(
    int64_t rate_bytes_per_sec, int64_t refill_period_us = 100 * 1000,
    int32_t fairness = 10);

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_RATE_LIMITER_H_
