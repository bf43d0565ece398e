// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Runner: runs db_bench's benchmarks, by LevelDB's names and with LevelDB's
// semantics, against one BenchEngine. Each benchmark runs on --threads
// threads that start together; their Stats are merged into a BenchResult.
//
// Thread safety: a Runner is driven by one thread; it starts and joins its
// worker threads inside Run().
// Ownership: the engine is not owned and must outlive the Runner.

#ifndef SIFTDB_BENCH_DB_BENCH_RUNNER_H_
#define SIFTDB_BENCH_DB_BENCH_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "bench/db_bench/engine.h"
#include "bench/db_bench/flags.h"
#include "bench/db_bench/generators.h"
#include "bench/db_bench/stats.h"
#include "bench/db_bench/write_rate_limiter.h"
#include "util/random.h"

namespace siftdb::bench {

// OK when every name is a benchmark db_bench runs or knowingly skips
// (heapprofile); InvalidArgument naming the first unknown one, or the
// missing feature of a refused one (multireadrandom), otherwise.
absl::Status CheckBenchmarkNames(const std::vector<std::string>& names);

// Uniform in [0, range); 0 for an empty range (workloads.cc).
uint64_t Pick(Random* rand, int64_t range);

// The bytes of the regular files under `dir` (their apparent sizes, like
// `du --apparent-size`); 0 when it cannot be read.
uint64_t DirBytes(const std::string& dir);

class Runner {
 public:
  Runner(const BenchConfig& config, BenchEngine* engine, std::string db_path);
  // Whether `name` is a benchmark with a workload (not a text one).
  static bool HasWorkload(const std::string& name);
  Runner(const Runner&) = delete;
  Runner& operator=(const Runner&) = delete;
  ~Runner();

  // Removes any old database (unless --use_existing_db) and opens it.
  absl::Status Open();
  // Runs one benchmark. Errors of the engine stop the benchmark and are
  // returned naming it.
  absl::StatusOr<BenchResult> Run(const std::string& name);
  void Close();

 private:
  // waitforcompaction: waits until background work has settled (see
  // runner.cc) and records the directory's size then.
  void WaitForSettledSize(BenchResult* result);
  // What one worker thread owns.
  struct ThreadState {
    ThreadState(int tid, uint64_t seed, const BenchConfig& config,
                ProgressMeter* progress)
        : tid(tid),
          rand(seed),
          keys(config.key_size, config.key_prefix, config.engine.prefix_size,
               config.key_groups),
          stats(config.histogram, progress) {}
    const int tid;
    Random rand;
    KeyFormatter keys;
    Stats stats;
    int64_t found = 0;      // point reads or seeks that found their key
    int64_t attempted = 0;  // point reads or seeks tried
    int64_t writes = 0;     // writes (readwhilewriting's writer, mixes)
    std::string message;    // appended to the report line (thread 0's)
    absl::Status status;    // the first error met
  };
  using Method = void (Runner::*)(ThreadState*);

  // How DoWrite picks keys.
  enum class KeyOrder { kSeq, kRandom, kUnique };

  // What one benchmark does, derived from its name.
  struct Plan {
    Method method = nullptr;
    int64_t num = 0;    // key space / writes per thread
    int64_t reads = 0;  // reads per thread
    int value_size = 0;
    int64_t batch = 1;  // entries per write
    bool sync = false;
    bool fresh_db = false;
    bool single_thread = false;  // open, flush: one thread whatever --threads
    bool timed = true;           // --duration applies
    bool report_mix = false;     // "( reads:R writes:W ...)" of the mixes
    bool extra_writer = false;   // readwhilewriting's background writer
    bool count_filter = false;   // report the reads the filters saved
    bool report_found = false;   // report "(found of attempted found)"
    bool after_fill = false;     // measure the DB size afterwards
  };
  absl::StatusOr<Plan> PlanFor(const std::string& name) const;
  // Set p's method and traits for a benchmark of LevelDB's (RocksDB's);
  // false when `name` is not one.
  static bool SetUpLevelDBPlan(const std::string& name, Plan* p);
  static bool SetUpRocksDBPlan(const std::string& name, Plan* p);
  // The text benchmarks (stats, sstables, levelstats, memstats); false
  // when `name` is not one.
  bool TextBenchmark(const std::string& name, BenchResult* result);
  // Whether a loop at operation i of `limit` goes on: i < limit, or with
  // --duration, until its deadline.
  bool More(int64_t i, int64_t limit) const {
    if (deadline_.has_value()) return Clock::now() < *deadline_;
    return i < limit;
  }
  // Runs plan.method on the threads and fills *result from their stats
  // (without the background writer's).
  absl::Status RunThreads(const std::string& name, const Plan& plan,
                          BenchResult* result);

  // Workloads (workloads.cc). Each runs on one thread and records its first
  // error in the ThreadState.
  void WriteSeq(ThreadState* t);
  void WriteRandom(ThreadState* t);
  void WriteUniqueRandom(ThreadState* t);
  void DoWrite(ThreadState* t, KeyOrder order);
  void ReadRandom(ThreadState* t);
  void ReadMissing(ThreadState* t);
  void ReadHot(ThreadState* t);
  void ReadKeys(ThreadState* t, int64_t range, bool missing);
  void ReadSequential(ThreadState* t);
  void ReadReverse(ThreadState* t);
  void SeekRandom(ThreadState* t);
  void SeekRandomPrefixes(ThreadState* t);
  void DeleteSeq(ThreadState* t);
  void DeleteRandom(ThreadState* t);
  void DoDelete(ThreadState* t, bool seq);
  void ReadWhileWriting(ThreadState* t);
  void Compact(ThreadState* t);
  // More workloads (workloads_more.cc): LevelDB's seekordered, open,
  // crc32c, snappycomp and snappyuncomp; RocksDB's fillseqdeterministic,
  // readrandomwriterandom, updaterandom, newiterator and flush.
  void SeekOrdered(ThreadState* t);
  void OpenBench(ThreadState* t);
  void Crc32c(ThreadState* t);
  void SnappyCompress(ThreadState* t);
  void SnappyUncompress(ThreadState* t);
  void FillSeqDeterministic(ThreadState* t);
  void ReadRandomWriteRandom(ThreadState* t);
  void UpdateRandom(ThreadState* t);
  void MultiReadRandom(ThreadState* t);
  void NewIteratorBench(ThreadState* t);
  void FlushBench(ThreadState* t);
  // Waits for --benchmark_write_rate_limit to admit `bytes` (no-op without
  // a limit). Called by every writing workload before each write.
  void PaceWrite(size_t bytes) {
    if (write_limiter_ != nullptr) write_limiter_->Acquire(bytes);
  }

  const BenchConfig& config_;
  BenchEngine* const engine_;
  const std::string db_path_;
  bool open_ = false;
  Plan plan_;  // of the benchmark running; read-only while threads run
  // --duration's end of the benchmark running; read-only while threads run.
  std::optional<Clock::time_point> deadline_;
  // Readers of readwhilewriting that have finished (the writer stops when
  // all have).
  std::atomic<int> readers_done_{0};
  // The benchmark's write pacing, when --benchmark_write_rate_limit > 0;
  // created as its threads start, destroyed after they are joined.
  std::unique_ptr<WriteRateLimiter> write_limiter_;
  // Threads created so far: thread seeds are --seed + this count, so every
  // benchmark draws a different (but reproducible) key sequence, as in
  // LevelDB 1.23. Otherwise readrandom would read exactly the keys
  // fillrandom wrote.
  uint64_t threads_created_ = 0;
};

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_DB_BENCH_RUNNER_H_
