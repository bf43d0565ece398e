// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomImpl: the implementation of the public RedisBloom interface
// (include/siftdb/redis_bloom.h, which states the contract), split across
// redis_bloom.cc (adds), redis_bloom_exists.cc (membership) and
// redis_bloom_scan.cc (dump and load).
//
// Inside siftdb it can also run on a connection owned by someone else: the
// BF.* interpreter shares one connection between its filters, and tests
// and benches drive a client they control.
//
// Thread safety: none (one connection, one layout cache); one per thread.

#ifndef SIFTDB_REDIS_BLOOM_REDIS_BLOOM_IMPL_H_
#define SIFTDB_REDIS_BLOOM_REDIS_BLOOM_IMPL_H_

#include <cstdint>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"

namespace siftdb {

class RedisBloomImpl final : public RedisBloom {
 public:
  // `client` must outlive this object.
  explicit RedisBloomImpl(RedisClient* client);
  // Takes the connection.
  explicit RedisBloomImpl(std::unique_ptr<RedisClient> client);
  ~RedisBloomImpl() override;
  // WAIT after every add step (RedisBloomOptions::wait_replicas); 0: off.
  void set_wait(int replicas, absl::Duration timeout) {
    wait_replicas_ = replicas;
    wait_timeout_ = timeout;
  }

  using RedisBloom::Reserve;
  absl::Status Reserve(std::string_view name, double error_rate,
                       int64_t capacity, int64_t expansion,
                       bool nonscaling) override;
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

  // Per-filter client state (cached layout); redis_bloom_util.h.
  struct Layout;

  // Whether MAdd/Insert may use the lean path (plain BITFIELD commands and
  // two tiny scripts, redis_bloom_lean_add.cc) for batches that fit in the
  // newest sub-filter; default true. false runs every add as the add script
  // (tests compare the two; the script is also the fallback).
  void set_lean_adds(bool on) { lean_adds_ = on; }

  // read_from=replica_preferred (redis_bloom_replica_read.cc): Exists and
  // MExists run on a replica when a fence proves it holds every write the
  // master held as the call began, else on the master.
  void set_replica_reads(absl::Duration retry_interval) {
    replica_reads_ = true;
    replica_retry_interval_ = retry_interval;
  }
  // Read calls (Exists / MExists) answered by a replica, and by the master
  // because the replica had not caught up or none was usable.
  int64_t replica_reads() const { return replica_reads_served_; }
  int64_t master_reads() const { return master_reads_served_; }

 private:
  // Runs the expire script (redis_bloom_expire.cc).
  absl::StatusOr<bool> RunExpire(std::string_view name, std::string_view mode,
                                 int64_t ms, BloomExpireIf condition);

  enum class CreateMode { kReserve, kAdd, kNoCreate };
  struct CreateParams {
    double error_rate;
    int64_t capacity;
    int64_t expansion;
    bool nonscaling;
  };

  absl::StatusOr<BloomAddResults> AddBatch(
      std::string_view name, const std::vector<std::string_view>& items,
      CreateMode mode, const CreateParams& create);
  absl::StatusOr<BloomAddResults> AddChunk(
      std::string_view name, const std::vector<std::string_view>& items,
      size_t begin, size_t end, CreateMode mode, const CreateParams& create);
  absl::StatusOr<std::vector<bool>> ExistsChunk(
      RedisClient* reader, std::string_view name,
      const std::vector<std::string_view>& items, size_t begin, size_t end);
  // The client for one read call: a replica that passed the fence, or
  // client_ (counted in replica_reads / master_reads).
  RedisClient* ReadClient();
  // Drops the replica after it failed; the master serves until
  // replica_retry_interval_ has passed.
  void DropReplica();
  // The lean add of one chunk (items' hashes h) when the cached layout says
  // it fits in the newest sub-filter: appends the replies to out->added and
  // returns true, or returns false having changed nothing that counts (the
  // caller then runs the add script).
  absl::StatusOr<bool> LeanAdd(std::string_view name,
                               const std::vector<redis_bloom::HashPair>& h,
                               BloomAddResults* out);
  // Whether this client may take the lean path (checked once: a Redis
  // user refused EVAL, WATCH or MULTI may not).
  absl::StatusOr<bool> LeanPathUsable(std::string_view name);
  // Gives back `unused` slots of a lean claim on sub-filter newest_index of
  // filter incarnation `id`: true when the settle applied, false when the
  // filter changed meanwhile (the settle did nothing).
  absl::StatusOr<bool> SettleClaim(std::string_view name, const std::string& id,
                                   size_t newest_index, uint64_t unused,
                                   BloomAddResults* out);
  // Appends MULTI, one BITFIELD SET of every probe in sub-filter
  // newest_index of the items whose skip[i] is 0, EXEC.
  void AppendTransaction(std::string_view name, size_t newest_index,
                         const std::vector<redis_bloom::HashPair>& h,
                         const std::vector<char>& skip,
                         std::vector<RedisArgs>* out);
  // Reads the meta hash into the cache. NotFound when missing,
  // FailedPrecondition (WRONGTYPE) when the key is not a filter.
  absl::StatusOr<const Layout*> Fetch(std::string_view name);
  absl::StatusOr<const Layout*> Cached(std::string_view name);
  std::string NewId();
  // WAIT wait_replicas_ wait_timeout_ on the connection the last add step
  // used (redis_bloom_wait.cc); DeadlineExceeded naming the count when
  // short.
  absl::Status WaitForReplicas(std::string_view name);

  std::unique_ptr<RedisClient> owned_client_;
  RedisClient* client_;
  absl::flat_hash_map<std::string, std::unique_ptr<Layout>> cache_;
  std::mt19937_64 rng_;
  bool lean_adds_ = true;
  // Whether this connection's user may run what lean adds send.
  bool lean_checked_ = false;
  int wait_replicas_ = 0;
  absl::Duration wait_timeout_ = absl::Seconds(1);
  bool replica_reads_ = false;
  absl::Duration replica_retry_interval_ = absl::Seconds(1);
  std::unique_ptr<RedisClient> replica_;
  absl::Time replica_retry_at_ = absl::InfinitePast();
  int64_t replica_reads_served_ = 0;
  int64_t master_reads_served_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_BLOOM_REDIS_BLOOM_IMPL_H_
