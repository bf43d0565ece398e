// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteFilterImpl: the reader side of the Redis mirror behind
// include/siftdb/remote_filter.h. The protocol it follows is
// docs/redis_mirror.md §4; the key names and encodings are
// redis/mirror/redis_mirror_format.h. remote_filter.cc holds the manifest,
// the trust check and the public entry points; remote_filter_probe.cc one
// batch (ProbeBatch: the local pass, the pipeline, the replies). A batch
// probes keys or prefixes; both are hashed alike and probe the same
// filters, but a prefix may be rejected only by filters that record the
// prefixes of the batch's extractor (a table's or live filter's manifest
// extension), and its candidate tables are those whose range can hold keys
// starting with it.
//
// Thread safety: every public method takes mu_; one batch at a time.

#ifndef SIFTDB_REDIS_MIRROR_REMOTE_FILTER_IMPL_H_
#define SIFTDB_REDIS_MIRROR_REMOTE_FILTER_IMPL_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "redis/client/redis_cluster_client.h"
#include "redis/mirror/redis_mirror_format.h"
#include "redis/mirror/remote_filter_cache.h"
#include "siftdb/remote_filter.h"
#include "util/mutex.h"

namespace siftdb {

class RemoteFilterImpl final : public RemoteFilter {
 public:
  RemoteFilterImpl(const RemoteFilterReaderOptions& options,
                   std::string_view name, std::unique_ptr<RedisConnection> conn)
      : options_(options),
        keys_(name),
        conn_(std::move(conn)),
        cache_(options.max_cached_filter_bytes) {}

  absl::Status FetchManifestForOpen() {
    MutexLock l(&mu_);
    return FetchManifest();
  }

  absl::Status MayContainMany(std::span<const std::string_view> keys,
                              std::vector<bool>* answers) override;
  absl::Status MayContainPrefixMany(std::span<const std::string_view> prefixes,
                                    std::vector<bool>* answers) override;
  RemoteFilterWatermark watermark() const override;
  RemoteFilterStats stats() const override;
  void ClearCache() override;

 private:
  // One live sub-filter probed by a batch, and where its replies are.
  struct LiveProbe {
    std::string key;
    MirrorSubFilter sub;
    bool whole = false;  // GET of the whole value, else BITFIELD_RO reads
    size_t first_reply = 0, num_bitfield = 0;
  };
  // One batch between its steps: answers so far, what to fetch and probe,
  // the pipeline, and the first cap met.
  struct BatchPlan {
    bool prefixes = false;         // the "keys" are prefixes
    std::vector<uint64_t> hashes;  // FilterKeyHash of each key
    // The keys (a partitioned filter picks its partition by key).
    std::span<const std::string_view> keys;
    std::vector<char> maybe;  // 1: answered "maybe"
    std::vector<std::pair<uint32_t, uint32_t>> unresolved;  // (key, table)
    std::map<size_t, size_t> fetch;  // table index -> reply index
    size_t fetch_bytes = 0;          // planned bytes of GET replies
    std::vector<uint32_t> need;      // keys the live filters must answer
    std::vector<LiveProbe> probes;
    std::vector<RedisArgs> cmds;
    // The first cap met, or the first filter that could not answer for a
    // key (no whole keys) or prefix (no prefixes, another extractor's).
    absl::Status capped;
    void Note(absl::Status s) {
      if (capped.ok()) capped = std::move(s);
    }
  };

  // The tables a key may be in, by the manifest's ranges.
  void CandidateTables(std::string_view key, std::vector<size_t>* out) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // The tables keys starting with `prefix` may be in: bytewise, such keys
  // lie in [prefix, successor(prefix)); all tables for another comparator.
  void CandidatePrefixTables(std::string_view prefix,
                             std::vector<size_t>* out) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // MayContainMany and MayContainPrefixMany: batches of max_batch_keys.
  absl::Status ProbeAll(std::span<const std::string_view> keys, bool prefixes,
                        std::vector<bool>* answers)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FetchManifest() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  absl::Status FailOpen(absl::Status s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    stats_.fail_open_batches++;
    return s;
  }
  // Whether the replies of INFO replication and the two lease GETs show a
  // server this reader may trust (docs/redis_mirror.md §4 step 4).
  absl::Status CheckTrust(const RedisReply& info, const RedisReply& lease1,
                          const RedisReply& lease2) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  // --- One batch (remote_filter_probe.cc) ---
  absl::Status ProbeBatch(std::span<const std::string_view> keys, bool prefixes,
                          std::vector<bool>* answers, size_t offset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Cached table filters, locally; the tables to fetch. For prefixes, also
  // which filters may answer (their extractor), and which may not.
  void LocalPass(std::span<const std::string_view> keys, BatchPlan* plan)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // GETs of the tables to fetch, within the byte caps.
  void PlanTableFetches(BatchPlan* plan) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whole GETs or BITFIELD_RO reads of every live sub-filter for the keys
  // still undecided, within the caps.
  void PlanLiveProbes(BatchPlan* plan) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Check, cache and apply the fetched table filters.
  void ApplyTableReplies(const std::vector<RedisReply>& r, BatchPlan* plan,
                         absl::Status* problem)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Check and apply one live sub-filter's replies.
  void ApplyLiveReplies(const std::vector<RedisReply>& r, const LiveProbe& p,
                        BatchPlan* plan, absl::Status* problem)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  const RemoteFilterReaderOptions options_;
  const MirrorKeys keys_;
  std::unique_ptr<RedisConnection> conn_ ABSL_GUARDED_BY(mu_);
  std::optional<MirrorManifest> manifest_ ABSL_GUARDED_BY(mu_);
  bool ranges_usable_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<size_t> level0_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<size_t>> levels_ ABSL_GUARDED_BY(mu_);  // 1..
  RemoteFilterCache cache_ ABSL_GUARDED_BY(mu_);
  RemoteFilterWatermark watermark_ ABSL_GUARDED_BY(mu_);
  RemoteFilterStats stats_ ABSL_GUARDED_BY(mu_);
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_MIRROR_REMOTE_FILTER_IMPL_H_
