// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisCountingBloomImpl: the implementation of the public
// RedisCountingBloom interface (include/siftdb/redis_bloom.h states the
// contract), in redis_counting_bloom.cc. Like RedisBloomImpl it can run on
// a connection owned by someone else (the BF.* interpreter, tests).
//
// Thread safety: none (one connection, one geometry cache); one per thread.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_COUNTING_BLOOM_IMPL_H_
#define SIFTDB_REDIS_BLOOM_REDIS_COUNTING_BLOOM_IMPL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"

namespace siftdb {

class RedisCountingBloomImpl final : public RedisCountingBloom {
 public:
  // `client` must outlive this object.
  explicit RedisCountingBloomImpl(RedisClient* client);
  // Takes the connection.
  explicit RedisCountingBloomImpl(std::unique_ptr<RedisClient> client);
  ~RedisCountingBloomImpl() override;

  absl::Status Reserve(std::string_view name, double error_rate,
                       int64_t capacity) override;
  absl::StatusOr<std::vector<bool>> Add(
      std::string_view name,
      const std::vector<std::string_view>& items) override;
  absl::StatusOr<std::vector<bool>> Remove(
      std::string_view name,
      const std::vector<std::string_view>& items) override;
  absl::StatusOr<std::vector<bool>> Exists(
      std::string_view name,
      const std::vector<std::string_view>& items) override;
  absl::StatusOr<std::vector<uint32_t>> Count(
      std::string_view name,
      const std::vector<std::string_view>& items) override;
  absl::StatusOr<CountingBloomInfo> Info(std::string_view name) override;
  absl::StatusOr<bool> Delete(std::string_view name) override;

 private:
  struct Geometry {
    std::string id;
    uint64_t counters = 0;
    uint32_t hashes = 0;
  };
  absl::StatusOr<Geometry> GetGeometry(std::string_view name, bool create);
  absl::Status Create(std::string_view name, double error_rate,
                      int64_t capacity, bool fail_if_exists);
  absl::StatusOr<std::vector<uint32_t>> Read(
      std::string_view name, const std::vector<std::string_view>& items);
  absl::StatusOr<std::vector<bool>> Update(
      std::string_view name, const std::vector<std::string_view>& items,
      bool add);

  std::unique_ptr<RedisClient> owned_client_;
  RedisClient* client_;
  absl::flat_hash_map<std::string, Geometry> cache_;
  std::mt19937_64 rng_;
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_BLOOM_REDIS_COUNTING_BLOOM_IMPL_H_
