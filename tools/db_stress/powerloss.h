// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RunPowerLossCycles: db_stress's power-loss mode. Each cycle opens the DB
// on a FaultInjectionEnv, runs the workload, stops the file system at a
// random instant (every later write fails), closes the DB, drops every byte
// not synced (SimulatePowerLoss), reopens and verifies: every write
// acknowledged before a synced write began must be present (or a later
// write of the same key); later writes may or may not be; no key may hold
// a value never written.

#ifndef SIFTDB_TOOLS_DB_STRESS_POWERLOSS_H_
#define SIFTDB_TOOLS_DB_STRESS_POWERLOSS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "siftdb/options.h"
#include "tools/db_stress/stress.h"

namespace siftdb::stress {

// A one-line summary of what was checked, or the first violation.
absl::StatusOr<std::string> RunPowerLossCycles(const std::string& db_path,
                                               Options options,
                                               const StressConfig& config,
                                               uint64_t cycles);

}  // namespace siftdb::stress

#endif  // SIFTDB_TOOLS_DB_STRESS_POWERLOSS_H_
