// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// db_crashtest: kills db_stress with SIGKILL at random moments and checks
// the DB after each kill.
//
//   db_crashtest --db=DIR [--cycles=N] [--min_ms=100 --max_ms=1500]
//                [--seed=N] [--bin_dir=DIR] [--keep] [--remote_filter=H:P]
//                [--redis_faults [--redis_server=PATH]] [--repair_every=N]
//
// A cycle: start `db_stress --mode=run` with a fresh seed, SIGKILL it after
// a random delay, then run `db_stress --mode=verify` (every acknowledged
// write present, nothing never written, iteration == point reads) and
// `ldb --db=DIR checkconsistency`. Prints one line per cycle and a summary.
//
// --repair_every=N (0: never): on every Nth cycle the crash image is also
// copied, right after the kill, to DIR.image (every file); after the verify
// `db_stress --mode=repair_compare` runs RepairDB on a copy of it
// (DIR.repair) and compares that with DIR reopened: a full scan of both
// must be identical and point reads of every key of the key space must
// agree. The cycle fails naming the first differing key, leaving DIR,
// DIR.repair and DIR.image; `ldb checkconsistency` then checks the
// repaired copy. The compare runs after the verify so that the verify's
// reopen is the first, as without the flag; the verify only reads, so DIR
// then holds exactly what reopening the crash image recovered.
//
// --redis_faults: db_crashtest starts its own redis-server (DIR.redis/) as
// the mirror's Redis, and every cycle injects one Redis fault drawn at
// random while db_stress runs (restart from an older snapshot, restart
// empty, FLUSHALL, the lease deleted, clients paused, Redis dying with the
// engine; see redis_faults.h); the summary counts them by kind.
// Exit status: 0 when every cycle passed, 1 at the first failure (the DB is
// left in place for inspection), 2 on bad usage (tools/common/flags.h).

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "tools/common/flags.h"
#include "util/random.h"
#if SIFTDB_WITH_REDIS
#include "tools/db_crashtest/redis_faults.h"
#include "tools/db_stress/remote_check.h"
#endif

ABSL_FLAG(std::string, db, "", "Database directory (required; wiped first)");
ABSL_FLAG(uint64_t, cycles, 20, "Kill/verify cycles");
ABSL_FLAG(uint64_t, min_ms, 100, "Shortest run before the kill");
ABSL_FLAG(uint64_t, max_ms, 1500, "Longest run before the kill");
ABSL_FLAG(uint64_t, seed, 0, "Random seed (default: from the clock)");
ABSL_FLAG(std::string, bin_dir, "",
          "Directory holding db_stress and ldb (default: this program's)");
ABSL_FLAG(uint32_t, threads, 4, "db_stress threads");
ABSL_FLAG(uint32_t, keys, 10000, "db_stress key space");
ABSL_FLAG(bool, keep, false, "Keep the DB after a successful run");
ABSL_FLAG(uint32_t, subcompactions, 1,
          "db_stress threads per compaction (unset: 1, 2 or 4 drawn per "
          "cycle)");
ABSL_FLAG(uint64_t, repair_every, 0,
          "Every Nth cycle also repairs a copy of the crash image (DIR.image, "
          "repaired in DIR.repair) and compares it with DIR reopened, key by "
          "key (0: never)");
#if SIFTDB_WITH_REDIS
ABSL_FLAG(std::string, remote_filter, "",
          "db_stress mirrors its filters to this Redis HOST:PORT and verify "
          "checks the mirror");
ABSL_FLAG(bool, redis_faults, false,
          "Run an own redis-server as the mirror's Redis and inject one Redis "
          "fault per cycle");
ABSL_FLAG(std::string, redis_server, "/usr/bin/redis-server",
          "redis-server binary for --redis_faults");
#endif

