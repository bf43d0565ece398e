// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/hiredis_reply.h"

#include <hiredis.h>

#include "absl/strings/str_format.h"

namespace siftdb {

RedisReply FromHiredisReply(const redisReply* r) {
  switch (r->type) {
    case REDIS_REPLY_STRING:
      return RedisReply::String(std::string(r->str, r->len));
    case REDIS_REPLY_STATUS:
      return RedisReply::Status(std::string(r->str, r->len));
    case REDIS_REPLY_ERROR:
      return RedisReply::Error(std::string(r->str, r->len));
    case REDIS_REPLY_INTEGER:
      return RedisReply::Integer(r->integer);
    case REDIS_REPLY_ARRAY: {
      std::vector<RedisReply> elements;
      elements.reserve(r->elements);
      for (size_t i = 0; i < r->elements; i++) {
        elements.push_back(FromHiredisReply(r->element[i]));
      }
      return RedisReply::Array(std::move(elements));
    }
    default:
      return RedisReply::Nil();
  }
}

// One command on a raw context. Unavailable when the connection fails; a
// server error is returned as a kError reply.
absl::StatusOr<RedisReply> RunOnHiredis(redisContext* ctx,
                                        const std::vector<std::string>& argv,
                                        std::string_view endpoint) {
  std::vector<const char*> ptrs;
  std::vector<size_t> lens;
  for (const std::string& a : argv) {
    ptrs.push_back(a.data());
    lens.push_back(a.size());
  }
  void* raw = redisCommandArgv(ctx, static_cast<int>(argv.size()), ptrs.data(),
                               lens.data());
  if (raw == nullptr) {
    return absl::UnavailableError(
        absl::StrFormat("redis %s: %s: %s", endpoint, argv[0],
                        ctx->errstr[0] != '\0' ? ctx->errstr : "no reply"));
  }
  RedisReply reply = FromHiredisReply(static_cast<redisReply*>(raw));
  freeReplyObject(raw);
  return reply;
}

}  // namespace siftdb
