// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisMirrorWriter's commit protocol: the commit script's command, the
// reading of its reply into a status (each refusal names why: a newer
// writer, a replica, a lost lease, another replication history), WAIT for
// replicas after a commit, and revoking the lease. The format it commits
// is docs/redis_mirror.md's; staging and flushing live in
// redis_mirror_writer.cc.

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/mirror/redis_mirror_writer.h"

namespace siftdb {

RedisArgs RedisMirrorWriter::CommitCommand(const CommitRequest& q) const {
  RedisArgs cmd;
  cmd.Add("EVALSHA")
      .Add(script_sha_)
      .AddUint(2 + q.must_exist.size() + q.unlink.size());
  cmd.Add(keys_.manifest()).Add(keys_.lease());
  for (const std::string& k : q.must_exist) cmd.Add(k);
  for (const std::string& k : q.unlink) cmd.Add(k);
  const int64_t not_after =
      !q.deadline   ? 0
      : have_clock_ ? q.send_ms + clock_offset_ms_ + lease_slack_ms()
                    : 1;
  cmd.Add(q.op)
      .Add(q.generation)
      .AddUint(q.version)
      .Add(writer_token_)
      .Add(token_)
      .AddInt(lease_px_ms())
      .AddInt(not_after)
      .Add(q.lease_action)
      .Add(q.expected_writes)
      .Add(q.bump_writes ? "1" : "0");
  if (q.set_watermark) {
    cmd.AddUint(q.complete_seq).AddInt(q.complete_ms);
  } else {
    cmd.Add("").Add("");
  }
  cmd.AddUint(q.must_exist.size()).Add(replid_).AddUint(q.del_fields.size());
  for (const std::string& f : q.del_fields) cmd.Add(f);
  cmd.AddUint(q.set_fields.size());
  for (const auto& [f, v] : q.set_fields) cmd.Add(f).Add(v);
  return cmd;
}

absl::StatusOr<RedisMirrorWriter::CommitResult> RedisMirrorWriter::ParseCommit(
    const RedisReply& reply) {
  const std::string where =
      absl::StrFormat("redis %s: mirror commit on %s",
                      conn_->Describe(keys_.prefix()), keys_.manifest());
  if (reply.is_error()) {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s: %s", where, reply.str()));
  }
  const auto& e = reply.elements();
  if (!reply.is_array() || e.size() != 5 || !e[1].is_integer() ||
      !e[2].is_integer()) {
    return absl::InternalError(
        absl::StrFormat("%s: unexpected reply %s", where, reply.DebugString()));
  }
  CommitResult r;
  r.status = e[0].str();
  r.version = static_cast<uint64_t>(e[1].integer());
  r.server_ms = e[2].integer();
  r.detail = e[3].str();
  r.replid = e[4].str();
  if (r.status == "OK") return r;
  if (r.status == "FENCED") {
    fenced_ = true;
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s refused: fenced: engine open %s publishes this mirror and opened "
        "after this one (%s); this engine stops publishing (two engines "
        "with one mirror name, or an old process still running)",
        where, absl::CHexEscape(r.detail), writer_token_));
  }
  if (r.status == "ROLE") {
    return absl::FailedPreconditionError(
        absl::StrFormat("%s refused: the server is a %s, not a master", where,
                        absl::CHexEscape(r.detail)));
  }
  if (r.status == "LATE") {
    return absl::DeadlineExceededError(absl::StrFormat(
        "%s refused: delivered %s ms after its deadline (slow or delayed "
        "delivery; the lease must not be extended late)",
        where, r.detail));
  }
  if (r.status == "MISSING") {
    return absl::DataLossError(absl::StrFormat(
        "%s refused: filter key %s does not exist (Redis lost data?)", where,
        absl::CHexEscape(r.detail)));
  }
  if (r.status == "CONFLICT") {
    return absl::AbortedError(absl::StrFormat(
        "%s refused: manifest %s, expected writer %s generation/version "
        "%s/%d writes %d (Redis restarted, flushed or failed over)",
        where, absl::CHexEscape(r.detail), writer_token_, published_.generation,
        published_.version, writes_));
  }
  if (r.status == "LEASE") {
    return absl::FailedPreconditionError(absl::StrFormat(
        "%s refused: lease %s is \"%s\", not this engine's \"%s %s\": it "
        "lapsed or was taken, or the server's history changed (restart, "
        "failover, promotion)",
        where, keys_.lease(), absl::CHexEscape(r.detail), token_, r.replid));
  }
  return absl::InternalError(
      absl::StrFormat("%s: unknown status %s", where, reply.DebugString()));
}

RedisArgs RedisMirrorWriter::WaitCommand() const {
  return RedisArgs{}
      .Add("WAIT")
      .AddInt(options_.wait_replicas)
      .AddInt(options_.wait_timeout_ms);
}

absl::Status RedisMirrorWriter::CheckWait(const RedisReply& reply,
                                          std::string_view after,
                                          std::string_view consequence) const {
  if (reply.is_integer() && reply.integer() >= options_.wait_replicas) {
    return absl::OkStatus();
  }
  return absl::UnavailableError(absl::StrFormat(
      "redis %s: WAIT %d %d%s: %s replicas acknowledged%s",
      conn_->Describe(keys_.prefix()), options_.wait_replicas,
      options_.wait_timeout_ms, after, reply.DebugString(), consequence));
}

absl::Status RedisMirrorWriter::RevokeAndWait() {
  CommitRequest q;
  q.op = "revoke";
  std::vector<RedisArgs> cmds = {CommitCommand(q)};
  if (options_.wait_replicas > 0) {
    cmds.push_back(WaitCommand());
  }
  absl::StatusOr<std::vector<RedisReply>> r =
      conn_->Pipeline(cmds, keys_.prefix());
  if (!r.ok()) return r.status();
  absl::StatusOr<CommitResult> c = ParseCommit((*r)[0]);
  if (!c.ok()) return c.status();
  if (cmds.size() > 1) {
    return CheckWait((*r)[1], " after revoking the lease",
                     "; the mirror stays revoked until they are back");
  }
  return absl::OkStatus();
}

absl::Status RedisMirrorWriter::Revoke() {
  trusted_ = false;
  ResetStaged();
  if (fenced_ || conn_ == nullptr || script_sha_.empty()) {
    return absl::OkStatus();
  }
  CommitRequest q;
  q.op = "revoke";
  absl::StatusOr<std::vector<RedisReply>> r =
      conn_->Pipeline({CommitCommand(q)}, keys_.prefix());
  if (!r.ok()) return r.status();
  return ParseCommit((*r)[0]).status();
}

}  // namespace siftdb
