// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomImpl::Expire, Persist and Ttl: a filter's keys (the meta hash
// and one string per sub-filter) live and die as one object. Expire and
// Persist run one script over every key (docs/redis_bloom.md, "A filter is
// one object"); sub-filters created later copy the meta hash's expiry in
// the script that creates them (create_link). Ttl reads the meta hash's.

#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_scripts.h"
#include "redis/bloom/redis_bloom_util.h"
#include "redis/client/redis_client.h"
#include "util/absl_compat.h"

namespace siftdb {

using redis_bloom::BloomNotFound;
using redis_bloom::BloomScriptError;
using redis_bloom::BloomWrongType;
using redis_bloom::UnexpectedReply;

namespace {

const char* ConditionArg(BloomExpireIf condition) {
  switch (condition) {
    case BloomExpireIf::kNoExpiry:
      return "NX";
    case BloomExpireIf::kHasExpiry:
      return "XX";
    case BloomExpireIf::kLater:
      return "GT";
    case BloomExpireIf::kSooner:
      return "LT";
    case BloomExpireIf::kAlways:
      break;
  }
  return "";
}

}  // namespace

absl::StatusOr<bool> RedisBloomImpl::Expire(std::string_view name,
                                            absl::Duration ttl,
                                            BloomExpireIf condition) {
  if (ttl == absl::InfiniteDuration()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "bloom filter '", AsAbsl(name),
        "': Expire with an infinite time to live (Persist removes the "
        "expiry)"));
  }
  if (ttl > kMaxBloomTtl) {
    return absl::InvalidArgumentError(
        absl::StrCat("bloom filter '", AsAbsl(name), "': time to live ",
                     absl::FormatDuration(ttl), " is past the limit of ",
                     absl::FormatDuration(kMaxBloomTtl)));
  }
  // Rounded up, so that a positive time to live never deletes the filter
  // at once; zero or less deletes it, as PEXPIRE does.
  const int64_t ms =
      ttl <= absl::ZeroDuration()
          ? 0
          : absl::ToInt64Milliseconds(absl::Ceil(ttl, absl::Milliseconds(1)));
  return RunExpire(name, "pexpire", ms, condition);
}

absl::StatusOr<bool> RedisBloomImpl::ExpireAt(std::string_view name,
                                              absl::Time when,
                                              BloomExpireIf condition) {
  const absl::Duration since_epoch = when - absl::UnixEpoch();
  // The same bound as Expire's, counted from the Unix epoch (the year
  // 10889): far enough, and Redis's millisecond arithmetic cannot overflow.
  if (since_epoch > kMaxBloomTtl) {
    return absl::InvalidArgumentError(
        absl::StrCat("bloom filter '", AsAbsl(name), "': expiry time ",
                     absl::FormatTime(when), " is past the limit of ",
                     absl::FormatTime(absl::UnixEpoch() + kMaxBloomTtl)));
  }
  const int64_t ms = when <= absl::UnixEpoch()
                         ? 0
                         : absl::ToInt64Milliseconds(
                               absl::Ceil(since_epoch, absl::Milliseconds(1)));
  return RunExpire(name, "pexpireat", ms, condition);
}

absl::StatusOr<bool> RedisBloomImpl::RunExpire(std::string_view name,
                                               std::string_view mode,
                                               int64_t ms,
                                               BloomExpireIf condition) {
  // A deleted filter must not be served from the cached layout.
  cache_.erase(std::string(name));
  absl::StatusOr<RedisReply> reply =
      client_->Eval(redis_bloom::ExpireScript(), {MetaKey(name)},
                    RedisArgs({mode}).AddInt(ms).Add(ConditionArg(condition)));
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return BloomScriptError(*client_, name, *reply);
  if (!reply->is_integer()) return UnexpectedReply(*client_, name, *reply);
  return reply->integer() == 1;
}

absl::StatusOr<bool> RedisBloomImpl::Persist(std::string_view name) {
  absl::StatusOr<RedisReply> reply =
      client_->Eval(redis_bloom::ExpireScript(), {MetaKey(name)},
                    RedisArgs({"persist"}).AddInt(0).Add(""));
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return BloomScriptError(*client_, name, *reply);
  if (!reply->is_integer()) return UnexpectedReply(*client_, name, *reply);
  return reply->integer() == 1;
}

absl::StatusOr<absl::Duration> RedisBloomImpl::Ttl(std::string_view name) {
  const std::string meta = MetaKey(name);
  absl::StatusOr<std::vector<RedisReply>> replies =
      client_->Pipeline({RedisArgs({"TYPE", meta}), RedisArgs({"PTTL", meta})});
  if (!replies.ok()) return replies.status();
  const RedisReply& type = (*replies)[0];
  const RedisReply& pttl = (*replies)[1];
  if (type.is_error()) return client_->ServerErrorStatus("TYPE", type);
  if (pttl.is_error()) return client_->ServerErrorStatus("PTTL", pttl);
  if (type.str() == "none") return BloomNotFound(name);
  if (type.str() != "hash") return BloomWrongType(*client_, name);
  if (!pttl.is_integer()) return UnexpectedReply(*client_, name, pttl);
  // -2: expired between the two commands (they run back to back, but not
  // as one step); -1: no expiry.
  if (pttl.integer() == -2) return BloomNotFound(name);
  if (pttl.integer() < 0) return absl::InfiniteDuration();
  return absl::Milliseconds(pttl.integer());
}

}  // namespace siftdb
