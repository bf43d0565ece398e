// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/mirror/redis_mirror_writer.h"

#include <algorithm>
#include <bit>
#include <chrono>
#include <random>
#include <set>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "filter/filter_format.h"
#include "redis/client/redis_url.h"
#include "redis/mirror/redis_mirror_scripts.h"
#include "util/absl_compat.h"
#include "util/crc32c.h"

namespace siftdb {

namespace {

// BITFIELD SET operations per command.
constexpr size_t kBitfieldOpsPerCommand = 2048;
// Bytes a BITFIELD SET u1 operation costs on the wire (about), and the
// fixed cost of a command, for choosing bits vs byte ranges.
constexpr size_t kBytesPerBitOp = 36;
constexpr size_t kBytesPerCommand = 64;

}  // namespace

std::string RedisMirrorWriter::CommandName(const RedisArgs& args) {
  std::vector<std::string> v = args.ToVector();
  std::string out = v.empty() ? "" : v[0];
  if (v.size() > 1 && out != "EVAL") {
    absl::StrAppend(&out, " ", absl::CHexEscape(v[1].substr(0, 80)));
  }
  return out;
}

int64_t MirrorSteadyMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

int64_t MirrorUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

struct RedisMirrorWriter::Staged {
  std::vector<RedisArgs> cmds;
  std::vector<std::string> unlinked;  // retired keys the commit UNLINKs
  bool listing_set = false;
  std::vector<MirrorImmutableEntry> immutables;
  std::vector<MirrorLiveEntry> lives;
  bool watermark_set = false;
  uint64_t complete_seq = 0;
  int64_t complete_ms = 0;
};

void RedisMirrorWriter::ResetStaged() { staged_ = std::make_unique<Staged>(); }

RedisMirrorWriter::RedisMirrorWriter(RedisMirrorWriterOptions options)
    : options_(std::move(options)),
      keys_(options_.name),
      writer_token_(options_.writer_token.empty() ? NewWriterToken()
                                                  : options_.writer_token),
      token_base_(std::random_device{}() * uint64_t{0x100000001} ^
                  static_cast<uint64_t>(MirrorUnixMs())),
      staged_(std::make_unique<Staged>()) {
  if (options_.prior_lease_bound_ms > 0) {
    lease_bound_ms_ = options_.prior_lease_bound_ms;
    replid_ = options_.prior_replid;
    acquire_uncertain_ = options_.prior_uncertain || replid_.empty();
  }
}

RedisMirrorWriter::~RedisMirrorWriter() = default;

std::string RedisMirrorWriter::NewToken() {
  return absl::StrFormat("%s/%d", writer_token_, ++token_counter_);
}

int64_t RedisMirrorWriter::round_trips() const {
  return conn_ != nullptr ? conn_->round_trips() : 0;
}

absl::Status RedisMirrorWriter::Fail(absl::Status why) {
  trusted_ = false;
  ResetStaged();
  last_error_ = why;
  return why;
}

absl::Status RedisMirrorWriter::CheckSameConnection() {
  if (conn_->reconnects() == lease_reconnects_) return absl::OkStatus();
  // The pipeline may have run on another server than the one holding our
  // lease (through Sentinel: a new master, reached without an error). A
  // republication there takes the lease on that server's history, and holds
  // sync acknowledgements until the old lease has lapsed (ack_hold_ms()).
  return Fail(absl::UnavailableError(absl::StrFormat(
      "redis %s: reconnected since the lease was taken (a failover?): "
      "republishing",
      conn_->Describe(keys_.prefix()))));
}

absl::Status RedisMirrorWriter::EnsureConnected() {
  if (conn_ != nullptr) return absl::OkStatus();
  absl::StatusOr<std::unique_ptr<RedisConnection>> c =
      ConnectRedis(options_.connect);
  if (!c.ok()) return c.status();
  conn_ = std::move(*c);
  return absl::OkStatus();
}

absl::Status RedisMirrorWriter::MeasureClock() {
  const int64_t sent = MirrorSteadyMs();
  (void)sent;
  absl::StatusOr<std::vector<RedisReply>> r =
      conn_->Pipeline({RedisArgs{"TIME"}}, keys_.prefix());
  const int64_t replied = MirrorSteadyMs();
  if (!r.ok()) return r.status();
  const RedisReply& t = (*r)[0];
  int64_t sec = 0, usec = 0;
  if (!t.is_array() || t.elements().size() != 2 ||
      !absl::SimpleAtoi(t.elements()[0].str(), &sec) ||
      !absl::SimpleAtoi(t.elements()[1].str(), &usec)) {
    return absl::InternalError(
        absl::StrFormat("redis %s: TIME: unexpected reply %s",
                        conn_->Describe(keys_.prefix()), t.DebugString()));
  }
  // The server read its clock no later than `replied`: a lower bound of
  // server minus steady.
  clock_offset_ms_ = sec * 1000 + usec / 1000 - replied;
  have_clock_ = true;
  return absl::OkStatus();
}

absl::Status RedisMirrorWriter::LoadScript() {
  absl::StatusOr<std::vector<RedisReply>> r = conn_->Pipeline(
      {RedisArgs{"SCRIPT", "LOAD", MirrorCommitScript()}}, keys_.prefix());
  if (!r.ok()) return r.status();
  const RedisReply& sha = (*r)[0];
  if (!sha.is_string() || sha.str().size() != 40) {
    return absl::FailedPreconditionError(
        absl::StrFormat("redis %s: SCRIPT LOAD of the mirror commit script: %s",
                        conn_->Describe(keys_.prefix()), sha.DebugString()));
  }
  script_sha_ = sha.str();
  return absl::OkStatus();
}

void RedisMirrorWriter::StageLive(uint64_t id, const LiveFilter& filter,
                                  const LiveFilter::Delta& delta) {
  std::vector<RedisArgs>& cmds = staged_->cmds;
  for (int i = 0; i < filter.num_subfilters(); i++) {
    const std::string key = keys_.live(writer_token_, id, i);
    if (static_cast<size_t>(i) >= delta.first_new) {
      cmds.push_back(RedisArgs{"SET", key, filter.bytes(i)});
      continue;
    }
    // Each recorded bit went from 0 to 1 once: no duplicates.
    const std::vector<uint64_t>& bits = delta.bits[i];
    if (bits.empty()) continue;
    // Dirty 64-byte blocks (a bitmap, no sort) merged into runs (gaps of
    // up to three blocks merged): SETRANGE of the local bytes, or BITFIELD
    // SET u1 per bit, whichever is smaller. Either way Redis only gains
    // bits, because the local copy holds every bit Redis holds.
    const uint64_t num_blocks = filter.subfilter(i).num_blocks;
    std::vector<uint64_t> dirty((num_blocks + 63) / 64, 0);
    for (uint64_t b : bits) {
      const uint64_t block = b / kBlockBits;
      dirty[block >> 6] |= uint64_t{1} << (block & 63);
    }
    std::vector<std::pair<uint64_t, uint64_t>> runs;  // [first, last] block
    for (size_t w = 0; w < dirty.size(); w++) {
      uint64_t word = dirty[w];
      while (word != 0) {
        const uint64_t block = w * 64 + std::countr_zero(word);
        word &= word - 1;
        if (!runs.empty() && block <= runs.back().second + 4) {
          runs.back().second = block;
        } else {
          runs.emplace_back(block, block);
        }
      }
    }
    size_t range_cost = 0;
    for (const auto& [first, last] : runs) {
      range_cost += (last - first + 1) * kBlockBytes + kBytesPerCommand;
    }
    const size_t bit_cost =
        bits.size() * kBytesPerBitOp +
        (bits.size() / kBitfieldOpsPerCommand + 1) * kBytesPerCommand;
    if (range_cost < bit_cost) {
      const std::string& bytes = filter.bytes(i);
      for (const auto& [first, last] : runs) {
        cmds.push_back(
            RedisArgs{}
                .Add("SETRANGE")
                .Add(key)
                .AddUint(first * kBlockBytes)
                .Add(std::string_view(bytes).substr(
                    first * kBlockBytes, (last - first + 1) * kBlockBytes)));
      }
    } else {
      for (size_t j = 0; j < bits.size(); j += kBitfieldOpsPerCommand) {
        RedisArgs bf;
        bf.Add("BITFIELD").Add(key);
        const size_t end = std::min(bits.size(), j + kBitfieldOpsPerCommand);
        for (size_t x = j; x < end; x++) {
          bf.Add("SET").Add("u1").AddUint(bits[x]).Add("1");
        }
        cmds.push_back(std::move(bf));
      }
    }
  }
  const std::string meta_key = keys_.live_meta(writer_token_, id);
  MirrorFilterMeta meta = filter.Meta(published_.version + 1);
  if (delta.first_new == 0) {
    cmds.push_back(RedisArgs{"DEL", meta_key});
    RedisArgs hset;
    hset.Add("HSET").Add(meta_key);
    for (const auto& [k, v] : MetaFields(meta)) hset.Add(k).Add(v);
    cmds.push_back(std::move(hset));
  } else {
    cmds.push_back(RedisArgs{}
                       .Add("HSET")
                       .Add(meta_key)
                       .Add("inserted_count")
                       .AddUint(meta.inserted_count)
                       .Add("capacity")
                       .AddUint(meta.capacity)
                       .Add("bitmap_size")
                       .AddUint(meta.bitmap_size)
                       .Add("hash_count")
                       .AddInt(meta.hash_count)
                       .Add("subfilters")
                       .AddInt(meta.subfilters));
  }
}

void RedisMirrorWriter::StageUpload(const ImmutableUpload& upload) {
  AppendUpload(upload, published_.version + 1, &staged_->cmds);
}

void RedisMirrorWriter::StageListing(
    std::vector<MirrorImmutableEntry> immutables,
    std::vector<MirrorLiveEntry> lives) {
  std::sort(immutables.begin(), immutables.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  std::sort(lives.begin(), lives.end(),
            [](const auto& a, const auto& b) { return a.id < b.id; });
  staged_->listing_set = true;
  staged_->immutables = std::move(immutables);
  staged_->lives = std::move(lives);
}

void RedisMirrorWriter::StageWatermark(uint64_t complete_seq,
                                       int64_t complete_ms) {
  staged_->watermark_set = true;
  staged_->complete_seq = complete_seq;
  staged_->complete_ms = complete_ms;
}

bool RedisMirrorWriter::has_staged() const {
  return !staged_->cmds.empty() || staged_->listing_set ||
         staged_->watermark_set || !staged_->unlinked.empty();
}

absl::Status RedisMirrorWriter::Flush(bool renew, int64_t lease_base_ms) {
  std::unique_ptr<Staged> st = std::move(staged_);
  staged_ = std::make_unique<Staged>();
  if (!trusted_) {
    return absl::FailedPreconditionError(
        "mirror: not published (republish first)");
  }
  std::vector<RedisArgs> cmds = std::move(st->cmds);
  const bool wrote = !cmds.empty();
  CommitRequest q;
  q.generation = published_.generation;
  q.version = published_.version;
  q.expected_writes = absl::StrCat(writes_);
  q.bump_writes = wrote;
  q.unlink = st->unlinked;
  MirrorManifest next = published_;
  if (st->watermark_set) {
    q.set_watermark = true;
    q.complete_seq = st->complete_seq;
    q.complete_ms = st->complete_ms;
    next.complete_seq = st->complete_seq;
    next.complete_ms = st->complete_ms;
  }
  if (st->listing_set) {
    next.immutables = std::move(st->immutables);
    next.lives = std::move(st->lives);
    StageListingDiff(next, &q, &cmds);
  }
  const bool changed = !q.del_fields.empty() || !q.set_fields.empty();
  if (!wrote && !changed && !renew && !q.set_watermark && q.unlink.empty()) {
    return absl::OkStatus();
  }
  // A sync mirror's pipeline that only adds bits to listed filters needs no
  // commit: sync readers rely on the lease, not on the watermark, so the
  // watermark waits for the next commit (a listing change or a renewal),
  // and the bits count once the writes counter and the lease check out --
  // plain commands costing Redis a fraction of a script call per write
  // group.
  if (options_.mode == "sync" && !changed && !renew && q.unlink.empty()) {
    if (!wrote) return absl::OkStatus();
    return FlushBitsOnly(std::move(cmds));
  }
  // Every other pipeline ends in one checked commit: the bits above count
  // for a sync writer, and the watermark moves, only if it passes.
  q.send_ms = std::min(lease_base_ms, MirrorSteadyMs());
  q.lease_action = renew ? "renew" : "check";
  q.deadline = renew;
  if (renew) {
    lease_bound_ms_ =
        std::max(lease_bound_ms_, q.send_ms + options_.lease_ttl_ms);
  }
  const size_t commit_index = cmds.size();
  cmds.push_back(CommitCommand(q));
  size_t wait_index = SIZE_MAX;
  if (options_.wait_replicas > 0 && (wrote || changed)) {
    wait_index = cmds.size();
    cmds.push_back(WaitCommand());
  }

  absl::StatusOr<std::vector<RedisReply>> r =
      conn_->Pipeline(cmds, keys_.prefix());
  const int64_t reply_ms = MirrorSteadyMs();
  if (!r.ok()) return Fail(r.status());
  if (absl::Status s = CheckSameConnection(); !s.ok()) return s;
  const std::string where = conn_->Describe(keys_.prefix());
  for (size_t i = 0; i < r->size(); i++) {
    if (i == commit_index) continue;
    if ((*r)[i].is_error()) {
      return Fail(absl::FailedPreconditionError(absl::StrFormat(
          "redis %s: %s: %s", where, CommandName(cmds[i]), (*r)[i].str())));
    }
  }
  absl::StatusOr<CommitResult> c = ParseCommit((*r)[commit_index]);
  if (!c.ok()) return Fail(c.status());
  if (c->server_ms > 0) {  // 0: the commit did not read the server's clock
    clock_offset_ms_ = std::max(clock_offset_ms_, c->server_ms - reply_ms);
  }
  if (renew) last_lease_send_ms_ = q.send_ms;
  if (wrote) writes_++;
  replid_ = c->replid;
  next.version = c->version;
  if (changed) RetireUnlisted(published_, next, reply_ms + options_.grace_ms);
  if (wait_index != SIZE_MAX) {
    absl::Status s = CheckWait((*r)[wait_index], "", "");
    if (!s.ok()) return Fail(s);
  }
  published_ = std::move(next);
  for (const std::string& k : st->unlinked) retired_.erase(k);
  return absl::OkStatus();
}

void RedisMirrorWriter::StageListingDiff(const MirrorManifest& next,
                                         CommitRequest* q,
                                         std::vector<RedisArgs>* cmds) const {
  // Entries and their extensions alike: an entry and its extension change
  // in the same commit.
  std::map<std::string, std::string> before, after;
  for (auto& [f, v] : EncodeEntryFields(published_)) before[f] = std::move(v);
  for (auto& [f, v] : EncodeEntryFields(next)) after[f] = std::move(v);
  for (const auto& [f, v] : before) {
    if (!after.contains(f)) q->del_fields.push_back(f);
  }
  // A table moved to another level (a trivial move): its meta follows.
  std::map<uint64_t, int> old_levels;
  for (const auto& e : published_.immutables) old_levels[e.id] = e.level;
  for (const auto& e : next.immutables) {
    auto it = old_levels.find(e.id);
    if (it != old_levels.end() && it->second != e.level) {
      cmds->push_back(RedisArgs{}
                          .Add("HSET")
                          .Add(keys_.immutable_meta(e.id))
                          .Add("level")
                          .AddInt(e.level));
    }
  }
  for (const auto& [f, v] : after) {
    auto it = before.find(f);
    if (it == before.end() || it->second != v) q->set_fields.emplace_back(f, v);
  }
  std::vector<std::string> old_keys = published_.FilterKeys(keys_);
  std::set<std::string> old_set(old_keys.begin(), old_keys.end());
  for (std::string& k : next.FilterKeys(keys_)) {
    if (!old_set.contains(k)) q->must_exist.push_back(std::move(k));
  }
}

absl::Status RedisMirrorWriter::FlushBitsOnly(std::vector<RedisArgs> cmds) {
  const size_t writes_index = cmds.size();
  cmds.push_back(
      RedisArgs{"HINCRBY", keys_.manifest(), mirror_field::kWrites, "1"});
  const size_t lease_index = cmds.size();
  cmds.push_back(RedisArgs{"GET", keys_.lease()});
  if (options_.wait_replicas > 0) cmds.push_back(WaitCommand());
  absl::StatusOr<std::vector<RedisReply>> r =
      conn_->Pipeline(cmds, keys_.prefix());
  if (!r.ok()) return Fail(r.status());
  if (absl::Status s = CheckSameConnection(); !s.ok()) return s;
  const std::string where = conn_->Describe(keys_.prefix());
  for (size_t i = 0; i < r->size(); i++) {
    if ((*r)[i].is_error()) {
      return Fail(absl::FailedPreconditionError(absl::StrFormat(
          "redis %s: %s: %s", where, CommandName(cmds[i]), (*r)[i].str())));
    }
  }
  const RedisReply& w = (*r)[writes_index];
  if (!w.is_integer() || static_cast<uint64_t>(w.integer()) != writes_ + 1) {
    return Fail(absl::DataLossError(absl::StrFormat(
        "redis %s: manifest %s \"writes\" is %s, expected %d: Redis lost "
        "mirror writes (restart, flush or failover), or another engine "
        "writes",
        where, keys_.manifest(), w.DebugString(), writes_ + 1)));
  }
  writes_++;
  const std::string ours = EncodeLease({token_, replid_});
  const RedisReply& l = (*r)[lease_index];
  if (!l.is_string() || l.str() != ours) {
    return Fail(absl::FailedPreconditionError(absl::StrFormat(
        "redis %s: lease %s is %s, not this engine's \"%s\": it lapsed or "
        "was taken, or the server's history changed",
        where, keys_.lease(), l.DebugString(), ours)));
  }
  if (options_.wait_replicas > 0) {
    absl::Status s = CheckWait(r->back(), "", "");
    if (!s.ok()) return Fail(s);
  }
  return absl::OkStatus();
}

int64_t RedisMirrorWriter::renewal_due_ms() const {
  return last_lease_send_ms_ + lease_px_ms() / 3;
}

int64_t RedisMirrorWriter::next_deletion_ms() const {
  int64_t next = INT64_MAX;
  for (const auto& [k, due] : retired_) next = std::min(next, due);
  return next;
}

size_t RedisMirrorWriter::StageDeletions(size_t max_keys) {
  if (!trusted_ || retired_.empty()) return 0;
  const int64_t now = MirrorSteadyMs();
  std::set<std::string> listed;
  for (const auto& e : published_.immutables) {
    for (std::string& k : ImmutableKeys(e.id)) listed.insert(std::move(k));
  }
  for (const auto& e : published_.lives) {
    for (std::string& k : LiveKeys(published_, e)) listed.insert(std::move(k));
  }
  std::set<std::string> staged(staged_->unlinked.begin(),
                               staged_->unlinked.end());
  size_t n = 0;
  for (auto it = retired_.begin(); it != retired_.end() && n < max_keys;) {
    if (listed.contains(it->first)) {
      it = retired_.erase(it);
      continue;
    }
    if (it->second <= now && !staged.contains(it->first)) {
      staged_->unlinked.push_back(it->first);
      n++;
    }
    ++it;
  }
  return n;
}

absl::Status RedisMirrorWriter::DeleteRetired(size_t max_keys) {
  if (!trusted_) return absl::OkStatus();
  if (StageDeletions(max_keys) == 0) return absl::OkStatus();
  return Flush(false, MirrorSteadyMs());
}

std::string RedisMirrorWriter::DebugString() const {
  const int64_t now = MirrorSteadyMs();
  return absl::StrFormat(
      "redis=%s trusted=%s%s writer=%s replid=%s generation=%s version=%d "
      "tables=%d memtables=%d lease_left_ms=%d ack_hold_ms=%d ack_holds=%d "
      "retired=%d round_trips=%d",
      conn_ != nullptr ? conn_->Describe(keys_.prefix())
      : options_.connect.endpoints.empty()
          ? std::string("?")
          : RedactRedisEndpoint(options_.connect.endpoints[0]),
      trusted_ ? "yes" : "no", fenced_ ? " fenced=yes" : "", writer_token_,
      replid_.empty() ? "-" : replid_.substr(0, 12),
      published_.generation.empty() ? "-" : published_.generation,
      published_.version, published_.immutables.size(), published_.lives.size(),
      lease_bound_ms_ > now ? lease_bound_ms_ - now : 0,
      ack_hold_ms_ > now ? ack_hold_ms_ - now : 0, ack_holds_, retired_.size(),
      round_trips());
}

}  // namespace siftdb
