// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The bridge from hiredis's reply objects to siftdb's RedisReply, shared by
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

struct redisReply;
struct redisContext;

namespace siftdb {

// An owned copy of `r` (nested arrays included). Types RESP2 does not have
// become Nil.
RedisReply FromHiredisReply(const redisReply* r);

// One command on a hiredis context. Unavailable (naming `endpoint`) when
// the connection fails; a server error is returned as a kError reply.
absl::StatusOr<RedisReply> RunOnHiredis(redisContext* ctx,
                                        const std::vector<std::string>& argv,
                                        std::string_view endpoint);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_HIREDIS_REPLY_H_
