// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteFilter (include/siftdb/remote_filter.h): the manifest, the trust
// check and the public entry points of the reader side of the Redis mirror
// (remote_filter_impl.h; one batch is remote_filter_probe.cc).

#include "siftdb/remote_filter.h"

#include <algorithm>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/client/redis_url.h"
#include "redis/mirror/remote_filter_impl.h"
#include "redis/mirror/remote_filter_plan.h"
#include "util/absl_compat.h"

namespace siftdb {

namespace {

constexpr char kBytewiseComparatorName[] = "siftdb.BytewiseComparator";

}  // namespace

absl::Status RemoteFilterImpl::MayContainMany(
    std::span<const std::string_view> keys, std::vector<bool>* answers) {
  MutexLock l(&mu_);
  return ProbeAll(keys, /*prefixes=*/false, answers);
}

absl::Status RemoteFilterImpl::MayContainPrefixMany(
    std::span<const std::string_view> prefixes, std::vector<bool>* answers) {
  MutexLock l(&mu_);
  return ProbeAll(prefixes, /*prefixes=*/true, answers);
}

absl::Status RemoteFilterImpl::ProbeAll(std::span<const std::string_view> keys,
                                        bool prefixes,
                                        std::vector<bool>* answers) {
  answers->assign(keys.size(), true);
  absl::Status first;
  const size_t step = std::max<size_t>(1, options_.max_batch_keys);
  // The call's watermark is the lowest of its batches': a later batch
  // may have read a higher one, which does not cover the "no" answers of
  // an earlier batch.
  std::optional<RemoteFilterWatermark> low;
  for (size_t start = 0; start < keys.size(); start += step) {
    const size_t n = std::min(step, keys.size() - start);
    absl::Status s =
        ProbeBatch(keys.subspan(start, n), prefixes, answers, start);
    if (first.ok() && !s.ok()) first = s;
    if (!low.has_value()) {
      low = watermark_;
    } else {
      low->complete_seq = std::min(low->complete_seq, watermark_.complete_seq);
      low->complete_unix_ms =
          std::min(low->complete_unix_ms, watermark_.complete_unix_ms);
    }
  }
  if (low.has_value()) watermark_ = *low;
  return first;
}

RemoteFilterWatermark RemoteFilterImpl::watermark() const {
  MutexLock l(&mu_);
  return watermark_;
}

RemoteFilterStats RemoteFilterImpl::stats() const {
  MutexLock l(&mu_);
  RemoteFilterStats s = stats_;
  s.cached_filters = cache_.size();
  s.cached_bytes = cache_.bytes();
  s.cache_evictions = cache_.evictions();
  s.redirects = static_cast<uint64_t>(conn_->redirects());
  return s;
}

void RemoteFilterImpl::ClearCache() {
  MutexLock l(&mu_);
  manifest_.reset();
  cache_.Clear();
}

void RemoteFilterImpl::CandidateTables(std::string_view key,
                                       std::vector<size_t>* out) const {
  out->clear();
  const auto& imm = manifest_->immutables;
  if (!ranges_usable_) {
    for (size_t i = 0; i < imm.size(); i++) out->push_back(i);
    return;
  }
  for (size_t i : level0_) {
    if (key >= std::string_view(imm[i].smallest) &&
        key <= std::string_view(imm[i].largest)) {
      out->push_back(i);
    }
  }
  for (const std::vector<size_t>& level : levels_) {
    // The last table whose smallest <= key.
    auto it = std::upper_bound(level.begin(), level.end(), key,
                               [&](std::string_view k, size_t i) {
                                 return k < std::string_view(imm[i].smallest);
                               });
    if (it == level.begin()) continue;
    size_t i = *(it - 1);
    if (key <= std::string_view(imm[i].largest)) out->push_back(i);
    // Overlapping tables in one level should not happen; be safe.
    for (auto jt = it - 1; jt != level.begin();) {
      --jt;
      if (key <= std::string_view(imm[*jt].largest)) {
        out->push_back(*jt);
      } else {
        break;
      }
    }
  }
}

void RemoteFilterImpl::CandidatePrefixTables(std::string_view prefix,
                                             std::vector<size_t>* out) const {
  out->clear();
  const auto& imm = manifest_->immutables;
  // Bytewise, the keys starting with P are exactly [P, successor(P)), where
  // successor(P) drops P's trailing 0xff bytes and increments the last
  // byte left; none left (P empty or all 0xff): no upper end. A table can
  // hold such a key iff largest >= P and smallest < successor(P).
  std::string upper(prefix);
  while (!upper.empty() && static_cast<unsigned char>(upper.back()) == 0xff) {
    upper.pop_back();
  }
  const bool bounded = ranges_usable_ && !upper.empty();
  if (bounded) upper.back() = static_cast<char>(upper.back() + 1);
  for (size_t i = 0; i < imm.size(); i++) {
    if (ranges_usable_ && (std::string_view(imm[i].largest) < prefix ||
                           (bounded && imm[i].smallest >= upper))) {
      continue;
    }
    out->push_back(i);
  }
}

absl::Status RemoteFilterImpl::FetchManifest() {
  manifest_.reset();
  stats_.manifest_fetches++;
  stats_.round_trips += 2;
  // The size first: a hash of millions of fields must not be fetched.
  absl::StatusOr<std::vector<RedisReply>> r =
      conn_->Pipeline({RedisArgs{"HLEN", keys_.manifest()}}, keys_.prefix());
  if (!r.ok()) return r.status();
  const RedisReply& len = (*r)[0];
  if (len.is_integer() &&
      static_cast<uint64_t>(len.integer()) > options_.max_manifest_fields) {
    return absl::ResourceExhaustedError(
        absl::StrFormat("redis %s: manifest %s has %d fields, more than "
                        "max_manifest_fields = %d; answering maybe",
                        conn_->Describe(keys_.prefix()), keys_.manifest(),
                        len.integer(), options_.max_manifest_fields));
  }
  r = conn_->Pipeline({RedisArgs{"HGETALL", keys_.manifest()}}, keys_.prefix());
  if (!r.ok()) return r.status();
  const RedisReply& all = (*r)[0];
  if (all.is_error()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "redis %s: HGETALL %s: %s", conn_->Describe(keys_.prefix()),
        keys_.manifest(), all.str()));
  }
  std::vector<std::pair<std::string, std::string>> fields;
  for (size_t i = 0; i + 1 < all.elements().size(); i += 2) {
    fields.emplace_back(all.elements()[i].str(), all.elements()[i + 1].str());
  }
  absl::StatusOr<MirrorManifest> m = DecodeManifest(fields);
  if (!m.ok()) {
    if (absl::IsNotFound(m.status())) {
      return absl::NotFoundError(absl::StrFormat(
          "redis %s: no mirror manifest at %s (engine not running or not "
          "published yet)",
          conn_->Describe(keys_.prefix()), keys_.manifest()));
    }
    return absl::Status(
        m.status().code(),
        absl::StrFormat("redis %s: %s: %s", conn_->Describe(keys_.prefix()),
                        keys_.manifest(), m.status().message()));
  }
  const size_t subfilters = CountLiveSubFilters(*m);
  if (subfilters > options_.max_live_subfilters) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "redis %s: manifest %s lists %d live sub-filters, more than "
        "max_live_subfilters = %d; answering maybe",
        conn_->Describe(keys_.prefix()), keys_.manifest(), subfilters,
        options_.max_live_subfilters));
  }
  manifest_ = std::move(*m);
  ranges_usable_ = manifest_->comparator == kBytewiseComparatorName;
  level0_.clear();
  levels_.clear();
  const auto& imm = manifest_->immutables;
  for (size_t i = 0; i < imm.size(); i++) {
    if (imm[i].level == 0) {
      level0_.push_back(i);
    } else {
      if (levels_.size() < static_cast<size_t>(imm[i].level)) {
        levels_.resize(imm[i].level);
      }
      levels_[imm[i].level - 1].push_back(i);
    }
  }
  for (std::vector<size_t>& level : levels_) {
    std::sort(level.begin(), level.end(), [&](size_t a, size_t b) {
      return imm[a].smallest < imm[b].smallest;
    });
  }
  watermark_.mode = manifest_->mode;
  return absl::OkStatus();
}

