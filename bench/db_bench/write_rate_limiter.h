// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// WriteRateLimiter: paces db_bench's writers to a global byte rate (the
// --benchmark_write_rate_limit flag, named as in RocksDB's db_bench), so
// engines can be compared at the same ingest rate instead of each at its
// own top speed. Compaction debt, and so the DB size at the moment a fill
// ends, depends on how fast the writer ran; at one fixed rate the engines'
// sizes compare their space use, not their speed.
//
// Pacing: the schedule starts at the first Acquire(), and the call that
// brings the bytes admitted to n may not return before start + n / rate. A
// caller more than 0.5 ms ahead of that schedule sleeps; one behind it (the
// engine is slower than the rate) never does, and the lost time is not made
// up by bursting later beyond what the schedule allows. So k writes of
// B bytes in total, each after its Acquire(), take at least
// B / rate - 0.5 ms from the first Acquire() to the last write.
//
// Thread safety: Acquire() may be called from many threads at once.

#ifndef SIFTDB_BENCH_DB_BENCH_WRITE_RATE_LIMITER_H_
#define SIFTDB_BENCH_DB_BENCH_WRITE_RATE_LIMITER_H_

#include <atomic>
#include <chrono>
#include <cstdint>

namespace siftdb::bench {

class WriteRateLimiter {
 public:
  // REQUIRES: bytes_per_second > 0.
  explicit WriteRateLimiter(uint64_t bytes_per_second);
  WriteRateLimiter(const WriteRateLimiter&) = delete;
  WriteRateLimiter& operator=(const WriteRateLimiter&) = delete;

  // Admits `bytes` more bytes, sleeping until the schedule allows them.
  void Acquire(uint64_t bytes);

 private:
  using Clock = std::chrono::steady_clock;

  const uint64_t bytes_per_second_;
  // Clock::time_point of the first Acquire() as nanoseconds since the
  // clock's epoch; 0 until then (set once, by whichever caller comes first).
  std::atomic<int64_t> start_nanos_{0};
  std::atomic<uint64_t> admitted_{0};  // bytes handed out so far
};

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_DB_BENCH_WRITE_RATE_LIMITER_H_
