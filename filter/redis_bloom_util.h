// Copyright (c) siftdb authors.
//
// Small helpers shared by the Redis-backed Bloom filters (redis_bloom.cc,
// redis_counting_bloom.cc, redis_bloom_command.cc): exact number
// formatting for the meta hash, strict parsing, statuses carrying the
// RedisBloom reply text, and reading the meta hash's fields.
//
// Thread safety: pure functions; FieldReader is a short-lived local.

#ifndef SIFTDB_FILTER_REDIS_BLOOM_UTIL_H_
#define SIFTDB_FILTER_REDIS_BLOOM_UTIL_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "filter/redis_client.h"
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

#endif  // SIFTDB_FILTER_REDIS_BLOOM_UTIL_H_
