// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A Bloom filter kept in plain Redis (>= 6.0, no modules) with RedisBloom's
// BF.* semantics, and a counting Bloom filter for sets that need removal.
//
// RedisBloom compatibility (checked against outputs recorded from RedisBloom
// 2.8.20): the same sizing, hash (MurmurHash64A, two seeds), bit layout and
// scaling rules, so a sub-filter's bytes equal RedisBloom's; the same replies
// to adds and membership tests, the same BF.INFO numbers, and BF.SCANDUMP /
// BF.LOADCHUNK chunks that load into RedisBloom and back. docs/redis_bloom.md
// describes the keys siftdb keeps in Redis and the dump format.
//
// Storage for filter NAME (every key carries the hash tag {NAME}, so one
// filter lives in one Redis Cluster slot):
//   bf:{NAME}:meta      hash: parameters, counts, sub-filter list
//   bf:{NAME}:bitmap:i  string: sub-filter i's bit array (RedisBloom bytes)
// Counting filters use cbf:{NAME}:meta and cbf:{NAME}:counters.
// A partitioned filter (BloomReserveOptions::partitions > 1) is P such
// filters under P hash tags, spread over a Redis Cluster's masters; the
// object Open returns routes items and follows the cluster's slot map
// (docs/redis_bloom.md section 11). Counts (Card, Info) are the sums of
// the partitions'.
//
// Atomicity: every mutating call is one Lua script run by EVALSHA (reloaded
// on NOSCRIPT), so concurrent clients never split an add from its count or
// race a sub-filter's creation; except that a batch fitting in the newest
// sub-filter takes the lean path (a claim on its capacity, one watched
// BITFIELD transaction, a settle of the counts; docs/redis_bloom.md, "Lean
// adds"), whose replies and final counts are the same. An MAdd batch of up
// to kMaxScriptItems is one atomic step; larger ones are split into
// consecutive atomic steps. MExists reads only: a filter whose newest
// sub-filter is large is probed without a script, sub-filter by sub-filter
// newest first, each in two MULTI/EXEC rounds (every item's first bit, then
// the other bits of the items whose first bit is set); one whose bit arrays
// are small by one read-only script call per kMaxScriptItems items
// (docs/redis_bloom.md). Connection errors are retried with exponential
// backoff until retry_deadline; a retried add never loses an item, but may
// report it as already present (0), and a retried lean step may leave the
// counts off by up to its batch (BloomAddResults::ambiguous_retries).
//
// Errors: absl::Status values with messages naming the filter; statuses that
// correspond to a RedisBloom error reply carry that reply's exact text as a
// payload (RedisBloomReplyText), e.g. NotFound + "ERR not found".
//
// Thread safety: a RedisBloom / RedisCountingBloom object is NOT thread-safe
// (it owns one connection and a small cache); use one per thread. Any number
// of objects, threads and processes may share the same filters in Redis.

#ifndef SIFTDB_INCLUDE_SIFTDB_REDIS_BLOOM_H_
#define SIFTDB_INCLUDE_SIFTDB_REDIS_BLOOM_H_

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "siftdb/export.h"

