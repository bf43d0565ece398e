// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/bloom/redis_bloom_partition_layout.h"

#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "redis/bloom/murmurhash64a.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_bloom_util.h"
#include "redis/client/redis_cluster_client.h"
#include "util/absl_compat.h"

namespace siftdb::redis_bloom {

namespace {

constexpr char kHeaderMagic[] = "siftdb-partitioned-bloom";
constexpr int64_t kMaxSlotSearch = 65536;

}  // namespace

absl::Status ValidateReserveOptions(std::string_view name,
                                    const BloomReserveOptions& o) {
  if (o.partitions < 1 || o.partitions > kMaxBloomPartitions) {
    return WithReply(absl::InvalidArgumentError(absl::StrFormat(
                         "bloom filter partitions %d is outside [1, %d]",
                         o.partitions, kMaxBloomPartitions)),
                     "ERR partitions must be in the range [1, 1024]");
  }
  if (o.partitions > 1 && (name.find('{') != std::string_view::npos ||
                           name.find('}') != std::string_view::npos)) {
    return WithReply(
        absl::InvalidArgumentError(absl::StrFormat(
            "%s: the name of a filter with partitions may not contain "
            "'{' or '}'",
            BloomName(name))),
        "ERR partitions need a name without '{' or '}'");
  }
  if (o.capacity >= 1 && o.partitions > 1) {
    // Each partition holds ceil(capacity / P), which is what is limited.
    if (PartitionCapacity(o.capacity, o.partitions) >
        static_cast<int64_t>(kMaxCapacity)) {
      return WithReply(absl::InvalidArgumentError(absl::StrFormat(
                           "bloom filter capacity %d is outside [1, %d] per "
                           "partition",
                           o.capacity, kMaxCapacity)),
                       "ERR capacity must be in the range [1, 1073741824]");
    }
    return ValidateParams(o.error_rate, 1, o.expansion);
  }
  return ValidateParams(o.error_rate, o.capacity, o.expansion);
}

int64_t PartitionCapacity(int64_t capacity, int64_t partitions) {
  return capacity / partitions + (capacity % partitions != 0 ? 1 : 0);
}

int64_t RouteItem(std::string_view item, int64_t partitions) {
  const uint64_t h = MurmurHash64A(item.data(), item.size(), kRouteSeed);
  return static_cast<int64_t>(h % static_cast<uint64_t>(partitions));
}

std::string PartitionName(std::string_view name, std::string_view id,
                          int64_t index, int64_t partitions) {
  const std::string base =
      absl::StrCat(AsAbsl(name), "/", AsAbsl(id), "/", index, "/");
  for (int64_t s = 0; s < kMaxSlotSearch; s++) {
    std::string candidate = absl::StrCat(base, s);
    const int64_t slot = RedisCrc16(candidate) % kRedisClusterSlots;
    if (slot * partitions / kRedisClusterSlots == index) return candidate;
  }
  return absl::StrCat(base, 0);
}

std::vector<std::string> MetaFields(const PartitionedMeta& m) {
  return {"format",     kPartitionedFormat,
          "id",         m.id,
          "partitions", absl::StrCat(m.partitions),
          "error_rate", FormatDouble(m.error_rate),
          "capacity",   absl::StrCat(m.capacity),
          "expansion",  absl::StrCat(m.expansion),
          "nonscaling", m.nonscaling ? "1" : "0"};
}

absl::StatusOr<PartitionedMeta> ParseMeta(
    const std::vector<std::pair<std::string, std::string>>& fields,
    std::string_view key) {
  FieldMap map;
  for (const auto& [k, v] : fields) map[k] = v;
  FieldReader r(map, std::string(key));
  PartitionedMeta m;
  if (r.String("format") != kPartitionedFormat) r.Fail("format");
  m.id = r.String("id");
  m.partitions = static_cast<int64_t>(r.Uint("partitions"));
  m.error_rate = r.Double("error_rate");
  m.capacity = static_cast<int64_t>(r.Uint("capacity"));
  m.expansion = static_cast<int64_t>(r.Uint("expansion"));
  m.nonscaling = r.Uint("nonscaling") != 0;
  if (r.ok() && (m.partitions < 1 || m.partitions > kMaxBloomPartitions)) {
    r.Fail("partitions");
  }
  if (r.ok() && m.id.empty()) r.Fail("id");
  if (!r.ok()) return r.status();
  return m;
}

int64_t DumpIterator(int64_t partition, int64_t inner) {
  return ((partition + 1) << kDumpInnerBits) | inner;
}

bool SplitDumpIterator(int64_t iterator, int64_t* partition, int64_t* inner) {
  if (iterator <= 0 || iterator >= kDumpHeaderIterator) return false;
  const int64_t p = (iterator >> kDumpInnerBits) - 1;
  if (p < 0 || p >= kMaxBloomPartitions) return false;
  *partition = p;
  *inner = iterator & ((int64_t{1} << kDumpInnerBits) - 1);
  return true;
}

std::string EncodeDumpHeader(const PartitionedMeta& m) {
  return absl::StrCat(kHeaderMagic, " 1 ", m.partitions, " ",
                      FormatDouble(m.error_rate), " ", m.capacity, " ",
                      m.expansion, " ", m.nonscaling ? 1 : 0);
}

absl::StatusOr<PartitionedMeta> DecodeDumpHeader(std::string_view data) {
  std::vector<std::string> f = absl::StrSplit(AsAbsl(data), ' ');
  PartitionedMeta m;
  uint64_t partitions = 0, capacity = 0, expansion = 0, nonscaling = 0;
  if (f.size() != 7 || f[0] != kHeaderMagic || f[1] != "1" ||
      !ParseUint(f[2], &partitions) || !ParseDouble(f[3], &m.error_rate) ||
      !ParseUint(f[4], &capacity) || !ParseUint(f[5], &expansion) ||
      !ParseUint(f[6], &nonscaling) || nonscaling > 1 || partitions < 2 ||
      partitions > static_cast<uint64_t>(kMaxBloomPartitions) ||
      capacity > (uint64_t{1} << 50) || expansion > kMaxExpansion) {
    return absl::InvalidArgumentError(
        "not a siftdb partitioned filter dump header");
  }
  m.partitions = static_cast<int64_t>(partitions);
  m.capacity = static_cast<int64_t>(capacity);
  m.expansion = static_cast<int64_t>(expansion);
  m.nonscaling = nonscaling == 1;
  return m;
}

}  // namespace siftdb::redis_bloom
