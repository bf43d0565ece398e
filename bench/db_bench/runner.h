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

// OK when every name is a benchmark db_bench runs or knowingly skips (the
// LevelDB benchmarks it does not implement, e.g. crc32c); InvalidArgument
// naming the first unknown one otherwise.
absl::Status CheckBenchmarkNames(const std::vector<std::string>& names);

// The bytes of the regular files under `dir` (their apparent sizes, like
// `du --apparent-size`); 0 when it cannot be read.
uint64_t DirBytes(const std::string& dir);

class Runner {
 public:
  Runner(const BenchConfig& config, BenchEngine* engine, std::string db_path);
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
    ThreadState(int tid, uint64_t seed, int key_size, bool histogram,
                ProgressMeter* progress)
        : tid(tid), rand(seed), keys(key_size), stats(histogram, progress) {}
    const int tid;
    Random rand;
    KeyFormatter keys;
    Stats stats;
    int64_t found = 0;      // point reads or seeks that found their key
    int64_t attempted = 0;  // point reads or seeks tried
    int64_t writes = 0;     // writes by readwhilewriting's writer
    absl::Status status;    // the first error met
  };
  using Method = void (Runner::*)(ThreadState*);

  // What one benchmark does, derived from its name.
  struct Plan {
    Method method = nullptr;
    int64_t num = 0;    // key space / writes per thread
    int64_t reads = 0;  // reads per thread
    int value_size = 0;
    bool sync = false;
    bool fresh_db = false;
    bool extra_writer = false;  // readwhilewriting's background writer
    bool count_filter = false;  // report the reads the filters saved
    bool report_found = false;  // report "(found of attempted found)"
    bool after_fill = false;    // measure the DB size afterwards
  };
  absl::StatusOr<Plan> PlanFor(const std::string& name) const;
  // Runs plan.method on the threads and fills *result from their stats
  // (without the background writer's).
  absl::Status RunThreads(const std::string& name, const Plan& plan,
                          BenchResult* result);

  // Workloads (workloads.cc). Each runs on one thread and records its first
  // error in the ThreadState.
  void WriteSeq(ThreadState* t);
  void WriteRandom(ThreadState* t);
  void DoWrite(ThreadState* t, bool seq);
  void ReadRandom(ThreadState* t);
  void ReadMissing(ThreadState* t);
  void ReadHot(ThreadState* t);
  void ReadKeys(ThreadState* t, int64_t range, bool missing);
  void ReadSequential(ThreadState* t);
  void ReadReverse(ThreadState* t);
  void SeekRandom(ThreadState* t);
  void DeleteSeq(ThreadState* t);
  void DeleteRandom(ThreadState* t);
  void DoDelete(ThreadState* t, bool seq);
  void ReadWhileWriting(ThreadState* t);
  void Compact(ThreadState* t);
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
