// Copyright (c) siftdb authors.
//
// db_stress: writes, deletes, batches, flushes and compacts from several
// threads while recording what the DB acknowledged, then checks that the DB
// still agrees after a crash.
//
//   db_stress --db=DIR --mode=run [--duration_ms=N]     work until killed
//   db_stress --db=DIR --mode=verify                    check after a crash
//   db_stress --db=DIR --mode=powerloss --cycles=N      in-process power
//        losses through FaultInjectionEnv (unsynced bytes dropped)
//
// --subcompactions=N runs compactions split over N threads.
//
// With --remote_filter=HOST:PORT (run and verify modes) the DB mirrors its
// filters into that Redis in sync mode, and verify also checks that the
// mirror says "maybe" for every key the recovered DB holds
// (remote_check.h).
//
// The expected state lives in DIR.expected (see expected_state.h). Exit
// status: 0 when everything agreed, 1 on a violation, 2 on bad usage.

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <thread>

#include "absl/strings/str_format.h"
#include "siftdb/db.h"
#include "tools/common/args.h"
#include "tools/db_stress/expected_state.h"
#include "tools/db_stress/powerloss.h"
#include "tools/db_stress/remote_check.h"
#include "tools/db_stress/stress.h"

namespace siftdb::stress {
namespace {

Options StressOptions(const tools::ArgParser& args) {
  Options options;
  options.create_if_missing = true;
  // Small buffers and tables: a short run flushes and compacts often.
  options.write_buffer_size = 64 << 10;
  options.max_file_size = 64 << 10;
  options.max_bytes_for_level_base = 256 << 10;
  options.paranoid_checks = args.GetBool("paranoid_checks");
  // Validated by DB::Open (InvalidArgument outside [1, 64]).
  auto subcompactions = args.GetUint64("subcompactions", 1);
  options.max_subcompactions = subcompactions.ok()
                                   ? static_cast<int>(std::min<uint64_t>(
                                         *subcompactions, uint64_t{1} << 20))
                                   : 0;
  if (args.Has("remote_filter")) {
    options.remote_filter.mode = RemoteFilterOptions::Mode::kSync;
    options.remote_filter.endpoints = {args.GetString("remote_filter")};
    options.remote_filter.name = kMirrorName;
  }
  return options;
}

int Fail(const absl::Status& s) {
  absl::FPrintF(stderr, "db_stress: %s\n", s.ToString());
  return 1;
}

int Main(int argc, char** argv) {
  tools::ArgParser args("db_stress",
                        "db_stress --db=DIR --mode=run|verify|powerloss");
  args.AddFlag("db", "DIR", "database directory (required)");
  args.AddFlag("mode", "MODE", "run, verify or powerloss");
  args.AddFlag("threads", "N", "writer threads (default 4)");
  args.AddFlag("keys", "N", "key space (default 10000)");
  args.AddFlag("sync_fraction", "F", "fraction of synced writes (0.05)");
  args.AddFlag("seed", "N", "random seed (default 1)");
  args.AddFlag("duration_ms", "N", "run mode: stop after N ms (0: never)");
  args.AddFlag("cycles", "N", "powerloss mode: crash cycles (default 10)");
  args.AddBoolFlag("paranoid_checks", "open with paranoid_checks");
  args.AddFlag("subcompactions", "N",
               "Options::max_subcompactions, threads per compaction (1)");
  args.AddFlag("remote_filter", "HOST:PORT",
               "mirror filters to this Redis (sync) and check the mirror");
  args.AddFlag("trust_wait_ms", "N",
               "verify: wait this long for the mirror to be trusted (5000)");
  absl::Status s = args.Parse(argc, argv);
  if (!s.ok() || !args.Has("db") || !args.Has("mode")) {
    absl::FPrintF(stderr, "%s\n%s",
                  s.ok() ? "--db and --mode are required" : s.ToString(),
                  args.Usage());
    return 2;
  }
  StressConfig config;
  auto threads = args.GetUint64("threads", 4);
  auto keys = args.GetUint64("keys", 10000);
  auto sync = args.GetDouble("sync_fraction", 0.05);
  auto seed = args.GetUint64("seed", 1);
  auto duration = args.GetUint64("duration_ms", 0);
  auto cycles = args.GetUint64("cycles", 10);
  auto trust_wait = args.GetUint64("trust_wait_ms", 5000);
  for (const absl::Status& st :
       {threads.status(), keys.status(), sync.status(), seed.status(),
        duration.status(), cycles.status(), trust_wait.status()}) {
    if (!st.ok()) {
      absl::FPrintF(stderr, "%s\n%s", st.ToString(), args.Usage());
      return 2;
    }
  }
  config.threads = static_cast<int>(*threads);
  config.num_keys = static_cast<uint32_t>(*keys);
  config.sync_fraction = *sync;
  config.seed = *seed;
  if (config.threads < 1 || config.num_keys < 1) {
    absl::FPrintF(stderr, "--threads and --keys must be >= 1\n");
    return 2;
  }
  const std::string db_path = args.GetString("db");
  const std::string mode = args.GetString("mode");
  // The DB and its expected-state file sit side by side: create the
  // directory holding them, as `mkdir -p` would, so --db=/new/dir/db works.
  const std::filesystem::path parent =
      std::filesystem::path(db_path).parent_path();
  if (!parent.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(parent, ec);
    if (ec) {
      return Fail(absl::FailedPreconditionError(
          absl::StrFormat("--db=%s: cannot create directory %s: %s", db_path,
                          parent.string(), ec.message())));
    }
  }
  Options options = StressOptions(args);

  const bool remote = args.Has("remote_filter");
  if (mode == "powerloss") {
    if (remote) {
      absl::FPrintF(stderr, "--remote_filter works with --mode=run|verify\n");
      return 2;
    }
    auto report = RunPowerLossCycles(db_path, options, config, *cycles);
    if (!report.ok()) return Fail(report.status());
    absl::PrintF("powerloss: %s\n", *report);
    return 0;
  }

  auto state = ExpectedState::Open(db_path + ".expected", config.num_keys);
  if (!state.ok()) return Fail(state.status());
  auto db = DB::Open(options, db_path);
  if (!db.ok()) return Fail(db.status());

  if (mode == "verify") {
    auto result = Verify(db->get(), state->get());
    if (!result.ok()) return Fail(result.status());
    absl::PrintF(
        "verify: ok, %d keys present, in-flight writes: %d applied, %d not\n",
        result->keys_present, result->keys_in_flight_applied,
        result->keys_in_flight_lost);
    if (remote) {
      auto check =
          CheckRemoteFilter(db->get(), args.GetString("remote_filter"),
                            config.num_keys, static_cast<int>(*trust_wait));
      if (!check.ok()) return Fail(check.status());
      absl::PrintF(
          "verify: remote filter ok, %d present keys all maybe; trusted at "
          "open: %s, later: %s; %d of %d absent keys excluded\n",
          check->present_keys, check->trusted_at_open ? "yes" : "no",
          check->trusted_later ? "yes" : "no", check->absent_said_no,
          check->absent_probed);
    }
    return 0;
  }
  if (mode != "run") {
    absl::FPrintF(stderr, "unknown --mode=%s\n%s", mode, args.Usage());
    return 2;
  }
  std::atomic<bool> stop{false};
  std::thread timer;
  if (*duration > 0) {
    timer = std::thread([&] {
      const auto end = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(*duration);
      while (!stop.load() && std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      stop.store(true);
    });
  }
  s = RunWorkload(db->get(), state->get(), config, &stop,
                  /*tolerate_write_errors=*/false);
  stop.store(true);
  if (timer.joinable()) timer.join();
  if (!s.ok()) return Fail(s);
  absl::PrintF("run: ok\n");
  return 0;
}

}  // namespace
}  // namespace siftdb::stress

int main(int argc, char** argv) { return siftdb::stress::Main(argc, argv); }
