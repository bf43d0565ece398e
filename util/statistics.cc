// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/statistics.h"

#include "absl/strings/str_format.h"

namespace siftdb {

const char* TickerName(Ticker t) {
  switch (t) {
    case Ticker::kFilterChecks:
      return "filter.checks";
    case Ticker::kFilterNegatives:
      return "filter.negatives";
    case Ticker::kFilterPositives:
      return "filter.positives";
    case Ticker::kFilterFalsePositives:
      return "filter.false_positives";
    case Ticker::kDataBlockReads:
      return "block.data_reads";
    case Ticker::kBlockCacheHits:
      return "block_cache.hits";
    case Ticker::kBlockCacheMisses:
      return "block_cache.misses";
    case Ticker::kBytesRead:
      return "bytes.read";
    case Ticker::kBytesWritten:
      return "bytes.written";
    case Ticker::kPrefixFilterChecks:
      return "prefix_filter.checks";
    case Ticker::kPrefixFilterNegatives:
      return "prefix_filter.negatives";
    case Ticker::kKeyMayExistChecks:
      return "key_may_exist.checks";
    case Ticker::kKeyMayExistNegatives:
      return "key_may_exist.negatives";
    case Ticker::kBoundsSkippedBlocks:
      return "iter.bounds_skipped_blocks";
    case Ticker::kBoundsSkippedTables:
      return "iter.bounds_skipped_tables";
    case Ticker::kTableCacheHits:
      return "table_cache.hits";
    case Ticker::kTableCacheMisses:
      return "table_cache.misses";
    case Ticker::kTableOpenFilterBytes:
      return "table_cache.filter_bytes_loaded";
    case Ticker::kFilterCacheHits:
      return "filter.cache_hits";
    case Ticker::kFilterCacheMisses:
      return "filter.cache_misses";
    case Ticker::kFilterLoadErrors:
      return "filter.load_errors";
    case Ticker::kNumTickers:
      break;
  }
  return "unknown";
}

void Statistics::Reset() {
  for (auto& c : counters_) c.store(0, std::memory_order_relaxed);
  for (auto& level : level_filters_) {
    for (auto& c : level) c.store(0, std::memory_order_relaxed);
  }
}

std::string Statistics::ToString() const {
  std::string out;
  for (int i = 0; i < static_cast<int>(Ticker::kNumTickers); i++) {
    const Ticker t = static_cast<Ticker>(i);
    absl::StrAppendFormat(&out, "%s: %d\n", TickerName(t), Get(t));
  }
  return out;
}

}  // namespace siftdb
