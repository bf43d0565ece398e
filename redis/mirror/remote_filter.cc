// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteFilter (include/siftdb/remote_filter.h): the reader side of the
// Redis mirror. The protocol it follows is docs/redis_mirror.md, section
// "Reading"; the key names and encodings are
// redis/mirror/redis_mirror_format.h.

#include "siftdb/remote_filter.h"

#include <algorithm>
#include <list>
#include <map>
#include <optional>

#include "absl/base/thread_annotations.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "filter/blocked_bloom.h"
#include "filter/classic_bloom.h"
#include "filter/filter_format.h"
#include "filter/filter_hash.h"
#include "redis/client/redis_cluster_client.h"
#include "redis/mirror/redis_mirror_format.h"
#include "redis/mirror/remote_filter_cache.h"
#include "util/absl_compat.h"
#include "util/crc32c.h"
#include "util/mutex.h"

namespace siftdb {

namespace {

constexpr char kBytewiseComparatorName[] = "siftdb.BytewiseComparator";
constexpr int kMaxAttempts = 4;
// BITFIELD_RO GET operations per command.
constexpr size_t kBitfieldOpsPerCommand = 4096;
// A live sub-filter is fetched whole when its size is at most this many
// bytes per probed bit (a BITFIELD_RO GET u1 costs about that much on the
// wire and in parsing).
constexpr size_t kWholeBytesPerBit = 24;

class RemoteFilterImpl final : public RemoteFilter {
 public:
  RemoteFilterImpl(const RemoteFilterReaderOptions& options,
                   std::string_view name, std::unique_ptr<RedisConnection> conn)
      : options_(options),
        keys_(name),
        conn_(std::move(conn)),
        cache_(options.max_cached_filter_bytes) {}

  absl::Status FetchManifestForOpen() {
    MutexLock l(&mu_);
    return FetchManifest();
  }

  absl::Status MayContainMany(std::span<const std::string_view> keys,
                              std::vector<bool>* answers) override {
    MutexLock l(&mu_);
    answers->assign(keys.size(), true);
    absl::Status first;
    const size_t step = std::max<size_t>(1, options_.max_batch_keys);
    // The call's watermark is the lowest of its batches': a later batch
    // may have read a higher one, which does not cover the "no" answers of
    // an earlier batch.
    std::optional<RemoteFilterWatermark> low;
    for (size_t start = 0; start < keys.size(); start += step) {
      const size_t n = std::min(step, keys.size() - start);
      absl::Status s = ProbeBatch(keys.subspan(start, n), answers, start);
      if (first.ok() && !s.ok()) first = s;
      if (!low.has_value()) {
        low = watermark_;
      } else {
        low->complete_seq =
            std::min(low->complete_seq, watermark_.complete_seq);
        low->complete_unix_ms =
            std::min(low->complete_unix_ms, watermark_.complete_unix_ms);
      }
    }
    if (low.has_value()) watermark_ = *low;
    return first;
  }

  RemoteFilterWatermark watermark() const override {
    MutexLock l(&mu_);
    return watermark_;
  }

  RemoteFilterStats stats() const override {
    MutexLock l(&mu_);
    RemoteFilterStats s = stats_;
    s.cached_filters = cache_.size();
    s.cached_bytes = cache_.bytes();
    s.cache_evictions = cache_.evictions();
    s.redirects = static_cast<uint64_t>(conn_->redirects());
    return s;
  }

  void ClearCache() override {
    MutexLock l(&mu_);
    manifest_.reset();
    cache_.Clear();
  }

 private:
  // The tables a key may be in, by the manifest's ranges.
  void CandidateTables(std::string_view key, std::vector<size_t>* out) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
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

  absl::Status FetchManifest() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
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
    r = conn_->Pipeline({RedisArgs{"HGETALL", keys_.manifest()}},
                        keys_.prefix());
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
    size_t subfilters = 0;
    for (const MirrorLiveEntry& e : m->lives) subfilters += e.subfilters.size();
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

