// Copyright (c) siftdb authors.

#include "bench/db_bench/write_rate_limiter.h"

#include <thread>

namespace siftdb::bench {

WriteRateLimiter::WriteRateLimiter(uint64_t bytes_per_second)
    : bytes_per_second_(bytes_per_second),
      start_(std::chrono::steady_clock::now()) {}

void WriteRateLimiter::Acquire(uint64_t bytes) {
  const uint64_t end =
      admitted_.fetch_add(bytes, std::memory_order_relaxed) + bytes;
  // When the last of these bytes is due, in nanoseconds after start_. A
  // long double keeps the product exact enough for any run length.
  const auto due = std::chrono::nanoseconds(
      static_cast<int64_t>(static_cast<long double>(end) * 1e9L /
                           static_cast<long double>(bytes_per_second_)));
  const auto when = start_ + due;
  // Sleeps shorter than this cost more in timer slack than they pace; the
  // schedule is absolute, so skipping them only lets a writer run up to this
  // far ahead, never faster on average.
  constexpr auto kMinSleep = std::chrono::microseconds(500);
  if (when - std::chrono::steady_clock::now() >= kMinSleep) {
    std::this_thread::sleep_until(when);
  }
}

}  // namespace siftdb::bench
