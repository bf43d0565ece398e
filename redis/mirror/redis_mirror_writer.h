// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisMirrorWriter: the engine's side of the Redis mirror at the level of
// keys and bits (the db layer's RemoteMirror decides what to publish and
// when; this class knows how). It owns the Redis connection, the manifest
// as last committed, the lease, and the deletion of retired filters.
//
// Protocol (docs/redis_mirror.md):
//   * Filters are written (SET, BITFIELD SET u1) before the manifest lists
//     them; the commit script refuses to list a key that does not exist.
//   * Every manifest change is one atomic commit
//     (redis/mirror/redis_mirror_scripts.h) that checks the generation and
//     version it expects, so a Redis that lost data (restart, flush, failover
//     to a lagging replica) is noticed; so is a "writes" counter that every
//     write pipeline bumps.
//   * The lease: a key holding a token unique to each acquisition, with a
//     TTL of px = lease_ttl - slack ms, set and renewed only by the commit
//     script, which refuses to run after a server-clock deadline of
//     (send time + slack) mapped conservatively onto the server's clock. So
//     a commit sent at steady time s can keep the lease alive at most until
//     s + lease_ttl, however late it is delivered: lease_bound_ms() is the
//     latest such s + lease_ttl, and once the steady clock passes it the
//     lease has certainly lapsed (assuming the two clocks run at the same
//     rate and the server's clock does not jump back).
//   * A filter that stops being listed is deleted grace_ms after the commit
//     that unlisted it was acknowledged.
//
//   * Fencing: every commit (redis_mirror_scripts.h) first checks that no
//     later engine open (a larger writer token) owns the manifest; when one
//     does, this writer is fenced for good: it stops publishing and says so.
//   * Identity: the lease holds the master_replid of the server the commit
//     ran on, so a restart from persistence, a failover or a promotion
//     makes the lease foreign to readers and to the next commit.
//
// Any failure (connection error, error reply, a commit refused, a lost
// lease, WAIT short of replicas) leaves the writer untrusted; the owner then
// republishes everything: PrepareRepublish (revokes the lease first and,
// with wait_replicas, checks that the replicas acknowledge the revocation,
// then uploads missing immutable filters), then FinishRepublish (every live
// filter whole, a full manifest under a new generation, the lease taken, in
// one pipeline).
//
// Thread safety: not thread-safe; owned by the mirror's thread. The only
// methods safe from other threads are none: the owner copies what it needs.

#ifndef SIFTDB_REDIS_MIRROR_REDIS_MIRROR_WRITER_H_
#define SIFTDB_REDIS_MIRROR_REDIS_MIRROR_WRITER_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "redis/client/redis_cluster_client.h"
#include "redis/mirror/redis_mirror_format.h"
#include "redis/mirror/redis_mirror_live_filter.h"

namespace siftdb {

// Milliseconds of a monotonic clock (std::chrono::steady_clock).
int64_t MirrorSteadyMs();
// Unix milliseconds (wall clock).
int64_t MirrorUnixMs();

struct RedisMirrorWriterOptions {
  RedisConnectOptions connect;
  std::string name;
  std::string mode = "sync";  // "sync" or "async", published as is
  std::string comparator;
  int64_t lease_ttl_ms = 10000;  // >= 100
  int64_t grace_ms = 10000;
  int wait_replicas = 0;  // > 0: WAIT after every write pipeline
  int64_t wait_timeout_ms = 1000;
  // The fencing token of this engine open (NewWriterToken() when empty).
  std::string writer_token;
  // What an earlier process of the same engine may have left: a lease that
  // lapses by prior_lease_bound_ms (steady ms; 0: no earlier process) on
  // the history prior_replid ("": unknown), whose acquisition was not
  // confirmed or whose acknowledgement hold was pending when
  // prior_uncertain. The first acquisition then holds acknowledgements as
  // after a failover in this process (see ack_hold_ms()) unless it lands on
  // prior_replid and !prior_uncertain.
  int64_t prior_lease_bound_ms = 0;
  std::string prior_replid;
  bool prior_uncertain = false;
};

// An immutable filter to upload: its entry, bytes and key count.
struct ImmutableUpload {
  MirrorImmutableEntry entry;
  std::string bytes;
  uint64_t num_keys = 0;
};

class RedisMirrorWriter {
 public:
  struct LiveRef {
    uint64_t id = 0;
    const LiveFilter* filter = nullptr;
  };
  // Gives the bytes of a listed immutable filter (for uploads).
  using FetchFn = absl::FunctionRef<absl::StatusOr<ImmutableUpload>(
      const MirrorImmutableEntry&)>;

