// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "bench/db_bench/runner.h"

#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <system_error>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/synchronization/blocking_counter.h"
#include "absl/synchronization/notification.h"

namespace siftdb::bench {
namespace {

// Benchmarks of LevelDB's db_bench that this one does not implement: they
// are skipped with a note (so LevelDB's scripts still run), never an error.
// LevelDB itself prints "heap profiling not supported" on most ports.
const std::map<std::string, std::string>& SkippedBenchmarks() {
  static const auto* const names = new std::map<std::string, std::string>{
      {"heapprofile", "siftdb's db_bench has no heap profiler"},
      {"acquireload", "LevelDB's atomic microbenchmark, not a DB benchmark"}};
  return *names;
}

// Benchmarks refused with the feature they need.
const std::map<std::string, std::string>& RefusedBenchmarks() {
  static const auto* const names = new std::map<std::string, std::string>{
      {"mergerandom", "needs a merge operator, which siftdb does not have"},
      {"readrandommergerandom",
       "needs a merge operator, which siftdb does not have"}};
  return *names;
}

const std::set<std::string>& TextBenchmarks() {
  static const auto* const names = new std::set<std::string>{
      "stats", "sstables", "levelstats", "memstats", "waitforcompaction"};
  return *names;
}

}  // namespace

absl::Status CheckBenchmarkNames(const std::vector<std::string>& names) {
  for (const std::string& name : names) {
    if (auto it = RefusedBenchmarks().find(name);
        it != RefusedBenchmarks().end()) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--benchmarks: %s is not supported: %s", name, it->second));
    }
    if (TextBenchmarks().count(name) == 0 &&
        SkippedBenchmarks().count(name) == 0 && !Runner::HasWorkload(name)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--benchmarks: unknown benchmark '%s' (see docs/db_bench.md)", name));
    }
  }
  return absl::OkStatus();
}

uint64_t DirBytes(const std::string& dir) {
  std::error_code ec;
  uint64_t total = 0;
  for (std::filesystem::recursive_directory_iterator it(dir, ec), end;
       !ec && it != end; it.increment(ec)) {
    std::error_code file_ec;
    if (it->is_regular_file(file_ec)) {
      const uintmax_t size = it->file_size(file_ec);
      if (!file_ec) total += size;
    }
  }
  return total;
}

Runner::Runner(const BenchConfig& config, BenchEngine* engine,
               std::string db_path)
    : config_(config), engine_(engine), db_path_(std::move(db_path)) {}

Runner::~Runner() { Close(); }

absl::Status Runner::Open() {
  if (!config_.use_existing_db) {
    absl::Status s = engine_->Destroy(db_path_);
    if (!s.ok()) return s;
  }
  absl::Status s = engine_->Open(config_.engine, db_path_);
  if (!s.ok()) {
    return absl::Status(
        s.code(), absl::StrFormat("opening %s database %s: %s", engine_->Name(),
                                  db_path_, s.message()));
  }
  open_ = true;
  return absl::OkStatus();
}

void Runner::Close() {
  if (open_) engine_->Close();
  open_ = false;
}

bool Runner::HasWorkload(const std::string& name) {
  Plan p;
  return SetUpLevelDBPlan(name, &p) || SetUpRocksDBPlan(name, &p);
}

absl::StatusOr<Runner::Plan> Runner::PlanFor(const std::string& name) const {
  Plan p;
  p.num = config_.num;
  p.reads = config_.reads < 0 ? config_.num : config_.reads;
  p.value_size = config_.value_size;
  p.batch = config_.batch_size;
  if (!SetUpLevelDBPlan(name, &p) && !SetUpRocksDBPlan(name, &p)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("unknown benchmark '%s'", name));
  }
  p.sync = p.sync || config_.sync;
  return p;
}

