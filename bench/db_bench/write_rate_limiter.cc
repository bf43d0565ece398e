// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "bench/db_bench/write_rate_limiter.h"

#include <thread>

namespace siftdb::bench {

WriteRateLimiter::WriteRateLimiter(uint64_t bytes_per_second)
    : bytes_per_second_(bytes_per_second) {}

void WriteRateLimiter::Acquire(uint64_t bytes) {
  const int64_t now_nanos =
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          Clock::now().time_since_epoch())
          .count();
  int64_t start = start_nanos_.load(std::memory_order_acquire);
  if (start == 0 && start_nanos_.compare_exchange_strong(
                        start, now_nanos, std::memory_order_acq_rel)) {
    start = now_nanos;  // this call opened the schedule
  }
  const uint64_t end =
      admitted_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  // When the last of these bytes is due, in nanoseconds after the start. A
  // long double keeps the product exact enough for any run length.
  const int64_t due =
      start + static_cast<int64_t>(static_cast<long double>(end) * 1e9L /
                                   static_cast<long double>(bytes_per_second_));
  // Sleeps shorter than this cost more in timer slack than they pace; the
  // schedule is absolute, so skipping them only lets a writer run up to this
  // far ahead, never faster on average.
  constexpr int64_t kMinSleepNanos = 500'000;
  if (due - now_nanos >= kMinSleepNanos) {
    std::this_thread::sleep_until(
        Clock::time_point(std::chrono::duration_cast<Clock::duration>(
            std::chrono::nanoseconds(due))));
  }
}

}  // namespace siftdb::bench
