// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/hiredis_reply.h"

#include <hiredis.h>

#include <algorithm>
#include <memory>
#include <utility>

#include "absl/strings/str_format.h"

namespace siftdb {

namespace {

// The reader's tasks: a top-level reply (no parent) is a new RedisReply;
// an element of an array is built in place, in the parent's element vector,
// which createArray sized once (so the address stays valid).
RedisReply* Slot(const redisReadTask* task) {
  if (task->parent == nullptr) return new RedisReply();
  auto* parent = static_cast<RedisReply*>(task->parent->obj);
  return &(*parent->mutable_elements())[task->idx];
}

void* CreateString(const redisReadTask* task, char* str, size_t len) {
  RedisReply* r = Slot(task);
  std::string text(str, len);
  switch (task->type) {
    case REDIS_REPLY_STATUS:
      *r = RedisReply::Status(std::move(text));
      break;
    case REDIS_REPLY_ERROR:
      *r = RedisReply::Error(std::move(text));
      break;
    default:
      *r = RedisReply::String(std::move(text));
      break;
  }
  return r;
}

void* CreateArray(const redisReadTask* task, int elements) {
  RedisReply* r = Slot(task);
  *r = RedisReply::Array(
      std::vector<RedisReply>(static_cast<size_t>(std::max(elements, 0))));
  return r;
}

void* CreateInteger(const redisReadTask* task, long long value) {  // NOLINT
  RedisReply* r = Slot(task);
  *r = RedisReply::Integer(value);
  return r;
}

void* CreateNil(const redisReadTask* task) { return Slot(task); }

// hiredis frees only top-level objects (a reply abandoned on a protocol
// error, or one the caller hands back).
void FreeObject(void* obj) { delete static_cast<RedisReply*>(obj); }

redisReplyObjectFunctions kBuilder = {CreateString, CreateArray, CreateInteger,
                                      CreateNil, FreeObject};

}  // namespace

void UseRedisReplyBuilder(redisReader* reader) { reader->fn = &kBuilder; }

RedisReply TakeBuiltReply(void* obj) {
  std::unique_ptr<RedisReply> owned(static_cast<RedisReply*>(obj));
  return std::move(*owned);
}

// One command on a context whose reader uses UseRedisReplyBuilder. Unavailable
// when the connection fails; a server error is returned as a kError reply.
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
  return TakeBuiltReply(raw);
}

}  // namespace siftdb
