// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloom's BF.SCANDUMP / BF.LOADCHUNK wire format, as a pure codec:
//
//   * Iterator 0 returns the chain header and the next iterator 1.
//   * Iterator it >= 1 returns the raw bytes that start at byte offset it - 1
//     of the concatenated link bit arrays (oldest link first), never
//     crossing a link boundary and at most kMaxDumpChunkBytes long, with the
//     next iterator it + length; past the end the reply is [0, ""].
//   * BF.LOADCHUNK key 1 <header> creates the filter; BF.LOADCHUNK key it
//     <data> writes data at byte offset it - len(data) - 1.
//
// The header is packed little-endian: size u64, nfilters u32, options u32,
// growth u32, then per link bytes u64, bits u64, size u64, error f64, bpe
// f64, hashes u32, entries u64, n2 u8: 20 + 53 * nfilters bytes (facts of
// RedisBloom 2.8's dump format, checked against the dumps recorded from a
// RedisBloom 2.8.20 server in tests/testdata/redisbloom/).
// docs/redis_bloom.md restates the format for readers in other languages.
//
// Thread safety: pure functions.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_DUMP_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_DUMP_H_

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "redis/bloom/redis_bloom_layout.h"

namespace siftdb::redis_bloom {

inline constexpr uint64_t kMaxDumpChunkBytes = uint64_t{16} << 20;
inline constexpr size_t kHeaderFixedBytes = 20;
inline constexpr size_t kHeaderLinkBytes = 53;
// More sub-filters than any real chain has (each halves the error rate).
inline constexpr uint32_t kMaxLinks = 4096;

struct ChainLink {
  LinkSpec spec;
  uint64_t items = 0;  // RedisBloom's per-link "size"
};

struct ChainHeader {
  uint64_t items = 0;  // RedisBloom's chain "size": sum of the links' items
  uint32_t options = kOptDefault;
  uint32_t growth = kDefaultExpansion;
  std::vector<ChainLink> links;
};

std::string EncodeHeader(const ChainHeader& header);

// Decodes and validates a header chunk the way RedisBloom's loader does
// (geometry consistent, hash count matching bpe, item counts adding up).
// Errors: InvalidArgument for malformed bytes, Unimplemented for valid
// RedisBloom headers siftdb cannot serve (32-bit hash filters),
// ResourceExhausted for links above Redis's string limit.
absl::StatusOr<ChainHeader> DecodeHeader(std::string_view data);

// One stretch of one link's bit array.
struct ChunkRef {
  size_t link = 0;
  uint64_t offset = 0;  // byte offset inside the link
  uint64_t length = 0;
  int64_t next_iterator = 0;  // what BF.SCANDUMP returns with the bytes
};

// The data chunk BF.SCANDUMP returns for `iterator` >= 1 given each link's
// byte size, or nullopt when the dump is over (reply [0, ""]).
std::optional<ChunkRef> DumpChunkAt(const std::vector<uint64_t>& link_bytes,
                                    int64_t iterator,
                                    uint64_t max_chunk = kMaxDumpChunkBytes);

// Where BF.LOADCHUNK `iterator` with `length` bytes of data writes. Errors
// carry RedisBloom's texts: "invalid offset - no link found" and "invalid
// chunk - Too big for current filter" (InvalidArgument).
absl::StatusOr<ChunkRef> LoadChunkTarget(
    const std::vector<uint64_t>& link_bytes, int64_t iterator, uint64_t length);

}  // namespace siftdb::redis_bloom

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_DUMP_H_