namespace siftdb {

struct SIFTDB_EXPORT RedisBloomOptions {
  // "host:port", "[v6]:port", "unix:/path" or "/path", or a URL: redis://,
  // redis+sentinel:// (followed across failovers), unix://, and over TLS
  // rediss:// and rediss+sentinel:// (docs/redis_client.md); the URL's
  // user, password and database win. With ?read_from=replica_preferred,
  // RedisBloom's Exists / MExists go to a healthy replica (from the
  // Sentinels, or the master's INFO replication) when it is proven to hold
  // every write the master held as the call began, else to the master, so
  // no acknowledged add ever reads as absent (docs/redis_bloom.md,
  // "Replicas for reads"); RedisCountingBloom refuses it.
  std::string endpoint = "127.0.0.1:6379";
  // AUTH username password (ACL) or AUTH password when password is set.
  std::string username;
  std::string password;
  int database = 0;
  absl::Duration connect_timeout = absl::Seconds(2);
  absl::Duration command_timeout = absl::Seconds(30);
  // Connection errors are retried with exponential backoff this long.
  absl::Duration retry_deadline = absl::Seconds(10);
  // RedisBloom (not RedisCountingBloom) adds: when > 0, every add step
  // (Add, and each chunk of at most kMaxScriptItems of MAdd / Insert) is
  // followed by WAIT wait_replicas wait_timeout. Fewer acknowledgements
  // make the call fail with DeadlineExceeded naming how many replicas
  // acknowledged: the items are on the master but a failover may lose
  // them (docs/redis_bloom.md, "Replicas and WAIT").
  int wait_replicas = 0;
  absl::Duration wait_timeout = absl::Seconds(1);
  // read_from=replica_preferred: after no healthy replica was found, or
  // the one in use failed, reads go to the master this long before a
  // replica is looked for again.
  absl::Duration replica_retry_interval = absl::Seconds(1);
};

// Largest batch sent in one script call (one atomic step).
inline constexpr size_t kMaxScriptItems = 16384;

// BF.INSERT's options. capacity/error_rate/expansion only matter when the
// call creates the filter.
struct SIFTDB_EXPORT BloomInsertOptions {
  std::optional<int64_t> capacity;
  std::optional<double> error_rate;
  std::optional<int64_t> expansion;
  bool nocreate = false;
  bool nonscaling = false;
};

struct SIFTDB_EXPORT BloomSubFilterInfo {
  uint64_t capacity = 0;
  double error_rate = 0;
  double bits_per_entry = 0;
  uint32_t hashes = 0;
  uint64_t bits = 0;
  uint64_t bytes = 0;
  uint64_t items = 0;
};

struct SIFTDB_EXPORT BloomInfo {
  // BF.INFO's fields.
  uint64_t capacity = 0;  // sum of the sub-filters' capacities
  uint64_t size = 0;      // RedisBloom's memory figure (struct sizes + bits)
  uint64_t filters = 0;   // number of sub-filters
  uint64_t items = 0;     // items inserted (adds that changed bits)
  std::optional<uint32_t> expansion;  // nullopt for NONSCALING filters
  // More detail.
  double error_rate = 0;  // requested error rate
  uint32_t options = 0;   // RedisBloom chain option bits
  uint32_t growth = 0;    // stored expansion (2 even for NONSCALING)
  bool nonscaling = false;
  std::vector<BloomSubFilterInfo> sub_filters;
};

// Results of MAdd / Insert: one flag per processed item (true = added, false
// = maybe already present). When processing stopped early (a NONSCALING
// filter is full, or a new sub-filter would exceed Redis's string limit),
// `stopped` says why and `added` is shorter than the input.
struct SIFTDB_EXPORT BloomAddResults {
  std::vector<bool> added;
  absl::Status stopped;
  // Steps resent after a connection error whose first attempt may have run
  // (docs/redis_bloom.md, "Lean adds"). Items are never lost by them, but
  // each may leave the filter's counts off by at most its batch (at most
  // kMaxScriptItems) and report some new items as 0. Usually 0.
  int64_t ambiguous_retries = 0;
};

struct SIFTDB_EXPORT BloomDumpChunk {
  int64_t next_iterator = 0;  // 0 when the dump is complete
  std::string data;
};

// The RedisBloom reply text attached to a status by this API, if any.
SIFTDB_EXPORT std::optional<std::string> RedisBloomReplyText(
    const absl::Status& status);

// When RedisBloom::Expire applies (EXPIRE's options).
enum class BloomExpireIf {
  kAlways,
  kNoExpiry,   // NX: only when the filter has no expiry
  kHasExpiry,  // XX: only when it has one
  kLater,      // GT: only when the new expiry is later (none: never)
  kSooner,     // LT: only when sooner (none counts as infinitely late)
};

// The longest time to live Expire accepts (about 8,900 years; Redis
// refuses expiry times whose milliseconds overflow).
inline constexpr absl::Duration kMaxBloomTtl =
    absl::Milliseconds(int64_t{1} << 48);

// The most partitions one filter may have (BloomReserveOptions).
inline constexpr int64_t kMaxBloomPartitions = 1024;

// BF.RESERVE's parameters, and siftdb's partitions.
struct SIFTDB_EXPORT BloomReserveOptions {
  double error_rate = 0.01;
  int64_t capacity = 100;
  int64_t expansion = 2;  // >= 1
  bool nonscaling = false;
  // 1: one RedisBloom-layout filter in one Redis slot (as RedisBloom).
  // P > 1 (at most kMaxBloomPartitions): P such filters under distinct hash
  // tags spread over the slot range, so a Redis Cluster spreads them over
  // its masters; each item lives in one partition chosen by a hash
  // independent of its bit positions, and each partition is reserved with
  // capacity ceil(capacity / P), the same error rate, expansion and
  // NONSCALING. The filter's name must not contain '{' or '}'.
  // docs/redis_bloom.md, "Partitioned filters".
  int64_t partitions = 1;
};

class SIFTDB_EXPORT RedisBloom {
 public:
  // Connects (retrying until options.retry_deadline).
  static absl::StatusOr<std::unique_ptr<RedisBloom>> Open(
      const RedisBloomOptions& options);