  absl::Status FailOpen(absl::Status s) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_) {
    stats_.fail_open_batches++;
    return s;
  }

  absl::Status ProbeBatch(std::span<const std::string_view> keys,
                          std::vector<bool>* answers, size_t offset)
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  // Whether the replies of INFO replication and the two lease GETs show a
  // server this reader may trust (see docs/redis_mirror.md §4 step 4).
  absl::Status CheckTrust(const RedisReply& info, const RedisReply& lease1,
                          const RedisReply& lease2) const
      ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  mutable Mutex mu_;
  const RemoteFilterReaderOptions options_;
  const MirrorKeys keys_;
  std::unique_ptr<RedisConnection> conn_ ABSL_GUARDED_BY(mu_);
  std::optional<MirrorManifest> manifest_ ABSL_GUARDED_BY(mu_);
  bool ranges_usable_ ABSL_GUARDED_BY(mu_) = false;
  std::vector<size_t> level0_ ABSL_GUARDED_BY(mu_);
  std::vector<std::vector<size_t>> levels_ ABSL_GUARDED_BY(mu_);  // 1..
  RemoteFilterCache cache_ ABSL_GUARDED_BY(mu_);
  RemoteFilterWatermark watermark_ ABSL_GUARDED_BY(mu_);
  RemoteFilterStats stats_ ABSL_GUARDED_BY(mu_);
};

absl::Status RemoteFilterImpl::ProbeBatch(
    std::span<const std::string_view> keys, std::vector<bool>* answers,
    size_t offset) {
  const size_t n = keys.size();
  stats_.keys += n;
  stats_.batches++;
  std::vector<uint64_t> hashes(n);
  for (size_t i = 0; i < n; i++) hashes[i] = FilterKeyHash(keys[i]);
  const std::string where = conn_->Describe(keys_.prefix());

  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    if (!manifest_.has_value()) {
      absl::Status s = FetchManifest();
      if (!s.ok()) return FailOpen(s);
    }
    const MirrorManifest& m = *manifest_;
    const auto& imm = m.immutables;

    // 1. Cached table filters, locally.
    std::vector<char> maybe(n, 0);
    std::vector<std::pair<uint32_t, uint32_t>> unresolved;  // (key, table)
    std::map<size_t, size_t> fetch;  // table index -> reply index
    std::vector<size_t> candidates;
    // Each table's cached filter, looked up once per batch (the LRU is
    // touched once, not once per key).
    std::vector<RemoteCachedFilter*> cached(imm.size());
    for (size_t t = 0; t < imm.size(); t++) {
      if (imm[t].size > 0) cached[t] = cache_.Lookup(imm[t]);
    }
    for (size_t i = 0; i < n; i++) {
      CandidateTables(keys[i], &candidates);
      for (size_t t : candidates) {
        if (imm[t].size == 0) {  // a table without a filter
          maybe[i] = 1;
          break;
        }
        RemoteCachedFilter* f = cached[t];
        if (f != nullptr) {
          if (f->MayMatch(hashes[i])) {
            maybe[i] = 1;
            break;
          }
        } else {
          fetch.emplace(t, 0);
          unresolved.emplace_back(i, t);
        }
      }
    }

    // 2. One pipeline: lease, manifest version, missing table filters, live
    // filter probes, lease again.
    std::vector<RedisArgs> cmds;
    cmds.push_back(RedisArgs{"INFO", "replication"});
    cmds.push_back(RedisArgs{"GET", keys_.lease()});
    cmds.push_back(RedisArgs{"HMGET", keys_.manifest(),
                             mirror_field::kGeneration, mirror_field::kVersion,
                             mirror_field::kCompleteSeq,
                             mirror_field::kCompleteMs});
    absl::Status capped;  // the first cap met (answers "maybe")
    size_t fetch_bytes = 0;
    for (auto it = fetch.begin(); it != fetch.end();) {
      const uint64_t size = imm[it->first].size;
      if (size > options_.max_cached_filter_bytes ||
          fetch_bytes + size > options_.max_fetch_bytes_per_batch) {
        if (capped.ok()) {
          capped = absl::ResourceExhaustedError(absl::StrFormat(
              "mirror \"%s\": table filter %d of %d bytes exceeds "
              "max_cached_filter_bytes = %d or max_fetch_bytes_per_batch = %d "
              "(%d fetched so far); answering maybe for its keys",
              keys_.name(), imm[it->first].id, size,
              options_.max_cached_filter_bytes,
              options_.max_fetch_bytes_per_batch, fetch_bytes));
        }
        it = fetch.erase(it);  // its keys stay unresolved: "maybe"
        continue;
      }
      fetch_bytes += size;
      it->second = cmds.size();
      cmds.push_back(RedisArgs{"GET", keys_.immutable(imm[it->first].id)});
      ++it;
    }
    struct LiveProbe {
      std::string key;
      MirrorSubFilter sub;
      std::vector<uint32_t> keys;  // indexes into the batch
      bool whole = false;
      size_t first_reply = 0, num_bitfield = 0;
    };
    std::vector<LiveProbe> probes;
    std::vector<uint32_t> need;
    for (size_t i = 0; i < n; i++) {
      if (!maybe[i]) need.push_back(static_cast<uint32_t>(i));
    }
    uint64_t offsets[kMaxProbes];
    // What probing the live filters would cost: whole fetches within the
    // byte cap, bit reads within the op cap; otherwise "maybe".
    size_t probe_ops = 0;
    for (const MirrorLiveEntry& e : m.lives) {
      for (const MirrorSubFilter& sub : e.subfilters) {
        const size_t ops = need.size() * static_cast<size_t>(sub.k);
        if (sub.bytes() <= ops * kWholeBytesPerBit &&
            fetch_bytes + sub.bytes() <= options_.max_fetch_bytes_per_batch) {
          fetch_bytes += sub.bytes();
        } else {
          probe_ops += ops;
        }
      }
    }
    if (probe_ops > options_.max_probe_ops_per_batch) {
      if (capped.ok()) {
        capped = absl::ResourceExhaustedError(absl::StrFormat(
            "mirror \"%s\": probing %d keys in its live filters takes %d bit "
            "reads, more than max_probe_ops_per_batch = %d; answering maybe",
            keys_.name(), need.size(), probe_ops,
            options_.max_probe_ops_per_batch));
      }
      for (uint32_t i : need) maybe[i] = 1;
      need.clear();
    }
    if (!need.empty()) {
      // The same choice as the estimate above, made again in order.
      size_t budget = 0;
      for (const auto& [t, index] : fetch) budget += imm[t].size;
      for (const MirrorLiveEntry& e : m.lives) {
        for (size_t j = 0; j < e.subfilters.size(); j++) {
          LiveProbe p;
          p.key = keys_.live(m.writer, e.id, static_cast<int>(j));
          p.sub = e.subfilters[j];
          p.keys = need;
          p.whole =
              p.sub.bytes() <= need.size() * static_cast<size_t>(p.sub.k) *
                                   kWholeBytesPerBit &&
              budget + p.sub.bytes() <= options_.max_fetch_bytes_per_batch;
          if (p.whole) budget += p.sub.bytes();
          p.first_reply = cmds.size();
          if (p.whole) {
            cmds.push_back(RedisArgs{"GET", p.key});
            stats_.live_whole_fetches++;
          } else {
            RedisArgs bf;
            size_t ops = 0;
            auto flush = [&] {
              if (ops == 0) return;
              cmds.push_back(std::move(bf));
              bf = RedisArgs();
              ops = 0;
              p.num_bitfield++;
            };
            for (uint32_t i : need) {
              BlockedBloomProbeOffsets(hashes[i], p.sub.num_blocks, p.sub.k,
                                       offsets);
              for (int b = 0; b < p.sub.k; b++) {
                if (ops == 0) bf.Add("BITFIELD_RO").Add(p.key);
                bf.Add("GET").Add("u1").AddUint(offsets[b]);
                if (++ops == kBitfieldOpsPerCommand) flush();
              }
            }
            flush();
            stats_.live_probe_bits += need.size() * p.sub.k;
            cmds.push_back(RedisArgs{"STRLEN", p.key});
            cmds.push_back(RedisArgs{"GETRANGE", p.key, "-8", "-1"});
          }
          probes.push_back(std::move(p));
        }
      }
    }
    cmds.push_back(RedisArgs{"GET", keys_.lease()});

    stats_.round_trips++;
    absl::StatusOr<std::vector<RedisReply>> got =
        conn_->Pipeline(cmds, keys_.prefix());
    if (!got.ok()) return FailOpen(got.status());
    const std::vector<RedisReply>& r = *got;

    // 3. Trust: this server's history, the same lease before and after,
    // and the manifest we used.
    absl::Status trust = CheckTrust(r[0], r[1], r.back());
    if (!trust.ok()) return FailOpen(trust);
    const RedisReply& hm = r[2];
    if (hm.is_error() || !hm.is_array() || hm.elements().size() != 4) {
      return FailOpen(absl::FailedPreconditionError(
          absl::StrFormat("redis %s: HMGET %s: %s", where, keys_.manifest(),
                          hm.DebugString())));
    }
    if (hm.elements()[0].str() != m.generation ||
        hm.elements()[1].str() != absl::StrCat(m.version)) {
      manifest_.reset();  // changed: fetch it again and redo the batch
      continue;
    }
    // A watermark that does not parse covers nothing.
    uint64_t cseq = 0;
    int64_t cms = 0;
    if (!absl::SimpleAtoi(hm.elements()[2].str(), &cseq)) cseq = 0;
    if (!absl::SimpleAtoi(hm.elements()[3].str(), &cms)) cms = 0;
    watermark_.complete_seq = cseq;
    watermark_.complete_unix_ms = cms;
    watermark_.mode = m.mode;

    absl::Status problem = capped;
    auto note = [&](absl::Status s) {
      if (problem.ok()) problem = std::move(s);
    };

    // 4. Table filters fetched now.
    std::map<size_t, RemoteCachedFilter*> fetched;  // nullptr: unusable
    for (const auto& [t, index] : fetch) {
      const RedisReply& v = r[index];
      const MirrorImmutableEntry& e = imm[t];
      const std::string key = keys_.immutable(e.id);
      RemoteCachedFilter* f = nullptr;
      if (v.is_error()) {
        note(absl::FailedPreconditionError(
            absl::StrFormat("redis %s: GET %s: %s", where, key, v.str())));
      } else if (!v.is_string()) {
        note(absl::NotFoundError(absl::StrFormat(
            "redis %s: table filter %s listed by the manifest is missing",
            where, key)));
      } else if (v.str().size() != e.size ||
                 crc32c::Value(v.str().data(), v.str().size()) != e.crc32c) {
        note(absl::DataLossError(absl::StrFormat(
            "redis %s: table filter %s: %d bytes with crc32c %08x, manifest "
            "says %d bytes with crc32c %08x (garbage or partial value)",
            where, key, v.str().size(),
            crc32c::Value(v.str().data(), v.str().size()), e.size, e.crc32c)));
      } else {
        auto c = std::make_unique<RemoteCachedFilter>();
        c->id = e.id;
        c->crc = e.crc32c;
        c->size = e.size;
        c->bytes = v.str();
        c->Decode(e.policy);
        stats_.filter_fetches++;
        stats_.filter_fetch_bytes += e.size;
        f = cache_.Insert(std::move(c));
      }
      fetched[t] = f;
    }
    // Pointers into the cache may have moved on eviction: look up again.
    for (const auto& [i, t] : unresolved) {
      if (maybe[i]) continue;
      if (fetched[t] == nullptr) {
        maybe[i] = 1;
        continue;
      }
      RemoteCachedFilter* f = cache_.Lookup(imm[t]);
      if (f == nullptr || f->MayMatch(hashes[i])) maybe[i] = 1;
    }

    // 5. Live filters.
    for (const LiveProbe& p : probes) {
      const std::string trailer = SubFilterTrailer(p.sub);
      auto fail_all = [&](absl::Status s) {
        note(std::move(s));
        for (uint32_t i : p.keys) maybe[i] = 1;
      };
      if (p.whole) {
        const RedisReply& v = r[p.first_reply];
        if (v.is_error()) {
          fail_all(absl::FailedPreconditionError(
              absl::StrFormat("redis %s: GET %s: %s", where, p.key, v.str())));
          continue;
        }
        if (!v.is_string() || v.str().size() != p.sub.bytes() ||
            std::string_view(v.str()).substr(v.str().size() - 8) != trailer) {
          fail_all(absl::DataLossError(absl::StrFormat(
              "redis %s: live filter %s: %s, expected %d bytes ending in its "
              "trailer (missing, partial or garbage)",
              where, p.key,
              v.is_string() ? absl::StrFormat("%d bytes", v.str().size())
                            : std::string("missing"),
              p.sub.bytes())));
          continue;
        }
        ParsedBlockedBloom bloom(v.str());
        for (uint32_t i : p.keys) {
          if (!maybe[i] && bloom.HashMayMatch(hashes[i])) maybe[i] = 1;
        }
        continue;
      }
      const size_t strlen_index = p.first_reply + p.num_bitfield;
      const RedisReply& len = r[strlen_index];
      const RedisReply& tail = r[strlen_index + 1];
      absl::Status bad;
      for (size_t c = 0; c < p.num_bitfield + 2; c++) {
        if (r[p.first_reply + c].is_error()) {
          bad = absl::FailedPreconditionError(
              absl::StrFormat("redis %s: %s %s: %s", where,
                              c < p.num_bitfield    ? "BITFIELD_RO"
                              : c == p.num_bitfield ? "STRLEN"
                                                    : "GETRANGE",
                              p.key, r[p.first_reply + c].str()));
          break;
        }
      }
      if (bad.ok() && (!len.is_integer() ||
                       static_cast<uint64_t>(len.integer()) != p.sub.bytes() ||
                       tail.str() != trailer)) {
        bad = absl::DataLossError(absl::StrFormat(
            "redis %s: live filter %s: %s bytes, expected %d ending in its "
            "trailer (missing, partial or garbage)",
            where, p.key, len.DebugString(), p.sub.bytes()));
      }
      if (!bad.ok()) {
        fail_all(bad);
        continue;
      }
      // The bits, in the order they were asked.
      size_t reply = p.first_reply, pos = 0;
      auto next_bit = [&]() -> int {
        while (reply < strlen_index) {
          const RedisReply& a = r[reply];
          if (pos < a.elements().size()) {
            const RedisReply& b = a.elements()[pos++];
            return b.is_integer() ? static_cast<int>(b.integer()) : -1;
          }
          reply++;
          pos = 0;
        }
        return -1;
      };
      for (uint32_t i : p.keys) {
        bool all = true, broken = false;
        for (int b = 0; b < p.sub.k; b++) {
          const int bit = next_bit();
          if (bit < 0) {
            broken = true;
          } else if (bit == 0) {
            all = false;
          }
        }
        if (broken) {
          note(absl::DataLossError(absl::StrFormat(
              "redis %s: BITFIELD_RO %s: short or malformed reply", where,
              p.key)));
        }
        if (all || broken) maybe[i] = 1;
      }
    }

    for (size_t i = 0; i < n; i++) (*answers)[offset + i] = maybe[i] != 0;
    return problem;
  }
  for (size_t i = 0; i < n; i++) (*answers)[offset + i] = true;
  return FailOpen(absl::AbortedError(absl::StrFormat(
      "mirror \"%s\": the manifest changed during %d attempts; answering "
      "maybe",
      keys_.name(), kMaxAttempts)));
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
  return absl::OkStatus();
}

}  // namespace

bool RemoteFilter::MayContain(std::string_view key, absl::Status* why) {
  std::vector<bool> answers;
  std::string_view keys[1] = {key};
  absl::Status s = MayContainMany(keys, &answers);
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
