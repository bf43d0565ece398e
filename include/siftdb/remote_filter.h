// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteFilter: asks Redis "could key K exist in database NAME?" without the
// database, using the filters a siftdb engine mirrors into Redis
// (Options.remote_filter; protocol in docs/redis_mirror.md). A "no" is
// certain: a remote reader never gets "no" for a key the engine holds. A
// "maybe" means: ask the database.
//
//   auto filter = siftdb::RemoteFilter::Open("127.0.0.1:6379", "orders");
//   if (filter.ok() && !(*filter)->MayContain(key)) { /* skip the trip */ }
//
// What it does per call: one pipelined round trip to Redis that checks the
// mirror's lease (the engine's promise that the mirror is complete) before
// and after the probes, checks the manifest's generation and version
// against the cached manifest, fetches the table filters this batch needs
// and does not hold yet (immutable once published: each is fetched once and
// kept in a bounded LRU cache, checked against its size and crc32c), and
// probes the live MemTable filters (BITFIELD_RO GET u1 per probe bit, or
// the whole sub-filter when that is smaller). Table filters are probed
// locally. When the manifest changed, it is fetched again (HGETALL) and the
// batch redone.
//
// Failing open: when Redis is unreachable, the lease is not held (engine
// down, Redis restarted or flushed, republication under way), the server is
// not the one the engine last published to (its replication id differs from
// the one in the lease: restarted from persistence, failed over, promoted),
// the server is a replica (unless trust_replica), the manifest or a filter
// is missing, partial, of the wrong type or garbage, or a cap below is
// reached, every affected answer is "maybe" and MayContainMany returns the
// reason. Every round trip also sends INFO replication: the reader's ACL
// user needs +info besides the read commands below.
//
// Prefixes: for a database with Options::prefix_extractor,
// MayContainPrefix(P) is false only when no key whose prefix (under that
// extractor) is P can be in the database, with the same guarantee. It may
// say "no" only when every filter that could hold such a key -- each table
// whose key range can hold keys starting with P (bytewise comparator only;
// otherwise every table) and every live MemTable filter -- records the
// prefixes of one and the same extractor (prefix_extractor below, or the
// one they all name) and rejects P. A filter without prefixes (a table
// written before the extractor was set) or with another extractor's means
// "maybe", and the status says which (docs/prefix_filters.md).
//
// Async mirrors: the engine's writes reach the mirror with a bounded lag;
// the guarantee holds for writes acknowledged before the watermark
// (watermark()), i.e. complete_unix_ms, and for sequence numbers up to
// complete_seq.
//
// Deployment: a standalone Redis, a replica (only read-only commands are
// sent: INFO, GET, HLEN, HMGET, HGETALL, STRLEN, GETRANGE, BITFIELD_RO;
// trusted only with trust_replica, see below) or a Redis Cluster (give any
// nodes; MOVED/ASK are followed and the slot map refreshed; every key of one
// mirror lives in the slot of {NAME}).
//
// Thread safety: all methods are thread-safe; calls on one RemoteFilter are
// serialized (one connection). For parallel probing open one per thread.

#ifndef SIFTDB_INCLUDE_REMOTE_FILTER_H_
#define SIFTDB_INCLUDE_REMOTE_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "siftdb/export.h"

namespace siftdb {

struct SIFTDB_EXPORT RemoteFilterReaderOptions {
  // A standalone server or replica ("host:port", "[v6]:port",
  // "unix:/path"), or seed nodes of a Redis Cluster, or one URL: redis://,
  // redis+sentinel:// (the master, followed across failovers), unix://,
  // and over TLS rediss:// and rediss+sentinel:// (?ca_cert=, cert=, key=,
  // sni=, verify=), with ?read_from=replica_preferred for reads from a
  // healthy replica (docs/redis_client.md); the URL's user and password
  // win.
  std::vector<std::string> endpoints;
  std::string username;  // ACL user; empty: AUTH with password only
  std::string password;  // empty: no AUTH
  int connect_timeout_ms = 1000;
  int command_timeout_ms = 1000;
  // Bound on the bytes of table filters kept locally (LRU).
  size_t max_cached_filter_bytes = size_t{256} << 20;
  // MayContainMany splits larger inputs into batches of this many keys
  // (one round trip each).
  size_t max_batch_keys = 50000;

  // Reading a replica. By default a reader trusts only a master whose
  // replication id is the one the engine's last commit recorded in the
  // lease; on a replica every answer is "maybe". With trust_replica, a
  // replica is trusted while its master link is up, its replication id is
  // that one, and it has been up for longer than the lease (a replica
  // restarted from its own RDB replays older states). Only safe when the
  // engine's wait_replicas counts this replica (docs/redis_mirror.md §6.4).
  bool trust_replica = false;

