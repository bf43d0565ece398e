// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// db_stress: writes, deletes, batches, flushes and compacts from several
// threads while recording what the DB acknowledged, then checks that the DB
// still agrees after a crash.
//
//   db_stress --db=DIR --mode=run [--duration_ms=N]     work until killed
//   db_stress --db=DIR --mode=verify                    check after a crash
//   db_stress --db=DIR --mode=powerloss --cycles=N      in-process power
//        losses through FaultInjectionEnv (unsynced bytes dropped)
//   db_stress --db=DIR --mode=repair_compare --repair_db=COPY
//        RepairDB on COPY (a copy of DIR's crash image), then DIR reopened
//        and COPY compared on every key (repair_compare.h)
//
// --subcompactions=N runs compactions split over N threads;
// --dynamic_levels sets Options::level_compaction_dynamic_level_bytes.
//
// With --remote_filter=HOST:PORT (run and verify modes) the DB mirrors its
// filters into that Redis in sync mode, and verify also checks that the
// mirror says "maybe" for every key the recovered DB holds
// (remote_check.h).
//
// The expected state lives in DIR.expected (see expected_state.h). Exit
// status: 0 when everything agreed, 1 on a violation, 2 on bad usage
// (tools/common/flags.h: --help, --version, unknown flags, bad numbers).

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <system_error>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "siftdb/db.h"
#include "tools/common/flags.h"
#include "tools/db_stress/expected_state.h"
#include "tools/db_stress/powerloss.h"
#include "tools/db_stress/repair_compare.h"
#if SIFTDB_WITH_REDIS
#include "tools/db_stress/remote_check.h"
#endif
#include "tools/db_stress/stress.h"

ABSL_FLAG(std::string, db, "", "Database directory (required)");
ABSL_FLAG(std::string, mode, "",
          "run, verify, powerloss, repair_compare or remote_probe (required)");
ABSL_FLAG(std::string, repair_db, "",
          "repair_compare mode: the copy of --db's crash image to repair and "
          "compare with --db reopened");
ABSL_FLAG(uint32_t, threads, 4, "Writer threads");
ABSL_FLAG(uint32_t, keys, 10000, "Key space");
ABSL_FLAG(double, sync_fraction, 0.05, "Fraction of synced writes");
ABSL_FLAG(uint64_t, seed, 1, "Random seed");
ABSL_FLAG(uint64_t, duration_ms, 0, "run mode: stop after N ms (0: never)");
ABSL_FLAG(uint64_t, cycles, 10, "powerloss mode: crash cycles");
ABSL_FLAG(bool, paranoid_checks, false, "Open with paranoid_checks");
ABSL_FLAG(uint32_t, subcompactions, 1,
          "Options::max_subcompactions, threads per compaction (1..64)");
ABSL_FLAG(bool, dynamic_levels, false,
          "Options::level_compaction_dynamic_level_bytes");
#if SIFTDB_WITH_REDIS
ABSL_FLAG(std::string, remote_filter, "",
          "Mirror filters to this Redis HOST:PORT (sync) and check the mirror");
ABSL_FLAG(uint32_t, trust_wait_ms, 5000,
          "verify: wait this long for the mirror to be trusted");
#endif

