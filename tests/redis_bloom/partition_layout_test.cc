// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The persisted arithmetic of partitioned filters
// (redis/bloom/redis_bloom_partition_layout.h): partition names and their
// slots, routing, dump iterators and the dump header. No Redis needed.

#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "redis/bloom/redis_bloom_partition_layout.h"
#include "redis/client/redis_cluster_client.h"
#include "siftdb/redis_bloom.h"

namespace siftdb::test {
namespace partition_layout_test {

using redis_bloom::PartitionedMeta;

// The persisted rules of docs/redis_bloom.md section 11, without Redis.
TEST(BloomPartitionLayout, PersistedRulesHold) {
  using redis_bloom::PartitionName;
  // Partition i's slot lies in the i-th of P equal slices of the slots.
  for (int64_t p : {2, 3, 10, 1024}) {
    for (int64_t i = 0; i < p; i++) {
      const std::string part = PartitionName("users", "00ff00ff00ff00ff", i, p);
      EXPECT_EQ(
          part.rfind("users/00ff00ff00ff00ff/" + std::to_string(i) + "/", 0),
          0u)
          << part;
      const int slot = RedisKeySlot(RedisBloom::MetaKey(part));
      EXPECT_EQ(slot, RedisCrc16(part) % kRedisClusterSlots) << part;
      EXPECT_EQ(slot * p / kRedisClusterSlots, i) << part;
    }
  }
  // Routing: MurmurHash64A with seed 0x9e3779b97f4a7c15, mod P; every
  // partition gets a fair share.
  std::vector<int> count(7, 0);
  for (int i = 0; i < 70000; i++) {
    count[redis_bloom::RouteItem("item-" + std::to_string(i), 7)]++;
  }
  for (int c : count) {
    EXPECT_GT(c, 9500);
    EXPECT_LT(c, 10500);
  }
  // Dump iterators name their partition and stay clear of unpartitioned
  // ones (< 2^41) and of the header's (2^60).
  int64_t p = -1, inner = -1;
  EXPECT_EQ(redis_bloom::DumpIterator(0, 1), (int64_t{1} << 44) + 1);
  ASSERT_TRUE(redis_bloom::SplitDumpIterator(
      redis_bloom::DumpIterator(1023, 12345), &p, &inner));
  EXPECT_EQ(p, 1023);
  EXPECT_EQ(inner, 12345);
  EXPECT_FALSE(redis_bloom::SplitDumpIterator(int64_t{1} << 41, &p, &inner));
  EXPECT_FALSE(redis_bloom::SplitDumpIterator(redis_bloom::kDumpHeaderIterator,
                                              &p, &inner));
  // The header text round-trips and refuses anything else.
  PartitionedMeta m;
  m.partitions = 5;
  m.error_rate = 0.001;
  m.capacity = 123456;
  m.expansion = 4;
  m.nonscaling = false;
  const std::string text = redis_bloom::EncodeDumpHeader(m);
  EXPECT_EQ(text, "siftdb-partitioned-bloom 1 5 0.001 123456 4 0");
  auto back = redis_bloom::DecodeDumpHeader(text);
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->partitions, 5);
  EXPECT_EQ(back->error_rate, 0.001);
  EXPECT_EQ(back->capacity, 123456);
  EXPECT_EQ(back->expansion, 4);
  EXPECT_FALSE(back->nonscaling);
  EXPECT_FALSE(redis_bloom::DecodeDumpHeader(text + " ").ok());
  EXPECT_FALSE(
      redis_bloom::DecodeDumpHeader("siftdb-partitioned-bloom 1 1 0.01 1 2 0")
          .ok());
  EXPECT_EQ(redis_bloom::PartitionCapacity(1000, 3), 334);
  EXPECT_EQ(redis_bloom::PartitionCapacity(999, 3), 333);
}

}  // namespace partition_layout_test
}  // namespace siftdb::test
