// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisMirrorWriter, full (re)publication: PrepareRepublish (connect,
// measure the server clock, read the old manifest, upload missing
// immutable filters), FinishRepublish (live filters whole, the full
// manifest, the lease, in one pipeline), SweepOrphans, and the helpers
// that know which keys an entry owns. See redis_mirror_writer.h.

#include <algorithm>
#include <random>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/mirror/redis_mirror_writer.h"

namespace siftdb {

namespace {

// Immutable uploads are sent in pipelines of about this many bytes.
constexpr size_t kUploadPipelineBytes = size_t{8} << 20;

// The field/value pairs of an HGETALL reply (an array).
std::vector<std::pair<std::string, std::string>> HashFields(
    const RedisReply& reply) {
  std::vector<std::pair<std::string, std::string>> fields;
  const auto& e = reply.elements();
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    fields.emplace_back(e[i].str(), e[i + 1].str());
  }
  return fields;
}

// Whether the replies to HMGET <meta> bytes crc32c and STRLEN <filter> show
// that Redis holds immutable filter e with its size and crc32c.
bool RedisHoldsImmutable(const MirrorImmutableEntry& e, const RedisReply& meta,
                         const RedisReply& len) {
  return meta.is_array() && meta.elements().size() == 2 &&
         meta.elements()[0].str() == absl::StrCat(e.size) &&
         meta.elements()[1].str() == absl::StrFormat("%08x", e.crc32c) &&
         len.is_integer() && static_cast<uint64_t>(len.integer()) == e.size;
}

}  // namespace

std::vector<std::string> RedisMirrorWriter::ImmutableKeys(uint64_t id) const {
  return {keys_.immutable(id), keys_.immutable_meta(id)};
}

std::vector<std::string> RedisMirrorWriter::LiveKeys(
    const MirrorManifest& m, const MirrorLiveEntry& e) const {
  std::vector<std::string> out;
  for (size_t i = 0; i < e.subfilters.size(); i++) {
    out.push_back(keys_.live(m.writer, e.id, static_cast<int>(i)));
  }
  out.push_back(keys_.live_meta(m.writer, e.id));
  return out;
}

void RedisMirrorWriter::RetireUnlisted(const MirrorManifest& before,
                                       const MirrorManifest& after,
                                       int64_t due_ms) {
  std::set<std::string> keep;
  for (const auto& e : after.immutables) {
    for (std::string& k : ImmutableKeys(e.id)) keep.insert(std::move(k));
  }
  for (const auto& e : after.lives) {
    for (std::string& k : LiveKeys(after, e)) keep.insert(std::move(k));
  }
  auto retire = [&](std::vector<std::string> keys) {
    for (std::string& k : keys) {
      if (!keep.contains(k) && !retired_.contains(k)) {
        retired_[std::move(k)] = due_ms;
      }
    }
  };
  for (const auto& e : before.immutables) retire(ImmutableKeys(e.id));
  for (const auto& e : before.lives) retire(LiveKeys(before, e));
  for (const std::string& k : keep) retired_.erase(k);
}

void RedisMirrorWriter::AppendUpload(const ImmutableUpload& u, uint64_t version,
                                     std::vector<RedisArgs>* cmds) const {
  const MirrorImmutableEntry& e = u.entry;
  if (e.size > 0) {
    cmds->push_back(RedisArgs{"SET", keys_.immutable(e.id), u.bytes});
  }
  FilterBytesInfo info = DescribeFilterBytes(u.bytes, u.num_keys);
  MirrorFilterMeta meta;
  meta.kind = "immutable";
  meta.capacity = u.num_keys;
  meta.error_rate = info.valid ? info.error_rate : 1;
  meta.bitmap_size = info.bitmap_bits;
  meta.hash_count = info.k;
  meta.inserted_count = u.num_keys;
  meta.version = version;
  meta.level = e.level;
  meta.smallest = e.smallest;
  meta.largest = e.largest;
  meta.bytes = e.size;
  meta.crc32c = e.crc32c;
  const std::string meta_key = keys_.immutable_meta(e.id);
  cmds->push_back(RedisArgs{"DEL", meta_key});
  RedisArgs hset;
  hset.Add("HSET").Add(meta_key);
  for (const auto& [f, v] : MetaFields(meta)) hset.Add(f).Add(v);
  cmds->push_back(std::move(hset));
}

