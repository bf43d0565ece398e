// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// What probing a manifest's live filters costs one reader batch, and the
// choice of how (a whole GET or BITFIELD_RO bit reads per sub-filter),
// against the caps of RemoteFilterReaderOptions (docs/redis_mirror.md §4.1).
// Pure: the reader plans each batch with it, and the mirror fuzzer checks
// that no manifest makes a plan exceed the caps.
//
// Thread safety: pure functions.

#ifndef SIFTDB_REDIS_MIRROR_REMOTE_FILTER_PLAN_H_
#define SIFTDB_REDIS_MIRROR_REMOTE_FILTER_PLAN_H_

#include <cstddef>
#include <vector>

#include "redis/mirror/redis_mirror_format.h"
#include "siftdb/remote_filter.h"

namespace siftdb {

// A live sub-filter is fetched whole when its size is at most this many
// bytes per probed bit (a BITFIELD_RO GET u1 costs about that much on the
// wire and in parsing).
inline constexpr size_t kWholeBytesPerBit = 24;

struct LiveProbeCost {
  // One per listed sub-filter, in manifest order (entries by id, then
  // sub-filter index): fetched whole, else read bit by bit.
  std::vector<bool> whole;
  size_t fetch_bytes = 0;  // already_fetched plus the whole GETs
  size_t bit_reads = 0;    // BITFIELD_RO GET operations
  // bit_reads exceed max_probe_ops_per_batch: the batch must answer
  // "maybe" for these keys instead of probing.
  bool over_op_cap = false;
};

// The plan for `keys` undecided keys, after `already_fetched` bytes of
// table filters. fetch_bytes never exceeds max_fetch_bytes_per_batch
// (when already_fetched does not).
LiveProbeCost PlanLiveProbeCost(const MirrorManifest& m, size_t keys,
                                size_t already_fetched,
                                const RemoteFilterReaderOptions& options);

// Sub-filters a manifest lists (to compare with max_live_subfilters).
size_t CountLiveSubFilters(const MirrorManifest& m);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_MIRROR_REMOTE_FILTER_PLAN_H_
