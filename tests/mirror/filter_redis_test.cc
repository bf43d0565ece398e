// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The filters' bit order against a real Redis: a filter's bytes stored as a
// Redis string answer GETBIT i exactly as filter bit i, for every bit of the
// bit array (the trailer follows it, at offsets past the bits).

#include <hiredis/hiredis.h>

#include <memory>
#include <string>
#include <vector>

#include "filter/blocked_bloom.h"
#include "filter/classic_bloom.h"
#include "filter/filter_format.h"
#include "filter/filter_hash.h"
#include "gtest/gtest.h"
#include "siftdb/filter_policy.h"
#include "tests/filter/filter_test_keys.h"
#include "tests/support/redis_server.h"

namespace siftdb {
namespace filter_redis_test {

struct RedisContextDeleter {
  void operator()(redisContext* c) const { redisFree(c); }
};
struct RedisReplyDeleter {
  void operator()(redisReply* r) const { freeReplyObject(r); }
};
using ReplyPtr = std::unique_ptr<redisReply, RedisReplyDeleter>;

ReplyPtr GetReply(redisContext* c) {
  void* reply = nullptr;
  if (redisGetReply(c, &reply) != REDIS_OK) return nullptr;
  return ReplyPtr(static_cast<redisReply*>(reply));
}

TEST(FilterRedisTest, GetBitMatchesFilterBits) {
  SIFTDB_REQUIRE_REDIS();
  auto server = test::RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  timeval timeout{10, 0};
  std::unique_ptr<redisContext, RedisContextDeleter> c(
      redisConnectWithTimeout("127.0.0.1", (*server)->port(), timeout));
  ASSERT_TRUE(c != nullptr && c->err == 0);
  redisSetTimeout(c.get(), timeout);

  std::vector<std::string> keys;
  for (int i = 0; i < 200; ++i) keys.push_back(test::BigEndianKey(i));
  for (bool blocked : {true, false}) {
    SCOPED_TRACE(blocked ? "blocked" : "classic");
    const auto policy =
        blocked ? NewBloomFilterPolicy(10) : NewClassicBloomFilterPolicy(10);
    auto builder = policy->NewBuilder();
    for (const auto& key : keys) builder->AddKey(key);
    std::string filter;
    builder->Finish(&filter);
    const size_t bit_bytes = filter.size() - kFilterTrailerSize;
    const auto* bits = reinterpret_cast<const uint8_t*>(filter.data());

    const std::string redis_key = blocked ? "f:blocked" : "f:classic";
    ReplyPtr set(static_cast<redisReply*>(
        redisCommand(c.get(), "SET %b %b", redis_key.data(), redis_key.size(),
                     filter.data(), filter.size())));
    ASSERT_TRUE(set != nullptr && set->type == REDIS_REPLY_STATUS);

    // Pipeline one GETBIT per bit of the bit array.
    const uint64_t num_bits = uint64_t{bit_bytes} * 8;
    for (uint64_t i = 0; i < num_bits; ++i) {
      const std::string offset = std::to_string(i);
      redisAppendCommand(c.get(), "GETBIT %b %b", redis_key.data(),
                         redis_key.size(), offset.data(), offset.size());
    }
    uint64_t set_bits = 0;
    for (uint64_t i = 0; i < num_bits; ++i) {
      ReplyPtr r = GetReply(c.get());
      ASSERT_TRUE(r != nullptr && r->type == REDIS_REPLY_INTEGER) << i;
      ASSERT_EQ(r->integer == 1, GetFilterBit(bits, i)) << "bit " << i;
      set_bits += r->integer;
    }
    EXPECT_GT(set_bits, 0u);

    // Every probe of every stored key is a 1 in Redis.
    ParsedBlockedBloom pb(filter);
    ParsedClassicBloom pc(filter);
    for (const auto& key : keys) {
      const uint64_t h = FilterKeyHash(key);
      for (uint64_t bit :
           blocked ? BlockedBloomProbeBits(h, pb.num_blocks(), pb.k())
                   : ClassicBloomProbeBits(h, pc.num_bits(), pc.k())) {
        ReplyPtr r(static_cast<redisReply*>(redisCommand(
            c.get(), "GETBIT %b %llu", redis_key.data(), redis_key.size(),
            static_cast<unsigned long long>(bit))));
        ASSERT_TRUE(r != nullptr && r->type == REDIS_REPLY_INTEGER);
        ASSERT_EQ(r->integer, 1) << "bit " << bit;
      }
    }

    // BITCOUNT over the bit array's bytes agrees too.
    ReplyPtr count(static_cast<redisReply*>(redisCommand(
        c.get(), "BITCOUNT %b 0 %llu", redis_key.data(), redis_key.size(),
        static_cast<unsigned long long>(bit_bytes - 1))));
    ASSERT_TRUE(count != nullptr && count->type == REDIS_REPLY_INTEGER);
    EXPECT_EQ(static_cast<uint64_t>(count->integer), set_bits);
  }
}

}  // namespace filter_redis_test
}  // namespace siftdb
