// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Small helpers shared by the Redis-backed Bloom filters (redis_bloom.cc,
// redis_counting_bloom.cc, redis_bloom_command.cc): exact number
// formatting for the meta hash, strict parsing, statuses carrying the
// RedisBloom reply text, and reading the meta hash's fields.
//
// Thread safety: pure functions; FieldReader is a short-lived local.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_UTIL_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "redis/bloom/redis_bloom_dump.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"

namespace siftdb::redis_bloom {

inline constexpr char kWrongTypeReply[] =
    "WRONGTYPE Operation against a key holding the wrong kind of value";

// "%.17g": reads back to the same double.
std::string FormatDouble(double v);
// Whole-string parses (no spaces, no trailing junk).
bool ParseDouble(std::string_view s, double* out);
bool ParseUint(std::string_view s, uint64_t* out);

// Attaches the RedisBloom reply text that RedisBloomReplyText() returns.
absl::Status WithReply(absl::Status status, std::string_view reply);

// Checks error rate in (0, 1), capacity in [1, 2^30], expansion in
// [1, 32768] before anything reaches Redis (InvalidArgument otherwise).
absl::Status ValidateParams(double error_rate, int64_t capacity,
                            int64_t expansion);

RedisClientOptions ToClientOptions(const RedisBloomOptions& options);

// The endpoint URL's read_from: kMaster when it names none (or is not a
// URL). RedisCountingBloom refuses kReplicaPreferred (its reads have no
// fence); RedisBloom fences each read (redis_bloom_replica_read.cc).
absl::StatusOr<RedisReadFrom> ReadFrom(const RedisBloomOptions& options);

// A seed for per-object id generators.
uint64_t RandomSeed(const void* salt);

using FieldMap = absl::flat_hash_map<std::string, std::string>;

// Reads typed fields out of a meta hash, remembering the first problem.
class FieldReader {
 public:
  FieldReader(const FieldMap& fields, std::string key)
      : fields_(fields), key_(std::move(key)) {}

  std::string String(const std::string& field);
  uint64_t Uint(const std::string& field);
  double Double(const std::string& field);
  void Fail(const std::string& what);
  bool ok() const { return status_.ok(); }
  // DataLoss naming the key and the first bad or missing field.
  absl::Status status() const { return status_; }

 private:
  const std::string* Find(const std::string& field);

  const FieldMap& fields_;
  const std::string key_;
  absl::Status status_;
};

}  // namespace siftdb::redis_bloom

namespace siftdb {

// RedisBloom's client-side view of one filter, as last read from or written
// to Redis: the token "<id>:<version>" guards every script call, so a stale
// view only costs a retry.
struct RedisBloomImpl::Layout {
  std::string id;
  int64_t version = 0;
  uint32_t options = redis_bloom::kOptDefault;
  uint32_t growth = redis_bloom::kDefaultExpansion;
  double error_rate = redis_bloom::kDefaultErrorRate;
  uint64_t items = 0;
  std::vector<redis_bloom::ChainLink> links;
  // Share of the items the last membership probe of a sub-filter found
  // present (redis_bloom_exists.cc): when most are, the next probe reads
  // every bit in one round instead of two. A hint only; never persisted.
  mutable double recent_present_share = 0;

  std::string token() const { return absl::StrCat(id, ":", version); }
  bool nonscaling() const {
    return (options & redis_bloom::kOptNoScaling) != 0;
  }
};

namespace redis_bloom {

// Attempts before a call gives up on a filter whose layout keeps changing.
inline constexpr int kMaxAttempts = 10;

// "bloom filter 'NAME'", for messages.
std::string BloomName(std::string_view name);
// NotFound carrying "ERR not found".
absl::Status BloomNotFound(std::string_view name);
// FailedPrecondition carrying the WRONGTYPE text.
absl::Status BloomWrongType(const RedisClient& client, std::string_view name);
// Maps an error reply of one of the filter scripts to a status.
absl::Status BloomScriptError(const RedisClient& client, std::string_view name,
                              const RedisReply& reply);
absl::Status UnexpectedReply(const RedisClient& client, std::string_view name,
                             const RedisReply& reply);
absl::Status TooContended(std::string_view name);
// Script replies {'STALE'} and {'OK', ...} (with at least min elements).
bool IsStaleReply(const RedisReply& reply);
bool IsOkReply(const RedisReply& reply, size_t min_elements);

}  // namespace redis_bloom
}  // namespace siftdb

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_UTIL_H_
