// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// MExists tests a sub-filter either from a copy of its bit array inside the
// exists script (small arrays relative to the batch), with BITFIELD_RO probe
// rounds in the script, or without a script in two MULTI rounds (one
// sub-filter). The choice depends on the array's size and the batch's, so
// these tests sweep both and compare every answer with an oracle computed
// here from the raw bytes in Redis and RedisBloom's hashing.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_counting_bloom_impl.h"
#include "siftdb/redis_bloom.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"

namespace siftdb::test {
namespace probe_modes_test {

class ProbeModesTest : public RedisBloomClientTest {
 protected:
  // Present iff some sub-filter has all of the item's bits set.
  std::vector<bool> Oracle(const std::string& name,
                           const std::vector<std::string>& items) {
    absl::StatusOr<BloomInfo> info = bloom_->Info(name);
    EXPECT_TRUE(info.ok()) << info.status();
    std::vector<bool> out(items.size(), false);
    if (!info.ok()) return out;
    for (size_t j = 0; j < info->sub_filters.size(); j++) {
      const BloomSubFilterInfo& s = info->sub_filters[j];
      absl::StatusOr<RedisReply> raw =
          client_->Command({"GET", RedisBloom::BitmapKey(name, j)});
      EXPECT_TRUE(raw.ok() && raw->is_string());
      if (!raw.ok() || !raw->is_string()) return out;
      const std::string& bytes = raw->str();
      EXPECT_EQ(bytes.size(), s.bytes);
      for (size_t i = 0; i < items.size(); i++) {
        redis_bloom::HashPair h = redis_bloom::HashItem(items[i]);
        bool all = true;
        for (uint32_t r = 0; r < s.hashes && all; r++) {
          uint64_t x = redis_bloom::ProbeBit(h, r, s.bits);
          all = (static_cast<uint8_t>(bytes[x >> 3]) >> (x & 7)) & 1;
        }
        if (all) out[i] = true;
      }
    }
    return out;
  }

