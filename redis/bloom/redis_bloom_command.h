// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomCommands: a BF.* / CBF.* command interpreter on top of
// RedisBloom and RedisCountingBloom. Execute(argv) parses a command the way
// RedisBloom 2.8.20 parses it and returns the reply RedisBloom would send
// (same RESP types, same error texts: see tests/testdata/redisbloom/
// replies.json), so a client written for the module can be pointed at
// siftdb's sift_bf tool or library unchanged.
//
//   BF.RESERVE key error_rate capacity [EXPANSION n] [NONSCALING]
//              [PARTITIONS p]   (PARTITIONS: siftdb only; docs/redis_bloom.md
//                                section 11)
//   BF.ADD key item            BF.MADD key item [item ...]
//   BF.EXISTS key item         BF.MEXISTS key item [item ...]
//   BF.INSERT key [CAPACITY c] [ERROR e] [EXPANSION n] [NOCREATE]
//             [NONSCALING] ITEMS item [item ...]
//   BF.INFO key [CAPACITY|SIZE|FILTERS|ITEMS|EXPANSION]
//   BF.CARD key   BF.DEBUG key   BF.SCANDUMP key it   BF.LOADCHUNK key it data
//   BF.DROP key                   (siftdb: delete the filter's keys)
//   CBF.RESERVE key error_rate capacity
//   CBF.ADD / CBF.DEL / CBF.EXISTS / CBF.COUNT key item [item ...]
//                                 (an integer for one item, else an array)
//   CBF.INFO key   CBF.DROP key
// Key-space commands on a bloom filter's name act on the whole filter (all
// of its keys, as RedisBloom's one key; redis_bloom_key_commands.cc):
//   DEL / UNLINK / EXISTS key [key ...]   TYPE key (MBbloom--)
//   EXPIRE / PEXPIRE key n [NX|XX|GT|LT]   EXPIREAT / PEXPIREAT key t [...]
//   TTL / PTTL key   PERSIST key
// on any other name they go to Redis unchanged.
// Any other command is sent to Redis verbatim and its reply returned.
//
// Thread safety: not thread-safe (it drives one RedisClient).

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_COMMAND_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_COMMAND_H_

#include <string>
#include <vector>

#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_partitioned.h"
#include "redis/bloom/redis_counting_bloom_impl.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_reply.h"
#include "siftdb/redis_bloom.h"

namespace siftdb {

class RedisBloomCommands {
 public:
  // `client` must outlive this object.
  explicit RedisBloomCommands(RedisClient* client);

  RedisBloomCommands(const RedisBloomCommands&) = delete;
  RedisBloomCommands& operator=(const RedisBloomCommands&) = delete;

  RedisReply Execute(const std::vector<std::string>& argv);

 private:
  using Argv = std::vector<std::string>;
  RedisReply Reserve(const Argv& a);
  RedisReply Add(const Argv& a);
  RedisReply MAdd(const Argv& a);
  RedisReply Exists(const Argv& a);
  RedisReply MExists(const Argv& a);
  RedisReply Insert(const Argv& a);
  RedisReply Info(const Argv& a);
  RedisReply Card(const Argv& a);
  RedisReply Debug(const Argv& a);
  RedisReply ScanDump(const Argv& a);
  RedisReply LoadChunk(const Argv& a);
  RedisReply Drop(const Argv& a);
  RedisReply CountingReserve(const Argv& a);
  RedisReply CountingItems(const Argv& a, const std::string& op);
  RedisReply CountingInfo(const Argv& a);
  RedisReply CountingDrop(const Argv& a);
  RedisReply Passthrough(const Argv& a);
  // Key-space commands (redis_bloom_key_commands.cc).
  static bool IsKeyCommand(const std::string& upper);
  RedisReply KeyCommand(const Argv& a, const std::string& upper);
  RedisReply KeyCount(const Argv& a, bool remove);
  RedisReply KeyExpire(const Argv& a, const std::string& upper);

  RedisClient* client_;
  // Partitioned filters and cluster routing; unpartitioned filters go to
  // a RedisBloomImpl on client_ unchanged.
  RedisBloomPartitioned bloom_;
  RedisCountingBloomImpl counting_;
};

// "ERR wrong number of arguments for '<command>' command".
RedisReply ArityError(const std::string& command);

// The error reply for a status from the filter API: its RedisBloom reply
// text when it carries one, else "ERR " + message.
RedisReply StatusReply(const absl::Status& status);

// Redis's strict integer and double parsing (string2ll / strtod rules: no
// spaces, no leading zeros or '+', whole string).
bool ParseRedisInt(const std::string& s, int64_t* out);
bool ParseRedisDouble(const std::string& s, double* out);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_COMMAND_H_