// LevelDB 1.23's benchmarks, with its semantics.
bool Runner::SetUpLevelDBPlan(const std::string& name, Plan* p) {
  if (name == "fillseq" || name == "fillbatch") {
    p->method = &Runner::WriteSeq;
    p->fresh_db = p->after_fill = true;
    if (name == "fillbatch") p->batch = 1000;
  } else if (name == "fillrandom") {
    p->method = &Runner::WriteRandom;
    p->fresh_db = p->after_fill = true;
  } else if (name == "fillsync") {
    p->method = &Runner::WriteRandom;
    p->fresh_db = p->after_fill = p->sync = true;
    p->num /= 1000;
  } else if (name == "fill100K") {
    p->method = &Runner::WriteRandom;
    p->fresh_db = p->after_fill = true;
    p->num /= 1000;
    p->value_size = 100 * 1000;
  } else if (name == "overwrite") {
    p->method = &Runner::WriteRandom;
    p->after_fill = true;
  } else if (name == "readrandom" || name == "readrandomsmall") {
    p->method = &Runner::ReadRandom;
    p->count_filter = p->report_found = true;
    if (name == "readrandomsmall") p->reads /= 1000;
  } else if (name == "readmissing") {
    p->method = &Runner::ReadMissing;
    p->count_filter = p->report_found = true;
  } else if (name == "readhot") {
    p->method = &Runner::ReadHot;
    p->report_found = true;
  } else if (name == "readseq") {
    p->method = &Runner::ReadSequential;
  } else if (name == "readreverse") {
    p->method = &Runner::ReadReverse;
  } else if (name == "seekrandom" || name == "seekordered") {
    p->method =
        name == "seekrandom" ? &Runner::SeekRandom : &Runner::SeekOrdered;
    p->report_found = true;
  } else if (name == "deleteseq") {
    p->method = &Runner::DeleteSeq;
  } else if (name == "deleterandom") {
    p->method = &Runner::DeleteRandom;
  } else if (name == "readwhilewriting") {
    p->method = &Runner::ReadWhileWriting;
    p->extra_writer = p->report_found = true;
  } else if (name == "compact") {
    p->method = &Runner::Compact;
    p->single_thread = true;
    p->timed = false;
  } else if (name == "open") {
    p->method = &Runner::OpenBench;
    p->single_thread = true;
    p->timed = false;
    p->num = std::max<int64_t>(p->num / 10000, 1);
  } else if (name == "crc32c" || name == "snappycomp" ||
             name == "snappyuncomp") {
    p->method = name == "crc32c"       ? &Runner::Crc32c
                : name == "snappycomp" ? &Runner::SnappyCompress
                                       : &Runner::SnappyUncompress;
    p->timed = false;
  } else {
    return false;
  }
  return true;
}

// RocksDB's benchmarks that siftdb can run (docs/db_bench.md).
bool Runner::SetUpRocksDBPlan(const std::string& name, Plan* p) {
  if (name == "filluniquerandom") {
    p->method = &Runner::WriteUniqueRandom;
    p->fresh_db = p->after_fill = true;
  } else if (name == "fillseqdeterministic") {
    p->method = &Runner::FillSeqDeterministic;
    p->fresh_db = p->after_fill = true;
    p->single_thread = true;
    p->timed = false;
  } else if (name == "readrandomwriterandom") {
    p->method = &Runner::ReadRandomWriteRandom;
    p->report_mix = true;
  } else if (name == "multireadrandom") {
    p->method = &Runner::MultiReadRandom;
    p->report_found = true;
  } else if (name == "updaterandom") {
    p->method = &Runner::UpdateRandom;
    p->report_mix = true;
  } else if (name == "newiterator") {
    p->method = &Runner::NewIteratorBench;
  } else if (name == "flush") {
    p->method = &Runner::FlushBench;
    p->single_thread = true;
    p->timed = false;
  } else {
    return false;
  }
  return true;
}

absl::StatusOr<BenchResult> Runner::Run(const std::string& name) {
  BenchResult result;
  result.name = name;
  if (auto it = SkippedBenchmarks().find(name);
      it != SkippedBenchmarks().end()) {
    result.skip_reason = it->second;
    return result;
  }
  if (TextBenchmark(name, &result)) return result;
  absl::StatusOr<Plan> plan = PlanFor(name);
  if (!plan.ok()) return plan.status();
  if (plan->fresh_db) {
    if (config_.use_existing_db) {
      result.skip_reason = "--use_existing_db is true";
      return result;
    }
    Close();
    absl::Status s = engine_->Destroy(db_path_);
    if (s.ok()) s = Open();
    if (!s.ok()) return s;
  }

  std::optional<uint64_t> negatives_before;
  if (plan->count_filter)
    negatives_before = engine_->Counter("filter.negatives");
  const double cpu_before = ProcessCpuSeconds();
  absl::Status s = RunThreads(name, *plan, &result);
  result.cpu_micros_per_op =
      (ProcessCpuSeconds() - cpu_before) * 1e6 /
      static_cast<double>(std::max<int64_t>(result.ops, 1));
  if (!s.ok()) {
    return absl::Status(
        s.code(),
        absl::StrFormat("%s on %s: %s", name, engine_->Name(), s.message()));
  }
  if (negatives_before.has_value()) {
    std::optional<uint64_t> after = engine_->Counter("filter.negatives");
    if (after.has_value()) {
      result.message += absl::StrFormat("; filters saved %d block reads",
                                        *after - *negatives_before);
    }
  }
  // Process CPU beside the wall clock: on a shared machine it is the
  // steadier figure (background threads included).
  if (result.ops > 0) {
    result.message +=
        absl::StrFormat("; cpu %.3f micros/op", result.cpu_micros_per_op);
  }
  if (plan->after_fill) result.db_bytes = DirBytes(db_path_);
  return result;
}

bool Runner::TextBenchmark(const std::string& name, BenchResult* result) {
  if (TextBenchmarks().count(name) == 0) return false;
  if (name == "waitforcompaction") {
    WaitForSettledSize(result);
    return true;
  }
  std::optional<std::string> text;
  if (name == "stats") text = engine_->StatsText();
  if (name == "sstables") text = engine_->SSTablesText();
  if (name == "levelstats") text = engine_->LevelStatsText();
  if (name == "memstats") text = engine_->MemStatsText();
  if (!text.has_value()) {
    text = absl::StrFormat("(%s has no %s)", engine_->Name(), name);
  }
  if (name == "levelstats") {
    text = absl::StrFormat("%-12s : per level\n%s", name, *text);
  } else if (name == "memstats") {
    text = absl::StrFormat("%-12s : %s", name, *text);
  }
  result->text = std::move(text);
  return true;
}

