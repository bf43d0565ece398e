// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// db_bench's output besides the per-benchmark lines: the header describing
// the machine and configuration (LevelDB's layout: Keys, Values, Entries,
// RawSize, FileSize, plus CPU, version and filter) and, when several
// engines run, the side-by-side comparison table.
//
// Thread safety: call from one thread; they write to stdout.

#ifndef SIFTDB_BENCH_DB_BENCH_REPORT_H_
#define SIFTDB_BENCH_DB_BENCH_REPORT_H_

#include <string>
#include <vector>

#include "bench/db_bench/flags.h"
#include "bench/db_bench/stats.h"

namespace siftdb::bench {

// The header, ending with the dashed separator line. engine_descriptions:
// one per engine of config.engines, in the same order.
std::string FormatHeader(const BenchConfig& config,
                         const std::vector<std::string>& engine_descriptions);

// One engine's results, in benchmark order.
struct EngineResults {
  std::string engine;
  std::vector<BenchResult> results;
  // For judging a comparison on a shared machine: the run's wall time, the
  // CPU time the process used meanwhile (all threads, background work
  // included) and the 1-minute load average when the engine started.
  double wall_seconds = 0;
  double cpu_seconds = 0;
  double load_before = -1;  // negative: unknown
  // The process's peak resident set size during the engine's run (the
  // peak is reset when it starts); negative when unknown.
  int64_t peak_rss_bytes = -1;
};

// The 1-minute load average (/proc/loadavg), negative when unknown.
double LoadAverage();

// The comparison of several engines: micros/op per benchmark (repeated
// names numbered "readrandom(2)"), each engine's ratio to the first
// engine's, and the DB directory size after each fill. REQUIRES: every
// EngineResults holds the same benchmarks in the same order.
std::string FormatComparison(const std::vector<EngineResults>& all);

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_DB_BENCH_REPORT_H_
