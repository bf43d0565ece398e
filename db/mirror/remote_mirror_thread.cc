// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The mirror thread of RemoteMirrorImpl (see remote_mirror_impl.h for the
// invariants): applies queued events to the local MemTable filters, sends
// one pipeline per iteration while trusted, and republishes everything after
// any failure, retrying with backoff.

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/mirror/remote_mirror_impl.h"
#include "db/table_cache.h"
#include "table/format.h"
#include "table/table.h"
#include "util/crc32c.h"

namespace siftdb {

namespace {

constexpr int64_t kInitialBackoffMs = 20;
constexpr int64_t kMaxBackoffMs = 2000;
// A table that could not be read is retried after this long (a newer
// version usually replaced it meanwhile).
constexpr int64_t kVersionRetryMs = 50;

}  // namespace

void RemoteMirrorImpl::ThreadMain() {
  while (true) {
    {
      MutexLock l(&mu_);
      while (!stop_) {
        const int64_t now = MirrorSteadyMs();
        int64_t wake;
        bool idle = false;
        if (writer_->fenced()) {
          // Another engine open publishes this mirror: never again. The
          // queue is dropped; writers do not wait for a fenced mirror.
          queue_.clear();
          wake = now + 1000;
        } else if (!writer_->trusted()) {
          if (now >= retry_at_ms_) break;
          wake = retry_at_ms_;  // events need not wake us: they wait
        } else {
          wake =
              std::min(writer_->renewal_due_ms(), writer_->next_deletion_ms());
          if (pending_version_.has_value()) {
            wake = std::min(wake, version_retry_at_ms_);
          }
          if (!queue_.empty()) {
            // Async: let groups gather a little, so one pipeline carries
            // many (fewer round trips and wake-ups per key).
            const int64_t ready = queue_.front().enqueue_ms + batch_delay_ms_;
            if (now >= ready) break;
            wake = std::min(wake, ready);
          } else {
            idle = true;
          }
          if (now >= wake) break;
        }
        mirror_idle_ = idle;
        work_cv_.WaitFor(&mu_, std::chrono::milliseconds(
                                   std::clamp<int64_t>(wake - now, 1, 1000)));
        mirror_idle_ = false;
      }
      if (stop_) return;
    }
    if (!writer_->trusted()) {
      absl::Status s = Republish();
      const int64_t now = MirrorSteadyMs();
      if (s.ok()) {
        backoff_ms_ = 0;
        Log("published: " + writer_->DebugString());
        if (!swept_) {
          // Keys an earlier engine left behind (retired, not yet deleted).
          absl::Status sweep = writer_->SweepOrphans();
          swept_ = sweep.ok();
          if (!sweep.ok()) Log("sweeping orphans: " + sweep.ToString());
        }
      } else if (writer_->fenced()) {
        NoteFenced();
      } else {
        backoff_ms_ = backoff_ms_ == 0
                          ? kInitialBackoffMs
                          : std::min(backoff_ms_ * 2, kMaxBackoffMs);
        retry_at_ms_ = now + backoff_ms_;
        Log(absl::StrFormat("publication failed (retry in %d ms): %s",
                            backoff_ms_, s.ToString()));
      }
      if (!s.ok()) continue;
    } else {
      RunTrusted();
    }
    if (writer_->trusted()) {
      // Settled once the hold (if any) has lapsed; failing only delays it.
      absl::Status h = RecordHistory(/*before_acquire=*/false);
      if (!h.ok()) Log("recording the lease history: " + h.ToString());
    }
  }
}

absl::Status RemoteMirrorImpl::RecordHistory(bool before_acquire) {
  MirrorHistory want;
  want.mirror_name = options_.remote_filter.name;
  want.replid = writer_->lease_replid();
  want.settled = !before_acquire && writer_->trusted() &&
                 !writer_->acquire_uncertain() &&
                 MirrorSteadyMs() >= writer_->ack_hold_ms();
  if (history_on_disk_.has_value() && *history_on_disk_ == want) {
    return absl::OkStatus();
  }
  Env* env = options_.env != nullptr ? options_.env : Env::Default();
  absl::Status s = WriteMirrorHistory(env, dbname_, want);
  if (!s.ok()) {
    history_on_disk_.reset();  // old or new: unknown, so written again
    return absl::Status(
        s.code(),
        absl::StrCat("recording the lease history in ",
                     MirrorHistoryFileName(dbname_), ": ", s.message()));
  }
  history_on_disk_ = std::move(want);
  return absl::OkStatus();
}

void RemoteMirrorImpl::NoteFenced() {
  if (fence_logged_ || !writer_->fenced()) return;
  fence_logged_ = true;
  Log("FENCED, publishing stopped for good: " +
      writer_->last_error().ToString());
}

void RemoteMirrorImpl::ApplyLocally(std::vector<Event>* events,
                                    bool /*defer_versions*/) {
  auto live_for = [&](uint64_t id) -> LiveFilter* {
    auto it = lives_.find(id);
    if (it == lives_.end()) {
      it =
          lives_.emplace(id, std::make_unique<LiveFilter>(live_options_)).first;
      deltas_[id] = LiveFilter::Delta();  // first_new = 0: sent whole
    }
    return it->second.get();
  };
  for (Event& e : *events) {
    switch (e.kind) {
      case Event::Kind::kStart:
        live_for(e.memtable_id);
        pending_version_ = PendingVersion{std::move(e.tables), {}};
        break;
      case Event::Kind::kWrites: {
        LiveFilter* live = live_for(e.memtable_id);
        live->Add(e.hashes.data(), e.hashes.size(), &deltas_[e.memtable_id]);
        local_seq_ = std::max(local_seq_, e.last_sequence);
        break;
      }
      case Event::Kind::kSwitch:
        live_for(e.memtable_id);
        live_for(e.new_id);
        break;
      case Event::Kind::kVersion:
        if (!pending_version_.has_value()) pending_version_ = PendingVersion();
        pending_version_->tables = std::move(e.tables);
        for (uint64_t id : e.retired) pending_version_->retired.push_back(id);
        break;
    }
  }
  events->clear();
}

absl::StatusOr<RemoteMirrorImpl::TableFilterInfo>
RemoteMirrorImpl::ReadTableFilter(const MirrorTable& t, std::string* bytes) {
  TableFilterInfo info;
  absl::Status copied;
  absl::Status s =
      table_cache_->WithTable(t.number, t.file_size, [&](const Table& table) {
        // From the table, or the block cache (Options::cache_filter_blocks).
        copied = table.CopyFilter(bytes);
        info.num_keys = table.properties().filter_num_keys;
        info.entry.policy = std::string(table.filter_policy_name());
        // What else the filter holds, for remote prefix checks: the
        // prefixes of the extractor the table was built under, and whether
        // the whole keys are there too (a prefix-only filter's policy name
        // carries the tag, which readers that predate prefixes do not know:
        // they answer maybe for it).
        info.entry.prefix_extractor =
            table.properties().filter_prefix_extractor;
        info.entry.whole_keys =
            !info.entry.policy.starts_with(kPrefixOnlyFilterTag);
      });
  if (s.ok()) s = copied;
  if (!s.ok()) return s;
  info.entry.id = t.number;
  info.entry.level = t.level;
  info.entry.size = bytes->size();
  info.entry.crc32c = crc32c::Value(bytes->data(), bytes->size());
  info.entry.smallest = t.smallest_user_key;
  info.entry.largest = t.largest_user_key;
  if (info.entry.policy.empty()) info.entry.policy = "-";
  table_info_[t.number] = info;
  return info;
}

absl::StatusOr<std::vector<MirrorImmutableEntry>> RemoteMirrorImpl::EntriesFor(
    const std::vector<MirrorTable>& tables) {
  std::vector<MirrorImmutableEntry> out;
  for (const MirrorTable& t : tables) {
    auto it = table_info_.find(t.number);
    MirrorImmutableEntry e;
    if (it != table_info_.end()) {
      e = it->second.entry;
    } else {
      std::string bytes;
      absl::StatusOr<TableFilterInfo> info = ReadTableFilter(t, &bytes);
      if (!info.ok()) return info.status();
      e = info->entry;
    }
    e.level = t.level;  // a trivial move changes only the level
    out.push_back(std::move(e));
  }
  return out;
}

std::vector<MirrorLiveEntry> RemoteMirrorImpl::LiveListing() const {
  std::vector<MirrorLiveEntry> out;
  for (const auto& [id, live] : lives_) out.push_back(live->Entry(id));
  return out;
}

bool RemoteMirrorImpl::StagePendingVersion() {
  PendingVersion& p = *pending_version_;
  std::vector<ImmutableUpload> uploads;
  for (const MirrorTable& t : p.tables) {
    if (table_info_.contains(t.number)) continue;
    ImmutableUpload u;
    absl::StatusOr<TableFilterInfo> info = ReadTableFilter(t, &u.bytes);
    if (!info.ok()) {
      Log(
          absl::StrFormat("table %06d: filter not readable yet (%s); the "
                          "previous listing stays",
                          t.number, info.status().ToString()));
      return false;
    }
    u.entry = info->entry;
    u.num_keys = info->num_keys;
    uploads.push_back(std::move(u));
  }
  for (const ImmutableUpload& u : uploads) writer_->StageUpload(u);
  tables_ = std::move(p.tables);
  for (uint64_t id : p.retired) {
    lives_.erase(id);
    deltas_.erase(id);
  }
  pending_version_.reset();
  listing_dirty_ = true;
  std::set<uint64_t> live_tables;
  for (const MirrorTable& t : tables_) live_tables.insert(t.number);
  for (auto it = table_info_.begin(); it != table_info_.end();) {
    it =
        live_tables.contains(it->first) ? std::next(it) : table_info_.erase(it);
  }
  return true;
}

void RemoteMirrorImpl::SetApplied(SequenceNumber seq, bool failed,
                                  const absl::Status& why) {
  MutexLock l(&mu_);
  // The hold is raised in the same step as applied_seq_, so no waiter sees
  // the new sequence without it.
  ack_hold_ms_ = std::max(ack_hold_ms_, writer_->ack_hold_ms());
  if (!failed) applied_seq_ = std::max(applied_seq_, seq);
  lease_bound_ms_ = std::max(lease_bound_ms_, writer_->lease_bound_ms());
  const int64_t now = MirrorSteadyMs();
  if (failed || trusted_ != writer_->trusted() ||
      now - writer_state_ms_ >= 100) {
    writer_state_ = writer_->DebugString();
    writer_state_ms_ = now;
  }
  trusted_ = writer_->trusted();
  fenced_ = writer_->fenced();
  if (failed) {
    last_error_ = why;
    failures_++;
  }
  inflight_oldest_ms_ = 0;
  done_cv_.SignalAll();
}

void RemoteMirrorImpl::RunTrusted() {
  std::vector<Event> events = std::move(spare_events_);
  events.clear();
  int64_t base;
  {
    MutexLock l(&mu_);
    // Events are in enqueue order: the first is the oldest.
    if (!queue_.empty()) inflight_oldest_ms_ = queue_.front().enqueue_ms;
    events.swap(queue_);
    batch_unix_ms_ = MirrorUnixMs();
    // The lease this pipeline may extend is based here: a group queued
    // after this moment is not in it, and is covered by the bound below.
    base = MirrorSteadyMs();
  }
  ApplyLocally(&events, /*defer_versions=*/true);
  spare_events_ = std::move(events);  // empty, keeps its capacity
  const int64_t now = MirrorSteadyMs();
  if (pending_version_.has_value() && now >= version_retry_at_ms_) {
    if (!StagePendingVersion()) version_retry_at_ms_ = now + kVersionRetryMs;
  }
  for (auto& [id, delta] : deltas_) {
    auto it = lives_.find(id);
    if (it == lives_.end()) continue;
    const bool grew =
        delta.first_new < static_cast<size_t>(it->second->num_subfilters());
    if (grew) listing_dirty_ = true;
    if (grew || delta.num_bits() > 0) {
      writer_->StageLive(id, *it->second, delta);
    }
  }
  if (listing_dirty_) {
    absl::StatusOr<std::vector<MirrorImmutableEntry>> entries =
        EntriesFor(tables_);
    if (entries.ok()) {
      writer_->StageListing(std::move(*entries), LiveListing());
    } else {
      // Only possible for a table whose facts were dropped; keep the
      // listing.
      Log("listing: " + entries.status().ToString());
    }
  }
  if (local_seq_ > writer_->published().complete_seq) {
    writer_->StageWatermark(local_seq_, batch_unix_ms_);
  }
  // Deletions that are due ride along (no round trip of their own).
  if (writer_->next_deletion_ms() <= now) writer_->StageDeletions();
  const bool renew = now >= writer_->renewal_due_ms();
  if (renew) RaiseLeaseBound(base + lease_ttl_ms_);
  absl::Status s = writer_->Flush(renew, base);
  if (s.ok()) {
    listing_dirty_ = false;
    for (auto& [id, delta] : deltas_) {
      auto it = lives_.find(id);
      if (it != lives_.end()) delta.Reset(*it->second);
    }
  } else if (writer_->fenced()) {
    NoteFenced();
  } else {
    Log("mirror broken, republishing: " + s.ToString());
  }
  SetApplied(local_seq_, !s.ok(), s);
}

absl::Status RemoteMirrorImpl::Republish() {
  {
    MutexLock l(&mu_);
    republishes_++;
  }
  // Everything queued so far goes into the local state, and the newest
  // table set is adopted outright (it is read fresh below).
  std::vector<Event> events;
  {
    MutexLock l(&mu_);
    events.swap(queue_);
  }
  ApplyLocally(&events, /*defer_versions=*/false);
  if (pending_version_.has_value()) {
    tables_ = std::move(pending_version_->tables);
    for (uint64_t id : pending_version_->retired) {
      lives_.erase(id);
      deltas_.erase(id);
    }
    pending_version_.reset();
  }
  absl::StatusOr<std::vector<MirrorImmutableEntry>> entries =
      EntriesFor(tables_);
  absl::Status s = entries.status();
  if (s.ok()) {
    s = writer_->PrepareRepublish(
        *entries,
        [&](const MirrorImmutableEntry& e) -> absl::StatusOr<ImmutableUpload> {
          for (const MirrorTable& t : tables_) {
            if (t.number != e.id) continue;
            ImmutableUpload u;
            absl::StatusOr<TableFilterInfo> info = ReadTableFilter(t, &u.bytes);
            if (!info.ok()) return info.status();
            u.entry = info->entry;
            u.num_keys = info->num_keys;
            return u;
          }
          return absl::NotFoundError(
              absl::StrFormat("table %06d is no longer live", e.id));
        });
  }
  // The acquisition may land on a history no record names: say so on disk
  // first, so that a crash after it leaves the next open holding.
  if (s.ok()) s = RecordHistory(/*before_acquire=*/true);
  if (!s.ok()) {
    SetApplied(0, true, s);
    return s;
  }
  // From here writers wait again: everything they were acknowledged for
  // without waiting is in `late` or already applied locally.
  std::vector<Event> late;
  int64_t base;
  {
    MutexLock l(&mu_);
    base = MirrorSteadyMs();
    lease_bound_ms_ = std::max(lease_bound_ms_, base + lease_ttl_ms_);
    late.swap(queue_);
    batch_unix_ms_ = MirrorUnixMs();
  }
  // Version events that arrived meanwhile wait for the next iteration: the
  // MemTables they retire stay listed until their tables are uploaded.
  ApplyLocally(&late, /*defer_versions=*/true);
  std::vector<RedisMirrorWriter::LiveRef> refs;
  for (const auto& [id, live] : lives_) refs.push_back({id, live.get()});
  s = writer_->FinishRepublish(refs, local_seq_, batch_unix_ms_, base);
  listing_dirty_ = true;  // deferred versions and new sub-filters follow
  if (s.ok()) {
    for (auto& [id, live] : lives_) deltas_[id].Reset(*live);
  }
  SetApplied(local_seq_, !s.ok(), s);
  return s;
}

}  // namespace siftdb