  explicit RedisMirrorWriter(RedisMirrorWriterOptions options);
  RedisMirrorWriter(const RedisMirrorWriter&) = delete;
  RedisMirrorWriter& operator=(const RedisMirrorWriter&) = delete;
  ~RedisMirrorWriter();

  const MirrorKeys& keys() const { return keys_; }
  const RedisMirrorWriterOptions& options() const { return options_; }

  // --- Full (re)publication ---
  // Connects when needed, measures the server clock, reads the manifest
  // Redis holds (its filters that are not listed again get retired), and
  // uploads every immutable filter of `immutables` that Redis lacks or holds
  // with another crc32c. Needs no lease.
  absl::Status PrepareRepublish(
      const std::vector<MirrorImmutableEntry>& immutables, FetchFn fetch);
  // One pipeline: every sub-filter of `lives` whole (SET) with its meta, the
  // full manifest (the prepared immutables and `lives`) under a new
  // generation, the lease acquired under a new token, then WAIT if asked.
  // On success the writer is trusted. lease_base_ms: a steady time at or
  // before which the caller decided to send; the lease can outlive it by at
  // most lease_ttl_ms however late the commit arrives (see above), so the
  // caller may publish lease_base_ms + lease_ttl_ms as its bound before the
  // call.
  absl::Status FinishRepublish(const std::vector<LiveRef>& lives,
                               uint64_t complete_seq, int64_t complete_ms,
                               int64_t lease_base_ms);

  // --- Incremental operation (trusted only); staged, sent by Flush ---
  // New sub-filters (index >= delta.first_new) whole, the delta's bits
  // (BITFIELD SET u1, chunked) and the live filter's meta.
  void StageLive(uint64_t id, const LiveFilter& filter,
                 const LiveFilter::Delta& delta);
  // SET the bytes and write the meta of an immutable filter.
  void StageUpload(const ImmutableUpload& upload);
  // The listing the next Flush commits (diffed against the published one).
  void StageListing(std::vector<MirrorImmutableEntry> immutables,
                    std::vector<MirrorLiveEntry> lives);
  void StageWatermark(uint64_t complete_seq, int64_t complete_ms);
  bool has_staged() const;
  // Sends everything staged in one pipeline: staged writes, the writes
  // counter, the watermark, a commit when the listing changed or `renew`
  // (the commit renews the lease), and WAIT when configured and anything
  // was written. Clears the staged state either way. lease_base_ms as for
  // FinishRepublish (used when a commit is sent).
  absl::Status Flush(bool renew, int64_t lease_base_ms);

  // Deletes the lease if this writer may (best effort, one round trip;
  // for a clean close): readers stop trusting at once instead of after the
  // lease's TTL. Untrusted afterwards.
  absl::Status Revoke();

  // Stages an UNLINK of retired filters whose grace has passed and that are
  // not listed (at most max_keys keys); they leave the retired set when the
  // Flush that carries them succeeds. Returns how many were staged.
  size_t StageDeletions(size_t max_keys = 1000);
  // StageDeletions and a Flush. Trusted only.
  absl::Status DeleteRetired(size_t max_keys = 1000);

  // Finds keys under this mirror's prefix that no manifest lists (left by
  // an engine that stopped before their grace period ended) with SCAN
  // MATCH (in a cluster, on the node that owns the mirror's slot) and
  // retires them. Trusted only; meant for once after startup.
  absl::Status SweepOrphans();

