// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The no-false-negative check of the Redis mirror after a crash: every key
// the recovered DB holds must read "maybe" through a RemoteFilter reader,
// right after DB::Open (when the killed writer's lease may still live in
// Redis) and again once the reopened DB has republished the mirror.
//
// Thread safety: single-threaded use. The DB must outlive the call.

#ifndef SIFTDB_TOOLS_DB_STRESS_REMOTE_CHECK_H_
#define SIFTDB_TOOLS_DB_STRESS_REMOTE_CHECK_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "siftdb/db.h"

namespace siftdb::stress {

// The mirror's name in Redis used by db_stress.
inline constexpr char kMirrorName[] = "db_stress";

struct RemoteCheckResult {
  uint64_t present_keys = 0;     // keys the DB holds, all answered "maybe"
  bool trusted_at_open = false;  // the first check rested on a trusted mirror
  bool trusted_later = false;    // the mirror was trusted by the second check
  uint64_t absent_said_no = 0;   // absent keys the trusted mirror excluded
  uint64_t absent_probed = 0;
};

// Checks the mirror at `endpoint` against `db`, whose keys are
// KeyFor(0 .. num_keys-1). Waits at most `trust_wait_ms` for the mirror to
// become trusted before the second check. DataLoss naming the key when the
// mirror says "no" for a key the DB holds; Unavailable when the reader
// cannot connect.
absl::StatusOr<RemoteCheckResult> CheckRemoteFilter(DB* db,
                                                    const std::string& endpoint,
                                                    uint32_t num_keys,
                                                    int trust_wait_ms);

}  // namespace siftdb::stress

#endif  // SIFTDB_TOOLS_DB_STRESS_REMOTE_CHECK_H_
