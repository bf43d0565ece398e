// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/bloom/redis_bloom_util.h"

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <random>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/client/redis_url.h"
#include "util/absl_compat.h"

namespace siftdb {

namespace {
constexpr char kReplyPayloadUrl[] = "type.siftdb/redisbloom-reply";
}  // namespace

std::optional<std::string> RedisBloomReplyText(const absl::Status& status) {
  absl::optional<absl::Cord> payload = status.GetPayload(kReplyPayloadUrl);
  if (!payload.has_value()) return std::nullopt;
  return std::string(*payload);
}

namespace redis_bloom {

std::string FormatDouble(double v) { return absl::StrFormat("%.17g", v); }

bool ParseDouble(std::string_view s, double* out) {
  if (s.empty() || std::isspace(static_cast<unsigned char>(s[0]))) {
    return false;
  }
  std::string copy(s);
  char* end = nullptr;
  errno = 0;
  double v = std::strtod(copy.c_str(), &end);
  if (end != copy.c_str() + copy.size() || std::isnan(v)) return false;
  if (errno == ERANGE && (std::isinf(v) || v == 0)) return false;
  *out = v;
  return true;
}

bool ParseUint(std::string_view s, uint64_t* out) {
  if (s.empty() || s.size() > 20) return false;
  uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return false;
    uint64_t next = v * 10 + static_cast<uint64_t>(c - '0');
    if (next / 10 != v) return false;  // overflow
    v = next;
  }
  *out = v;
  return true;
}

absl::Status WithReply(absl::Status status, std::string_view reply) {
  status.SetPayload(kReplyPayloadUrl, absl::Cord(AsAbsl(reply)));
  return status;
}

absl::Status ValidateParams(double error_rate, int64_t capacity,
                            int64_t expansion) {
  if (!(error_rate > 0 && error_rate < 1)) {
    return WithReply(
        absl::InvalidArgumentError(absl::StrFormat(
            "bloom filter error rate %g is outside (0, 1)", error_rate)),
        "ERR (0 < error rate range < 1) ");
  }
  if (capacity < 1 || static_cast<uint64_t>(capacity) > kMaxCapacity) {
    return WithReply(absl::InvalidArgumentError(absl::StrFormat(
                         "bloom filter capacity %d is outside [1, %d]",
                         capacity, kMaxCapacity)),
                     capacity < 1
                         ? "ERR (capacity should be larger than 0)"
                         : "ERR capacity must be in the range [1, 1073741824]");
  }
  if (expansion < 1 || expansion > kMaxExpansion) {
    return WithReply(absl::InvalidArgumentError(absl::StrFormat(
                         "bloom filter expansion %d is outside [1, %d]",
                         expansion, kMaxExpansion)),
                     expansion < 1
                         ? "ERR expansion should be greater or equal to 1"
                         : "ERR expansion must be in the range [1, 32768]");
  }
  return absl::OkStatus();
}

RedisClientOptions ToClientOptions(const RedisBloomOptions& options) {
  RedisClientOptions c;
  c.endpoint = options.endpoint;
  c.username = options.username;
  c.password = options.password;
  c.database = options.database;
  c.connect_timeout = options.connect_timeout;
  c.command_timeout = options.command_timeout;
  c.retry_deadline = options.retry_deadline;
  return c;
}

absl::StatusOr<RedisReadFrom> ReadFrom(const RedisBloomOptions& options) {
  if (!IsRedisUrl(options.endpoint)) return RedisReadFrom::kMaster;
  absl::StatusOr<RedisUrl> url = ParseRedisUrl(options.endpoint);
  if (!url.ok()) return url.status();
  return url->read_from.value_or(RedisReadFrom::kMaster);
}

uint64_t RandomSeed(const void* salt) {
  std::random_device rd;
  uint64_t seed = (static_cast<uint64_t>(rd()) << 32) ^ rd();
  seed ^= static_cast<uint64_t>(
      std::chrono::steady_clock::now().time_since_epoch().count());
  seed ^= reinterpret_cast<uintptr_t>(salt);
  return seed;
}

const std::string* FieldReader::Find(const std::string& field) {
  if (!status_.ok()) return nullptr;
  auto it = fields_.find(field);
  if (it == fields_.end()) {
    Fail("missing field " + field);
    return nullptr;
  }
  return &it->second;
}

void FieldReader::Fail(const std::string& what) {
  if (status_.ok()) {
    status_ = absl::DataLossError(absl::StrFormat(
        "redis key %s is not a siftdb filter meta hash: %s", key_, what));
  }
}

std::string FieldReader::String(const std::string& field) {
  const std::string* v = Find(field);
  return v == nullptr ? "" : *v;
}

uint64_t FieldReader::Uint(const std::string& field) {
  const std::string* v = Find(field);
  uint64_t out = 0;
  if (v != nullptr && !ParseUint(*v, &out)) {
    Fail(absl::StrFormat("field %s = \"%s\" is not an unsigned integer", field,
                         *v));
  }
  return out;
}

double FieldReader::Double(const std::string& field) {
  const std::string* v = Find(field);
  double out = 0;
  if (v != nullptr && !ParseDouble(*v, &out)) {
    Fail(absl::StrFormat("field %s = \"%s\" is not a number", field, *v));
  }
  return out;
}

std::string BloomName(std::string_view name) {
  return absl::StrFormat("bloom filter '%s'", name);
}

absl::Status BloomNotFound(std::string_view name) {
  return WithReply(absl::NotFoundError(BloomName(name) + " not found"),
                   "ERR not found");
}

absl::Status BloomWrongType(const RedisClient& client, std::string_view name) {
  return WithReply(
      absl::FailedPreconditionError(absl::StrFormat(
          "redis %s: %s: key %s holds the wrong kind of value",
          client.endpoint(), BloomName(name), RedisBloom::MetaKey(name))),
      redis_bloom::kWrongTypeReply);
}

// Maps an error reply of one of our scripts to a status.
absl::Status BloomScriptError(const RedisClient& client, std::string_view name,
                              const RedisReply& reply) {
  const std::string& text = reply.str();
  if (text == "ERR not found") return BloomNotFound(name);
  if (text == "ERR item exists") {
    return WithReply(
        absl::AlreadyExistsError(BloomName(name) + " already exists"), text);
  }
  if (text.rfind("WRONGTYPE", 0) == 0) return BloomWrongType(client, name);
  return client.ServerErrorStatus(BloomName(name), reply);
}

bool IsStaleReply(const RedisReply& reply) {
  return reply.is_array() && !reply.elements().empty() &&
         reply.elements()[0].str() == "STALE";
}

bool IsOkReply(const RedisReply& reply, size_t min_elements) {
  return reply.is_array() && reply.elements().size() >= min_elements &&
         reply.elements()[0].str() == "OK";
}

absl::Status UnexpectedReply(const RedisClient& client, std::string_view name,
                             const RedisReply& reply) {
  return absl::InternalError(
      absl::StrFormat("redis %s: %s: unexpected script reply %s",
                      client.endpoint(), BloomName(name), reply.DebugString()));
}

absl::Status TooContended(std::string_view name) {
  return absl::AbortedError(
      absl::StrFormat("%s: layout kept changing under %d attempts",
                      BloomName(name), kMaxAttempts));
}

}  // namespace redis_bloom
}  // namespace siftdb
