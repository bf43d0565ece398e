// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include <algorithm>
#include <chrono>
#include <memory>
#include <thread>

#include "absl/strings/str_format.h"
#include "util/generic_rate_limiter.h"

namespace siftdb {
namespace {

class SteadyClock final : public GenericRateLimiter::Clock {
 public:
  uint64_t NowMicros() override {
    return std::chrono::duration_cast<std::chrono::microseconds>(
               std::chrono::steady_clock::now().time_since_epoch())
        .count();
  }
  void SleepForMicroseconds(int64_t micros) override {
    std::this_thread::sleep_for(std::chrono::microseconds(micros));
  }
};

GenericRateLimiter::Clock* RealClock() {
  static SteadyClock* clock = new SteadyClock;
  return clock;
}

// rate * period / 1e6, at least 1; 0 when either is <= 0.
int64_t BurstBytes(int64_t rate, int64_t period_us) {
  if (rate <= 0 || period_us <= 0) return 0;
  const double bytes = static_cast<double>(rate) * period_us / 1e6;
  constexpr double kMax = 4e18;  // below INT64_MAX (9.2e18)
  return std::max<int64_t>(1, static_cast<int64_t>(std::min(bytes, kMax)));
}

}  // namespace

GenericRateLimiter::GenericRateLimiter(int64_t rate_bytes_per_sec,
                                       int64_t refill_period_us, Clock* clock)
    : clock_(clock != nullptr ? clock : RealClock()),
      refill_period_us_(refill_period_us),
      rate_(rate_bytes_per_sec),
      burst_(BurstBytes(rate_bytes_per_sec, refill_period_us)),
      available_(0),
      next_refill_us_(clock_->NowMicros()) {}

void GenericRateLimiter::Request(int64_t bytes) {
  {
    MutexLock l(&mu_);
    total_requests_++;
  }
  while (bytes > 0) {
    int64_t burst;
    {
      MutexLock l(&mu_);
      burst = burst_;
    }
    const int64_t chunk = burst > 0 ? std::min(bytes, burst) : bytes;
    RequestChunk(chunk);
    bytes -= chunk;
  }
}

void GenericRateLimiter::RequestChunk(int64_t bytes) {
  MutexLock l(&mu_);
  if (burst_ <= 0) {  // invalid rate or period: unlimited (Open refuses it)
    total_bytes_ += bytes;
    return;
  }
  if (queue_.empty() && available_ >= bytes) {
    available_ -= bytes;
    total_bytes_ += bytes;
    return;
  }
  Waiter self{bytes};
  queue_.push_back(&self);
  while (!self.granted) {
    if (leader_waiting_) {
      granted_cv_.Wait(&mu_);
      continue;
    }
    leader_waiting_ = true;
    const uint64_t now = clock_->NowMicros();
    if (now < next_refill_us_) {
      const int64_t wait = static_cast<int64_t>(next_refill_us_ - now);
      mu_.Unlock();
      clock_->SleepForMicroseconds(wait);
      mu_.Lock();
    }
    RefillAndGrant();
    leader_waiting_ = false;
    granted_cv_.SignalAll();
  }
}

void GenericRateLimiter::RefillAndGrant() {
  next_refill_us_ = clock_->NowMicros() + refill_period_us_;
  available_ = std::min(available_ + burst_, burst_);
  while (!queue_.empty()) {
    Waiter* front = queue_.front();
    // A chunk cut before the rate was lowered may exceed the new burst: it
    // goes through on a full bucket, so it cannot wait forever.
    if (front->bytes > available_ && available_ < burst_) break;
    available_ = std::max<int64_t>(0, available_ - front->bytes);
    total_bytes_ += front->bytes;
    front->granted = true;
    queue_.pop_front();
  }
}

int64_t GenericRateLimiter::GetBytesPerSecond() const {
  MutexLock l(&mu_);
  return rate_;
}

absl::Status GenericRateLimiter::SetBytesPerSecond(int64_t bytes_per_second) {
  if (bytes_per_second <= 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "RateLimiter::SetBytesPerSecond: %d bytes/s (must be > 0)",
        bytes_per_second));
  }
  MutexLock l(&mu_);
  rate_ = bytes_per_second;
  burst_ = BurstBytes(rate_, refill_period_us_);
  available_ = std::min(available_, burst_);
  return absl::OkStatus();
}

int64_t GenericRateLimiter::GetSingleBurstBytes() const {
  MutexLock l(&mu_);
  return burst_;
}

int64_t GenericRateLimiter::GetTotalBytesThrough() const {
  MutexLock l(&mu_);
  return total_bytes_;
}

int64_t GenericRateLimiter::GetTotalRequests() const {
  MutexLock l(&mu_);
  return total_requests_;
}

std::shared_ptr<RateLimiter> NewGenericRateLimiter(int64_t rate_bytes_per_sec,
                                                   int64_t refill_period_us,
                                                   int32_t /*fairness*/) {
  return std::make_shared<GenericRateLimiter>(rate_bytes_per_sec,
                                              refill_period_us, nullptr);
}

}  // namespace siftdb