absl::Status RemoteFilterImpl::CheckTrust(const RedisReply& info,
                                          const RedisReply& lease1,
                                          const RedisReply& lease2) const {
  const std::string where = conn_->Describe(keys_.prefix());
  for (const RedisReply* r : {&info, &lease1, &lease2}) {
    if (r->is_error()) {
      return absl::FailedPreconditionError(absl::StrFormat(
          "redis %s: %s: %s (the reader's ACL needs +info and the mirror's "
          "read commands)",
          where, r == &info ? "INFO replication" : "GET " + keys_.lease(),
          r->str()));
    }
  }
  if (!lease1.is_string() || !lease2.is_string() ||
      lease1.str() != lease2.str()) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "redis %s: mirror \"%s\" not trusted: lease %s %s (engine down or "
        "unreachable, Redis restarted or flushed, or republication under "
        "way); answering maybe",
        where, keys_.name(), keys_.lease(),
        lease1.is_string() && lease2.is_string() ? "changed during the probe"
                                                 : "not held"));
  }
  MirrorLease lease;
  RedisIdentity id;
  if (!DecodeLease(lease1.str(), &lease) || !info.is_string() ||
      !ParseRedisIdentity(info.str(), &id)) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "redis %s: mirror \"%s\" not trusted: lease \"%s\" or INFO "
        "replication not understood (an engine of another format?); "
        "answering maybe",
        where, keys_.name(), absl::CHexEscape(lease1.str().substr(0, 100))));
  }
  if (id.role == "master") {
    if (id.replid == lease.replid) return absl::OkStatus();
    return absl::FailedPreconditionError(absl::StrFormat(
        "redis %s: mirror \"%s\" not trusted: the lease was taken on a "
        "server with replication id %s, this one has %s (restarted from "
        "persistence, failed over or promoted since; the engine republishes "
        "when it reaches it); answering maybe",
        where, keys_.name(), lease.replid, id.replid));
  }
  if (!options_.trust_replica) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "redis %s: mirror \"%s\" not trusted: the server is a %s and "
        "trust_replica is off (docs/redis_mirror.md §4); answering maybe",
        where, keys_.name(), id.role));
  }
  if (id.link_status != "up" || id.replid != lease.replid) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "redis %s: mirror \"%s\" not trusted: replica with master link %s "
        "and replication id %s, the lease names %s; answering maybe",
        where, keys_.name(), id.link_status.empty() ? "?" : id.link_status,
        id.replid, lease.replid));
  }
  // A replica restarted from its own RDB or AOF gets its master's
  // replication id back and replays the master's backlog from its old
  // offset: each state it passes through is consistent with a lease of
  // that moment, but lacks keys acknowledged later (with WAIT counting the
  // replica's previous life). Those leases lapse at most lease_ttl_ms after
  // the replica went down, so a replica is trusted only once it has been up
  // that long. uptime_in_seconds is the difference of two whole-second
  // clock readings, so it may exceed the true uptime by up to a second.
  const int64_t ttl_ms = std::max<int64_t>(manifest_->lease_ttl_ms, 1);
  if (id.uptime_s < 0 || (id.uptime_s - 1) * 1000 < ttl_ms) {
    return absl::FailedPreconditionError(absl::StrFormat(
        "redis %s: mirror \"%s\" not trusted: replica up for %s s, less "
        "than the lease (%d ms); a replica that restarted may replay older "
        "states; answering maybe",
        where, keys_.name(),
        id.uptime_s < 0 ? std::string("?") : absl::StrCat(id.uptime_s),
        ttl_ms));
  }
  return absl::OkStatus();
}