  RedisBloom(const RedisBloom&) = delete;
  RedisBloom& operator=(const RedisBloom&) = delete;
  virtual ~RedisBloom();

  // BF.RESERVE. expansion >= 1; nonscaling filters never grow.
  virtual absl::Status Reserve(std::string_view name, double error_rate,
                               int64_t capacity, int64_t expansion,
                               bool nonscaling) = 0;
  // BF.RESERVE of a scaling filter.
  absl::Status Reserve(std::string_view name, double error_rate,
                       int64_t capacity, int64_t expansion = 2) {
    return Reserve(name, error_rate, capacity, expansion, false);
  }
  // BF.RESERVE with every option, partitions included. InvalidArgument
  // naming the option for a bad value; AlreadyExists when the name is
  // taken. The objects RedisBloom::Open returns support partitions > 1;
  // others answer Unimplemented for it.
  virtual absl::Status Reserve(std::string_view name,
                               const BloomReserveOptions& options);
  // BF.ADD: true when the item set a bit (new), false when maybe present.
  // Creates a missing filter with capacity 100, error 0.01, expansion 2.
  virtual absl::StatusOr<bool> Add(std::string_view name,
                                   std::string_view item) = 0;
  virtual absl::StatusOr<BloomAddResults> MAdd(
      std::string_view name, const std::vector<std::string_view>& items) = 0;
  virtual absl::StatusOr<BloomAddResults> MAdd(
      std::string_view name, const std::vector<std::string>& items) = 0;
  virtual absl::StatusOr<BloomAddResults> Insert(
      std::string_view name, const std::vector<std::string_view>& items,
      const BloomInsertOptions& options) = 0;
  // BF.EXISTS / BF.MEXISTS: false for a missing (or non-filter) key.
  virtual absl::StatusOr<bool> Exists(std::string_view name,
                                      std::string_view item) = 0;
  virtual absl::StatusOr<std::vector<bool>> MExists(
      std::string_view name, const std::vector<std::string_view>& items) = 0;
  virtual absl::StatusOr<std::vector<bool>> MExists(
      std::string_view name, const std::vector<std::string>& items) = 0;
  virtual absl::StatusOr<BloomInfo> Info(std::string_view name) = 0;
  // BF.CARD: 0 for a missing filter.
  virtual absl::StatusOr<int64_t> Card(std::string_view name) = 0;
  // BF.SCANDUMP: start with iterator 0, pass back next_iterator until 0.
  virtual absl::StatusOr<BloomDumpChunk> ScanDump(std::string_view name,
                                                  int64_t iterator) = 0;
  // BF.LOADCHUNK: the header (iterator 1) creates the filter, which must
  // not exist; data chunks need it.
  virtual absl::Status LoadChunk(std::string_view name, int64_t iterator,
                                 std::string_view data) = 0;
  // Removes the filter's keys; false when it did not exist.
  virtual absl::StatusOr<bool> Delete(std::string_view name) = 0;

