// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Redis faults for db_crashtest --redis_faults: db_crashtest runs its own
// redis-server (ManagedRedis, a child process on a free loopback port with
// its dump file in a directory of its own) as the mirror's Redis, and each
// crash cycle injects one fault drawn at random while db_stress runs
// (InjectDuringRun) and, for the faults that hit both, after the kill
// (AfterKill). The verify step then checks that the mirror says "maybe"
// for every key the recovered DB holds, right after the reopen and after
// republication.
//
// Thread safety: not thread-safe; used from db_crashtest's main thread.

#ifndef SIFTDB_TOOLS_DB_CRASHTEST_REDIS_FAULTS_H_
#define SIFTDB_TOOLS_DB_CRASHTEST_REDIS_FAULTS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "util/random.h"

namespace siftdb::crashtest {

enum class RedisFault {
  kNone,           // no fault this cycle
  kOlderSnapshot,  // SAVE, more writes, SIGKILL Redis, restart from the dump
  kRestartEmpty,   // SIGKILL Redis, restart without data
  kFlushAll,       // FLUSHALL while the engine runs
  kLeaseDeleted,   // DEL of the lease (an eviction, an operator)
  kClientsPaused,  // CLIENT PAUSE 200-1500 ms (a stalled server)
  kCrashTogether,  // SAVE; then Redis dies with the engine, restarts older
  kNumKinds,
};
const char* RedisFaultName(RedisFault fault);

class ManagedRedis {
 public:
  // Starts `binary` on a free 127.0.0.1 port with its data in `dir`
  // (created), persistence only on demand (SAVE). Waits for PING.
  static absl::StatusOr<std::unique_ptr<ManagedRedis>> Start(
      const std::string& binary, const std::string& dir);
  ~ManagedRedis();  // SIGKILLs the server

  std::string endpoint() const;
  // SIGKILL and wait; then start again on the same port, loading the dump
  // when keep_dump (else the dump is deleted first).
  absl::Status KillAndRestart(bool keep_dump);
  // One command on a fresh connection; an error reply is an error.
  absl::Status Command(const std::vector<std::string>& argv);

 private:
  ManagedRedis(std::string binary, std::string dir, int port);
  absl::Status Spawn();
  absl::Status WaitForPing();
  absl::Status Kill();

  const std::string binary_;
  const std::string dir_;
  const int port_;
  pid_t pid_ = -1;
};

// Draws a fault for one cycle.
RedisFault DrawRedisFault(Random* rnd);

// Runs `fault` while db_stress runs, taking exactly about run_ms (the
// moments are drawn from *rnd). Returns an error when Redis could not be
// driven (an infrastructure failure, not a finding).
absl::Status InjectDuringRun(RedisFault fault, uint64_t run_ms,
                             const std::string& lease_key, Random* rnd,
                             ManagedRedis* redis);
// After db_stress was killed: the second half of kCrashTogether.
absl::Status AfterKill(RedisFault fault, ManagedRedis* redis);

}  // namespace siftdb::crashtest

#endif  // SIFTDB_TOOLS_DB_CRASHTEST_REDIS_FAULTS_H_
