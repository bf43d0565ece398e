// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteMirror::Create (option checks) and RemoteMirrorImpl's entry points:
// what DBImpl calls. Nothing here talks to Redis; see
// remote_mirror_thread.cc for the mirror thread.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/mirror/remote_mirror_impl.h"
#include "filter/bloom_math.h"
#include "filter/filter_hash.h"
#include "redis/client/redis_url.h"
#include "siftdb/comparator.h"
#include "siftdb/slice_transform.h"

namespace siftdb {

namespace {

void LogTo(const Options& options, const std::string& message) {
  if (options.info_log != nullptr) {
    options.info_log->Log("remote filter mirror: " + message);
  }
}

// An earlier process of this DB (it existed before this open) may still
// hold a lease, on whatever server it last reached, until open time +
// lease_ttl_ms. MIRROR-HISTORY says on which history it was confirmed;
// without a settled record of this mirror name the first acquisition holds
// acknowledgements whatever server it lands on. Returns the record read
// (nullopt: none usable, so the mirror thread rewrites it).
std::optional<MirrorHistory> PriorLease(const Options& options,
                                        const std::string& dbname,
                                        RedisMirrorWriterOptions* w) {
  const RemoteFilterOptions& r = options.remote_filter;
  w->prior_lease_bound_ms = MirrorSteadyMs() + r.lease_ttl_ms;
  w->prior_uncertain = true;
  Env* env = options.env != nullptr ? options.env : Env::Default();
  absl::StatusOr<MirrorHistory> h = ReadMirrorHistory(env, dbname);
  std::string why;
  if (!h.ok()) {
    why = absl::IsNotFound(h.status())
              ? "no MIRROR-HISTORY (first open with the mirror, a checkpoint, "
                "or a DB last opened by an older siftdb)"
              : h.status().ToString();
  } else if (h->mirror_name != r.name) {
    why = "MIRROR-HISTORY names another mirror (\"" + h->mirror_name + "\")";
  } else {
    w->prior_replid = h->replid;
    w->prior_uncertain = !h->settled;
    if (!h->settled) {
      why = "the previous open's last lease acquisition was unsettled";
    }
  }
  if (!why.empty() && r.mode == RemoteFilterOptions::Mode::kSync) {
    LogTo(options, why +
                       ": sync writes are held until every lease of an earlier "
                       "process has lapsed, unless the history is confirmed");
  }
  if (!h.ok()) return std::nullopt;
  return *h;
}

absl::Status BadOption(const std::string& what) {
  return absl::InvalidArgumentError("invalid option: Options.remote_filter." +
                                    what);
}

// The hashes a write group adds to its MemTable's live filter: each Put
// key's and, with a prefix extractor, each in-domain key's prefix (hashed
// like a key, as the table filters hold them), so that a remote prefix
// check never misses a prefix that is only in the MemTable.
class HashCollector final : public WriteBatch::Handler {
 public:
  HashCollector(const SliceTransform* extractor, std::vector<uint64_t>* out)
      : extractor_(extractor), out_(out) {}
  void Put(std::string_view key, std::string_view) override {
    out_->push_back(FilterKeyHash(key));
    if (extractor_ != nullptr && extractor_->InDomain(key)) {
      const std::string_view prefix = extractor_->Transform(key);
      // Neighbouring keys often share a prefix: hash it once per run.
      if (!have_last_ || prefix != last_prefix_) {
        last_prefix_.assign(prefix);
        have_last_ = true;
        out_->push_back(FilterKeyHash(prefix));
      }
    }
  }
  // A deleted key is not held: its absence needs no "maybe".
  void Delete(std::string_view) override {}

