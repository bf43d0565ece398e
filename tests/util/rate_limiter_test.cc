// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// GenericRateLimiter: chunking, refill timing and run-time rate changes on
// a fake clock (exact), and a bound on the rate under concurrent requests
// on the real clock (only a lower bound on elapsed time, which load cannot
// break).

#include "siftdb/rate_limiter.h"

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "util/generic_rate_limiter.h"

namespace siftdb {
namespace rate_limiter_test {

// Time moves only when the limiter sleeps (or the test advances it).
class FakeClock final : public GenericRateLimiter::Clock {
 public:
  uint64_t NowMicros() override { return now_.load(); }
  void SleepForMicroseconds(int64_t micros) override {
    sleeps_++;
    now_ += micros;
  }
  void Advance(uint64_t micros) { now_ += micros; }
  int sleeps() const { return sleeps_.load(); }

 private:
  std::atomic<uint64_t> now_{1'000'000};
  std::atomic<int> sleeps_{0};
};

TEST(RateLimiterTest, BurstIsRateTimesPeriod) {
  EXPECT_EQ(NewGenericRateLimiter(1 << 20)->GetSingleBurstBytes(),
            (1 << 20) / 10);
  EXPECT_EQ(NewGenericRateLimiter(1000, 1000)->GetSingleBurstBytes(), 1);
  EXPECT_EQ(NewGenericRateLimiter(1, 1000)->GetSingleBurstBytes(), 1);
  EXPECT_EQ(NewGenericRateLimiter(1000, 100 * 1000, 0)->GetBytesPerSecond(),
            1000);
}

TEST(RateLimiterTest, LargeRequestIsSplitIntoOneChunkPerRefill) {
  FakeClock clock;
  GenericRateLimiter limiter(1000, 100 * 1000, &clock);  // 100 bytes/refill
  const uint64_t start = clock.NowMicros();
  limiter.Request(1000);
  // The first chunk goes at once, each of the other nine a period later.
  EXPECT_EQ(clock.NowMicros() - start, 900 * 1000u);
  EXPECT_EQ(limiter.GetTotalBytesThrough(), 1000);
  EXPECT_EQ(limiter.GetTotalRequests(), 1);
}

TEST(RateLimiterTest, SmallRequestsShareARefill) {
  FakeClock clock;
  GenericRateLimiter limiter(1000, 100 * 1000, &clock);
  for (int i = 0; i < 10; i++) limiter.Request(10);  // one refill's worth
  EXPECT_EQ(clock.sleeps(), 0);
  limiter.Request(1);
  EXPECT_EQ(clock.sleeps(), 1);
  EXPECT_EQ(limiter.GetTotalBytesThrough(), 101);
  EXPECT_EQ(limiter.GetTotalRequests(), 11);
  limiter.Request(0);
  limiter.Request(-5);
  EXPECT_EQ(limiter.GetTotalBytesThrough(), 101);
}

TEST(RateLimiterTest, IdleTimeDoesNotBuildABurst) {
  FakeClock clock;
  GenericRateLimiter limiter(1000, 100 * 1000, &clock);
  limiter.Request(100);
  clock.Advance(60 * 1000 * 1000);  // a minute idle
  const uint64_t start = clock.NowMicros();
  limiter.Request(300);
  EXPECT_EQ(clock.NowMicros() - start, 200 * 1000u);
}

TEST(RateLimiterTest, SetBytesPerSecondAppliesToLaterRequests) {
  FakeClock clock;
  GenericRateLimiter limiter(1000, 100 * 1000, &clock);
  limiter.Request(100);
  ASSERT_TRUE(limiter.SetBytesPerSecond(10'000).ok());
  EXPECT_EQ(limiter.GetBytesPerSecond(), 10'000);
  EXPECT_EQ(limiter.GetSingleBurstBytes(), 1000);
  uint64_t start = clock.NowMicros();
  limiter.Request(5000);  // five refills of 1000
  EXPECT_EQ(clock.NowMicros() - start, 500 * 1000u);
  ASSERT_TRUE(limiter.SetBytesPerSecond(100).ok());  // 10 bytes per refill
  start = clock.NowMicros();
  limiter.Request(100);
  EXPECT_EQ(clock.NowMicros() - start, 1000 * 1000u);
  EXPECT_EQ(limiter.GetTotalBytesThrough(), 5200);
}

TEST(RateLimiterTest, BadRatesAreRefused) {
  FakeClock clock;
  GenericRateLimiter limiter(1000, 100 * 1000, &clock);
  for (int64_t bad : {int64_t{0}, int64_t{-1}}) {
    absl::Status s = limiter.SetBytesPerSecond(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_NE(s.message().find("SetBytesPerSecond"), std::string_view::npos);
  }
  EXPECT_EQ(limiter.GetBytesPerSecond(), 1000);
  // A limiter built with a bad rate or period (DB::Open refuses it) lets
  // everything through at once.
  for (auto [rate, period] : {std::pair<int64_t, int64_t>{0, 100000},
                              {-1, 100000},
                              {1000, 0},
                              {1000, -1}}) {
    GenericRateLimiter bad(rate, period, &clock);
    EXPECT_EQ(bad.GetSingleBurstBytes(), 0);
    bad.Request(1 << 20);
    EXPECT_EQ(bad.GetTotalBytesThrough(), 1 << 20);
  }
  EXPECT_EQ(clock.sleeps(), 0);
}

TEST(RateLimiterTest, ConcurrentRequestsKeepTheRate) {
  // Real time: 4 threads ask for 400 KiB in all at 1 MiB/s (refill every
  // 10 ms, 10 KiB each). Only a lower bound on elapsed time is checked.
  constexpr int64_t kRate = 1 << 20;
  constexpr int64_t kPeriodUs = 10 * 1000;
  auto limiter = NewGenericRateLimiter(kRate, kPeriodUs);
  const auto start = std::chrono::steady_clock::now();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&limiter, t] {
      for (int i = 0; i < 100; i++) limiter->Request(1024 + t);
    });
  }
  for (auto& th : threads) th.join();
  const double elapsed =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const int64_t total = 100 * (4 * 1024 + 0 + 1 + 2 + 3);
  EXPECT_EQ(limiter->GetTotalBytesThrough(), total);
  EXPECT_EQ(limiter->GetTotalRequests(), 400);
  // At most one burst beyond rate * elapsed.
  const double floor =
      static_cast<double>(total - limiter->GetSingleBurstBytes()) / kRate;
  EXPECT_GE(elapsed, floor * 0.99) << "total " << total;
}

}  // namespace rate_limiter_test
}  // namespace siftdb
