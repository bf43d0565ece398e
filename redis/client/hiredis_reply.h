// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The bridge from hiredis's reply parser to siftdb's RedisReply, shared by
// RedisClient's two transports: the plain one (a hiredis redisContext) and
// the TLS one (redis/client/redis_tls.h: OpenSSL below, hiredis's reader on
// top). Internal to redis/client (hiredis stays behind this module).
//
// Thread safety: pure functions; a redisContext is used by one thread.

#ifndef SIFTDB_REDIS_CLIENT_HIREDIS_REPLY_H_
#define SIFTDB_REDIS_CLIENT_HIREDIS_REPLY_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "redis/client/redis_reply.h"

struct redisReader;
struct redisContext;

namespace siftdb {

// Makes `reader` build RedisReply trees directly as it parses (hiredis's
// reply object functions), instead of hiredis reply objects that would then
// be copied: an array of n integers costs one allocation, not n + 1
// allocations and a copy. Every reader and context in redis/client uses it,
// so what redisGetReply / redisReaderGetReply hand back is a RedisReply*
// owned by the caller: pass it to TakeBuiltReply.
void UseRedisReplyBuilder(redisReader* reader);

// Moves the reply out of an object UseRedisReplyBuilder's reader built,
// and frees the object.
RedisReply TakeBuiltReply(void* obj);

// One command on a hiredis context. Unavailable (naming `endpoint`) when
// the connection fails; a server error is returned as a kError reply.
absl::StatusOr<RedisReply> RunOnHiredis(redisContext* ctx,
                                        const std::vector<std::string>& argv,
                                        std::string_view endpoint);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_HIREDIS_REPLY_H_
