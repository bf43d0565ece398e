// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// V1Reader: a FROZEN reader of the Redis mirror format 1, written from
// docs/redis_mirror.md (§3, §4) and docs/filter_format.md as they stand at
// format v1, independent of the engine's decoders (it uses only the Redis
// client, util/crc32c and XXH3 from libxxhash). Later builds must keep
// writing mirrors this reader reads correctly: it never changes.
//
// Contract: MayContain answers "maybe" (true) for every key unless a
// trusted, well-formed v1 mirror proves the key absent. Anything it does not
// understand (no manifest, unknown format, malformed entry, lease missing or
// changed, a filter missing or of another size, CRC, trailer, kind or
// version) makes the affected answers "maybe". It does no caching: every
// call reads the manifest and the filters it needs afresh.
//
// Thread safety: not thread-safe (one Redis connection).

#ifndef SIFTDB_TESTS_MIRROR_COMPAT_V1_READER_H_
#define SIFTDB_TESTS_MIRROR_COMPAT_V1_READER_H_

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "redis/client/redis_client.h"

namespace siftdb::compat {

// Up to where the mirror was complete at the last trusted call
// (docs/redis_mirror.md §3.4): for an async mirror, the answers cover writes
// with sequence <= complete_seq and writes acknowledged before complete_ms.
struct V1Watermark {
  std::string mode;  // "sync" or "async"
  uint64_t complete_seq = 0;
  uint64_t complete_ms = 0;  // Unix ms
};

class V1Reader {
 public:
  // Connects to a standalone Redis ("127.0.0.1:port").
  static absl::StatusOr<std::unique_ptr<V1Reader>> Connect(
      const std::string& endpoint, const std::string& name);

  // (*maybe)[i] answers keys[i]. Returns OK when every answer rests on a
  // trusted, well-formed mirror, else the first reason for a "maybe".
  absl::Status MayContain(std::span<const std::string> keys,
                          std::vector<bool>* maybe);
  const V1Watermark& watermark() const { return watermark_; }

 private:
  V1Reader(std::unique_ptr<RedisClient> redis, std::string name)
      : redis_(std::move(redis)), name_(std::move(name)) {}
  absl::Status TryOnce(std::span<const std::string> keys,
                       std::vector<bool>* maybe, bool* retry);

  std::unique_ptr<RedisClient> redis_;
  std::string name_;
  V1Watermark watermark_;
};

}  // namespace siftdb::compat

#endif  // SIFTDB_TESTS_MIRROR_COMPAT_V1_READER_H_
