// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Measurement for db_bench: per-thread Stats (operations, bytes, wall time,
// optional latency histogram), a shared ProgressMeter that reports on stderr
// once a benchmark has run for a few seconds, and the BenchResult of one
// benchmark with its LevelDB-format report line.
//
// Thread safety: a Stats belongs to one thread until the run is over, then
// the runner merges them. ProgressMeter::Add may be called from any thread.

#ifndef SIFTDB_BENCH_DB_BENCH_STATS_H_
#define SIFTDB_BENCH_DB_BENCH_STATS_H_

#include <atomic>
#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "util/histogram.h"

namespace siftdb::bench {

using Clock = std::chrono::steady_clock;

// Prints "<name>: <ops> ops (<pct>%) in <t> s" on stderr once the benchmark
// has run for kQuietSeconds (short runs stay silent): on a terminal one line
// rewritten every second and cleared at the end, otherwise a line every ten
// seconds.
class ProgressMeter {
 public:
  static constexpr double kQuietSeconds = 3.0;

  // expected_ops: total over all threads (0: unknown, no percentage).
  ProgressMeter(std::string name, int64_t expected_ops);
  ProgressMeter(const ProgressMeter&) = delete;
  ProgressMeter& operator=(const ProgressMeter&) = delete;
  ~ProgressMeter();

  void Add(int64_t ops);

 private:
  const std::string name_;
  const int64_t expected_ops_;
  const Clock::time_point start_;
  const bool tty_;  // stderr is a terminal
  std::atomic<int64_t> done_{0};
  std::atomic<int64_t> last_report_nanos_{0};  // since start_
  std::atomic<bool> printed_{false};
};

class Stats {
 public:
  // progress may be null (no progress reports). A new Stats is empty, with
  // no span, until Start().
  Stats(bool histogram, ProgressMeter* progress);
  Stats(const Stats&) = delete;
  Stats& operator=(const Stats&) = delete;

  void Start();
  void Stop();
  // Counts n finished operations; with the histogram on, records the time
  // since the previous call (or Start) as one operation's latency, and
  // counts it as slow when it is kSlowOpMicros or more.
  void FinishedOps(int64_t n = 1);
  void AddBytes(int64_t n) { bytes_ += n; }

  // Adds other's operations, bytes and latencies; the span becomes the
  // union of both spans and the busy time their sum.
  void Merge(const Stats& other);

  int64_t ops() const { return ops_; }
  int64_t bytes() const { return bytes_; }
  // Sum over merged threads of each thread's busy seconds.
  double busy_seconds() const { return busy_seconds_; }
  // From the earliest start to the latest stop.
  double elapsed_seconds() const;
  const Histogram& histogram() const { return hist_; }
  // With the histogram on: operations of kSlowOpMicros or more, and the
  // seconds they took (on fills, the time writers were stalled).
  int64_t slow_ops() const { return slow_ops_; }
  double slow_seconds() const { return slow_seconds_; }

  static constexpr double kSlowOpMicros = 1000;

 private:
  static constexpr int64_t kProgressBatch = 1024;

  const bool use_histogram_;
  ProgressMeter* const progress_;
  Clock::time_point start_;
  Clock::time_point finish_;
  Clock::time_point last_op_;
  double busy_seconds_ = 0;
  int64_t ops_ = 0;
  int64_t bytes_ = 0;
  int64_t unreported_ops_ = 0;
  int64_t slow_ops_ = 0;
  double slow_seconds_ = 0;
  Histogram hist_;
};

// CPU seconds (user + system, all threads) used so far by this process.
double ProcessCpuSeconds();

// Resets the process's peak resident set size to its current size (Linux's
// /proc/self/clear_refs), so that PeakResidentBytes measures one engine's
// run; false when the kernel refuses.
bool ResetPeakResidentBytes();
// The process's peak resident set size (VmHWM) since it started or since
// the last reset; negative when unknown.
int64_t PeakResidentBytes();

// The outcome of one benchmark on one engine.
struct BenchResult {
  std::string name;
  // Skipped benchmarks print `skip_reason` instead of a measurement.
  std::optional<std::string> skip_reason;
  int64_t ops = 0;
  double micros_per_op = 0;
  // Operations over the elapsed wall time, all threads (RocksDB's ops/sec).
  double ops_per_sec = 0;
  double mb_per_sec = -1;  // negative: not a byte-moving benchmark
  // Process CPU time over the benchmark (background compactions included)
  // per operation: less sensitive than micros_per_op to other load on the
  // machine.
  double cpu_micros_per_op = 0;
  std::string message;  // e.g. "(632111 of 1000000 found)"
  std::optional<Histogram> histogram;
  // With the histogram: Stats::slow_ops() and slow_seconds().
  int64_t slow_ops = 0;
  double slow_seconds = 0;
  // Bytes of the DB directory measured after a fill benchmark.
  std::optional<uint64_t> db_bytes;
  // Text benchmarks (stats, sstables) print this instead of a line.
  std::optional<std::string> text;
};

// Builds a result from merged stats the way LevelDB does: micros/op is the
// threads' summed busy time over the operations (at least one), MB/s the
// bytes over the elapsed wall time.
BenchResult ResultFromStats(const std::string& name, const Stats& stats,
                            bool with_histogram);

// `fillseq      :       1.765 micros/op 566572 ops/sec;   62.7 MB/s`,
// without newline: LevelDB's line with RocksDB's ops/sec after micros/op,
// so RocksDB's tools/benchmark.sh reads fields 3 and 5 as usec_op and
// ops_sec. A skipped benchmark gives `fillseq      : skipped (<reason>)`.
std::string FormatResultLine(const BenchResult& r);
// The histogram block printed under the line when --histogram is on.
std::string FormatHistogram(const Histogram& h);

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_DB_BENCH_STATS_H_
