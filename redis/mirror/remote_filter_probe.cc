// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// One batch of the mirror's reader (RemoteFilterImpl::ProbeBatch,
// remote_filter_impl.h), following docs/redis_mirror.md §4: the local pass
// over cached table filters, one pipeline (trust, manifest version, table
// filters to fetch, live sub-filter probes, trust again), and the replies,
// each checked before it may turn an answer into "no".

#include <algorithm>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "filter/blocked_bloom.h"
#include "filter/filter_format.h"
#include "filter/filter_hash.h"
#include "redis/mirror/remote_filter_impl.h"
#include "redis/mirror/remote_filter_plan.h"
#include "util/absl_compat.h"
#include "util/crc32c.h"

namespace siftdb {

namespace {

constexpr int kMaxAttempts = 4;
// BITFIELD_RO GET operations per command.
constexpr size_t kBitfieldOpsPerCommand = 4096;

// The names of the built-in extractors (include/siftdb/slice_transform.h):
// whether `prefix` can be an output of the extractor named `name`. Other
// names: true (the caller vouches for its prefixes).
bool PrefixFitsExtractor(std::string_view name, std::string_view prefix) {
  constexpr std::string_view kFixed = "siftdb.FixedPrefix.";
  constexpr std::string_view kCapped = "siftdb.CappedPrefix.";
  size_t n = 0;
  if (name.starts_with(kFixed) &&
      absl::SimpleAtoi(AsAbsl(name.substr(kFixed.size())), &n)) {
    return prefix.size() == n;
  }
  if (name.starts_with(kCapped) &&
      absl::SimpleAtoi(AsAbsl(name.substr(kCapped.size())), &n)) {
    return prefix.size() <= n;
  }
  return true;
}

// Why a filter cannot answer for a prefix of extractor `want` ("" when
// any is accepted); "" when it can.
std::string PrefixUnusable(std::string_view have, std::string_view want) {
  if (have.empty()) return "holds no prefixes";
  if (have == "?")
    return "holds prefixes of an extractor whose name is not a token";
  if (!want.empty() && have != want) {
    return absl::StrFormat("holds prefixes of %s, not of %s", have, want);
  }
  return "";
}

}  // namespace

void RemoteFilterImpl::LocalPass(std::span<const std::string_view> keys,
                                 BatchPlan* plan) {
  const auto& imm = manifest_->immutables;
  const auto& lives = manifest_->lives;
  auto all_maybe = [&](absl::Status why) {
    plan->Note(std::move(why));
    std::fill(plan->maybe.begin(), plan->maybe.end(), 1);
  };
  // The extractor every filter must hold the prefixes of: the reader's,
  // else the one the live filters (always consulted) name, else the first
  // candidate table's, per prefix.
  std::string want = options_.prefix_extractor;
  for (const MirrorLiveEntry& e : lives) {
    if (plan->prefixes) {
      const std::string why = PrefixUnusable(e.prefix_extractor, want);
      if (!why.empty()) {
        return all_maybe(absl::FailedPreconditionError(absl::StrFormat(
            "mirror \"%s\": MemTable filter %d %s; answering maybe for "
            "prefixes",
            keys_.name(), e.id, why)));
      }
      want = e.prefix_extractor;
    } else if (!e.whole_keys) {
      return all_maybe(absl::FailedPreconditionError(absl::StrFormat(
          "mirror \"%s\": MemTable filter %d holds no whole keys; answering "
          "maybe",
          keys_.name(), e.id)));
    }
  }
  std::vector<size_t> candidates;
  // Each table's cached filter, looked up once per batch (the LRU is
  // touched once, not once per key).
  std::vector<RemoteCachedFilter*> cached(imm.size());
  for (size_t t = 0; t < imm.size(); t++) {
    if (imm[t].size > 0) cached[t] = cache_.Lookup(imm[t]);
  }
  for (size_t i = 0; i < keys.size(); i++) {
    std::string_view expected = want;
    if (plan->prefixes) {
      CandidatePrefixTables(keys[i], &candidates);
    } else {
      CandidateTables(keys[i], &candidates);
    }
    for (size_t t : candidates) {
      if (plan->prefixes) {
        const std::string why =
            PrefixUnusable(imm[t].prefix_extractor, expected);
        if (!why.empty()) {
          plan->Note(absl::FailedPreconditionError(absl::StrFormat(
              "mirror \"%s\": table filter %d %s (built without that "
              "extractor); answering maybe for the prefixes its range "
              "covers",
              keys_.name(), imm[t].id, why)));
          plan->maybe[i] = 1;
          break;
        }
        expected = imm[t].prefix_extractor;
      } else if (!imm[t].whole_keys) {
        plan->maybe[i] = 1;  // prefixes only: no key can be rejected
        break;
      }
      if (imm[t].size == 0) {  // a table without a filter
        plan->maybe[i] = 1;
        break;
      }
      RemoteCachedFilter* f = cached[t];
      if (f != nullptr) {
        if (plan->prefixes ? f->PrefixMayMatch(keys[i], plan->hashes[i])
                           : f->MayMatch(keys[i], plan->hashes[i])) {
          plan->maybe[i] = 1;
          break;
        }
      } else {
        plan->fetch.emplace(t, 0);
        plan->unresolved.emplace_back(i, t);
      }
    }
    // A prefix the extractor cannot produce was not inserted as such: it
    // may stand for keys the filters hold under another prefix.
    if (plan->prefixes && !plan->maybe[i] && !expected.empty() &&
        !PrefixFitsExtractor(expected, keys[i])) {
      plan->Note(absl::InvalidArgumentError(absl::StrFormat(
          "mirror \"%s\": a prefix of %d bytes cannot come from %s; "
          "answering maybe",
          keys_.name(), keys[i].size(), expected)));
      plan->maybe[i] = 1;
    }
  }
}

void RemoteFilterImpl::PlanTableFetches(BatchPlan* plan) {
  const auto& imm = manifest_->immutables;
  for (auto it = plan->fetch.begin(); it != plan->fetch.end();) {
    const uint64_t size = imm[it->first].size;
    if (size > options_.max_cached_filter_bytes ||
        plan->fetch_bytes + size > options_.max_fetch_bytes_per_batch) {
      if (plan->capped.ok()) {
        plan->capped = absl::ResourceExhaustedError(absl::StrFormat(
            "mirror \"%s\": table filter %d of %d bytes exceeds "
            "max_cached_filter_bytes = %d or max_fetch_bytes_per_batch = %d "
            "(%d fetched so far); answering maybe for its keys",
            keys_.name(), imm[it->first].id, size,
            options_.max_cached_filter_bytes,
            options_.max_fetch_bytes_per_batch, plan->fetch_bytes));
      }
      it = plan->fetch.erase(it);  // its keys stay unresolved: "maybe"
      continue;
    }
    plan->fetch_bytes += size;
    it->second = plan->cmds.size();
    plan->cmds.push_back(RedisArgs{"GET", keys_.immutable(imm[it->first].id)});
    ++it;
  }
}

void RemoteFilterImpl::PlanLiveProbes(BatchPlan* plan) {
  const MirrorManifest& m = *manifest_;
  for (size_t i = 0; i < plan->maybe.size(); i++) {
    if (!plan->maybe[i]) plan->need.push_back(static_cast<uint32_t>(i));
  }
  if (plan->need.empty()) return;
  const size_t n = plan->need.size();
  // Whole fetches within the byte cap, bit reads for the rest; above the
  // op cap, "maybe" instead.
  const LiveProbeCost cost =
      PlanLiveProbeCost(m, n, plan->fetch_bytes, options_);
  if (cost.over_op_cap) {
    if (plan->capped.ok()) {
      plan->capped = absl::ResourceExhaustedError(absl::StrFormat(
          "mirror \"%s\": probing %d keys in its live filters takes %d bit "
          "reads, more than max_probe_ops_per_batch = %d; answering maybe",
          keys_.name(), n, cost.bit_reads, options_.max_probe_ops_per_batch));
    }
    for (uint32_t i : plan->need) plan->maybe[i] = 1;
    plan->need.clear();
    return;
  }
  plan->fetch_bytes = cost.fetch_bytes;
  size_t index = 0;  // into cost.whole
  uint64_t offsets[kMaxProbes];
  std::vector<RedisArgs>& cmds = plan->cmds;
  for (const MirrorLiveEntry& e : m.lives) {
    for (size_t j = 0; j < e.subfilters.size(); j++) {
      LiveProbe p;
      p.key = keys_.live(m.writer, e.id, static_cast<int>(j));
      p.sub = e.subfilters[j];
      p.whole = cost.whole[index++];
      p.first_reply = cmds.size();
      if (p.whole) {
        cmds.push_back(RedisArgs{"GET", p.key});
        stats_.live_whole_fetches++;
        plan->probes.push_back(std::move(p));
        continue;
      }
      RedisArgs bf;
      size_t in_command = 0;
      for (uint32_t i : plan->need) {
        BlockedBloomProbeOffsets(plan->hashes[i], p.sub.num_blocks, p.sub.k,
                                 offsets);
        for (int b = 0; b < p.sub.k; b++) {
          if (in_command == 0) bf.Add("BITFIELD_RO").Add(p.key);
          bf.Add("GET").Add("u1").AddUint(offsets[b]);
          if (++in_command == kBitfieldOpsPerCommand) {
            cmds.push_back(std::move(bf));
            bf = RedisArgs();
            in_command = 0;
            p.num_bitfield++;
          }
        }
      }
      if (in_command > 0) {
        cmds.push_back(std::move(bf));
        p.num_bitfield++;
      }
      stats_.live_probe_bits += n * p.sub.k;
      cmds.push_back(RedisArgs{"STRLEN", p.key});
      cmds.push_back(RedisArgs{"GETRANGE", p.key, "-8", "-1"});
      plan->probes.push_back(std::move(p));
    }
  }
}

void RemoteFilterImpl::ApplyTableReplies(const std::vector<RedisReply>& r,
                                         BatchPlan* plan,
                                         absl::Status* problem) {
  const auto& imm = manifest_->immutables;
  const std::string where = conn_->Describe(keys_.prefix());
  auto note = [&](absl::Status s) {
    if (problem->ok()) *problem = std::move(s);
  };
  std::map<size_t, bool> usable;  // table index -> fetched and checked
  for (const auto& [t, index] : plan->fetch) {
    const RedisReply& v = r[index];
    const MirrorImmutableEntry& e = imm[t];
    const std::string key = keys_.immutable(e.id);
    usable[t] = false;
    if (v.is_error()) {
      note(absl::FailedPreconditionError(
          absl::StrFormat("redis %s: GET %s: %s", where, key, v.str())));
    } else if (!v.is_string()) {
      note(absl::NotFoundError(absl::StrFormat(
          "redis %s: table filter %s listed by the manifest is missing", where,
          key)));
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
      cache_.Insert(std::move(c));
      usable[t] = true;
    }
  }
  // Pointers into the cache may have moved on eviction: look up again. A
  // table not fetched (a cap) or unusable means "maybe".
  for (const auto& [i, t] : plan->unresolved) {
    if (plan->maybe[i]) continue;
    auto it = usable.find(t);
    if (it == usable.end() || !it->second) {
      plan->maybe[i] = 1;
      continue;
    }
    RemoteCachedFilter* f = cache_.Lookup(imm[t]);
    if (f == nullptr ||
        (plan->prefixes ? f->PrefixMayMatch(plan->keys[i], plan->hashes[i])
                        : f->MayMatch(plan->keys[i], plan->hashes[i]))) {
      plan->maybe[i] = 1;
    }
  }
}

void RemoteFilterImpl::ApplyLiveReplies(const std::vector<RedisReply>& r,
                                        const LiveProbe& p, BatchPlan* plan,
                                        absl::Status* problem) {
  const std::string where = conn_->Describe(keys_.prefix());
  const std::string trailer = SubFilterTrailer(p.sub);
  auto fail_all = [&](absl::Status s) {
    if (problem->ok()) *problem = std::move(s);
    for (uint32_t i : plan->need) plan->maybe[i] = 1;
  };
  if (p.whole) {
    const RedisReply& v = r[p.first_reply];
    if (v.is_error()) {
      fail_all(absl::FailedPreconditionError(
          absl::StrFormat("redis %s: GET %s: %s", where, p.key, v.str())));
      return;
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
      return;
    }
    ParsedBlockedBloom bloom(v.str());
    for (uint32_t i : plan->need) {
      if (!plan->maybe[i] && bloom.HashMayMatch(plan->hashes[i])) {
        plan->maybe[i] = 1;
      }
    }
    return;
  }
  const size_t strlen_index = p.first_reply + p.num_bitfield;
  const RedisReply& len = r[strlen_index];
  const RedisReply& tail = r[strlen_index + 1];
  for (size_t c = 0; c < p.num_bitfield + 2; c++) {
    if (r[p.first_reply + c].is_error()) {
      fail_all(absl::FailedPreconditionError(
          absl::StrFormat("redis %s: %s %s: %s", where,
                          c < p.num_bitfield    ? "BITFIELD_RO"
                          : c == p.num_bitfield ? "STRLEN"
                                                : "GETRANGE",
                          p.key, r[p.first_reply + c].str())));
      return;
    }
  }
  if (!len.is_integer() ||
      static_cast<uint64_t>(len.integer()) != p.sub.bytes() ||
      tail.str() != trailer) {
    fail_all(absl::DataLossError(absl::StrFormat(
        "redis %s: live filter %s: %s bytes, expected %d ending in its "
        "trailer (missing, partial or garbage)",
        where, p.key, len.DebugString(), p.sub.bytes())));
    return;
  }
  // The bits, in the order they were asked; a short or malformed reply
  // makes the keys it leaves unanswered "maybe".
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
  for (uint32_t i : plan->need) {
    bool all = true, broken = false;
    for (int b = 0; b < p.sub.k; b++) {
      const int bit = next_bit();
      if (bit < 0) {
        broken = true;
      } else if (bit == 0) {
        all = false;
      }
    }
    if (broken && problem->ok()) {
      *problem = absl::DataLossError(absl::StrFormat(
          "redis %s: BITFIELD_RO %s: short or malformed reply", where, p.key));
    }
    if (all || broken) plan->maybe[i] = 1;
  }
}

absl::Status RemoteFilterImpl::ProbeBatch(
    std::span<const std::string_view> keys, bool prefixes,
    std::vector<bool>* answers, size_t offset) {
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
    BatchPlan plan;
    plan.prefixes = prefixes;
    plan.hashes = hashes;
    plan.keys = keys;
    plan.maybe.assign(n, 0);
    LocalPass(keys, &plan);

    // One pipeline: identity and lease, manifest version, table filters to
    // fetch, live filter probes, lease again.
    // A reader that may trust a replica also needs its uptime (INFO
    // server): see CheckTrust.
    plan.cmds.push_back(options_.trust_replica
                            ? RedisArgs{"INFO", "replication", "server"}
                            : RedisArgs{"INFO", "replication"});
    plan.cmds.push_back(RedisArgs{"GET", keys_.lease()});
    plan.cmds.push_back(
        RedisArgs{"HMGET", keys_.manifest(), mirror_field::kGeneration,
                  mirror_field::kVersion, mirror_field::kCompleteSeq,
                  mirror_field::kCompleteMs});
    PlanTableFetches(&plan);
    PlanLiveProbes(&plan);
    plan.cmds.push_back(RedisArgs{"GET", keys_.lease()});

    stats_.round_trips++;
    absl::StatusOr<std::vector<RedisReply>> got =
        conn_->Pipeline(plan.cmds, keys_.prefix());
    if (!got.ok()) return FailOpen(got.status());
    const std::vector<RedisReply>& r = *got;

    // Trust: this server's history, the same lease before and after, and
    // the manifest we used.
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

    absl::Status problem = plan.capped;
    ApplyTableReplies(r, &plan, &problem);
    for (const LiveProbe& p : plan.probes) {
      ApplyLiveReplies(r, p, &plan, &problem);
    }
    for (size_t i = 0; i < n; i++) {
      (*answers)[offset + i] = plan.maybe[i] != 0;
    }
    return problem;
  }
  for (size_t i = 0; i < n; i++) (*answers)[offset + i] = true;
  return FailOpen(absl::AbortedError(absl::StrFormat(
      "mirror \"%s\": the manifest changed during %d attempts; answering "
      "maybe",
      keys_.name(), kMaxAttempts)));
}

}  // namespace siftdb