bool RemoteFilter::MayContain(std::string_view key, absl::Status* why) {
  std::vector<bool> answers;
  std::string_view keys[1] = {key};
  absl::Status s = MayContainMany(keys, &answers);
  if (why != nullptr) *why = s;
  return answers.empty() || answers[0];
}

bool RemoteFilter::MayContainPrefix(std::string_view prefix,
                                    absl::Status* why) {
  std::vector<bool> answers;
  std::string_view prefixes[1] = {prefix};
  absl::Status s = MayContainPrefixMany(prefixes, &answers);
  if (why != nullptr) *why = s;
  return answers.empty() || answers[0];
}

absl::StatusOr<std::unique_ptr<RemoteFilter>> RemoteFilter::Open(
    const RemoteFilterReaderOptions& options, std::string_view name) {
  absl::Status s = ValidateMirrorName(name);
  if (!s.ok()) return s;
  RedisConnectOptions c;
  c.endpoints = options.endpoints;
  c.client.username = options.username;
  c.client.password = options.password;
  c.client.connect_timeout = absl::Milliseconds(options.connect_timeout_ms);
  c.client.command_timeout = absl::Milliseconds(options.command_timeout_ms);
  c.client.retry_deadline = absl::ZeroDuration();
  if (!options.read_from.empty()) {
    absl::StatusOr<RedisReadFrom> read_from =
        ParseRedisReadFrom(options.read_from);
    if (!read_from.ok()) return read_from.status();
    c.client.read_from = *read_from;
  }
  absl::StatusOr<std::unique_ptr<RedisConnection>> conn = ConnectRedis(c);
  if (!conn.ok()) return conn.status();
  auto filter =
      std::make_unique<RemoteFilterImpl>(options, name, std::move(*conn));
  // A mirror that is not there yet is not an error: answers are "maybe".
  filter->FetchManifestForOpen().IgnoreError();
  return std::unique_ptr<RemoteFilter>(std::move(filter));
}

absl::StatusOr<std::unique_ptr<RemoteFilter>> RemoteFilter::Open(
    std::string_view endpoint, std::string_view name) {
  RemoteFilterReaderOptions options;
  options.endpoints.emplace_back(endpoint);
  return Open(options, name);
}

}  // namespace siftdb
