// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The one Lua script of the Redis mirror: "commit", which checks that this
// engine may still publish and changes the manifest and the lease in one
// atomic server-side step (EVAL / EVALSHA; Redis >= 7: TIME and INFO inside
// a script, effects replication). The only writes outside it are filter
// values (SET, BITFIELD SET, SETRANGE) and meta hashes, at keys no other
// writer lists (live keys carry the writer token; table filters are checked
// by size and crc32c).
//
// Checks, in order: when the lease is written (acquire, renew), the server
// is a master (else ROLE; otherwise a replica refuses the writes); no later
// writer owns the manifest (its "writer" field > ARGV[4]: FENCED, for
// every op);
// the deadline (LATE); the filter keys to be listed exist (MISSING); for
// "change", the writer, generation, version and writes counter are the
// expected ones (CONFLICT); for lease "renew" / "check", the lease holds
// "<token> <replid of this server>" (LEASE: lapsed, taken, or the server's
// replication history changed under it: restart, failover, promotion).
//
// KEYS[1] manifest hash, KEYS[2] lease key, KEYS[3 .. 2+E] filter keys that
//   the manifest lists from now on (each must exist), KEYS[3+E ..] retired
//   keys to UNLINK once every check passed.
// ARGV[1] op: "full" (replace the whole manifest: new generation, version
//   above both the old one and ARGV[3], this writer), "change" (fields of
//   the current manifest; the version is bumped when entries change) or
//   "revoke" (delete the lease: readers stop trusting; nothing else)
// ARGV[2] generation   ARGV[3] version (change: expected; full: floor)
// ARGV[4] writer token (fencing; see redis_mirror_format.h)
// ARGV[5] lease token  ARGV[6] lease TTL in ms (PX)
// ARGV[7] not-after: the server's Unix ms after which the script must not
//   run (a late delivery must not extend the lease); "0": no limit
// ARGV[8] lease: "acquire" (set it), "renew" (it must be ours; renewed),
//   "check" (it must be ours; not renewed), "none"
// ARGV[9] expected "writes" counter ("": not checked; change only)
// ARGV[10] "1": increment "writes" (this pipeline wrote filter bits)
// ARGV[11] complete_seq ("": leave the watermark) ARGV[12] complete_ms
// ARGV[13] E (see KEYS)
// ARGV[14] the replid the writer last saw (for "check")
// ARGV[15] D, then D manifest fields to delete; then S, then S (field,
//   value) pairs to set
// Reply: {status, version, server_ms, detail, replid} with status "OK",
// "ROLE", "FENCED" (detail: the later writer), "LATE", "MISSING" (detail:
// the key), "CONFLICT" (detail: what differed) or "LEASE" (the holder).
//
// Thread safety: immutable.

#ifndef SIFTDB_REDIS_MIRROR_REDIS_MIRROR_SCRIPTS_H_
#define SIFTDB_REDIS_MIRROR_REDIS_MIRROR_SCRIPTS_H_

#include <string>

namespace siftdb {

const std::string& MirrorCommitScript();

}  // namespace siftdb

#endif  // SIFTDB_REDIS_MIRROR_REDIS_MIRROR_SCRIPTS_H_
