// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ConcurrentBloom (filter/concurrent_bloom.h): no false negatives over a
// sweep of key counts and filter sizes (including the disabled and
// rounded-down sizes), a bounded false-positive rate, MemoryUsage(), and
// readers querying keys a concurrent writer has published.

#include "filter/concurrent_bloom.h"

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/filter_hash.h"
#include "gtest/gtest.h"
#include "tests/filter/filter_test_keys.h"

namespace siftdb {
namespace concurrent_bloom_test {

using test::BigEndianKey;
using test::RandomKey;
using test::SplitMix64;

// Key i of one of three shapes (text, big-endian counter, random bytes of
// 0..40 bytes, so the empty key occurs too), all distinct from each other
// and from AbsentKey(j).
std::string PresentKey(uint64_t i, SplitMix64* rng) {
  switch (i % 3) {
    case 0:
      return absl::StrFormat("key%08d", i);
    case 1:
      return BigEndianKey(i);
    default: {
      // A leading tag byte keeps random keys apart from the other shapes.
      return "\x01" + absl::StrFormat("%d:", i) +
             RandomKey(rng, rng->Uniform(41));
    }
  }
}

std::string AbsentKey(uint64_t i) { return absl::StrFormat("absent%010d", i); }

// n = 1, 2, 3, ... growing by ~1.5x up to 10,000 (inclusive).
std::vector<size_t> KeyCounts() {
  std::vector<size_t> counts;
  for (size_t n = 1; n < 10000; n = n + 1 + n / 2) counts.push_back(n);
  counts.push_back(10000);
  return counts;
}

TEST(ConcurrentBloomTest, KeyCountSweepIsComplete) {
  const std::vector<size_t> counts = KeyCounts();
  ASSERT_EQ(counts.front(), 1u);
  ASSERT_EQ(counts[1], 2u);
  ASSERT_EQ(counts.back(), 10000u);
  ASSERT_GE(counts.size(), 15u);
}

TEST(ConcurrentBloomTest, NoFalseNegatives) {
  // 0 and 63 store nothing (always "may match"); 64 is one block, which
  // 10,000 keys saturate; 65 and 1000 round down; 1 MiB is generous.
  const size_t kSizes[] = {0, 1, 63, 64, 65, 128, 1000, 4096, size_t{1} << 20};
  for (size_t bytes : kSizes) {
    for (size_t n : KeyCounts()) {
      SCOPED_TRACE(absl::StrFormat("filter bytes %d, keys %d", bytes, n));
      ConcurrentBloom filter(bytes);
      SplitMix64 rng(n * 1000003 + bytes);
      std::vector<uint64_t> hashes;
      hashes.reserve(n);
      for (size_t i = 0; i < n; i++) {
        hashes.push_back(FilterKeyHash(PresentKey(i, &rng)));
        filter.Add(hashes.back());
        // The key just added and the first one are found at once.
        ASSERT_TRUE(filter.MayMatch(hashes.back())) << "key " << i;
        ASSERT_TRUE(filter.MayMatch(hashes.front())) << "key " << i;
      }
      for (size_t i = 0; i < n; i++) {
        ASSERT_TRUE(filter.MayMatch(hashes[i])) << "key " << i;
      }
      // Adding the same keys again changes nothing.
      for (size_t i = 0; i < n; i += 7) filter.Add(hashes[i]);
      for (size_t i = 0; i < n; i++) {
        ASSERT_TRUE(filter.MayMatch(hashes[i])) << "key " << i;
      }
    }
  }
}

TEST(ConcurrentBloomTest, DisabledFilterAlwaysMayMatch) {
  for (size_t bytes : {size_t{0}, size_t{1}, size_t{32}, size_t{63}}) {
    SCOPED_TRACE(absl::StrFormat("filter bytes %d", bytes));
    ConcurrentBloom filter(bytes);
    EXPECT_EQ(filter.MemoryUsage(), 0u);
    // Before and after adding keys: every query says "may match".
    for (uint64_t i = 0; i < 1000; i++) {
      ASSERT_TRUE(filter.MayMatch(FilterKeyHash(AbsentKey(i))));
    }
    ASSERT_TRUE(filter.MayMatch(0));
    ASSERT_TRUE(filter.MayMatch(~uint64_t{0}));
    filter.Add(FilterKeyHash("x"));
    for (uint64_t i = 0; i < 1000; i++) {
      ASSERT_TRUE(filter.MayMatch(FilterKeyHash(AbsentKey(i))));
    }
  }
}

TEST(ConcurrentBloomTest, EmptyEnabledFilterMatchesNothing) {
  // A filter with storage but no keys has no bits set: every answer is no.
  for (size_t bytes : {size_t{64}, size_t{100}, size_t{4096}}) {
    ConcurrentBloom filter(bytes);
    for (uint64_t i = 0; i < 1000; i++) {
      ASSERT_FALSE(filter.MayMatch(FilterKeyHash(AbsentKey(i)))) << i;
    }
    // Extreme hashes pick the first and last blocks.
    EXPECT_FALSE(filter.MayMatch(0x0000000012345678ull));
    EXPECT_FALSE(filter.MayMatch(0xFFFFFFFF12345678ull));
  }
}

TEST(ConcurrentBloomTest, ExtremeHashes) {
  // Hashes whose high half picks the first or last block, and whose low
  // half is 0 (every probe bit 0) or all ones.
  const uint64_t kHashes[] = {0,
                              1,
                              0xFFFFFFFFull,
                              0xFFFFFFFF00000000ull,
                              ~uint64_t{0},
                              0x8000000000000000ull,
                              0x00000000FFFFFFFFull};
  for (size_t bytes : {size_t{64}, size_t{192}, size_t{64 * 1000}}) {
    ConcurrentBloom filter(bytes);
    for (uint64_t h : kHashes) filter.Add(h);
    for (uint64_t h : kHashes) {
      EXPECT_TRUE(filter.MayMatch(h)) << absl::StrFormat("%#x", h);
    }
  }
}

// False positives among `probes` absent keys after adding n present keys
// to a filter of `bytes`.
size_t CountFalsePositives(size_t bytes, size_t n, size_t probes) {
  ConcurrentBloom filter(bytes);
  SplitMix64 rng(42);
  for (size_t i = 0; i < n; i++) filter.Add(FilterKeyHash(PresentKey(i, &rng)));
  size_t fp = 0;
  for (size_t i = 0; i < probes; i++) {
    if (filter.MayMatch(FilterKeyHash(AbsentKey(i)))) fp++;
  }
  return fp;
}

TEST(ConcurrentBloomTest, FalsePositiveRate) {
  constexpr size_t kKeys = 10000;
  constexpr size_t kProbes = 100000;
  // 80 bits per key (the MemTable default's order): expected ~1e-6.
  const size_t fp80 = CountFalsePositives(kKeys * 80 / 8, kKeys, kProbes);
  EXPECT_LT(fp80, kProbes / 1000)
      << "80 bits/key: " << fp80 << " of " << kProbes;
  // 10 bits per key: about 1% expected.
  const size_t fp10 = CountFalsePositives(kKeys * 10 / 8, kKeys, kProbes);
  EXPECT_LT(fp10, kProbes * 3 / 100)
      << "10 bits/key: " << fp10 << " of " << kProbes;
  // And the filter does reject: fewer bits per key, more false positives.
  EXPECT_LE(fp80, fp10);
  // One block for 10,000 keys is saturated: (nearly) everything matches.
  EXPECT_GT(CountFalsePositives(64, kKeys, 1000), 990u);
}

TEST(ConcurrentBloomTest, MemoryUsage) {
  struct Case {
    size_t bytes;
    size_t usage;
  };
  const Case kCases[] = {
      {0, 0},
      {1, 0},
      {63, 0},
      {64, 64},
      {65, 64},
      {127, 64},
      {128, 128},
      {1000, 960},
      {4096, 4096},
      {4097, 4096},
      {1 << 20, 1 << 20},
      {(1 << 20) + 63, 1 << 20},
  };
  for (const Case& c : kCases) {
    ConcurrentBloom filter(c.bytes);
    EXPECT_EQ(filter.MemoryUsage(), c.usage) << "bytes " << c.bytes;
    // Adding keys allocates nothing more.
    for (uint64_t i = 0; i < 100; i++) filter.Add(FilterKeyHash(AbsentKey(i)));
    EXPECT_EQ(filter.MemoryUsage(), c.usage) << "bytes " << c.bytes;
  }
}

TEST(ConcurrentBloomTest, ReadersSeePublishedKeys) {
  // One writer adds keys and then publishes their count with a release
  // store; two readers acquire the count and query keys below it, which
  // must all match (the ordering the MemTable relies on).
  constexpr size_t kKeys = 200000;
  std::vector<uint64_t> hashes(kKeys);
  for (size_t i = 0; i < kKeys; i++) hashes[i] = FilterKeyHash(AbsentKey(i));
  // ~10 bits per key, so words are shared by many keys and change often.
  ConcurrentBloom filter(kKeys * 10 / 8);
  std::atomic<size_t> published{0};
  std::atomic<bool> done{false};

  struct ReaderResult {
    size_t checks = 0;
    size_t misses = 0;
    size_t first_miss = SIZE_MAX;
  };
  ReaderResult results[2];
  auto reader = [&](int id) {
    ReaderResult& r = results[id];
    SplitMix64 rng(id + 1);
    while (true) {
      const bool finished = done.load(std::memory_order_acquire);
      const size_t limit = published.load(std::memory_order_acquire);
      if (limit > 0) {
        // The newest published key, and a few older ones at random.
        size_t check[4] = {limit - 1, rng.Uniform(limit), rng.Uniform(limit),
                           rng.Uniform(limit)};
        for (size_t i : check) {
          r.checks++;
          if (!filter.MayMatch(hashes[i])) {
            if (r.misses++ == 0) r.first_miss = i;
          }
        }
      }
      if (finished) break;
    }
  };

  std::thread r0(reader, 0);
  std::thread r1(reader, 1);
  std::thread writer([&] {
    for (size_t i = 0; i < kKeys; i++) {
      filter.Add(hashes[i]);
      published.store(i + 1, std::memory_order_release);
    }
    done.store(true, std::memory_order_release);
  });
  writer.join();
  r0.join();
  r1.join();

  for (const ReaderResult& r : results) {
    EXPECT_GT(r.checks, 0u);
    EXPECT_EQ(r.misses, 0u) << "first false negative at key " << r.first_miss
                            << " of " << r.checks << " checks";
  }
  for (size_t i = 0; i < kKeys; i++) {
    ASSERT_TRUE(filter.MayMatch(hashes[i])) << "key " << i;
  }
}

}  // namespace concurrent_bloom_test
}  // namespace siftdb
