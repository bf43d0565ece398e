// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// db_bench: siftdb's macro benchmark, with LevelDB's db_bench names, flags
// and output so LevelDB's scripts run unchanged (docs/db_bench.md).
//
//   db_bench [--benchmarks=fillseq,readrandom,...] [--num=N] [--threads=N]
//            [--engines=siftdb,leveldb,rocksdb] ...
//
// Exit status: 0 when every benchmark ran, 1 on bad flags or any engine
// error (printed on stderr, naming the benchmark and engine).

#include <chrono>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "bench/db_bench/engine.h"
#include "bench/db_bench/flags.h"
#include "bench/db_bench/report.h"
#include "bench/db_bench/runner.h"
#include "bench/db_bench/stats.h"

namespace siftdb::bench {
namespace {

int Fail(const absl::Status& s) {
  absl::FPrintF(stderr, "db_bench: %s\n", s.message());
  return 1;
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
      }
    }
    std::fflush(stdout);
    out->results.push_back(*std::move(r));
  }
  runner.Close();
  out->wall_seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  out->cpu_seconds = ProcessCpuSeconds() - cpu_start;
  return absl::OkStatus();
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "siftdb's benchmark, LevelDB db_bench compatible. Example:\n"
      "  db_bench --benchmarks=fillrandom,readrandom --num=100000");
  std::vector<char*> rest = absl::ParseCommandLine(argc, argv);
  if (rest.size() > 1) {
    return Fail(absl::InvalidArgumentError(absl::StrFormat(
        "unexpected argument '%s' (flags are --name=value)", rest[1])));
  }
  absl::StatusOr<BenchConfig> config = ConfigFromFlags();
  if (!config.ok()) return Fail(config.status());
  if (absl::Status s = CheckBenchmarkNames(config->benchmarks); !s.ok()) {
    return Fail(s);
  }
  std::vector<std::unique_ptr<BenchEngine>> engines;
  std::vector<std::string> descriptions;
  for (const std::string& name : config->engines) {
    absl::StatusOr<std::unique_ptr<BenchEngine>> e = NewEngine(name);
    if (!e.ok()) return Fail(e.status());
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
