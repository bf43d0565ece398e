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
#include "tools/db_stress/expected_state.h"

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

// Before the DB is reopened after a crash (the moment a reader is most
// likely to meet a stale mirror: the killed writer's lease, a Redis that
// restarted from an older snapshot): asks the mirror about every key
// KeyFor(0 .. num_keys-1) and writes the index of each key answered "no",
// one per line, to `no_file`. Returns how many; *trusted: the answers
// rested on a trusted mirror.
absl::StatusOr<uint64_t> ProbeBeforeReopen(const std::string& endpoint,
                                           uint32_t num_keys,
                                           const std::string& no_file,
                                           bool* trusted);

// After the reopen: DataLoss naming the key when a key listed in `no_file`
// was acknowledged as written (state.acked is a put) and the DB holds it:
// the mirror said "no" for a key the engine had acknowledged. (A write in
// flight at the kill may be recovered without ever having been promised.)
// Removes the file. OK when there is none. *checked: keys listed.
absl::Status CheckKeysAnsweredNo(DB* db, const ExpectedState& state,
                                 const std::string& no_file, uint64_t* checked);

}  // namespace siftdb::stress

#endif  // SIFTDB_TOOLS_DB_STRESS_REMOTE_CHECK_H_
