// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomPartitioned: the RedisBloom that RedisBloom::Open returns. It
// routes every call by the filter's kind:
//   * unpartitioned (RedisBloom's layout, one slot): the call goes to the
//     RedisBloomImpl of the node serving the filter's slot, unchanged, so
//     on a standalone Redis it behaves (and costs) exactly as
//     RedisBloomImpl; on a Redis Cluster redirects are followed
//     (redis_bloom_nodes.h).
//   * partitioned (BloomReserveOptions::partitions > 1; persisted layout in
//     redis_bloom_partition_layout.h): items are routed to partitions and
//     each partition's share of a batch goes to its node, all nodes in
//     parallel; Info / Card sum the partitions; the dump walks them in turn.
//
// How a client learns the kind: a name is assumed unpartitioned until the
// unpartitioned code refuses its meta hash (format "p1"), or a key command
// reads the meta hash; the partitioned meta is then cached. A cached
// partitioned view is checked whenever it could matter: an add to a
// partition that is missing (NotFound) and any item read as absent make the
// client reread the meta hash, so a filter deleted and recreated by another
// client never yields a false negative. A missing meta hash means a missing
// filter (Add creates an unpartitioned one with RedisBloom's defaults).
//
// Partition calls run with NOCREATE, so a partition is only ever created
// by Reserve or a dump load. Delete removes the meta hash first (the
// filter reads as absent from then on), then each partition. Expire sets
// one PEXPIREAT instant (from the meta node's clock) on the meta hash
// first, then on every partition; Persist clears the partitions first,
// then the meta hash: so a live meta hash never outlives its partitions.
//
// Ownership: owns its connections (or borrows the client it was built on).
// Thread safety: NOT thread-safe (as every RedisBloom); calls fan out to
// worker threads internally and join them before returning.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_PARTITIONED_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_PARTITIONED_H_

#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_nodes.h"
#include "redis/bloom/redis_bloom_partition_layout.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"

namespace siftdb {

class RedisBloomPartitioned final : public RedisBloom {
 public:
  // Takes the seed connection; `configure` sets up every node's
  // RedisBloomImpl (the seed's included) the same way.
  RedisBloomPartitioned(std::unique_ptr<RedisClient> client,
                        redis_bloom::BloomNodes::Configure configure,
                        absl::Duration retry_deadline);
  // Borrows `client` (it must outlive this object).
  explicit RedisBloomPartitioned(RedisClient* client);
  ~RedisBloomPartitioned() override;

  // The seed node's filter object (observability in tests).
  RedisBloomImpl* seed_bloom() { return seed_bloom_.get(); }
  redis_bloom::BloomNodes& nodes() { return *nodes_; }
  // Calls (or partitions' shares of a call) resent after a redirect.
  int64_t redirect_retries() const { return redirect_retries_; }

  using RedisBloom::Reserve;
  absl::Status Reserve(std::string_view name, double error_rate,
                       int64_t capacity, int64_t expansion,
                       bool nonscaling) override;
  absl::Status Reserve(std::string_view name,
                       const BloomReserveOptions& options) override;
  absl::StatusOr<bool> Add(std::string_view name,
                           std::string_view item) override;
  absl::StatusOr<BloomAddResults> MAdd(
      std::string_view name,
      const std::vector<std::string_view>& items) override;
  absl::StatusOr<BloomAddResults> MAdd(
      std::string_view name, const std::vector<std::string>& items) override;
  absl::StatusOr<BloomAddResults> Insert(
      std::string_view name, const std::vector<std::string_view>& items,
      const BloomInsertOptions& options) override;
  absl::StatusOr<bool> Exists(std::string_view name,
                              std::string_view item) override;
  absl::StatusOr<std::vector<bool>> MExists(
      std::string_view name,
      const std::vector<std::string_view>& items) override;
  absl::StatusOr<std::vector<bool>> MExists(
      std::string_view name, const std::vector<std::string>& items) override;
  absl::StatusOr<BloomInfo> Info(std::string_view name) override;
  absl::StatusOr<int64_t> Card(std::string_view name) override;
  absl::StatusOr<BloomDumpChunk> ScanDump(std::string_view name,
                                          int64_t iterator) override;
  absl::Status LoadChunk(std::string_view name, int64_t iterator,
                         std::string_view data) override;
  absl::StatusOr<bool> Delete(std::string_view name) override;
  absl::StatusOr<bool> Expire(std::string_view name, absl::Duration ttl,
                              BloomExpireIf condition) override;
  absl::StatusOr<bool> ExpireAt(std::string_view name, absl::Time when,
                                BloomExpireIf condition) override;
  absl::StatusOr<bool> Persist(std::string_view name) override;
  absl::StatusOr<absl::Duration> Ttl(std::string_view name) override;

