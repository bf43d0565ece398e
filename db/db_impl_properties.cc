// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl::GetProperty: the introspection a user or db_bench asks for.
// Every property is listed, with its meaning, in include/siftdb/db.h and
// docs/operations.md ("Properties").

#include <array>
#include <cstdlib>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filter_budget.h"
#include "siftdb/rate_limiter.h"
#include "table/table.h"
#include "util/absl_compat.h"

namespace siftdb {
namespace {

// siftdb.stats's line on Options::rate_limiter (totals are the limiter's:
// every DB sharing it counts).
std::string RateLimiterLine(const RateLimiter* limiter) {
  if (limiter == nullptr) return "rate limiter: off";
  return absl::StrFormat(
      "rate limiter: %d bytes/s, %.1f MB through in %d requests",
      limiter->GetBytesPerSecond(), limiter->GetTotalBytesThrough() / 1048576.0,
      limiter->GetTotalRequests());
}

}  // namespace

double DBImpl::TableCacheHitPercent() const {
  const double hits = static_cast<double>(stats_.Get(Ticker::kTableCacheHits));
  const double misses =
      static_cast<double>(stats_.Get(Ticker::kTableCacheMisses));
  return hits + misses > 0 ? 100 * hits / (hits + misses) : 0;
}

uint64_t DBImpl::EstimateNumKeys() {
  // Table properties may need a table opened (I/O): read them without the
  // mutex, from a Version held for the purpose.
  const ReadState state = AcquireReadState(ReadOptions());
  uint64_t total = state.mem->NumEntries();
  if (state.imm != nullptr) total += state.imm->NumEntries();
  for (int level = 0; level < kNumLevels; level++) {
    for (const FileMetaData* f : state.current->files(level)) {
      // A table that cannot be opened counts 0 (reads report the error).
      table_cache_
          ->WithTable(
              f->number, f->file_size,
              [&](const Table& t) { total += t.properties().num_entries; })
          .IgnoreError();
    }
  }
  ReleaseReadState(state);
  return total;
}

std::string DBImpl::FilterLevelStats() {
  struct LevelFilters {
    int tables = 0;
    int filtered = 0;  // tables with a filter
    uint64_t keys = 0;
    uint64_t filter_bytes = 0;
    double expected_fp_keys = 0;  // sum over filtered tables: keys * FP
    uint64_t filtered_keys = 0;   // keys in tables with a known policy
  };
  std::array<LevelFilters, kNumLevels> levels{};
  const ReadState state = AcquireReadState(ReadOptions());
  int deepest = 0;
  for (int level = 0; level < kNumLevels; level++) {
    LevelFilters& l = levels[level];
    for (const FileMetaData* f : state.current->files(level)) {
      deepest = level;
      l.tables++;
      // A table that cannot be opened counts no keys (reads report it).
      table_cache_
          ->WithTable(f->number, f->file_size,
                      [&](const Table& t) {
                        const uint64_t keys = t.properties().num_entries;
                        l.keys += keys;
                        const size_t bytes = t.filter_size();
                        l.filter_bytes += bytes;
                        if (bytes == 0) return;
                        l.filtered++;
                        const double fp = ExpectedFilterFpRate(
                            t.filter_policy_name(),
                            t.properties().filter_bits_per_key);
                        if (fp >= 0) {
                          l.expected_fp_keys += fp * static_cast<double>(keys);
                          l.filtered_keys += keys;
                        }
                      })
          .IgnoreError();
    }
  }
  ReleaseReadState(state);
  using Event = Statistics::FilterEvent;
  std::string out =
      "Level Filtered  Filter(KB) Bits/entry New(bits/key)     Checks "
      " Negatives  FP(seen) FP(expect)  (filters)\n";
  for (int level = 0; level < kNumLevels; level++) {
    const LevelFilters& l = levels[level];
    const uint64_t negatives = stats_.LevelFilterCount(level, Event::kNegative);
    const uint64_t false_positives =
        stats_.LevelFilterCount(level, Event::kFalsePositive);
    const uint64_t checks =
        negatives + false_positives +
        stats_.LevelFilterCount(level, Event::kTruePositive);
    if (l.tables == 0 && checks == 0 && level > deepest) continue;
    double next = OutputFilterBitsPerKey(options_, level, deepest);
    if (filter_policy_ == nullptr ||
        (options_.optimize_filters_for_hits && level >= deepest && level > 0)) {
      next = 0;  // approximate for the bottom: a compaction decides
    }
    // Seen: false positives among the probes of keys the table did not
    // hold (the negatives and the false positives).
    const std::string seen =
        negatives + false_positives > 0
            ? absl::StrFormat("%.4f%%", 100.0 * false_positives /
                                            (negatives + false_positives))
            : "-";
    const std::string expect =
        l.filtered_keys > 0
            ? absl::StrFormat("%.4f%%",
                              100.0 * l.expected_fp_keys / l.filtered_keys)
            : "-";
    absl::StrAppendFormat(
        &out, "%5d %4d/%-4d %10.1f %10.2f %13.2f %10d %10d %9s %10s\n", level,
        l.filtered, l.tables, l.filter_bytes / 1024.0,
        l.keys > 0 ? 8.0 * static_cast<double>(l.filter_bytes) / l.keys : 0.0,
        next, checks, negatives, seen, expect);
  }
  return out;
}

void DBImpl::AppendLevelStats(std::string* value) const {
  absl::StrAppendFormat(value,
                        "Level Files Size(MB) Read(MB) Write(MB) Comp(sec) "
                        "Comp(cnt)\n"
                        "------------------------------------------------"
                        "--------\n");
  for (int level = 0; level < kNumLevels; level++) {
    const LevelStats& s = level_stats_[level];
    absl::StrAppendFormat(value, "%5d %5d %8.2f %8.2f %9.2f %9.3f %9d\n", level,
                          versions_->NumLevelFiles(level),
                          versions_->NumLevelBytes(level) / 1048576.0,
                          s.bytes_read / 1048576.0, s.bytes_written / 1048576.0,
                          s.micros / 1e6, s.count);
  }
}

bool DBImpl::GetProperty(std::string_view property, std::string* value) {
  value->clear();
  constexpr std::string_view kPrefix = "siftdb.";
  if (property.substr(0, kPrefix.size()) != kPrefix) return false;
  std::string_view name = property.substr(kPrefix.size());

  if (name == "estimate-num-keys") {  // takes the mutex itself
    *value = absl::StrFormat("%d", EstimateNumKeys());
    return true;
  }
  std::string filter_stats;
  if (name == "stats") filter_stats = FilterLevelStats();  // no mutex held
  MutexLock l(&mutex_);
  if (name == "compaction-pending") {
    *value = bg_error_.ok() && versions_->NeedsCompaction() ? "1" : "0";
    return true;
  }
  if (name == "estimate-pending-compaction-bytes") {
    *value =
        absl::StrFormat("%d", versions_->current()->pending_compaction_bytes());
    return true;
  }
  if (name == "num-running-compactions") {
    *value = absl::StrFormat("%d", running_compactions_);
    return true;
  }
  if (name == "rate-limiter-bytes") {
    const RateLimiter* limiter = options_.rate_limiter.get();
    *value = absl::StrFormat(
        "%d", limiter != nullptr ? limiter->GetTotalBytesThrough() : 0);
    return true;
  }
  if (name == "levelstats") {
    AppendLevelStats(value);
    return true;
  }
  if (name == "block-cache-capacity" || name == "block-cache-usage") {
    size_t bytes = 0;
    if (block_cache_ != nullptr) {
      bytes = name == "block-cache-usage" ? block_cache_->Usage()
                                          : block_cache_->Capacity();
    }
    *value = absl::StrFormat("%d", bytes);
    return true;
  }
  constexpr std::string_view kFilesAtLevel = "num-files-at-level";
  if (name.substr(0, kFilesAtLevel.size()) == kFilesAtLevel) {
    int level;
    if (!absl::SimpleAtoi(AsAbsl(name.substr(kFilesAtLevel.size())), &level) ||
        level < 0 || level >= kNumLevels) {
      return false;
    }
    *value = absl::StrFormat("%d", versions_->NumLevelFiles(level));
    return true;
  }
  if (name == "stats") {
    absl::StrAppendFormat(
        value,
        "                               Compactions\n"
        "Level  Files Size(MB) Time(sec) Read(MB) Write(MB)\n"
        "--------------------------------------------------\n");
    int64_t total_written = 0;
    for (int level = 0; level < kNumLevels; level++) {
      const int files = versions_->NumLevelFiles(level);
      const LevelStats& s = level_stats_[level];
      total_written += s.bytes_written;
      if (files > 0 || s.micros > 0) {
        absl::StrAppendFormat(
            value, "%3d %8d %8.1f %9.2f %8.1f %9.1f\n", level, files,
            versions_->NumLevelBytes(level) / 1048576.0, s.micros / 1e6,
            s.bytes_read / 1048576.0, s.bytes_written / 1048576.0);
      }
    }
    // Write amplification: bytes written to tables (flush + compaction) per
    // byte flushed from MemTables.
    const double flushed = static_cast<double>(flush_bytes_);
    absl::StrAppendFormat(
        value,
        "flushes: %d, %.1f MB in %.2f sec\n"
        "compactions split into parts: %d (%d parts); "
        "failed or stopped: %d\n"
        "inputs freed early: %d tables, %.1f MB in %d "
        "steps, %.3f sec\n"
        "write amplification: %.2f\n"
        "write stall: %.3f sec\n"
        "table cache: %d open of %d (max_open_files), hit rate %.1f%%\n"
        "%s\n",
        flushes_, flush_bytes_ / 1048576.0, flush_micros_ / 1e6,
        split_compactions_, split_compaction_parts_, split_compactions_failed_,
        early_released_tables_, early_released_bytes_ / 1048576.0,
        early_release_steps_, early_release_micros_ / 1e6,
        flushed > 0 ? (flushed + total_written) / flushed : 0,
        stall_micros_ / 1e6, table_cache_->OpenTables(),
        table_cache_->capacity(), TableCacheHitPercent(),
        RateLimiterLine(options_.rate_limiter.get()));
    value->append(filter_stats);
    value->append(stats_.ToString());
    return true;
  }
  if (name == "sstables") {
    *value = versions_->current()->DebugString();
    return true;
  }
  if (name == "filter-memory") {
    // On the heap and in the block cache alike.
    *value = absl::StrFormat("%d", table_cache_->FilterMemoryUsage() +
                                       table_cache_->CachedFilterMemoryUsage());
    return true;
  }
  if (name == "index-memory") {
    *value = absl::StrFormat("%d", table_cache_->IndexMemoryUsage());
    return true;
  }
  if (name == "filter-memory-in-cache") {
    *value = absl::StrFormat("%d", table_cache_->CachedFilterMemoryUsage());
    return true;
  }
  if (name == "approximate-memory-usage") {
    uint64_t total = mem_->ApproximateMemoryUsage() + mem_->FilterMemoryUsage();
    if (imm_ != nullptr) {
      total += imm_->ApproximateMemoryUsage() + imm_->FilterMemoryUsage();
    }
    // Filters kept in the block cache are part of its usage; the others
    // are on the heap.
    if (block_cache_ != nullptr) total += block_cache_->Usage();
    total += table_cache_->FilterMemoryUsage();
    total += table_cache_->IndexMemoryUsage();
    *value = absl::StrFormat("%d", total);
    return true;
  }
  constexpr std::string_view kCounter = "counter.";
  if (name.substr(0, kCounter.size()) == kCounter) {
    // One Statistics ticker by its name, e.g. siftdb.counter.filter.negatives.
    std::string_view ticker = name.substr(kCounter.size());
    for (int i = 0; i < static_cast<int>(Ticker::kNumTickers); i++) {
      if (ticker == TickerName(static_cast<Ticker>(i))) {
        *value = absl::StrFormat("%d", stats_.Get(static_cast<Ticker>(i)));
        return true;
      }
    }
    return false;
  }
  if (name == "remote-filter") {
    *value = mirror_ != nullptr ? mirror_->DebugString() : "off";
    return true;
  }
  if (name == "background-error") {
    *value = bg_error_.ok() ? "OK" : bg_error_.ToString();
    return true;
  }
  return false;
}

}  // namespace siftdb
