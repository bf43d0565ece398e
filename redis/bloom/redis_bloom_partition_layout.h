// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The persisted layout of a partitioned Bloom filter (BloomReserveOptions::
// partitions > 1) and its pure arithmetic: the top-level meta hash's
// fields, the names of the partitions, which partition an item belongs to,
// and how a BF.SCANDUMP iterator names a partition's chunk. Everything
// here is persisted or exchanged with other clients: never change it
// (docs/redis_bloom.md, "Partitioned filters", specifies it for readers in
// other languages).
//
// A partitioned filter NAME keeps, in the slot of {NAME}:
//   bf:{NAME}:meta   hash: format "p1", id, partitions, error_rate,
//                    capacity, expansion, nonscaling
// and partition i (0 <= i < partitions) is an ordinary (unpartitioned)
// filter named PartitionName(NAME, id, i, partitions), with its own keys
// under its own hash tag. An unpartitioned client meeting the meta hash
// refuses it (its format is not "1"), so it never misreads it as absent.
//
// Thread safety: pure functions and plain structs.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_PARTITION_LAYOUT_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_PARTITION_LAYOUT_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "siftdb/redis_bloom.h"

namespace siftdb::redis_bloom {

// The meta hash's "format" of a partitioned filter. Persisted: never change.
inline constexpr char kPartitionedFormat[] = "p1";

// The seed of the routing hash: MurmurHash64A(item, kRouteSeed) mod
// partitions. It differs from the bit positions' seeds (0xc6a4a7935bd1e995
// and the item's first hash), so routing and probing are independent.
// Persisted: never change.
inline constexpr uint64_t kRouteSeed = 0x9e3779b97f4a7c15ULL;

// The parameters a partitioned filter was reserved with, as its meta hash
// keeps them.
struct PartitionedMeta {
  std::string id;  // 16 hex digits, new for every Reserve / load
  int64_t partitions = 0;
  double error_rate = 0;
  int64_t capacity = 0;  // the whole filter's (each partition: ceil(c/P))
  int64_t expansion = 0;
  bool nonscaling = false;
};

// Checks every option before anything reaches Redis: InvalidArgument
// naming the option (error_rate, capacity, expansion, partitions) and the
// filter name (it may not contain '{' or '}' when partitions > 1).
absl::Status ValidateReserveOptions(std::string_view name,
                                    const BloomReserveOptions& options);

// ceil(capacity / partitions).
int64_t PartitionCapacity(int64_t capacity, int64_t partitions);

// The partition `item` belongs to.
int64_t RouteItem(std::string_view item, int64_t partitions);

// The name of partition i: "NAME/ID/i/s" where s is the smallest integer
// >= 0 such that the slot of the name, CRC16(name) mod 16384, lies in
// [i * 16384 / P, (i + 1) * 16384 / P) (integer division), or 0 when no s
// below 65536 does. So the P partitions spread evenly over the slot range,
// and a cluster whose masters hold equal contiguous ranges (redis-cli
// --cluster create) gets ceil(P / masters) or fewer on each.
std::string PartitionName(std::string_view name, std::string_view id,
                          int64_t index, int64_t partitions);

// The meta hash's field/value pairs, for HSET.
std::vector<std::string> MetaFields(const PartitionedMeta& meta);
// Parses HGETALL's fields of a meta hash whose format is "p1"; DataLoss
// naming the key and the first bad field.
absl::StatusOr<PartitionedMeta> ParseMeta(
    const std::vector<std::pair<std::string, std::string>>& fields,
    std::string_view key);

// BF.SCANDUMP iterators of a partitioned filter (persisted in callers'
// hands between calls: never change):
//   kDumpHeaderIterator  the chunk carrying the top-level header
//                        (EncodeDumpHeader); ScanDump(0) returns it
//   (i + 1) << 44 | it   partition i's own iterator `it` (< 2^44)
// so every iterator names the partition its chunk belongs to.
inline constexpr int kDumpInnerBits = 44;
inline constexpr int64_t kDumpHeaderIterator = int64_t{1} << 60;
int64_t DumpIterator(int64_t partition, int64_t inner);
// False when `iterator` is not a partition iterator.
bool SplitDumpIterator(int64_t iterator, int64_t* partition, int64_t* inner);

// The top-level header chunk: the ASCII text
//   "siftdb-partitioned-bloom 1 <partitions> <error_rate %.17g> <capacity>
//    <expansion> <nonscaling 0|1>"   (one space between fields)
std::string EncodeDumpHeader(const PartitionedMeta& meta);
absl::StatusOr<PartitionedMeta> DecodeDumpHeader(std::string_view data);

}  // namespace siftdb::redis_bloom

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_PARTITION_LAYOUT_H_
