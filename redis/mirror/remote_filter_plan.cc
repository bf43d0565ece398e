// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/mirror/remote_filter_plan.h"

namespace siftdb {

LiveProbeCost PlanLiveProbeCost(const MirrorManifest& m, size_t keys,
                                size_t already_fetched,
                                const RemoteFilterReaderOptions& options) {
  LiveProbeCost cost;
  cost.fetch_bytes = already_fetched;
  for (const MirrorLiveEntry& e : m.lives) {
    for (const MirrorSubFilter& sub : e.subfilters) {
      const size_t reads = keys * static_cast<size_t>(sub.k);
      // Sizes come from Redis: compare without overflow (bytes() is at
      // most 2^38, reads * kWholeBytesPerBit fits for any batch).
      const bool whole =
          sub.bytes() <= reads * kWholeBytesPerBit &&
          sub.bytes() <= options.max_fetch_bytes_per_batch &&
          cost.fetch_bytes <= options.max_fetch_bytes_per_batch - sub.bytes();
      cost.whole.push_back(whole);
      if (whole) {
        cost.fetch_bytes += sub.bytes();
      } else {
        cost.bit_reads += reads;
      }
    }
  }
  cost.over_op_cap = cost.bit_reads > options.max_probe_ops_per_batch;
  return cost;
}

size_t CountLiveSubFilters(const MirrorManifest& m) {
  size_t n = 0;
  for (const MirrorLiveEntry& e : m.lives) n += e.subfilters.size();
  return n;
}

}  // namespace siftdb
