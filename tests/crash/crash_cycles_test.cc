// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Bounded crash cycles for CI: db_crashtest SIGKILLs db_stress at random
// moments and verifies after each kill; db_stress's power-loss mode drops
// every unsynced byte through FaultInjectionEnv and verifies. The long runs
// (>= 1,000 cycles) are documented in docs/crash_testing.md.

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "gtest/gtest.h"
#include "tests/support/paths.h"
#if SIFTDB_WITH_REDIS
#include "tests/support/redis_server.h"
#endif
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace crash_cycles_test {

// Runs a shell command; returns its exit status and captures its output.
int RunCommand(const std::string& command, std::string* output) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  if (pipe == nullptr) return -1;
  char buf[4096];
  size_t n;
  while ((n = fread(buf, 1, sizeof(buf), pipe)) > 0) output->append(buf, n);
  const int status = pclose(pipe);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// The DB's parent directory does not exist yet: db_stress creates it.
TEST(CrashCyclesTest, SigkillAtRandomMomentsLosesNothingAcknowledged) {
  test::TempDir dir;
  const std::string tools = test::BinaryDir() + "/tools";
  std::string output;
  const int rc =
      RunCommand(tools + "/db_crashtest --db=" + dir.Join("not/yet/there/db") +
                     " --cycles=12 --min_ms=50 --max_ms=900" +
                     " --seed=4242 --bin_dir=" + tools,
                 &output);
  EXPECT_EQ(0, rc) << output;
  EXPECT_NE(std::string::npos, output.find("12 cycles passed")) << output;
}

// Every cycle also repairs a copy of the crash image with RepairDB and
// compares it with the reopened DB: identical full scans and the same
// answer to a point read of every key of the key space. A few kills land
// early (short runs: few tables, a log being written) and some late
// (compactions, uninstalled outputs). The long run is in
// docs/crash_testing.md.
TEST(CrashCyclesTest, RepairOfTheCrashImageAgreesWithTheReopen) {
  test::TempDir dir;
  const std::string tools = test::BinaryDir() + "/tools";
  std::string output;
  const int rc = RunCommand(tools + "/db_crashtest --db=" + dir.Join("db") +
                                " --cycles=12 --min_ms=50 --max_ms=1200" +
                                " --seed=2611 --keys=5000 --repair_every=1" +
                                " --bin_dir=" + tools,
                            &output);
  EXPECT_EQ(0, rc) << output;
  EXPECT_NE(std::string::npos, output.find("12 cycles passed")) << output;
  EXPECT_NE(std::string::npos,
            output.find("12 repair cycles: RepairDB agreed with the reopen"))
      << output;
  // The compare read every key: not vacuous.
  EXPECT_NE(std::string::npos, output.find("5000 point reads")) << output;
}

#if SIFTDB_WITH_REDIS
// The same with the filters mirrored to a real redis-server in sync mode:
// after every kill, every key the recovered DB holds reads "maybe" through
// a RemoteFilter reader, both right after the reopen (the killed writer's
// lease may still live) and once the mirror is republished.
TEST(CrashCyclesTest, SigkillKeepsTheRedisMirrorFreeOfFalseNegatives) {
  auto redis = test::RedisServer::Start();
  ASSERT_TRUE(redis.ok()) << redis.status();
  test::TempDir dir;
  const std::string tools = test::BinaryDir() + "/tools";
  std::string output;
  const int rc = RunCommand(tools + "/db_crashtest --db=" + dir.Join("db") +
                                " --cycles=6 --min_ms=100 --max_ms=900" +
                                " --seed=777 --keys=3000 --bin_dir=" + tools +
                                " --remote_filter=" + (*redis)->endpoint(),
                            &output);
  EXPECT_EQ(0, rc) << output;
  EXPECT_NE(std::string::npos, output.find("6 cycles passed")) << output;
  // The check was not vacuous: the mirror was trusted and excluded keys.
  EXPECT_NE(std::string::npos, output.find("later: yes")) << output;
}

// Each cycle also injects one Redis fault drawn at random (db_crashtest
// runs its own redis-server): restarts from an older snapshot, restarts
// empty, FLUSHALL, a deleted lease, paused clients, Redis dying with the
// engine. Before each reopen a reader asks about every key; verify then
// checks that none it was told "no" about was acknowledged and is held.
// The seed draws every kind in 14 cycles; the long run (>= 300 cycles) is
// in docs/crash_testing.md.
TEST(CrashCyclesTest, RedisFaultsKeepTheMirrorFreeOfFalseNegatives) {
  if (test::RedisServer::FindBinary().empty()) {
    GTEST_SKIP() << "redis-server not found";
  }
  test::TempDir dir;
  const std::string tools = test::BinaryDir() + "/tools";
  std::string output;
  const int rc = RunCommand(
      tools + "/db_crashtest --db=" + dir.Join("db") +
          " --cycles=14 --min_ms=100 --max_ms=1500 --seed=11 --keys=3000" +
          " --bin_dir=" + tools +
          " --redis_faults --redis_server=" + test::RedisServer::FindBinary(),
      &output);
  EXPECT_EQ(0, rc) << output;
  EXPECT_NE(std::string::npos, output.find("14 cycles passed")) << output;
  for (const char* kind :
       {"older-snapshot", "restart-empty", "flushall", "lease-deleted",
        "clients-paused", "crash-together"}) {
    EXPECT_NE(std::string::npos, output.find(std::string(kind) + " ")) << kind;
    EXPECT_EQ(std::string::npos, output.find(std::string(kind) + " 0"))
        << kind << " was never drawn: " << output;
  }
  // Readers were told "no" before reopens (the check had something to
  // check), and the mirror was trusted again after each.
  EXPECT_NE(std::string::npos, output.find("none acknowledged and held"))
      << output;
  EXPECT_NE(std::string::npos, output.find("later: yes")) << output;
}
#endif

TEST(CrashCyclesTest, PowerLossKeepsEverySyncedWrite) {
  test::TempDir dir;
  std::string output;
  const int rc = RunCommand(
      test::BinaryDir() + "/tools/db_stress --db=" + dir.Join("new_parent/db") +
          " --mode=powerloss --cycles=25 --seed=99",
      &output);
  EXPECT_EQ(0, rc) << output;
  EXPECT_NE(std::string::npos, output.find("25 cycles ok")) << output;
}

TEST(CrashCyclesTest, PowerLossWithParanoidChecks) {
  test::TempDir dir;
  std::string output;
  const int rc = RunCommand(
      test::BinaryDir() + "/tools/db_stress --db=" + dir.Join("db") +
          " --mode=powerloss --cycles=15 --seed=7 --paranoid_checks" +
          " --sync_fraction=0.3",
      &output);
  EXPECT_EQ(0, rc) << output;
}

}  // namespace crash_cycles_test
}  // namespace siftdb