// siftdb says when it is idle (no compaction running or due): polled
// every 100 ms until it is, twice in a row. LevelDB and RocksDB builds
// have no such property here, so for them the directory's byte count is
// polled until it has not changed for a whole second, since flushes and
// compactions keep creating and deleting files while they run. Gives up
// after 300 s.
void Runner::WaitForSettledSize(BenchResult* result) {
  constexpr int kPollMillis = 100;
  constexpr int kMaxPolls = 3000;
  const bool by_property = engine_->CompactionIdle().has_value();
  const int stable_polls = by_property ? 2 : 10;
  uint64_t bytes = DirBytes(db_path_);
  int stable = 0, polls = 0;
  while (stable < stable_polls && polls < kMaxPolls) {
    std::this_thread::sleep_for(std::chrono::milliseconds(kPollMillis));
    polls++;
    const uint64_t now = DirBytes(db_path_);
    const bool idle =
        by_property ? engine_->CompactionIdle().value_or(false) : now == bytes;
    stable = idle ? stable + 1 : 0;
    bytes = now;
  }
  result->db_bytes = bytes;
  result->text = absl::StrFormat(
      "%-12s : %s after %.1f s at %.1f MiB (%s)", result->name,
      stable >= stable_polls ? "settled" : "NOT settled",
      polls * kPollMillis / 1000.0, static_cast<double>(bytes) / 1048576.0,
      by_property ? "no compaction pending or running"
                  : "directory unchanged for 1.0 s");
}

absl::Status Runner::RunThreads(const std::string& name, const Plan& plan,
                                BenchResult* result) {
  plan_ = plan;
  readers_done_.store(0);
  const int readers = plan.single_thread ? 1 : config_.threads;
  const int n = readers + (plan.extra_writer ? 1 : 0);
  int64_t expected = 0;
  if (plan.method == &Runner::WriteSeq || plan.method == &Runner::WriteRandom ||
      plan.method == &Runner::DeleteSeq ||
      plan.method == &Runner::DeleteRandom) {
    expected = plan.num * readers;
  } else if (!plan.single_thread) {
    expected = plan.reads * readers;
  }
  ProgressMeter progress(config_.engines.size() > 1
                             ? absl::StrFormat("%s %s", engine_->Name(), name)
                             : name,
                         expected);

  std::vector<std::unique_ptr<ThreadState>> states;
  for (int i = 0; i < n; i++) {
    states.push_back(std::make_unique<ThreadState>(
        i, config_.seed + threads_created_++, config_,
        i < readers ? &progress : nullptr));
  }
  // All threads start their clocks together, once every one is ready.
  absl::BlockingCounter ready(n);
  absl::Notification go;
  std::vector<std::thread> threads;
  for (int i = 0; i < n; i++) {
    ThreadState* t = states[i].get();
    threads.emplace_back([this, t, &ready, &go, method = plan.method] {
      ready.DecrementCount();
      go.WaitForNotification();
      t->stats.Start();
      (this->*method)(t);
      t->stats.Stop();
    });
  }
  ready.Wait();
  deadline_.reset();
  if (config_.duration > 0 && plan.timed) {
    deadline_ = Clock::now() + std::chrono::seconds(config_.duration);
  }
  if (config_.write_rate_limit > 0) {
    write_limiter_ =
        std::make_unique<WriteRateLimiter>(config_.write_rate_limit);
  }
  go.Notify();
  for (std::thread& th : threads) th.join();
  write_limiter_.reset();

  for (const auto& t : states) {
    if (!t->status.ok()) return t->status;
  }
  // The readers' stats only: readwhilewriting's writer is background load.
  Stats merged(config_.histogram, nullptr);
  int64_t found = 0, attempted = 0, writes = 0;
  for (int i = 0; i < n; i++) {
    if (i < readers) {
      merged.Merge(states[i]->stats);
      found += states[i]->found;
      attempted += states[i]->attempted;
    }
    writes += states[i]->writes;
  }
  *result = ResultFromStats(name, merged, config_.histogram);
  if (plan.report_mix) {
    // RocksDB's wording for readrandomwriterandom and updaterandom.
    result->message = absl::StrFormat("( reads:%d writes:%d total:%d found:%d)",
                                      attempted, writes, merged.ops(), found);
  } else if (plan.report_found) {
    result->message = absl::StrFormat("(%d of %d found)", found, attempted);
  }
  if (plan.extra_writer) {
    result->message += absl::StrFormat("; %d writes meanwhile", writes);
  }
  if (!states[0]->message.empty()) {
    if (!result->message.empty()) result->message += " ";
    result->message += states[0]->message;
  }
  return absl::OkStatus();
}

}  // namespace siftdb::bench