 private:
  const SliceTransform* const extractor_;
  std::vector<uint64_t>* const out_;
  std::string last_prefix_;
  bool have_last_ = false;
};

}  // namespace

absl::Status RemoteMirror::ValidateOptions(const RemoteFilterOptions& r) {
  if (r.mode == RemoteFilterOptions::Mode::kOff) {
    return BadOption("mode is kOff (no mirror to create)");
  }
  if (r.endpoints.empty()) {
    return BadOption("endpoints is empty (need host:port or unix:/path)");
  }
  for (const std::string& e : r.endpoints) {
    // A URL (redis://, redis+sentinel://, ...) must stand alone.
    absl::StatusOr<RedisUrl> url = ParseRedisUrl(e);
    if (!url.ok())
      return BadOption("endpoints: " + std::string(url.status().message()));
    if (url->scheme != RedisUrlScheme::kPlain && r.endpoints.size() > 1) {
      return BadOption("endpoints: a URL must be the only endpoint");
    }
  }
  absl::Status s = ValidateMirrorName(r.name);
  if (!s.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("invalid option: ", s.message()));
  }
  if (r.lease_ttl_ms < 100) {
    return BadOption(
        absl::StrFormat("lease_ttl_ms = %d (must be >= 100)", r.lease_ttl_ms));
  }
  if (r.connect_timeout_ms <= 0 || r.command_timeout_ms <= 0) {
    return BadOption(absl::StrFormat(
        "connect_timeout_ms = %d, command_timeout_ms = %d (must be > 0)",
        r.connect_timeout_ms, r.command_timeout_ms));
  }
  if (r.async_max_lag_ms < 0 || r.wait_replicas < 0 || r.wait_timeout_ms < 0 ||
      r.delete_grace_ms < 0) {
    return BadOption(absl::StrFormat(
        "async_max_lag_ms = %d, wait_replicas = %d, wait_timeout_ms = %d, "
        "delete_grace_ms = %d (none may be negative)",
        r.async_max_lag_ms, r.wait_replicas, r.wait_timeout_ms,
        r.delete_grace_ms));
  }
  return absl::OkStatus();
}

absl::StatusOr<std::unique_ptr<RemoteMirror>> RemoteMirror::Create(
    const Options& options, const std::string& dbname, TableCache* table_cache,
    Statistics* statistics, bool db_created) {
  (void)statistics;
  const RemoteFilterOptions& r = options.remote_filter;
  absl::Status s = ValidateOptions(r);
  if (!s.ok()) return s;

  RedisMirrorWriterOptions w;
  w.connect.endpoints = r.endpoints;
  w.connect.client.username = r.username;
  w.connect.client.password = r.password;
  w.connect.client.connect_timeout = absl::Milliseconds(r.connect_timeout_ms);
  w.connect.client.command_timeout = absl::Milliseconds(r.command_timeout_ms);
  w.connect.client.retry_deadline = absl::ZeroDuration();  // we retry
  w.name = r.name;
  w.mode = r.mode == RemoteFilterOptions::Mode::kSync ? "sync" : "async";
  w.comparator = options.comparator != nullptr ? options.comparator->Name()
                                               : BytewiseComparator()->Name();
  w.lease_ttl_ms = r.lease_ttl_ms;
  w.grace_ms = r.delete_grace_ms;
  w.wait_replicas =
      r.mode == RemoteFilterOptions::Mode::kSync ? r.wait_replicas : 0;
  w.wait_timeout_ms = r.wait_timeout_ms;

  std::optional<MirrorHistory> history;
  if (!db_created) {
    history = PriorLease(options, dbname, &w);
  }

  LiveFilterOptions live;
  live.initial_capacity = std::clamp<uint64_t>(options.write_buffer_size / 128,
                                               1024, uint64_t{1} << 22);
  const double bpk = options.filter_bits_per_key;
  live.error_rate =
      bpk > 0 ? std::clamp(BlockedFpRate(bpk, BlockedOptimalK(bpk)), 1e-6, 0.1)
              : 0.01;
  if (options.prefix_extractor != nullptr) {
    live.prefix_extractor = options.prefix_extractor->Name();
  }
  return std::unique_ptr<RemoteMirror>(new RemoteMirrorImpl(
      options, dbname, table_cache, std::move(w), live, std::move(history)));
}