namespace siftdb {
namespace {

// Starts argv[0] with argv; returns its pid or -1.
pid_t Spawn(const std::vector<std::string>& argv, bool quiet) {
  const pid_t pid = fork();
  if (pid == 0) {
    if (quiet) {
      freopen("/dev/null", "w", stdout);
    }
    std::vector<char*> cargv;
    for (const std::string& a : argv)
      cargv.push_back(const_cast<char*>(a.c_str()));
    cargv.push_back(nullptr);
    execv(cargv[0], cargv.data());
    _exit(127);
  }
  return pid;
}

// Runs argv to completion; its exit status, or -1.
int Run(const std::vector<std::string>& argv, bool quiet) {
  const pid_t pid = Spawn(argv, quiet);
  if (pid < 0) return -1;
  int status = 0;
  if (waitpid(pid, &status, 0) != pid) return -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string SelfDir() {
  std::error_code ec;
  auto self = std::filesystem::read_symlink("/proc/self/exe", ec);
  return ec ? "." : self.parent_path().string();
}

// The numeric flags of a parsed command line.
struct CrashTestFlags {
  uint64_t cycles = 0;
  uint64_t min_ms = 0;  // shortest run before the kill
  uint64_t max_ms = 0;  // longest run before the kill
  uint64_t seed = 0;
  uint64_t threads = 0;       // passed on to db_stress
  uint64_t keys = 0;          // passed on to db_stress
  uint64_t repair_every = 0;  // 0: no repair cycles
};

// Reads the numeric flags into *flags. On inconsistent values prints the
// problem to stderr and returns false (the caller exits with 2).
bool ParseCrashTestFlags(const tools::ToolArgs& args, CrashTestFlags* flags) {
  flags->cycles = absl::GetFlag(FLAGS_cycles);
  flags->min_ms = absl::GetFlag(FLAGS_min_ms);
  flags->max_ms = absl::GetFlag(FLAGS_max_ms);
  flags->seed =
      args.WasSet("seed")
          ? absl::GetFlag(FLAGS_seed)
          : static_cast<uint64_t>(
                std::chrono::system_clock::now().time_since_epoch().count());
  flags->threads = absl::GetFlag(FLAGS_threads);
  flags->keys = absl::GetFlag(FLAGS_keys);
  flags->repair_every = absl::GetFlag(FLAGS_repair_every);
  if (flags->max_ms < flags->min_ms) {
    tools::UsageError("db_crashtest", "--max_ms must be >= --min_ms");
    return false;
  }
  // The delay is drawn with Random::Uniform (32 bits).
  constexpr uint64_t kMaxDelayMs = 86'400'000;  // a day
  if (flags->max_ms > kMaxDelayMs) {
    tools::UsageError(
        "db_crashtest",
        absl::StrFormat("--max_ms must be at most %d (a day)", kMaxDelayMs));
    return false;
  }
  return true;
}

// Whether every one of `tools` is executable; prints the first that is not.
bool ToolsExecutable(const std::vector<std::string>& tools) {
  for (const std::string& tool : tools) {
    if (access(tool.c_str(), X_OK) != 0) {
      absl::FPrintF(stderr, "db_crashtest: %s not found\n", tool);
      return false;
    }
  }
  return true;
}

// A repair cycle's untouched copy of the crash image, kept until the
// cycle passes so that a disagreement can be replayed.
std::string CrashImagePath(const std::string& db) { return db + ".image"; }
// The copy of the crash image a repair cycle repairs.
std::string RepairCopyPath(const std::string& db) { return db + ".repair"; }

// Copies every file of directory `from` to `to`, replacing `to`. False
// (after printing why) on failure.
bool CopyDirectory(const std::string& from, const std::string& to,
                   uint64_t cycle) {
  std::error_code ec;
  std::filesystem::remove_all(to, ec);
  if (!ec) {
    std::filesystem::copy(from, to, std::filesystem::copy_options::recursive,
                          ec);
  }
  if (ec) {
    absl::FPrintF(stderr, "cycle %d: cannot copy %s to %s: %s\n", cycle, from,
                  to, ec.message());
    return false;
  }
  return true;
}

// Removes the DB at `db`, its expected-state file and a repair cycle's
// copies.
void RemoveDbAndExpectedState(const std::string& db) {
  std::filesystem::remove_all(db);
  std::filesystem::remove_all(CrashImagePath(db));
  std::filesystem::remove_all(RepairCopyPath(db));
  std::filesystem::remove(db + ".expected");
  std::filesystem::remove(db + ".remote_no");
}

// What every cycle runs against.
struct CrashTestPlan {
  std::string stress;               // the db_stress binary
  std::string ldb;                  // the ldb binary
  std::string db;                   // the DB directory
  std::vector<std::string> common;  // db_stress flags of every run
  // --subcompactions as given, or none: drawn per cycle.
  std::optional<std::string> fixed_subcompactions;
  bool remote_filter = false;  // db_stress mirrors to Redis
  uint64_t repair_cycles = 0;  // cycles that compared repair with reopen
#if SIFTDB_WITH_REDIS
  // --redis_faults: the Redis db_crashtest runs, and faults by kind.
  std::unique_ptr<crashtest::ManagedRedis> redis;
  std::vector<uint64_t> faults =
      std::vector<uint64_t>(static_cast<int>(crashtest::RedisFault::kNumKinds));
#endif
};

// `head` followed by the plan's common db_stress flags.
std::vector<std::string> WithCommonFlags(const CrashTestPlan& plan,
                                         std::vector<std::string> head) {
  head.insert(head.end(), plan.common.begin(), plan.common.end());
  return head;
}

// Starts `db_stress --mode=run` with `stress_flags`, SIGKILLs it after
// delay_ms. False (after printing why) when it did not start or exited on
// its own before the kill.
bool RunStressUntilKilled(const CrashTestPlan& plan, uint64_t cycle,
                          uint64_t delay_ms,
                          const std::vector<std::string>& stress_flags,
                          const std::function<bool()>& during) {
  std::vector<std::string> argv = {plan.stress, "--mode=run"};
  argv.insert(argv.end(), stress_flags.begin(), stress_flags.end());
  const pid_t pid = Spawn(WithCommonFlags(plan, argv), /*quiet=*/true);
  if (pid < 0) {
    absl::FPrintF(stderr, "cycle %d: cannot start db_stress\n", cycle);
    return false;
  }
  const bool injected = during();
  kill(pid, SIGKILL);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!injected) return false;
  if (WIFEXITED(status)) {
    // It stopped on its own before the kill: only a violation does that.
    absl::FPrintF(stderr,
                  "cycle %d: db_stress exited with %d before the "
                  "kill (a live check failed)\n",
                  cycle, WEXITSTATUS(status));
    return false;
  }
  return true;
}

// Runs `db_stress --mode=verify` and `ldb checkconsistency` on the killed
// DB. False (after printing why) when either fails.
bool VerifyAfterKill(const CrashTestPlan& plan, uint64_t cycle,
                     uint64_t delay_ms) {
  const int verify = Run(WithCommonFlags(plan, {plan.stress, "--mode=verify"}),
                         /*quiet=*/false);
  if (verify != 0) {
    absl::FPrintF(stderr,
                  "cycle %d (killed after %d ms): verify failed "
                  "(%d); DB left at %s\n",
                  cycle, delay_ms, verify, plan.db);
    return false;
  }
  const int check =
      Run({plan.ldb, "--db=" + plan.db, "checkconsistency"}, true);
  if (check != 0) {
    absl::FPrintF(stderr,
                  "cycle %d: ldb checkconsistency failed (%d); DB "
                  "left at %s\n",
                  cycle, check, plan.db);
    return false;
  }
  return true;
}

// Repairs the copy of the crash image and compares it with plan.db
// reopened (db_stress --mode=repair_compare), then checks the repaired
// copy's consistency. False (after printing why) when they disagree or a
// step fails; both DBs are left in place.
bool RepairAndCompare(const CrashTestPlan& plan, uint64_t cycle) {
  const std::string image = CrashImagePath(plan.db);
  const std::string copy = RepairCopyPath(plan.db);
  if (!CopyDirectory(image, copy, cycle)) return false;
  std::vector<std::string> argv = {plan.stress, "--mode=repair_compare",
                                   "--repair_db=" + copy};
  // The common flags minus the mirror: repair_compare opens no mirror.
  for (const std::string& flag : plan.common) {
    if (flag.rfind("--remote_filter=", 0) != 0) argv.push_back(flag);
  }
  const int compare = Run(argv, /*quiet=*/false);
  if (compare != 0) {
    absl::FPrintF(stderr,
                  "cycle %d: RepairDB of the crash image disagrees with the "
                  "reopen, or failed (%d); reopened DB at %s, repaired copy "
                  "at %s, the crash image at %s\n",
                  cycle, compare, plan.db, copy, image);
    return false;
  }
  const int check = Run({plan.ldb, "--db=" + copy, "checkconsistency"}, true);
  if (check != 0) {
    absl::FPrintF(stderr,
                  "cycle %d: ldb checkconsistency of the repaired copy "
                  "failed (%d); it is left at %s\n",
                  cycle, check, copy);
    return false;
  }
  std::filesystem::remove_all(copy);
  std::filesystem::remove_all(image);
  return true;
}

// One kill/verify cycle, drawing its delay, subcompactions and level
// sizing (static or dynamic: a DB switching between them at every reopen)
// from *rnd.
// Prints one line when it passes; false (after printing why) when not.
bool RunCrashCycle(CrashTestPlan& plan, const CrashTestFlags& flags,
                   uint64_t cycle, Random* rnd) {
  const uint64_t delay =
      flags.min_ms + rnd->Uniform(flags.max_ms - flags.min_ms + 1);
  // Compactions split over threads die mid-way too.
  constexpr int kSubcompactionChoices[] = {1, 2, 4};
  const int drawn = kSubcompactionChoices[rnd->Uniform(3)];
  const std::string subcompactions = absl::StrFormat(
      "--subcompactions=%s", plan.fixed_subcompactions.has_value()
                                 ? *plan.fixed_subcompactions
                                 : std::to_string(drawn));
  const bool dynamic_levels = rnd->OneIn(2);
  const std::string level_sizing =
      absl::StrFormat("--dynamic_levels=%s", dynamic_levels ? "true" : "false");
  std::function<bool()> during = [delay] {
    std::this_thread::sleep_for(std::chrono::milliseconds(delay));
    return true;
  };
  std::string fault_note;
#if SIFTDB_WITH_REDIS
  crashtest::RedisFault fault = crashtest::RedisFault::kNone;
  if (plan.redis != nullptr) {
    fault = crashtest::DrawRedisFault(rnd);
    plan.faults[static_cast<int>(fault)]++;
    fault_note = absl::StrCat(", redis fault ", RedisFaultName(fault));
    const uint64_t seed = rnd->Next();
    during = [&plan, fault, delay, cycle, seed] {
      Random fault_rnd(seed);
      absl::Status s = crashtest::InjectDuringRun(
          fault, delay,
          absl::StrCat("siftdb:{", stress::kMirrorName, "}:lease"), &fault_rnd,
          plan.redis.get());
      if (!s.ok()) absl::FPrintF(stderr, "cycle %d: %s\n", cycle, s.ToString());
      return s.ok();
    };
  }
#endif
  if (!RunStressUntilKilled(plan, cycle, delay,
                            {subcompactions, level_sizing,
                             absl::StrFormat("--seed=%d", flags.seed + cycle)},
                            during)) {
    return false;
  }
  // The crash image as the kill left it, before anything reopens it.
  const bool repair_cycle =
      flags.repair_every > 0 && (cycle + 1) % flags.repair_every == 0;
  if (repair_cycle && !CopyDirectory(plan.db, CrashImagePath(plan.db), cycle)) {
    return false;
  }
#if SIFTDB_WITH_REDIS
  if (plan.redis != nullptr) {
    absl::Status s = crashtest::AfterKill(fault, plan.redis.get());
    if (!s.ok()) {
      absl::FPrintF(stderr, "cycle %d: %s\n", cycle, s.ToString());
      return false;
    }
  }
  if (plan.remote_filter) {
    // What a reader hears before the DB is reopened; verify checks that
    // no key answered "no" is in the recovered DB.
    if (Run(WithCommonFlags(plan, {plan.stress, "--mode=remote_probe"}),
            /*quiet=*/false) != 0) {
      absl::FPrintF(stderr, "cycle %d: remote_probe failed\n", cycle);
      return false;
    }
  }
#endif
  if (!VerifyAfterKill(plan, cycle, delay)) return false;
  if (repair_cycle) {
    if (!RepairAndCompare(plan, cycle)) return false;
    plan.repair_cycles++;
  }
  absl::PrintF("cycle %d: killed after %d ms (%s, %s%s), verified%s\n", cycle,
               delay, subcompactions, level_sizing, fault_note,
               repair_cycle ? ", repair agrees with reopen" : "");
  fflush(stdout);
  return true;
}

int Main(int argc, char** argv) {
  tools::ToolFlagsSpec spec;
  spec.program = "db_crashtest";
  spec.usage =
      "usage: db_crashtest --db=DIR [--cycles=N] [--min_ms=N --max_ms=N] "
      "[--seed=N]\n"
      "                    [--bin_dir=DIR] [--keep] [--repair_every=N]\n"
      "                    [--remote_filter=HOST:PORT | --redis_faults]\n"
      "Exit status: 0 every cycle passed, 1 a cycle failed, 2 bad command "
      "line.\n";
  spec.flag_sources = {"tools/db_crashtest/"};
  spec.takes_positional = false;
  int exit_code = 0;
  std::optional<tools::ToolArgs> args =
      tools::ParseToolFlags(spec, argc, argv, &exit_code);
  if (!args.has_value()) return exit_code;
  if (absl::GetFlag(FLAGS_db).empty()) {
    return tools::UsageError("db_crashtest", "--db is required");
  }
  CrashTestFlags flags;
  if (!ParseCrashTestFlags(*args, &flags)) return tools::kExitUsage;
  // bin_dir holds both tools; by default the build tree layout
  // (<build>/tools/{db_stress,ldb,db_crashtest}).
  CrashTestPlan plan;
  const std::string bin =
      args->WasSet("bin_dir") ? absl::GetFlag(FLAGS_bin_dir) : SelfDir();
  plan.stress = bin + "/db_stress";
  plan.ldb = bin + "/ldb";
  if (!ToolsExecutable({plan.stress, plan.ldb})) return tools::kExitUsage;
  plan.db = absl::GetFlag(FLAGS_db);
  RemoveDbAndExpectedState(plan.db);

  Random rnd(flags.seed);
  const auto start = std::chrono::steady_clock::now();
  plan.common = {"--db=" + plan.db,
                 absl::StrFormat("--threads=%d", flags.threads),
                 absl::StrFormat("--keys=%d", flags.keys)};
#if SIFTDB_WITH_REDIS
  if (!absl::GetFlag(FLAGS_remote_filter).empty()) {
    plan.common.push_back("--remote_filter=" +
                          absl::GetFlag(FLAGS_remote_filter));
    plan.remote_filter = true;
  }
  if (absl::GetFlag(FLAGS_redis_faults)) {
    if (plan.remote_filter) {
      return tools::UsageError("db_crashtest",
                               "--redis_faults runs its own Redis: drop "
                               "--remote_filter");
    }
    auto redis = crashtest::ManagedRedis::Start(
        absl::GetFlag(FLAGS_redis_server), plan.db + ".redis");
    if (!redis.ok()) {
      absl::FPrintF(stderr, "db_crashtest: %s\n", redis.status().ToString());
      return 2;
    }
    plan.redis = std::move(*redis);
    plan.common.push_back("--remote_filter=" + plan.redis->endpoint());
    plan.remote_filter = true;
  }
#endif
  if (args->WasSet("subcompactions")) {
    plan.fixed_subcompactions =
        std::to_string(absl::GetFlag(FLAGS_subcompactions));
  }
  for (uint64_t cycle = 0; cycle < flags.cycles; cycle++) {
    if (!RunCrashCycle(plan, flags, cycle, &rnd)) return 1;
  }
  const double secs =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  absl::PrintF("db_crashtest: %d cycles passed in %.1f s (seed %d)\n",
               flags.cycles, secs, flags.seed);
  if (flags.repair_every > 0) {
    absl::PrintF(
        "db_crashtest: %d repair cycles: RepairDB agreed with the reopen on "
        "every key\n",
        plan.repair_cycles);
  }
#if SIFTDB_WITH_REDIS
  if (plan.redis != nullptr) {
    std::string kinds;
    for (int k = 0; k < static_cast<int>(crashtest::RedisFault::kNumKinds);
         k++) {
      absl::StrAppend(&kinds, kinds.empty() ? "" : ", ",
                      RedisFaultName(static_cast<crashtest::RedisFault>(k)),
                      " ", plan.faults[k]);
    }
    absl::PrintF("db_crashtest: redis faults: %s\n", kinds);
    plan.redis.reset();
    std::filesystem::remove_all(plan.db + ".redis");
  }
#endif
  if (!absl::GetFlag(FLAGS_keep)) RemoveDbAndExpectedState(plan.db);
  return 0;
}

}  // namespace
}  // namespace siftdb

int main(int argc, char** argv) { return siftdb::Main(argc, argv); }
