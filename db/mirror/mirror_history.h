// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The mirror history file (<dbname>/MIRROR-HISTORY): what an engine open
// leaves for the next open of the same DB about where its Redis lease
// lived. A reopened engine cannot revoke a lease its previous process left
// on a server it no longer reaches (a replaced master that is still up),
// and readers of that server trust it until its TTL runs out. With this
// record the next open knows whether its first lease lands on the same
// replication history as the last one confirmed, and holds sync
// acknowledgements until every earlier lease has lapsed when it does not
// (docs/redis_mirror.md §6.2; the byte format is in §9 there).
//
// A record is "settled" when its lease was confirmed on `replid` and no
// acknowledgement hold was pending; the engine writes an unsettled record
// before every lease acquisition (whose outcome, and server, it cannot know
// in advance) and a settled one once the hold, if any, has lapsed. A
// missing, damaged or foreign record reads as unsettled: the next open
// holds, never the reverse.
//
// Thread safety: free functions; the caller serialises writes (the mirror
// thread). The DB lock keeps other processes out of the directory.

#ifndef SIFTDB_DB_MIRROR_MIRROR_HISTORY_H_
#define SIFTDB_DB_MIRROR_MIRROR_HISTORY_H_

#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "siftdb/env.h"

namespace siftdb {

struct MirrorHistory {
  std::string mirror_name;  // Options::remote_filter.name of that open
  std::string replid;       // master_replid of the last confirmed lease
  bool settled = false;     // see above

  bool operator==(const MirrorHistory&) const = default;
};

// The record's bytes (docs/redis_mirror.md §9). Never change.
std::string EncodeMirrorHistory(const MirrorHistory& h);
// InvalidArgument naming what is wrong when `bytes` is not exactly one
// record of format 1 (a bad crc32c, a missing line, an unknown version).
absl::StatusOr<MirrorHistory> DecodeMirrorHistory(std::string_view bytes);

// NotFound when the file does not exist; DataLoss naming the file when it
// exists but does not decode (the caller then treats it as unsettled).
absl::StatusOr<MirrorHistory> ReadMirrorHistory(Env* env,
                                                const std::string& dbname);
// Replaces the record durably: a temp file synced, renamed over the record,
// the directory synced. On failure the old record stays.
absl::Status WriteMirrorHistory(Env* env, const std::string& dbname,
                                const MirrorHistory& h);

}  // namespace siftdb

#endif  // SIFTDB_DB_MIRROR_MIRROR_HISTORY_H_