  // Where the reader's pipelines go: "master" (or empty, the default) or
  // "replica_preferred": a healthy replica (through Sentinel, one it lists;
  // with several host:port endpoints, one of those whose ROLE says replica
  // with its link up), else the master (docs/redis_client.md, "Replicas
  // for reads"). A URL's ?read_from= wins. The trust rules above apply
  // unchanged: without trust_replica, answers read on a replica are
  // "maybe". Not for Redis Cluster.
  std::string read_from;

  // Caps on what a mirror (data in Redis, which a reader does not control)
  // can make one batch cost. Above a cap the affected answers are "maybe"
  // and MayContainMany returns ResourceExhausted naming the cap.
  // Fields of the manifest hash (HLEN, checked before HGETALL).
  size_t max_manifest_fields = 1 << 20;
  // Live sub-filters listed by one manifest.
  size_t max_live_subfilters = 256;
  // BITFIELD_RO bit reads per batch (about 40 bytes each, sent and parsed).
  size_t max_probe_ops_per_batch = size_t{4} << 20;
  // Bytes of filters fetched by one batch (table filters and whole live
  // sub-filters); a table filter above max_cached_filter_bytes is never
  // fetched.
  size_t max_fetch_bytes_per_batch = size_t{64} << 20;

  // The SliceTransform::Name() of the extractor the prefixes given to
  // MayContainPrefix come from (e.g. "siftdb.FixedPrefix.4"). Set: only
  // filters holding that extractor's prefixes may answer "no". Empty: the
  // filters a prefix needs must all name one extractor, and the caller
  // promises its prefixes come from it. For the built-in names the length
  // is checked too: a FixedPrefix.<n> prefix of another length than n, or a
  // CappedPrefix.<n> one longer than n, is answered "maybe".
  std::string prefix_extractor;
};

// Up to where an async mirror is complete, as of the last MayContainMany
// call (the minimum over its batches).
struct SIFTDB_EXPORT RemoteFilterWatermark {
  uint64_t complete_seq = 0;
  int64_t complete_unix_ms = 0;
  std::string mode;  // "sync" or "async"
};

struct SIFTDB_EXPORT RemoteFilterStats {
  uint64_t keys = 0;
  uint64_t batches = 0;
  uint64_t round_trips = 0;
  uint64_t redirects = 0;  // Redis Cluster -MOVED / -ASK followed
  uint64_t manifest_fetches = 0;
  uint64_t filter_fetches = 0;  // table filters fetched
  uint64_t filter_fetch_bytes = 0;
  uint64_t live_probe_bits = 0;     // BITFIELD_RO bits read
  uint64_t live_whole_fetches = 0;  // live sub-filters fetched whole
  uint64_t fail_open_batches = 0;   // batches answered "maybe" wholesale
  uint64_t cached_filters = 0;
  uint64_t cached_bytes = 0;
  uint64_t cache_evictions = 0;
};

class SIFTDB_EXPORT RemoteFilter {
 public:
  // Connects and reads the manifest. Errors: InvalidArgument (bad endpoint
  // or name), Unauthenticated (AUTH refused), Unavailable (no endpoint
  // answers). A missing or unusable mirror is not an error here: the
  // answers are then "maybe" until it appears.
  static absl::StatusOr<std::unique_ptr<RemoteFilter>> Open(
      const RemoteFilterReaderOptions& options, std::string_view name);
  static absl::StatusOr<std::unique_ptr<RemoteFilter>> Open(
      std::string_view endpoint, std::string_view name);

  RemoteFilter(const RemoteFilter&) = delete;
  RemoteFilter& operator=(const RemoteFilter&) = delete;
  virtual ~RemoteFilter() = default;

  // False only when the key is certainly not in the database (as of the
  // watermark for an async mirror). *why (optional) gets the status of the
  // batch, as MayContainMany returns it.
  bool MayContain(std::string_view key, absl::Status* why = nullptr);

  // answers->at(i) answers keys[i] (true: maybe). Returns OK when every
  // answer rests on a trusted, well-formed mirror; otherwise the first
  // problem met (the affected answers are "maybe"; an untrusted mirror
  // makes them all "maybe").
  virtual absl::Status MayContainMany(std::span<const std::string_view> keys,
                                      std::vector<bool>* answers) = 0;

  // False only when the database certainly holds no key whose prefix is
  // `prefix` (the output of the database's prefix extractor for such keys,
  // not just any leading bytes; see "Prefixes" above). Same
  // fail-open contract as MayContain: "maybe" when in doubt, *why says why.
  bool MayContainPrefix(std::string_view prefix, absl::Status* why = nullptr);

  // answers->at(i) answers prefixes[i] (true: maybe), as MayContainMany
  // does for keys; one round trip per max_batch_keys prefixes.
  virtual absl::Status MayContainPrefixMany(
      std::span<const std::string_view> prefixes,
      std::vector<bool>* answers) = 0;

  virtual RemoteFilterWatermark watermark() const = 0;
  virtual RemoteFilterStats stats() const = 0;
  // Forgets the cached manifest and table filters.
  virtual void ClearCache() = 0;

 protected:
  RemoteFilter() = default;
};

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_REMOTE_FILTER_H_