  // MExists over `items` in batches of each size equals the oracle.
  void ExpectMatchesOracle(const std::string& name,
                           const std::vector<std::string>& items) {
    const std::vector<bool> want = Oracle(name, items);
    for (size_t batch :
         {size_t{1}, size_t{7}, size_t{100}, size_t{1000}, size_t{5000}}) {
      SCOPED_TRACE(absl::StrCat(name, " batch ", batch));
      for (size_t begin = 0; begin < items.size(); begin += batch) {
        size_t end = std::min(items.size(), begin + batch);
        std::vector<std::string> part(items.begin() + begin,
                                      items.begin() + end);
        absl::StatusOr<std::vector<bool>> got = bloom_->MExists(name, part);
        ASSERT_TRUE(got.ok()) << got.status();
        ASSERT_EQ(got->size(), part.size());
        for (size_t i = 0; i < part.size(); i++) {
          ASSERT_EQ((*got)[i], want[begin + i]) << part[i];
        }
        if (batch == 1 && begin >= 300) break;  // keep the suite quick
      }
    }
  }
};

// Mixed present / absent items and false positives, every mode of a single
// sub-filter: 69 KB of bits is copied for batches of >= ~300 items and
// probed with BITFIELD_RO below that.
TEST_F(ProbeModesTest, SingleSubFilterAnswersEqualTheRawBits) {
  for (int capacity : {1000, 50000}) {
    std::string name = absl::StrCat("single-", capacity);
    ASSERT_TRUE(bloom_->Reserve(name, 0.01, capacity).ok());
    ASSERT_TRUE(bloom_->MAdd(name, Range("in-", 0, capacity * 3 / 4)).ok());
    std::vector<std::string> items = Range("in-", 0, 2500);
    for (const std::string& s : Range("out-", 0, 2500)) items.push_back(s);
    ExpectMatchesOracle(name, items);
  }
}

// A large sub-filter is probed, in two rounds or (after a batch found
// mostly present items) in one: batches alternating between present,
// absent and mixed items switch between the two and must answer as the
// bits say every time.
TEST_F(ProbeModesTest, ProbesSwitchingBetweenOneAndTwoRoundsAnswerTheBits) {
  ASSERT_TRUE(bloom_->Reserve("big", 0.01, 400000).ok());
  ASSERT_TRUE(bloom_->MAdd("big", Range("in-", 0, 300000)).ok());
  std::vector<std::vector<std::string>> batches;
  for (int b = 0; b < 4; b++) {
    batches.push_back(Range("in-", b * 1000, (b + 1) * 1000));   // present
    batches.push_back(Range("in-", b * 1000, (b + 1) * 1000));   // again
    batches.push_back(Range("out-", b * 1000, (b + 1) * 1000));  // absent
    std::vector<std::string> mixed =
        Range("in-", 50000 + b * 500, 50000 + (b + 1) * 500);
    for (const std::string& s :
         Range("out-", 9000 + b * 500, 9000 + (b + 1) * 500)) {
      mixed.push_back(s);
    }
    batches.push_back(std::move(mixed));
  }
  for (size_t b = 0; b < batches.size(); b++) {
    SCOPED_TRACE(absl::StrCat("batch ", b));
    const std::vector<bool> want = Oracle("big", batches[b]);
    absl::StatusOr<std::vector<bool>> got = bloom_->MExists("big", batches[b]);
    ASSERT_TRUE(got.ok()) << got.status();
    ASSERT_EQ(*got, want);
    if (b % 4 < 2) {
      EXPECT_EQ(std::count(got->begin(), got->end(), true), 1000);
    }
  }
}

// A grown chain holds small sub-filters (copied) and large ones (probed);
// items live in different sub-filters.
TEST_F(ProbeModesTest, ChainAnswersEqualTheRawBits) {
  ASSERT_TRUE(bloom_->Reserve("chain", 0.01, 100, 2).ok());
  ASSERT_TRUE(bloom_->MAdd("chain", Range("in-", 0, 30000)).ok());
  absl::StatusOr<BloomInfo> info = bloom_->Info("chain");
  ASSERT_TRUE(info.ok());
  ASSERT_GE(info->filters, 8u);
  std::vector<std::string> items = Range("in-", 0, 30000);
  for (const std::string& s : Range("out-", 0, 5000)) items.push_back(s);
  // Every 6th item keeps the run short while touching every sub-filter.
  std::vector<std::string> sample;
  for (size_t i = 0; i < items.size(); i += 6) sample.push_back(items[i]);
  ExpectMatchesOracle("chain", sample);
}

// MAdd tests the older sub-filters of a chain from copies when they are
// small. Adding in batches of 1000 must give the replies, counts and bytes
// of adding one item at a time (RedisBloom applies a batch in order).
TEST_F(ProbeModesTest, ChainAddsInBatchesEqualAddsOneByOne) {
  ASSERT_TRUE(bloom_->Reserve("batched", 0.01, 100, 2).ok());
  ASSERT_TRUE(bloom_->Reserve("single", 0.01, 100, 2).ok());
  std::vector<std::string> items;
  for (int i = 0; i < 6000; i++) {
    items.push_back(absl::StrCat("it-", (i * 7919) % 4500));  // repeats
  }
  std::vector<bool> batched, single;
  for (size_t begin = 0; begin < items.size(); begin += 1000) {
    std::vector<std::string> part(items.begin() + begin,
                                  items.begin() + begin + 1000);
    absl::StatusOr<BloomAddResults> r = bloom_->MAdd("batched", part);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->stopped.ok());
    batched.insert(batched.end(), r->added.begin(), r->added.end());
  }
  for (const std::string& item : items) {
    absl::StatusOr<bool> r = bloom_->Add("single", item);
    ASSERT_TRUE(r.ok()) << r.status();
    single.push_back(*r);
  }
  ASSERT_EQ(batched, single);
  absl::StatusOr<BloomInfo> a = bloom_->Info("batched");
  absl::StatusOr<BloomInfo> b = bloom_->Info("single");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->items, b->items);
  ASSERT_EQ(a->filters, b->filters);
  ASSERT_GE(a->filters, 5u);
  for (size_t j = 0; j < a->filters; j++) {
    EXPECT_EQ(a->sub_filters[j].items, b->sub_filters[j].items) << j;
    absl::StatusOr<RedisReply> x =
        client_->Command({"GET", RedisBloom::BitmapKey("batched", j)});
    absl::StatusOr<RedisReply> y =
        client_->Command({"GET", RedisBloom::BitmapKey("single", j)});
    ASSERT_TRUE(x.ok() && y.ok());
    EXPECT_TRUE(x->str() == y->str()) << "sub-filter " << j;
  }
}

// A sub-filter whose bitmap key was deleted reads as all zero in every
// mode (BITFIELD_RO reads a missing key as zeros too).
TEST_F(ProbeModesTest, MissingBitmapReadsAsZeroInEveryMode) {
  ASSERT_TRUE(bloom_->Reserve("gone", 0.01, 1000).ok());
  ASSERT_TRUE(bloom_->MAdd("gone", Range("in-", 0, 500)).ok());
  ASSERT_TRUE(client_->Command({"DEL", RedisBloom::BitmapKey("gone", 0)}).ok());
  for (size_t n : {size_t{1}, size_t{500}}) {
    absl::StatusOr<std::vector<bool>> got =
        bloom_->MExists("gone", Range("in-", 0, static_cast<int>(n)));
    ASSERT_TRUE(got.ok()) << got.status();
    EXPECT_EQ(std::count(got->begin(), got->end(), true), 0) << n;
  }
}

}  // namespace probe_modes_test
}  // namespace siftdb::test