RemoteMirrorImpl::RemoteMirrorImpl(const Options& options,
                                   const std::string& dbname,
                                   TableCache* table_cache,
                                   RedisMirrorWriterOptions writer_options,
                                   LiveFilterOptions live_options,
                                   std::optional<MirrorHistory> history_on_disk)
    : options_(options),
      dbname_(dbname),
      mode_(options.remote_filter.mode),
      table_cache_(table_cache),
      live_options_(live_options),
      lease_ttl_ms_(options.remote_filter.lease_ttl_ms),
      batch_delay_ms_(
          options.remote_filter.mode == RemoteFilterOptions::Mode::kAsync
              ? std::clamp<int64_t>(options.remote_filter.async_max_lag_ms / 10,
                                    0, 10)
              : 0),
      writer_(std::make_unique<RedisMirrorWriter>(std::move(writer_options))),
      history_on_disk_(std::move(history_on_disk)) {
  // A previous process of this DB may hold a lease over a manifest that
  // lacks our writes: until our own lease is taken, it may live this long.
  MutexLock l(&mu_);
  lease_bound_ms_ = MirrorSteadyMs() + lease_ttl_ms_;
}

RemoteMirrorImpl::~RemoteMirrorImpl() {
  {
    MutexLock l(&mu_);
    stop_ = true;
    work_cv_.SignalAll();
    done_cv_.SignalAll();
  }
  if (thread_.joinable()) thread_.join();
  // Readers stop trusting now, not when the lease expires: a reopen with
  // the mirror off (or ldb, RepairDB) could otherwise write keys a still
  // trusted mirror lacks.
  absl::Status s = writer_->Revoke();
  if (!s.ok()) Log("revoking the lease at close: " + s.ToString());
}

void RemoteMirrorImpl::Enqueue(Event e) {
  e.enqueue_ms = MirrorSteadyMs();
  queue_.push_back(std::move(e));
  // A busy mirror thread looks at the queue before it sleeps again; only an
  // idle one needs waking (a futex call per write group otherwise).
  if (mirror_idle_) {
    mirror_idle_ = false;
    work_cv_.Signal();
  }
}

void RemoteMirrorImpl::RaiseLeaseBound(int64_t bound_ms) {
  MutexLock l(&mu_);
  lease_bound_ms_ = std::max(lease_bound_ms_, bound_ms);
}

void RemoteMirrorImpl::Start(std::vector<MirrorTable> tables,
                             uint64_t memtable_id) {
  MutexLock l(&mu_);
  if (started_) return;
  started_ = true;
  Event e;
  e.kind = Event::Kind::kStart;
  e.memtable_id = memtable_id;
  e.tables = std::move(tables);
  Enqueue(std::move(e));
  thread_ = std::thread([this] { ThreadMain(); });
}

void RemoteMirrorImpl::WaitUntilRecoveredDataIsCovered() {
  if (mode_ != RemoteFilterOptions::Mode::kSync) return;
  MutexLock l(&mu_);
  // trusted_ turns true only after a republication that listed the Start
  // tables; lease_bound_ms_ started at creation + lease_ttl_ms. A lease
  // taken on another history than the previous process's holds as writes
  // do (ack_hold_ms_): readers of the old one may still trust its lease.
  while (!stop_) {
    const int64_t now = MirrorSteadyMs();
    if (trusted_ && now >= ack_hold_ms_) break;
    if (now >= lease_bound_ms_) {
      waits_lapsed_++;
      break;
    }
    const int64_t until = trusted_ ? ack_hold_ms_ : lease_bound_ms_;
    done_cv_.WaitFor(&mu_, std::chrono::milliseconds(
                               std::clamp<int64_t>(until - now, 1, 1000)));
  }
}

