// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomCommands' key-space commands. RedisBloom keeps a filter in one
// Redis key, so its users manage a filter with DEL, EXPIRE, TTL, TYPE and
// friends on the filter's name. siftdb's filter spans several keys
// (bf:{NAME}:meta and one bitmap per sub-filter), so on the name of an
// existing bloom filter these commands act on all of them at once
// (RedisBloom::Delete / Expire / ExpireAt / Persist / Ttl). On any other
// name they go to Redis unchanged, and so do their errors. DEL, UNLINK and
// EXISTS go to Redis with every name as well (a plain key may share a
// filter's name), and the filters found are added to Redis's count.
// Counting filters (CBF.*) are not covered: CBF.DROP deletes one.

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "redis/bloom/redis_bloom_command.h"

namespace siftdb {

namespace {

// RedisBloom 2.8's type name for a bloom filter key (TYPE's reply).
constexpr char kBloomTypeName[] = "MBbloom--";

// The filter's time to live when `name` is a bloom filter; nullopt when it
// is not one (no such filter, or another kind of key under its meta name).
absl::StatusOr<std::optional<absl::Duration>> FilterTtl(
    RedisBloom& bloom, const std::string& name) {
  absl::StatusOr<absl::Duration> ttl = bloom.Ttl(name);
  if (ttl.ok()) return std::optional<absl::Duration>(*ttl);
  if (absl::IsNotFound(ttl.status()) ||
      absl::IsFailedPrecondition(ttl.status())) {
    return std::optional<absl::Duration>();
  }
  return ttl.status();
}

RedisReply InvalidExpireTime(const std::string& command) {
  return RedisReply::Error(absl::StrCat("ERR invalid expire time in '",
                                        absl::AsciiStrToLower(command),
                                        "' command"));
}

}  // namespace

bool RedisBloomCommands::IsKeyCommand(const std::string& upper) {
  return upper == "DEL" || upper == "UNLINK" || upper == "EXISTS" ||
         upper == "TYPE" || upper == "TTL" || upper == "PTTL" ||
         upper == "PERSIST" || upper == "EXPIRE" || upper == "PEXPIRE" ||
         upper == "EXPIREAT" || upper == "PEXPIREAT";
}

RedisReply RedisBloomCommands::KeyCommand(const Argv& a,
                                          const std::string& upper) {
  if (upper == "DEL" || upper == "UNLINK") return KeyCount(a, true);
  if (upper == "EXISTS") return KeyCount(a, false);
  if (a.size() < 2) return Passthrough(a);  // Redis's own arity error
  absl::StatusOr<std::optional<absl::Duration>> ttl = FilterTtl(bloom_, a[1]);
  if (!ttl.ok()) return StatusReply(ttl.status());
  if (!ttl->has_value()) return Passthrough(a);
  if (upper == "TYPE" || upper == "TTL" || upper == "PTTL" ||
      upper == "PERSIST") {
    if (a.size() != 2) return ArityError(a[0]);
  }
  if (upper == "TYPE") return RedisReply::Status(kBloomTypeName);
  if (upper == "TTL" || upper == "PTTL") {
    if (**ttl == absl::InfiniteDuration()) return RedisReply::Integer(-1);
    const int64_t ms = absl::ToInt64Milliseconds(**ttl);
    // Redis rounds TTL's seconds to the nearest.
    return RedisReply::Integer(upper == "PTTL" ? ms : (ms + 500) / 1000);
  }
  if (upper == "PERSIST") {
    absl::StatusOr<bool> r = bloom_.Persist(a[1]);
    if (!r.ok()) return StatusReply(r.status());
    return RedisReply::Integer(*r ? 1 : 0);
  }
  return KeyExpire(a, upper);
}

RedisReply RedisBloomCommands::KeyCount(const Argv& a, bool remove) {
  if (a.size() < 2) return ArityError(a[0]);
  int64_t filters = 0;
  for (size_t i = 1; i < a.size(); i++) {
    absl::StatusOr<std::optional<absl::Duration>> ttl = FilterTtl(bloom_, a[i]);
    if (!ttl.ok()) return StatusReply(ttl.status());
    if (!ttl->has_value()) continue;
    if (!remove) {
      filters++;
      continue;
    }
    absl::StatusOr<bool> deleted = bloom_.Delete(a[i]);
    if (!deleted.ok()) return StatusReply(deleted.status());
    if (*deleted) filters++;
  }
  RedisReply plain = Passthrough(a);
  if (!plain.is_integer()) return plain;
  return RedisReply::Integer(plain.integer() + filters);
}

// EXPIRE / PEXPIRE / EXPIREAT / PEXPIREAT name n [NX|XX|GT|LT ...], with
// Redis 7's option rules and error texts.
RedisReply RedisBloomCommands::KeyExpire(const Argv& a,
                                         const std::string& upper) {
  if (a.size() < 3) return ArityError(a[0]);
  int64_t n = 0;
  if (!ParseRedisInt(a[2], &n)) {
    return RedisReply::Error("ERR value is not an integer or out of range");
  }
  bool nx = false, xx = false, gt = false, lt = false;
  for (size_t i = 3; i < a.size(); i++) {
    const std::string opt = absl::AsciiStrToUpper(a[i]);
    if (opt == "NX") {
      nx = true;
    } else if (opt == "XX") {
      xx = true;
    } else if (opt == "GT") {
      gt = true;
    } else if (opt == "LT") {
      lt = true;
    } else {
      return RedisReply::Error(absl::StrCat("ERR Unsupported option ", a[i]));
    }
  }
  if (nx && (xx || gt || lt)) {
    return RedisReply::Error(
        "ERR NX and XX, GT or LT options at the same time are not compatible");
  }
  if (gt && lt) {
    return RedisReply::Error(
        "ERR GT and LT options at the same time are not compatible");
  }
  if (xx && lt) {
    // Needs both conditions at once; the filter's script takes one.
    return RedisReply::Error(
        "ERR XX and LT together are not supported on a bloom filter");
  }
  BloomExpireIf condition = BloomExpireIf::kAlways;
  if (nx) condition = BloomExpireIf::kNoExpiry;
  if (xx) condition = BloomExpireIf::kHasExpiry;
  if (gt) condition = BloomExpireIf::kLater;  // XX GT is GT: none never
  if (lt) condition = BloomExpireIf::kSooner;

  const bool seconds = upper == "EXPIRE" || upper == "EXPIREAT";
  constexpr int64_t kMax = std::numeric_limits<int64_t>::max() / 1000;
  if (seconds && (n > kMax || n < -kMax)) return InvalidExpireTime(a[0]);
  const int64_t ms = seconds ? n * 1000 : n;
  if (ms > absl::ToInt64Milliseconds(kMaxBloomTtl)) {
    return InvalidExpireTime(a[0]);
  }
  const bool absolute = upper == "EXPIREAT" || upper == "PEXPIREAT";
  absl::StatusOr<bool> r =
      absolute ? bloom_.ExpireAt(a[1], absl::FromUnixMillis(ms), condition)
               : bloom_.Expire(a[1], absl::Milliseconds(ms), condition);
  if (!r.ok()) {
    if (absl::IsInvalidArgument(r.status())) return InvalidExpireTime(a[0]);
    return StatusReply(r.status());
  }
  return RedisReply::Integer(*r ? 1 : 0);
}

}  // namespace siftdb
