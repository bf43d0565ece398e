// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// db_bench: siftdb's macro benchmark, with LevelDB's db_bench names, flags
// and output so LevelDB's scripts run unchanged (docs/db_bench.md).
//
//   db_bench [--benchmarks=fillseq,readrandom,...] [--num=N] [--threads=N]
//            [--engines=siftdb,leveldb,rocksdb] ...
//
// The command line goes through the tools' front end (tools/common/flags.h):
// --help and --version exit 0; an unknown or refused flag or benchmark, or a
// bad value, exits 2 with one line on stderr; an engine error exits 1
// (printed on stderr, naming the benchmark and engine).

#include <chrono>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "bench/db_bench/engine.h"
#include "bench/db_bench/flags.h"
#include "bench/db_bench/report.h"
#include "bench/db_bench/runner.h"
#include "bench/db_bench/stats.h"
#include "tools/common/flags.h"
#include "util/absl_compat.h"

namespace siftdb::bench {
namespace {

int Fail(const absl::Status& s) {
  absl::FPrintF(stderr, "db_bench: %s\n", s.message());
  return tools::kExitFailure;
}

int Usage(const absl::Status& s) {
  return tools::UsageError("db_bench", AsStd(s.message()));
}

// After each benchmark with --comparisons, as LevelDB prints it.
void PrintComparisons(BenchEngine* engine) {
  std::optional<uint64_t> n = engine->TakeComparisons();
  if (n.has_value()) {
    absl::PrintF("Comparisons: %d\n", *n);
  } else {
    absl::PrintF("Comparisons: (%s does not count them)\n", engine->Name());
  }
}

// Runs every benchmark of the config on one engine, printing as it goes.
absl::Status RunEngine(const BenchConfig& config, BenchEngine* engine,
                       EngineResults* out) {
  out->engine = std::string(engine->Name());
  const std::string path = EngineDbPath(config, out->engine);
  out->load_before = LoadAverage();
  if (config.engines.size() > 1) {
    absl::PrintF("=== %s: %s (db %s, load %.2f)\n", engine->Name(),
                 engine->Description(), path, out->load_before);
  }
  const bool rss_reset = ResetPeakResidentBytes();
  const auto start = std::chrono::steady_clock::now();
  const double cpu_start = ProcessCpuSeconds();
  Runner runner(config, engine, path);
  absl::Status s = runner.Open();
  if (!s.ok()) return s;
  for (const std::string& name : config.benchmarks) {
    absl::StatusOr<BenchResult> r = runner.Run(name);
    if (!r.ok()) return r.status();
    if (r->text.has_value()) {
      absl::PrintF("%s\n", *r->text);
    } else {
      absl::PrintF("%s\n", FormatResultLine(*r));
      if (r->histogram.has_value()) {
        absl::PrintF("%s\n", FormatHistogram(*r->histogram));
        absl::PrintF("Operations of %.0f ms or more: %d, %.2f s in all\n",
                     Stats::kSlowOpMicros / 1000, r->slow_ops, r->slow_seconds);
      }
    }
    if (config.comparisons && !r->text.has_value() &&
        !r->skip_reason.has_value()) {
      PrintComparisons(engine);
    }
    std::fflush(stdout);
    out->results.push_back(*std::move(r));
  }
  if (config.statistics) {
    std::optional<std::string> text = engine->StatsText();
    absl::PrintF("STATISTICS:\n%s\n",
                 text.has_value() ? *text : "(the engine keeps none)");
  }
  runner.Close();
  out->wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  out->cpu_seconds = ProcessCpuSeconds() - cpu_start;
  // Without the reset the peak may be an earlier engine's.
  if (rss_reset || config.engines.size() == 1) {
    out->peak_rss_bytes = PeakResidentBytes();
  }
  if (out->peak_rss_bytes >= 0) {
    absl::PrintF("peak RSS     : %.1f MiB (%s's run)\n",
                 static_cast<double>(out->peak_rss_bytes) / 1048576.0,
                 out->engine);
  }
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  int exit_code = tools::kExitOk;
  std::optional<tools::ToolArgs> args = tools::ParseToolFlags(
      DbBenchFlagsSpec(argc, argv), argc, argv, &exit_code);
  if (!args.has_value()) return exit_code;
  absl::StatusOr<BenchConfig> config = ConfigFromFlags(*args);
  if (!config.ok()) return Usage(config.status());
  if (absl::Status s = CheckBenchmarkNames(config->benchmarks); !s.ok()) {
    return Usage(s);
  }
  for (const std::string& note : config->notes) {
    absl::FPrintF(stderr, "db_bench: note: %s\n", note);
  }
  std::vector<std::unique_ptr<BenchEngine>> engines;
  std::vector<std::string> descriptions;
  for (const std::string& name : config->engines) {
    absl::StatusOr<std::unique_ptr<BenchEngine>> e = NewEngine(name);
    if (!e.ok()) return Usage(e.status());
    descriptions.push_back((*e)->Description());
    engines.push_back(*std::move(e));
  }
  absl::PrintF("%s", FormatHeader(*config, descriptions));
  std::fflush(stdout);

  std::vector<EngineResults> all;
  for (const auto& engine : engines) {
    all.emplace_back();
    absl::Status s = RunEngine(*config, engine.get(), &all.back());
    if (!s.ok()) return Fail(s);
  }
  if (all.size() > 1) absl::PrintF("%s", FormatComparison(all));
  return 0;
}

}  // namespace
}  // namespace siftdb::bench

int main(int argc, char** argv) { return siftdb::bench::Main(argc, argv); }
