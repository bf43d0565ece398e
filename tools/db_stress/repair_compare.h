// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Repair against reopen: RepairDB run on a copy of a crash image must give
// the same database as a normal reopen (which replays the logs) of the
// original. RepairAndCompare repairs the copy, opens both, and compares a
// full forward scan of each key by key and value by value, then point
// Gets of every key of the db_stress key space (value or NotFound). The
// first difference is an error naming the key and what each side holds.
// RepairDB logs to a capture (repair_log), not to options.info_log.
//
// Used by `db_stress --mode=repair_compare` and, through it, by
// `db_crashtest --repair_every=N` (docs/crash_testing.md).

#ifndef SIFTDB_TOOLS_DB_STRESS_REPAIR_COMPARE_H_
#define SIFTDB_TOOLS_DB_STRESS_REPAIR_COMPARE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "siftdb/options.h"

namespace siftdb::stress {

struct RepairCompareResult {
  uint64_t logs_in_image = 0;    // non-empty logs in the copy repaired
  uint64_t tables_in_image = 0;  // tables in the copy repaired
  uint64_t keys_scanned = 0;     // keys of the (identical) scans
  uint64_t keys_got = 0;         // point Gets compared (the key space)
  // What RepairDB wrote to its info log: its decisions (a table set aside
  // as obsolete, a log not replayed, ...) and its summary line.
  std::vector<std::string> repair_log;
};

// Repairs the DB at `repair_path` with RepairDB and compares it with the
// DB at `reopen_path`, opened normally; both are opened with `options`.
// num_keys: the db_stress key space whose keys are read point by point.
// DataLoss naming the first differing key when the two disagree; other
// errors when a step fails. *result is filled as far as the steps went.
absl::Status RepairAndCompare(const std::string& reopen_path,
                              const std::string& repair_path,
                              const Options& options, uint32_t num_keys,
                              RepairCompareResult* result);

}  // namespace siftdb::stress

#endif  // SIFTDB_TOOLS_DB_STRESS_REPAIR_COMPARE_H_