void RemoteMirrorImpl::AddWriteGroup(uint64_t memtable_id,
                                     const WriteBatch& group,
                                     SequenceNumber last_sequence) {
  Event e;
  e.kind = Event::Kind::kWrites;
  e.memtable_id = memtable_id;
  e.last_sequence = last_sequence;
  e.hashes.reserve(static_cast<size_t>(std::max(0, group.Count())));
  HashCollector collector(options_.prefix_extractor.get(), &e.hashes);
  // A group DBImpl built is well-formed; if not, what was collected goes.
  group.Iterate(&collector).IgnoreError();

  const bool has_keys = !e.hashes.empty();
  MutexLock l(&mu_);
  Enqueue(std::move(e));
  groups_++;
  enqueued_seq_ = std::max(enqueued_seq_, last_sequence);
  const int64_t max_lag = options_.remote_filter.async_max_lag_ms;
  bool cut = false;
  while (!stop_) {
    const int64_t now = MirrorSteadyMs();
    if (now >= lease_bound_ms_) {
      cut = applied_seq_ < last_sequence;
      break;
    }
    int64_t wait_ms;
    if (mode_ == RemoteFilterOptions::Mode::kSync) {
      // A group of deletions only has nothing to wait for.
      if (!has_keys) break;
      if (applied_seq_ >= last_sequence) {
        // In Redis; but readers of an older history may still trust a
        // lease over filters that lack it (ack_hold_ms_ <= lease_bound_ms_).
        if (now >= ack_hold_ms_) break;
        wait_ms = ack_hold_ms_ - now;
      } else {
        wait_ms = lease_bound_ms_ - now;
      }
    } else {
      // Async: wait only while a healthy mirror falls too far behind (the
      // lag bound). An unhealthy one is not waited for at all: its
      // watermark stops, and readers see how far it is complete.
      if (!trusted_) break;
      int64_t oldest = inflight_oldest_ms_;
      if (!queue_.empty() &&
          (oldest == 0 || queue_.front().enqueue_ms < oldest)) {
        oldest = queue_.front().enqueue_ms;
      }
      if (oldest == 0 || now - oldest <= max_lag) break;
      wait_ms = lease_bound_ms_ - now;
    }
    done_cv_.WaitFor(
        &mu_, std::chrono::milliseconds(std::clamp<int64_t>(wait_ms, 1, 1000)));
  }
  if (cut && mode_ == RemoteFilterOptions::Mode::kSync) waits_lapsed_++;
}

void RemoteMirrorImpl::SwitchMemTable(uint64_t old_id, uint64_t new_id) {
  MutexLock l(&mu_);
  Event e;
  e.kind = Event::Kind::kSwitch;
  e.memtable_id = old_id;
  e.new_id = new_id;
  Enqueue(std::move(e));
}

void RemoteMirrorImpl::VersionInstalled(std::vector<MirrorTable> tables,
                                        std::vector<uint64_t> retired) {
  MutexLock l(&mu_);
  Event e;
  e.kind = Event::Kind::kVersion;
  e.tables = std::move(tables);
  e.retired = std::move(retired);
  Enqueue(std::move(e));
}

std::string RemoteMirrorImpl::DebugString() {
  MutexLock l(&mu_);
  const int64_t now = MirrorSteadyMs();
  return absl::StrFormat(
      "mode=%s state=%s applied_seq=%d enqueued_seq=%d groups=%d queued=%d "
      "republishes=%d failures=%d sync_waits_cut_by_lease=%d "
      "lease_bound_in_ms=%d ack_hold_in_ms=%d %s last_error=%s",
      mode_ == RemoteFilterOptions::Mode::kSync ? "sync" : "async",
      trusted_  ? "trusted"
      : fenced_ ? "fenced"
                : "untrusted",
      applied_seq_, enqueued_seq_, groups_, queue_.size(), republishes_,
      failures_, waits_lapsed_, std::max<int64_t>(0, lease_bound_ms_ - now),
      std::max<int64_t>(0, ack_hold_ms_ - now), writer_state_,
      last_error_.ok() ? std::string("none") : last_error_.ToString());
}

void RemoteMirrorImpl::Log(const std::string& message) {
  LogTo(options_, message);
}

}  // namespace siftdb