  // The filter as one object (RedisBloom keeps a filter in one key; here
  // it spans a meta hash and one key per sub-filter).
  //
  // Expire sets a time to live on every key of the filter in one atomic
  // step, so they all expire at the same instant, and sub-filters the
  // filter grows later inherit that instant. Redis keeps milliseconds: a
  // positive ttl is rounded up to the next one; ttl <= 0 deletes the
  // filter, as EXPIRE does. `condition` as EXPIRE's NX / XX / GT / LT.
  // True when applied; false when the filter does not exist or the
  // condition refused. InvalidArgument for an infinite ttl (Persist removes
  // an expiry) or one past kMaxBloomTtl.
  virtual absl::StatusOr<bool> Expire(
      std::string_view name, absl::Duration ttl,
      BloomExpireIf condition = BloomExpireIf::kAlways) = 0;
  // The same with an absolute instant (Redis's clock decides; one in the
  // past deletes the filter).
  virtual absl::StatusOr<bool> ExpireAt(
      std::string_view name, absl::Time when,
      BloomExpireIf condition = BloomExpireIf::kAlways) = 0;
  // Removes the expiry from every key of the filter: true when it had one;
  // false when it had none or does not exist.
  virtual absl::StatusOr<bool> Persist(std::string_view name) = 0;
  // Time left before the filter expires: absl::InfiniteDuration() when it
  // has no expiry; NotFound when it does not exist.
  virtual absl::StatusOr<absl::Duration> Ttl(std::string_view name) = 0;

  // Redis key names of a filter.
  static std::string MetaKey(std::string_view name);
  static std::string BitmapKey(std::string_view name, size_t index);

 protected:
  RedisBloom() = default;
};

struct SIFTDB_EXPORT CountingBloomInfo {
  uint64_t capacity = 0;
  double error_rate = 0;
  uint64_t counters = 0;  // 4-bit cells
  uint32_t hashes = 0;
  uint64_t bytes = 0;
  int64_t items = 0;  // adds minus successful removals
};

// A counting Bloom filter: 4-bit counters (BITFIELD u4, OVERFLOW SAT). Add
// increments an item's cells, Remove decrements them when every cell is
// nonzero (a saturated cell, 15, is never decremented), Count returns the
// minimum cell. Removing an item that was added never makes another added
// item read as absent. Sized like a classic Bloom filter (no scaling): past
// its capacity the false-positive rate rises.
class SIFTDB_EXPORT RedisCountingBloom {
 public:
  static absl::StatusOr<std::unique_ptr<RedisCountingBloom>> Open(
      const RedisBloomOptions& options);

  RedisCountingBloom(const RedisCountingBloom&) = delete;
  RedisCountingBloom& operator=(const RedisCountingBloom&) = delete;
  virtual ~RedisCountingBloom();

  // Creates the filter; AlreadyExists when it exists.
  virtual absl::Status Reserve(std::string_view name, double error_rate,
                               int64_t capacity) = 0;
  // Per item: true when it was absent before (some cell was 0). Creates a
  // missing filter with capacity 100, error 0.01.
  virtual absl::StatusOr<std::vector<bool>> Add(
      std::string_view name, const std::vector<std::string_view>& items) = 0;
  // Per item: true when it was present and has been removed.
  virtual absl::StatusOr<std::vector<bool>> Remove(
      std::string_view name, const std::vector<std::string_view>& items) = 0;
  virtual absl::StatusOr<std::vector<bool>> Exists(
      std::string_view name, const std::vector<std::string_view>& items) = 0;
  // Per item: the minimum of its cells (15 means "15 or more").
  virtual absl::StatusOr<std::vector<uint32_t>> Count(
      std::string_view name, const std::vector<std::string_view>& items) = 0;
  virtual absl::StatusOr<CountingBloomInfo> Info(std::string_view name) = 0;
  virtual absl::StatusOr<bool> Delete(std::string_view name) = 0;

  static std::string MetaKey(std::string_view name);
  static std::string CountersKey(std::string_view name);

 protected:
  RedisCountingBloom() = default;
};

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_SIFTDB_REDIS_BLOOM_H_
