// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The one Lua script of the Redis mirror: "commit", which changes the
// manifest and the lease in one atomic server-side step (EVAL; Redis >= 6,
// uses TIME inside the script, so effects replication). Everything else the
// mirror writes is plain commands (SET, BITFIELD, HSET, DEL) whose keys the
// manifest does not list yet, or lists as growing filters.
//
// KEYS[1] manifest hash, KEYS[2] lease key, KEYS[3..] filter keys that the
//   manifest lists from now on: each must exist, or nothing changes.
// ARGV[1] op: "full" (replace the whole manifest: new generation, version
//   above both the old one and ARGV[3]) or "change" (ARGV[2]/ARGV[3] must be
//   the manifest's generation/version; the version is bumped when fields
//   change)
// ARGV[2] generation   ARGV[3] version (change: expected; full: floor)
// ARGV[4] lease token  ARGV[5] lease TTL in ms (PX)
// ARGV[6] not-after: the server's Unix ms after which the script must not
//   run (a late delivery must not extend the lease); "0": no limit
// ARGV[7] lease: "acquire" (set it to the token), "keep" (it must hold the
//   token; it is renewed), "none"
// ARGV[8] expected "writes" counter ("": not checked; change only)
// ARGV[9] D, then D manifest fields to delete; then S, then S (field, value)
//   pairs to set
// Reply: {status, version, server_ms, detail} with status "OK", "LATE",
// "MISSING" (detail: the key), "CONFLICT" (detail: what differed) or
// "LEASE" (detail: the holder).
//
// Thread safety: immutable.

#ifndef SIFTDB_REDIS_MIRROR_REDIS_MIRROR_SCRIPTS_H_
#define SIFTDB_REDIS_MIRROR_REDIS_MIRROR_SCRIPTS_H_

#include <string>

namespace siftdb {

const std::string& MirrorCommitScript();

}  // namespace siftdb

#endif  // SIFTDB_REDIS_MIRROR_REDIS_MIRROR_SCRIPTS_H_