namespace siftdb::stress {
namespace {

Options StressOptions() {
  Options options;
  options.create_if_missing = true;
  // Small buffers and tables: a short run flushes and compacts often.
  options.write_buffer_size = 64 << 10;
  options.target_file_size_base = 64 << 10;
  options.max_bytes_for_level_base = 256 << 10;
  options.paranoid_checks = absl::GetFlag(FLAGS_paranoid_checks);
  // Validated by DB::Open (InvalidArgument outside [1, 64]).
  options.max_subcompactions = static_cast<int>(
      std::min<uint32_t>(absl::GetFlag(FLAGS_subcompactions), 1u << 20));
  options.level_compaction_dynamic_level_bytes =
      absl::GetFlag(FLAGS_dynamic_levels);
#if SIFTDB_WITH_REDIS
  if (!absl::GetFlag(FLAGS_remote_filter).empty()) {
    options.remote_filter.mode = RemoteFilterOptions::Mode::kSync;
    options.remote_filter.endpoints = {absl::GetFlag(FLAGS_remote_filter)};
    options.remote_filter.name = kMirrorName;
  }
#endif
  return options;
}

int Fail(const absl::Status& s) {
  absl::FPrintF(stderr, "db_stress: %s\n", s.ToString());
  return 1;
}

// The numeric flags of a parsed command line.
struct StressFlags {
  StressConfig config;
  uint64_t duration_ms = 0;    // run mode: stop after this long (0: never)
  uint64_t cycles = 0;         // powerloss mode: crash cycles
  uint64_t trust_wait_ms = 0;  // verify: wait for the mirror to be trusted
};

// Reads the numeric flags into *flags. On an out-of-range value prints the
// problem to stderr and returns false (the caller exits with 2).
bool ParseStressFlags(StressFlags* flags) {
  StressConfig& config = flags->config;
  config.threads = static_cast<int>(
      std::min<uint32_t>(absl::GetFlag(FLAGS_threads), 1u << 16));
  config.num_keys = absl::GetFlag(FLAGS_keys);
  config.sync_fraction = absl::GetFlag(FLAGS_sync_fraction);
  config.seed = absl::GetFlag(FLAGS_seed);
  if (config.threads < 1 || config.num_keys < 1) {
    tools::UsageError("db_stress", "--threads and --keys must be >= 1");
    return false;
  }
  if (!(config.sync_fraction >= 0 && config.sync_fraction <= 1)) {
    tools::UsageError("db_stress", "--sync_fraction must be in [0, 1]");
    return false;
  }
  flags->duration_ms = absl::GetFlag(FLAGS_duration_ms);
  flags->cycles = absl::GetFlag(FLAGS_cycles);
#if SIFTDB_WITH_REDIS
  flags->trust_wait_ms = absl::GetFlag(FLAGS_trust_wait_ms);
#endif
  return true;
}

// The DB and its expected-state file sit side by side: creates the
// directory holding them, as `mkdir -p` would, so --db=/new/dir/db works.
absl::Status CreateDbParentDirectory(const std::string& db_path) {
  const std::filesystem::path parent =
      std::filesystem::path(db_path).parent_path();
  if (parent.empty()) return absl::OkStatus();
  std::error_code ec;
  std::filesystem::create_directories(parent, ec);
  if (ec) {
    return absl::FailedPreconditionError(
        absl::StrFormat("--db=%s: cannot create directory %s: %s", db_path,
                        parent.string(), ec.message()));
  }
  return absl::OkStatus();
}

// --mode=powerloss: in-process power-loss cycles. Returns the exit status.
int RunPowerLossMode(const tools::ToolArgs& args, const std::string& db_path,
                     const Options& options, const StressFlags& flags) {
  if (args.WasSet("remote_filter")) {
    return tools::UsageError("db_stress",
                             "--remote_filter works with --mode=run|verify");
  }
  auto report =
      RunPowerLossCycles(db_path, options, flags.config, flags.cycles);
  if (!report.ok()) return Fail(report.status());
  absl::PrintF("powerloss: %s\n", *report);
  return 0;
}

// --mode=repair_compare: repairs --repair_db and compares it with --db
// reopened. Returns the exit status.
int RunRepairCompareMode(const std::string& db_path, Options options,
                         const StressFlags& flags) {
  const std::string repair_path = absl::GetFlag(FLAGS_repair_db);
  if (repair_path.empty()) {
    return tools::UsageError("db_stress",
                             "--mode=repair_compare needs --repair_db");
  }
  // Neither copy publishes to the mirror: the repaired one is not the DB
  // the mirror describes, and the reopen only reads.
  options.remote_filter = RemoteFilterOptions();
  RepairCompareResult result;
  absl::Status s = RepairAndCompare(db_path, repair_path, options,
                                    flags.config.num_keys, &result);
  // What repair decided (obsolete tables set aside, logs not replayed,
  // damage skipped), to read next to a failure.
  for (const std::string& line : result.repair_log) {
    absl::PrintF("repair_compare: RepairDB: %s\n", line);
  }
  absl::PrintF(
      "repair_compare: the crash image had %d non-empty logs and %d tables\n",
      result.logs_in_image, result.tables_in_image);
  if (!s.ok()) {
    absl::FPrintF(stderr, "db_stress: %s (reopened %s, repaired %s)\n",
                  s.ToString(), db_path, repair_path);
    return 1;
  }
  absl::PrintF(
      "repair_compare: ok, repair agrees with reopen: %d keys scanned, %d "
      "point reads\n",
      result.keys_scanned, result.keys_got);
  return 0;
}

#if SIFTDB_WITH_REDIS
// Checks that the mirror at `endpoint` says "maybe" for every key `db`
// holds, and prints what it found.
absl::Status VerifyRemoteFilter(DB* db, const std::string& endpoint,
                                const StressFlags& flags) {
  auto check = CheckRemoteFilter(db, endpoint, flags.config.num_keys,
                                 static_cast<int>(flags.trust_wait_ms));
  if (!check.ok()) return check.status();
  absl::PrintF(
      "verify: remote filter ok, %d present keys all maybe; trusted at "
      "open: %s, later: %s; %d of %d absent keys excluded\n",
      check->present_keys, check->trusted_at_open ? "yes" : "no",
      check->trusted_later ? "yes" : "no", check->absent_said_no,
      check->absent_probed);
  return absl::OkStatus();
}
#endif

// --mode=verify: checks `db` against the expected state (and the mirror
// with --remote_filter). Returns the exit status.
int RunVerifyMode(DB* db, ExpectedState* state, const StressFlags& flags) {
#if SIFTDB_WITH_REDIS
  const std::string remote_filter = absl::GetFlag(FLAGS_remote_filter);
  if (!remote_filter.empty()) {
    // Before Verify, which settles the writes in flight at the kill into
    // the expected state: the check must see what was acknowledged then.
    uint64_t listed = 0;
    absl::Status s = CheckKeysAnsweredNo(
        db, *state, absl::GetFlag(FLAGS_db) + ".remote_no", &listed);
    if (!s.ok()) return Fail(s);
    if (listed > 0) {
      absl::PrintF(
          "verify: %d keys the mirror excluded before the reopen: none "
          "acknowledged and held\n",
          listed);
    }
  }
#endif
  auto result = Verify(db, state);
  if (!result.ok()) return Fail(result.status());
  absl::PrintF(
      "verify: ok, %d keys present, in-flight writes: %d applied, %d not\n",
      result->keys_present, result->keys_in_flight_applied,
      result->keys_in_flight_lost);
#if SIFTDB_WITH_REDIS
  if (!remote_filter.empty()) {
    absl::Status s = VerifyRemoteFilter(db, remote_filter, flags);
    if (!s.ok()) return Fail(s);
  }
#else
  (void)flags;
#endif
  return 0;
}

// --mode=run: runs the workload until killed, or for flags.duration_ms
// when that is > 0. Returns the exit status.
int RunWorkloadMode(DB* db, ExpectedState* state, const StressFlags& flags) {
  std::atomic<bool> stop{false};
  std::thread timer;
  if (flags.duration_ms > 0) {
    timer = std::thread([&] {
      const auto end = std::chrono::steady_clock::now() +
                       std::chrono::milliseconds(flags.duration_ms);
      while (!stop.load() && std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      stop.store(true);
    });
  }
  absl::Status s = RunWorkload(db, state, flags.config, &stop,
                               /*tolerate_write_errors=*/false);
  stop.store(true);
  if (timer.joinable()) timer.join();
  if (!s.ok()) return Fail(s);
  absl::PrintF("run: ok\n");
  return 0;
}

int Main(int argc, char** argv) {
  tools::ToolFlagsSpec spec;
  spec.program = "db_stress";
  spec.usage =
      "usage: db_stress --db=DIR "
      "--mode=run|verify|powerloss|repair_compare|remote_probe [flags]\n"
      "Exit status: 0 everything agreed, 1 a violation, 2 bad command line.\n";
  spec.flag_sources = {"tools/db_stress/"};
  spec.takes_positional = false;
  int exit_code = 0;
  std::optional<tools::ToolArgs> args =
      tools::ParseToolFlags(spec, argc, argv, &exit_code);
  if (!args.has_value()) return exit_code;
  const std::string db_path = absl::GetFlag(FLAGS_db);
  const std::string mode = absl::GetFlag(FLAGS_mode);
  if (db_path.empty() || mode.empty()) {
    return tools::UsageError("db_stress", "--db and --mode are required");
  }
  if (mode != "run" && mode != "verify" && mode != "powerloss" &&
      mode != "repair_compare" && mode != "remote_probe") {
    return tools::UsageError("db_stress", "unknown --mode=" + mode);
  }
  StressFlags flags;
  if (!ParseStressFlags(&flags)) return tools::kExitUsage;
  absl::Status s = CreateDbParentDirectory(db_path);
  if (!s.ok()) return Fail(s);
  Options options = StressOptions();

  if (mode == "powerloss") {
    return RunPowerLossMode(*args, db_path, options, flags);
  }
  if (mode == "repair_compare") {
    return RunRepairCompareMode(db_path, options, flags);
  }
#if SIFTDB_WITH_REDIS
  if (mode == "remote_probe") {
    // Before the reopen: what a reader hears from the mirror now.
    if (absl::GetFlag(FLAGS_remote_filter).empty()) {
      return tools::UsageError("db_stress",
                               "--mode=remote_probe needs --remote_filter");
    }
    bool trusted = false;
    auto no = ProbeBeforeReopen(absl::GetFlag(FLAGS_remote_filter),
                                flags.config.num_keys, db_path + ".remote_no",
                                &trusted);
    if (!no.ok()) return Fail(no.status());
    absl::PrintF("remote_probe: %d of %d keys answered no (trusted: %s)\n", *no,
                 flags.config.num_keys, trusted ? "yes" : "no");
    return 0;
  }
#endif

  auto state =
      ExpectedState::Open(db_path + ".expected", flags.config.num_keys);
  if (!state.ok()) return Fail(state.status());
  auto db = DB::Open(options, db_path);
  if (!db.ok()) return Fail(db.status());

  if (mode == "verify") {
    return RunVerifyMode(db->get(), state->get(), flags);
  }
  if (mode != "run") {
    return tools::UsageError("db_stress", "unknown --mode=" + mode);
  }
  return RunWorkloadMode(db->get(), state->get(), flags);
}

}  // namespace
}  // namespace siftdb::stress

int main(int argc, char** argv) { return siftdb::stress::Main(argc, argv); }