void RedisMirrorWriter::AppendLiveWhole(uint64_t id, const LiveFilter& f,
                                        uint64_t version,
                                        std::vector<RedisArgs>* cmds) const {
  for (int i = 0; i < f.num_subfilters(); i++) {
    cmds->push_back(
        RedisArgs{"SET", keys_.live(writer_token_, id, i), f.bytes(i)});
  }
  const std::string meta_key = keys_.live_meta(writer_token_, id);
  cmds->push_back(RedisArgs{"DEL", meta_key});
  RedisArgs hset;
  hset.Add("HSET").Add(meta_key);
  for (const auto& [k, v] : MetaFields(f.Meta(version))) hset.Add(k).Add(v);
  cmds->push_back(std::move(hset));
}

absl::Status RedisMirrorWriter::ReadOldManifest() {
  const std::string manifest_key = keys_.manifest();
  absl::StatusOr<std::vector<RedisReply>> got =
      conn_->Pipeline({RedisArgs{"HGETALL", manifest_key}}, keys_.prefix());
  if (!got.ok()) return got.status();
  old_manifest_ = MirrorManifest();
  version_floor_ = published_.version;
  const RedisReply& all = (*got)[0];
  if (all.is_error()) {
    if (!all.str().starts_with("WRONGTYPE")) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "redis %s: HGETALL %s: %s", conn_->Describe(keys_.prefix()),
          manifest_key, all.str()));
    }
    // Something else sits at the manifest key. The full commit replaces
    // it; it must be deleted first (the script's HGET would fail).
    got = conn_->Pipeline({RedisArgs{"DEL", manifest_key}}, keys_.prefix());
    if (!got.ok()) return got.status();
  } else if (all.is_array()) {
    const std::vector<std::pair<std::string, std::string>> fields =
        HashFields(all);
    absl::StatusOr<MirrorManifest> m = DecodeManifest(fields);
    if (m.ok()) {
      old_manifest_ = std::move(*m);
      version_floor_ = std::max(version_floor_, old_manifest_.version);
    } else {
      for (const auto& [f, v] : fields) {
        uint64_t ver;
        if (f == mirror_field::kVersion && absl::SimpleAtoi(v, &ver)) {
          version_floor_ = std::max(version_floor_, ver);
        }
      }
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<const MirrorImmutableEntry*>>
RedisMirrorWriter::FindMissingImmutables(
    const std::vector<MirrorImmutableEntry>& immutables) {
  std::vector<RedisArgs> checks;
  std::vector<const MirrorImmutableEntry*> checked;
  for (const MirrorImmutableEntry& e : immutables) {
    checks.push_back(
        RedisArgs{"HMGET", keys_.immutable_meta(e.id), "bytes", "crc32c"});
    checks.push_back(RedisArgs{"STRLEN", keys_.immutable(e.id)});
    checked.push_back(&e);
  }
  std::vector<const MirrorImmutableEntry*> missing;
  if (checks.empty()) return missing;
  absl::StatusOr<std::vector<RedisReply>> got =
      conn_->Pipeline(checks, keys_.prefix());
  if (!got.ok()) return got.status();
  for (size_t i = 0; i < checked.size(); i++) {
    const MirrorImmutableEntry& e = *checked[i];
    if (!RedisHoldsImmutable(e, (*got)[2 * i], (*got)[2 * i + 1])) {
      missing.push_back(&e);
    }
  }
  return missing;
}

absl::Status RedisMirrorWriter::SendUploads(
    const std::vector<RedisArgs>& uploads) {
  if (uploads.empty()) return absl::OkStatus();
  absl::StatusOr<std::vector<RedisReply>> r =
      conn_->Pipeline(uploads, keys_.prefix());
  if (!r.ok()) return r.status();
  for (size_t i = 0; i < r->size(); i++) {
    if ((*r)[i].is_error()) {
      return absl::FailedPreconditionError(
          absl::StrFormat("redis %s: %s: %s", conn_->Describe(keys_.prefix()),
                          CommandName(uploads[i]), (*r)[i].str()));
    }
  }
  return absl::OkStatus();
}

absl::Status RedisMirrorWriter::UploadImmutables(
    const std::vector<const MirrorImmutableEntry*>& missing, FetchFn fetch) {
  std::vector<RedisArgs> uploads;
  size_t bytes = 0;
  for (const MirrorImmutableEntry* e : missing) {
    absl::StatusOr<ImmutableUpload> u = fetch(*e);
    if (!u.ok()) return u.status();
    if (u->entry.crc32c != e->crc32c || u->entry.size != e->size) {
      return absl::AbortedError(absl::StrFormat(
          "immutable filter %d changed while being published", e->id));
    }
    AppendUpload(*u, version_floor_ + 1, &uploads);
    bytes += u->bytes.size();
    if (bytes >= kUploadPipelineBytes) {
      absl::Status s = SendUploads(uploads);
      if (!s.ok()) return s;
      uploads.clear();
      bytes = 0;
    }
  }
  return SendUploads(uploads);
}

absl::Status RedisMirrorWriter::PrepareRepublish(
    const std::vector<MirrorImmutableEntry>& immutables, FetchFn fetch) {
  trusted_ = false;
  ResetStaged();
  prepared_.clear();
  if (fenced_) return last_error_;
  absl::Status s = EnsureConnected();
  if (s.ok()) s = MeasureClock();
  if (s.ok()) s = LoadScript();
  // Revoke first: whatever Redis holds now stops being trusted before
  // anything is republished (and, with wait_replicas, the replicas must
  // acknowledge that, so no lease-extending attempt is made while they are
  // missing).
  if (s.ok()) s = RevokeAndWait();
  if (!s.ok()) return Fail(s);

  // What Redis holds now.
  s = ReadOldManifest();
  if (!s.ok()) return Fail(s);

  // Which immutable filters Redis lacks (or holds other bytes for).
  absl::StatusOr<std::vector<const MirrorImmutableEntry*>> missing =
      FindMissingImmutables(immutables);
  if (!missing.ok()) return Fail(missing.status());
  s = UploadImmutables(*missing, fetch);
  if (!s.ok()) return Fail(s);
  prepared_ = immutables;
  return absl::OkStatus();
}

absl::Status RedisMirrorWriter::FinishRepublish(
    const std::vector<LiveRef>& lives, uint64_t complete_seq,
    int64_t complete_ms, int64_t lease_base_ms) {
  if (conn_ == nullptr || !have_clock_) {
    return Fail(absl::FailedPreconditionError(
        "mirror: FinishRepublish without PrepareRepublish"));
  }
  std::vector<RedisArgs> cmds;
  MirrorManifest m;
  uint64_t gen_bits = token_base_ ^ (uint64_t{std::random_device{}()} << 32) ^
                      std::random_device{}() ^ token_counter_;
  m.generation = absl::StrFormat("%016x", gen_bits);
  m.mode = options_.mode;
  m.comparator = options_.comparator;
  m.writer = writer_token_;
  m.lease_ttl_ms = options_.lease_ttl_ms;
  m.grace_ms = options_.grace_ms;
  m.complete_seq = complete_seq;
  m.complete_ms = complete_ms;
  m.immutables = prepared_;
  for (const LiveRef& l : lives) {
    AppendLiveWhole(l.id, *l.filter, version_floor_ + 1, &cmds);
    m.lives.push_back(l.filter->Entry(l.id));
  }
  std::sort(m.immutables.begin(), m.immutables.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  std::sort(m.lives.begin(), m.lives.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  std::vector<std::pair<std::string, std::string>> fields;
  for (auto& f : EncodeManifest(m)) {
    if (f.first != mirror_field::kVersion) fields.push_back(std::move(f));
  }
  token_ = NewToken();
  const int64_t send_ms = std::min(lease_base_ms, MirrorSteadyMs());
  const size_t commit_index = cmds.size();
  CommitRequest q;
  q.op = "full";
  q.generation = m.generation;
  q.version = version_floor_;
  q.lease_action = "acquire";
  q.deadline = true;
  q.send_ms = send_ms;
  q.set_fields = std::move(fields);
  q.must_exist = m.FilterKeys(keys_);
  cmds.push_back(CommitCommand(q));
  // Every lease sent before this one (on whatever server) has lapsed by
  // prior_bound; if this one lands on another history, readers of the old
  // one may trust the old lease until then (see ack_hold_ms()).
  const int64_t prior_bound = lease_bound_ms_;
  const std::string prior_replid = replid_;
  const bool prior_uncertain = acquire_uncertain_;
  acquire_uncertain_ = true;
  lease_bound_ms_ = std::max(lease_bound_ms_, send_ms + options_.lease_ttl_ms);
  size_t wait_index = SIZE_MAX;
  if (options_.wait_replicas > 0) {
    wait_index = cmds.size();
    cmds.push_back(WaitCommand());
  }
  absl::StatusOr<std::vector<RedisReply>> r =
      conn_->Pipeline(cmds, keys_.prefix());
  const int64_t reply_ms = MirrorSteadyMs();
  if (!r.ok()) return Fail(r.status());
  for (size_t i = 0; i < commit_index; i++) {
    if ((*r)[i].is_error()) {
      return Fail(absl::FailedPreconditionError(
          absl::StrFormat("redis %s: %s: %s", conn_->Describe(keys_.prefix()),
                          CommandName(cmds[i]), (*r)[i].str())));
    }
  }
  absl::StatusOr<CommitResult> c = ParseCommit((*r)[commit_index]);
  if (!c.ok()) return Fail(c.status());
  if (wait_index != SIZE_MAX) {
    absl::Status s = CheckWait((*r)[wait_index], "", "");
    if (!s.ok()) return Fail(s);
  }
  if (c->server_ms > 0) {  // 0: the commit did not read the server's clock
    clock_offset_ms_ = std::max(clock_offset_ms_, c->server_ms - reply_ms);
  }
  acquire_uncertain_ = false;
  if (prior_bound > 0 && (prior_uncertain || prior_replid != c->replid)) {
    ack_hold_ms_ = std::max(ack_hold_ms_, prior_bound);
    ack_holds_++;
  }
  replid_ = c->replid;
  lease_reconnects_ = conn_->reconnects();
  m.version = c->version;
  RetireUnlisted(old_manifest_, m, reply_ms + options_.grace_ms);
  RetireUnlisted(published_, m, reply_ms + options_.grace_ms);
  published_ = std::move(m);
  writes_ = 0;
  trusted_ = true;
  last_lease_send_ms_ = send_ms;
  last_error_ = absl::OkStatus();
  return absl::OkStatus();
}

absl::Status RedisMirrorWriter::SweepOrphans() {
  if (!trusted_) return absl::FailedPreconditionError("mirror not published");
  std::set<std::string> known = {keys_.manifest(), keys_.lease()};
  for (const auto& e : published_.immutables) {
    for (std::string& k : ImmutableKeys(e.id)) known.insert(std::move(k));
  }
  for (const auto& e : published_.lives) {
    for (std::string& k : LiveKeys(published_, e)) known.insert(std::move(k));
  }
  const std::string pattern = keys_.prefix() + "*";
  const int64_t due = MirrorSteadyMs() + options_.grace_ms;
  std::string cursor = "0";
  for (int round = 0; round < 100000; round++) {
    absl::StatusOr<std::vector<RedisReply>> r = conn_->Pipeline(
        {RedisArgs{"SCAN", cursor, "MATCH", pattern, "COUNT", "1000"}},
        keys_.prefix());
    if (!r.ok()) return r.status();
    const RedisReply& reply = (*r)[0];
    if (!reply.is_array() || reply.elements().size() != 2 ||
        !reply.elements()[1].is_array()) {
      return absl::InternalError(absl::StrFormat(
          "redis %s: SCAN: unexpected reply %s",
          conn_->Describe(keys_.prefix()), reply.DebugString()));
    }
    for (const RedisReply& k : reply.elements()[1].elements()) {
      if (!known.contains(k.str()) && !retired_.contains(k.str())) {
        retired_[k.str()] = due;
      }
    }
    cursor = reply.elements()[0].str();
    if (cursor == "0") break;
  }
  return absl::OkStatus();
}

}  // namespace siftdb
