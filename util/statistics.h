// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Statistics: process-wide counters of one DB (reads the filters saved, block
// cache hits, ...), reported by GetProperty("siftdb.stats") and db_bench.
//
// Thread safety: Record() and Get() may be called from any thread without
// locking; counters are relaxed atomics, so a snapshot of several counters is
// not taken at one instant.

#ifndef SIFTDB_UTIL_STATISTICS_H_
#define SIFTDB_UTIL_STATISTICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <string>

namespace siftdb {

enum class Ticker : int {
  kFilterChecks = 0,      // filters consulted by point reads
  kFilterNegatives,       // filter said "no": a data block read saved
  kFilterPositives,       // filter said "maybe"
  kFilterFalsePositives,  // said "maybe", key absent from that table
  kDataBlockReads,        // data blocks read from a file
  kBlockCacheHits,
  kBlockCacheMisses,
  kBytesRead,              // bytes read from table files
  kBytesWritten,           // bytes written to tables and logs
  kPrefixFilterChecks,     // a prefix seek probed a table's prefix filter
  kPrefixFilterNegatives,  // ... which said "no": the table was skipped
  kKeyMayExistChecks,      // DB::KeyMayExist calls
  kKeyMayExistNegatives,   // of those, answered false (certainly absent)
  // Iterators with bounds (ReadOptions::iterate_lower/upper_bound): data
  // blocks not read and tables not opened because they lie wholly outside.
  kBoundsSkippedBlocks,
  kBoundsSkippedTables,
  // Table cache (bounded by Options::max_open_files): a table found open,
  // or opened (its index and filter read again), and the filter bytes
  // those opens loaded.
  kTableCacheHits,
  kTableCacheMisses,
  kTableOpenFilterBytes,
  // Filters kept in the block cache (Options::cache_filter_blocks): a probe
  // found its table's filter there, or read it in; a reload that failed
  // (the probe answered "may match").
  kFilterCacheHits,
  kFilterCacheMisses,
  kFilterLoadErrors,
  kNumTickers,  // keep last
};

// Stable names used in output, e.g. "filter.negatives".
const char* TickerName(Ticker t);

class Statistics {
 public:
  Statistics() = default;
  Statistics(const Statistics&) = delete;
  Statistics& operator=(const Statistics&) = delete;

  void Record(Ticker t, uint64_t n = 1) {
    counters_[static_cast<int>(t)].fetch_add(n, std::memory_order_relaxed);
  }
  uint64_t Get(Ticker t) const {
    return counters_[static_cast<int>(t)].load(std::memory_order_relaxed);
  }
  // What a table's filter did for one point read (Get, MultiGet) on
  // `level`, counted per level for siftdb.stats. Levels past kMaxLevels - 1
  // count as the last.
  enum class FilterEvent : int { kNegative, kTruePositive, kFalsePositive };
  static constexpr int kMaxLevels = 8;
  void RecordLevelFilter(int level, FilterEvent event) {
    if (level < 0) return;
    auto& counts = level_filters_[level < kMaxLevels ? level : kMaxLevels - 1];
    counts[static_cast<int>(event)].fetch_add(1, std::memory_order_relaxed);
  }
  uint64_t LevelFilterCount(int level, FilterEvent event) const {
    if (level < 0 || level >= kMaxLevels) return 0;
    return level_filters_[level][static_cast<int>(event)].load(
        std::memory_order_relaxed);
  }

  void Reset();
  // One "name: value" line per ticker.
  std::string ToString() const;

 private:
  std::array<std::atomic<uint64_t>, static_cast<int>(Ticker::kNumTickers)>
      counters_{};
  std::array<std::array<std::atomic<uint64_t>, 3>, kMaxLevels> level_filters_{};
};

// stats->Record(t, n) when stats is non-null (most Options leave it null).
inline void Record(Statistics* stats, Ticker t, uint64_t n = 1) {
  if (stats != nullptr) stats->Record(t, n);
}

}  // namespace siftdb

#endif  // SIFTDB_UTIL_STATISTICS_H_