  bool trusted() const { return trusted_; }
  // A later engine open publishes this mirror: this writer never publishes
  // again (last_error() names the other writer).
  bool fenced() const { return fenced_; }
  const std::string& writer_token() const { return writer_token_; }
  // Steady ms by which the lease has certainly lapsed (0: never sent one).
  int64_t lease_bound_ms() const { return lease_bound_ms_; }
  // Steady ms before which a sync write must not be acknowledged even when
  // its keys are in Redis (0: no hold). Set when a republication took the
  // lease on another replication history than the previous lease (a
  // failover: Sentinel, a proxy, DNS), or after an acquisition whose outcome
  // is unknown: the previous lease may still live on the old server (a
  // replaced master that still says "master", or one cut off from us), where
  // readers trust it over filters that lack every write acknowledged from
  // the new server. It is the bound of every lease sent before the new one.
  int64_t ack_hold_ms() const { return ack_hold_ms_; }
  // The master_replid of the last confirmed lease (prior_replid before the
  // first), and whether an acquisition since then is unconfirmed.
  const std::string& lease_replid() const { return replid_; }
  bool acquire_uncertain() const { return acquire_uncertain_; }
  // Steady ms when the lease should be renewed next.
  int64_t renewal_due_ms() const;
  // Steady ms when the next retired filter may be deleted (INT64_MAX: none).
  int64_t next_deletion_ms() const;
  const MirrorManifest& published() const { return published_; }
  const absl::Status& last_error() const { return last_error_; }
  int64_t round_trips() const;
  std::string DebugString() const;

  // Slack between the lease TTL and the most a commit may extend it.
  int64_t lease_slack_ms() const { return options_.lease_ttl_ms / 4; }
  int64_t lease_px_ms() const {
    return options_.lease_ttl_ms - lease_slack_ms();
  }

 private:
  struct Staged;
  struct CommitResult {
    std::string status;
    uint64_t version = 0;
    int64_t server_ms = 0;
    std::string detail;
    std::string replid;  // of the server the script ran on
  };
  // What one commit script call asks (see redis_mirror_scripts.h).
  struct CommitRequest {
    std::string op = "change";  // "full", "change", "revoke"
    std::string generation;
    uint64_t version = 0;
    std::string lease_action = "none";  // acquire, renew, check, none
    bool deadline = false;  // refuse after send_ms + slack (lease extended)
    int64_t send_ms = 0;
    std::string expected_writes;  // "": not checked
    bool bump_writes = false;
    bool set_watermark = false;
    uint64_t complete_seq = 0;
    int64_t complete_ms = 0;
    std::vector<std::string> del_fields;
    std::vector<std::pair<std::string, std::string>> set_fields;
    std::vector<std::string> must_exist;
    std::vector<std::string> unlink;
  };

