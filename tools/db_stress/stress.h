// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The db_stress workload and its verifier.
//
// Workload: `threads` threads each own the keys k with k % threads == t and
// write them with puts, deletes and batches (a fraction synced), reading
// back their own keys as they go; thread 0 also compacts random ranges.
// Every write goes through the ExpectedState protocol, so a crash at any
// instant leaves a state the verifier can judge.
//
// Verifier: opens the DB and checks, for every key, that it holds the
// acknowledged write or the one in flight, that every value is one the
// workload could have written for that key, and that a full iteration
// (forward and backward) agrees with point reads. It then adopts what it
// found as the new expected state so the next run continues from it.

#ifndef SIFTDB_TOOLS_DB_STRESS_STRESS_H_
#define SIFTDB_TOOLS_DB_STRESS_STRESS_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/status/status.h"
#include "siftdb/db.h"
#include "tools/db_stress/expected_state.h"

namespace siftdb::stress {

struct StressConfig {
  int threads = 4;
  uint32_t num_keys = 10000;
  double sync_fraction = 0.05;
  uint64_t seed = 1;
  // Each thread stops after this many operations (0: until told to stop).
  uint64_t ops_per_thread = 0;
};

std::string KeyFor(uint32_t k);
std::string ValueFor(uint32_t k, uint32_t id);
// Parses a value written by ValueFor for key k: false when it is not one.
bool ParseValue(uint32_t k, std::string_view value, uint32_t* id);

// Sees every write (the power-loss mode learns from it what must be
// durable). Begin() is called before a write is issued, Acked() after the
// DB acknowledged it, with Begin()'s ticket.
class WriteObserver {
 public:
  virtual ~WriteObserver() = default;
  virtual uint64_t Begin() = 0;
  virtual void Acked(uint32_t key, uint32_t id, bool sync,
                     uint64_t begin_ticket) = 0;
};

// Runs the workload until `stop` is set or ops_per_thread is reached.
// Returns the first unexpected error (a read that disagrees with the
// expected state, or a failed write when failures are not expected).
absl::Status RunWorkload(DB* db, ExpectedState* state,
                         const StressConfig& config, std::atomic<bool>* stop,
                         bool tolerate_write_errors,
                         WriteObserver* observer = nullptr);

struct VerifyResult {
  uint64_t keys_present = 0;
  uint64_t keys_in_flight_applied = 0;  // pending write found in the DB
  uint64_t keys_in_flight_lost = 0;     // pending write not in the DB
};

// `acceptable(k, id)` says whether id (0: absent) is a correct state of key
// k; null means the process-crash rule (acked or pending).
using Acceptable = std::function<bool(uint32_t k, uint32_t id)>;

absl::StatusOr<VerifyResult> Verify(DB* db, ExpectedState* state,
                                    const Acceptable& acceptable = nullptr);

}  // namespace siftdb::stress

#endif  // SIFTDB_TOOLS_DB_STRESS_STRESS_H_