  // The partitioned view of `name` as the meta hash says now: nullopt when
  // the filter is missing or unpartitioned (tests and tools).
  absl::StatusOr<std::optional<redis_bloom::PartitionedMeta>> ReadMeta(
      std::string_view name);
  // Partition i's filter name of a partitioned filter.
  static std::string PartitionOf(std::string_view name,
                                 const redis_bloom::PartitionedMeta& meta,
                                 int64_t i);

 private:
  struct View {
    redis_bloom::PartitionedMeta meta;
    std::vector<std::string> names;  // partition filter names
  };
  using PartFn = std::function<absl::Status(RedisBloomImpl*, int64_t)>;

  // The cached partitioned view, or nullptr (unknown or unpartitioned).
  const View* Cached(std::string_view name) const;
  // Rereads the meta hash into the cache: the view, or nullptr when the
  // filter is missing or unpartitioned.
  absl::StatusOr<const View*> Reload(std::string_view name);
  // Runs `fn` on the node of `name`'s slot, following redirects.
  // (fn keeps its result; its status decides the retry.)
  absl::Status OnNode(std::string_view name,
                      const std::function<absl::Status(RedisBloomImpl*)>& fn);
  // Runs fn(node, p) for every partition in `parts` in parallel,
  // re-running the ones redirected until retry_deadline.
  absl::Status FanOut(const View& view, const std::vector<int64_t>& parts,
                      const PartFn& fn);
  // A command (or a script) on the node of `name`'s slot (the meta hash),
  // following redirects; other error replies are returned as replies.
  absl::StatusOr<RedisReply> MetaCommand(std::string_view name,
                                         const RedisArgs& args);
  absl::StatusOr<RedisReply> MetaEval(std::string_view name,
                                      const RedisScript& script,
                                      const RedisArgs& args);
  absl::StatusOr<RedisReply> MetaCall(
      std::string_view name,
      const std::function<absl::StatusOr<RedisReply>(RedisClient*)>& fn);
  // Runs an unpartitioned call; when its layout turns out partitioned (a
  // fresh read of the meta hash says so), sets *partitioned and returns OK.
  absl::Status Plain(std::string_view name,
                     const std::function<absl::Status(RedisBloomImpl*)>& fn,
                     bool* partitioned);
  // Whether a status from the unpartitioned path means "this is not a
  // layout I read" (a partitioned meta hash).
  static bool ForeignLayout(const absl::Status& s);

  absl::StatusOr<BloomAddResults> AddItems(
      std::string_view name, const std::vector<std::string_view>& items,
      const BloomInsertOptions* insert);
  absl::StatusOr<BloomAddResults> PartitionedAdd(
      const View& view, const std::vector<std::string_view>& items);
  absl::StatusOr<std::vector<bool>> PartitionedExists(
      const View& view, const std::vector<std::string_view>& items);
  absl::StatusOr<std::vector<bool>> ExistsItems(
      std::string_view name, const std::vector<std::string_view>& items);
  absl::Status ReservePartitioned(std::string_view name,
                                  const BloomReserveOptions& o);
  // Creates the meta hash unless the key exists (AlreadyExists then).
  absl::Status CreateMeta(std::string_view name,
                          const redis_bloom::PartitionedMeta& meta);
  absl::StatusOr<BloomInfo> PartitionedInfo(const View& view);
  absl::StatusOr<bool> PartitionedDelete(std::string_view name,
                                         const View& view);
  // when_ms: Unix milliseconds (0: now, deletes); ttl_ms >= 0 instead
  // counts from the meta node's clock (when_ms is then ignored).
  absl::StatusOr<bool> PartitionedExpire(std::string_view name,
                                         const View& view, int64_t when_ms,
                                         int64_t ttl_ms,
                                         BloomExpireIf condition);
  absl::StatusOr<BloomDumpChunk> PartitionedScan(const View& view,
                                                 int64_t iterator);
  absl::Status PartitionedLoad(std::string_view name, int64_t iterator,
                               std::string_view data);
  std::string NewId();

  std::unique_ptr<RedisClient> owned_client_;
  std::unique_ptr<RedisBloomImpl> seed_bloom_;
  std::unique_ptr<redis_bloom::BloomNodes> nodes_;
  const absl::Duration retry_deadline_;
  absl::flat_hash_map<std::string, std::unique_ptr<View>> cache_;
  std::mt19937_64 rng_;
  int64_t redirect_retries_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_PARTITIONED_H_