  // The command's name and first argument, for messages.
  static std::string CommandName(const RedisArgs& args);
  void ResetStaged();
  absl::Status EnsureConnected();
  absl::Status MeasureClock();
  absl::Status Fail(absl::Status why);
  // WAIT for options_.wait_replicas, and the check of its reply
  // (Unavailable naming the counts; `after` and `consequence` are added to
  // the message).
  RedisArgs WaitCommand() const;
  absl::Status CheckWait(const RedisReply& reply, std::string_view after,
                         std::string_view consequence) const;
  // Loads the commit script (SCRIPT LOAD) on the connection's node.
  absl::Status LoadScript();
  // The EVALSHA command of a commit (see redis_mirror_scripts.h).
  RedisArgs CommitCommand(const CommitRequest& request) const;
  // The reply of a commit; a FENCED reply fences this writer.
  absl::StatusOr<CommitResult> ParseCommit(const RedisReply& reply);
  // Fails (untrusted, so the owner republishes) when conn_ reconnected since
  // the lease was taken; OK otherwise.
  absl::Status CheckSameConnection();
  // Revokes the lease and, with wait_replicas, WAITs for the replicas to
  // acknowledge it (PrepareRepublish's first step; revoke first, publish
  // after). Returns its error without calling Fail.
  absl::Status RevokeAndWait();
  // Flush of a sync mirror's pipeline that only adds bits to listed
  // filters: the staged commands, HINCRBY of the writes counter, GET of the
  // lease (it must be this engine's, with the replid last seen) and WAIT.
  absl::Status FlushBitsOnly(std::vector<RedisArgs> cmds);
  // Flush's listing diff: the fields to delete and set and the keys that
  // must exist go to *q; meta updates of moved tables to *cmds.
  void StageListingDiff(const MirrorManifest& next, CommitRequest* q,
                        std::vector<RedisArgs>* cmds) const;
  // Adds SET + meta commands for an immutable filter to *cmds.
  void AppendUpload(const ImmutableUpload& u, uint64_t version,
                    std::vector<RedisArgs>* cmds) const;
  void AppendLiveWhole(uint64_t id, const LiveFilter& f, uint64_t version,
                       std::vector<RedisArgs>* cmds) const;
  // Every key (filters and metas) an entry owns.
  std::vector<std::string> ImmutableKeys(uint64_t id) const;
  std::vector<std::string> LiveKeys(const MirrorManifest& m,
                                    const MirrorLiveEntry& e) const;
  // Retires the keys of entries in `before` that `after` does not list.
  void RetireUnlisted(const MirrorManifest& before, const MirrorManifest& after,
                      int64_t due_ms);
  std::string NewToken();
  // PrepareRepublish's steps; each returns its error without calling Fail.
  // Reads the manifest Redis holds into old_manifest_ (empty when there is
  // none or it does not decode) and raises version_floor_ to its version;
  // deletes a key of another type at the manifest key.
  absl::Status ReadOldManifest();
  // The entries of `immutables` whose filter or meta Redis lacks, or holds
  // with another size or crc32c.
  absl::StatusOr<std::vector<const MirrorImmutableEntry*>>
  FindMissingImmutables(const std::vector<MirrorImmutableEntry>& immutables);
  // Fetches and uploads the `missing` immutable filters, in pipelines of
  // about kUploadPipelineBytes. Aborted when a filter changed meanwhile.
  absl::Status UploadImmutables(
      const std::vector<const MirrorImmutableEntry*>& missing, FetchFn fetch);
  // Sends one pipeline of `uploads` (none: nothing); an error reply fails it.
  absl::Status SendUploads(const std::vector<RedisArgs>& uploads);

  const RedisMirrorWriterOptions options_;
  const MirrorKeys keys_;
  std::unique_ptr<RedisConnection> conn_;

  // Lower bound of (server Unix ms - steady ms); valid when have_clock_.
  bool have_clock_ = false;
  int64_t clock_offset_ms_ = 0;

  bool trusted_ = false;
  bool fenced_ = false;
  const std::string writer_token_;
  std::string script_sha_;  // of the commit script, on conn_'s node
  std::string replid_;      // of the server of the last good commit
  std::string token_;       // the lease token of the current acquisition
  uint64_t token_counter_ = 0;
  const uint64_t token_base_;
  int64_t lease_bound_ms_ = 0;
  int64_t ack_hold_ms_ = 0;  // see ack_hold_ms()
  int64_t ack_holds_ = 0;    // how many acquisitions set a hold
  // A lease acquisition was sent and not confirmed since the last good one:
  // it may have landed on a server (a history) we do not know.
  bool acquire_uncertain_ = false;
  // conn_->reconnects() when the lease was taken: a pipeline that finds it
  // changed may have run on another server (Sentinel moved the client to a
  // new master without an error) and is not trusted.
  int64_t lease_reconnects_ = 0;
  int64_t last_lease_send_ms_ = 0;  // send time of the last good commit
  uint64_t writes_ = 0;             // the manifest's "writes" as we left it

  MirrorManifest published_;                    // as last committed
  MirrorManifest old_manifest_;                 // read by PrepareRepublish
  std::vector<MirrorImmutableEntry> prepared_;  // by PrepareRepublish
  uint64_t version_floor_ = 0;

  std::unique_ptr<Staged> staged_;
  // Retired keys -> steady ms when they may be deleted.
  std::map<std::string, int64_t> retired_;
  absl::Status last_error_;
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_MIRROR_REDIS_MIRROR_WRITER_H_
