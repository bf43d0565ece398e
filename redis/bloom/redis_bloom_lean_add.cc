// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The lean add path of RedisBloomImpl (docs/redis_bloom.md, section 4,
// "Lean adds"): a batch that fits in the newest sub-filter travels as plain
// BITFIELD commands instead of one Lua script, so Redis spends on it little
// more than the probes themselves cost. Two or three round trips:
//
//   1. WATCH bitmap:<L> (the key the next expansion would create) and the
//      guard key, a tiny
//      claim script that reserves n slots of the newest sub-filter's
//      capacity (HINCRBY link:<i>:items n, guarded by the layout token and
//      the room left), and probe 0 of every item in every older sub-filter
//      (BITFIELD_RO); then probe 1, 2, ... of the items whose earlier probes
//      were all set, one round trip per round, while any are left.
//   2. MULTI, one BITFIELD ... SET u1 <off> 1 ... on the newest sub-filter
//      for the items absent from the older ones, EXEC. The old bits decide
//      each reply; EXEC aborts when an expansion ran since step 1. With one
//      sub-filter this joins step 1's pipeline (one round trip): a refused
//      claim touches the guard key, which aborts the EXEC.
//   3. Only when some item was not added: a tiny settle script gives back
//      the unused part of the claim (the claim counted all n as added).
//
// Anything unusual (no cached layout, a stale token, too little room, an
// aborted EXEC) returns false and the caller runs the add script instead,
// which handles creation, expansion and NONSCALING exactly as before.

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_bloom_util.h"
#include "redis/client/redis_client.h"
#include "util/absl_compat.h"

namespace siftdb {

using redis_bloom::BloomScriptError;
using redis_bloom::ChainLink;
using redis_bloom::HashPair;
using redis_bloom::LinkSpec;
using redis_bloom::ProbeBit;
using redis_bloom::RedisBitOffset;
using redis_bloom::UnexpectedReply;

namespace {

// KEYS[1] meta, KEYS[2] the guard key; ARGV token "<id>:<version>", n.
// Reserves n slots in the
// newest sub-filter when they fit, counting them as added in both its items
// and inserted_count (the settle gives back what was not added): {'OK',
// items after}, else {'FULL'} or {'STALE'} (token differs or no filter),
// changing nothing but touching the guard (set and deleted at once; it never
// exists), which aborts a transaction queued behind the claim.
const char kClaimSource[] = R"lua(
local m = KEYS[1]
local function claim()
  if redis.call('TYPE', m)['ok'] ~= 'hash' then return {'STALE'} end
  local cur = redis.call('HMGET', m, 'id', 'version', 'filters')
  if not cur[1] or (cur[1] .. ':' .. tostring(cur[2])) ~= ARGV[1] then
    return {'STALE'}
  end
  local f = 'link:' .. (tonumber(cur[3]) - 1) .. ':'
  local lim = redis.call('HMGET', m, f .. 'capacity', f .. 'items')
  local n = tonumber(ARGV[2])
  if tonumber(lim[2]) + n > tonumber(lim[1]) then return {'FULL'} end
  redis.call('HINCRBY', m, 'inserted_count', n)
  return {'OK', redis.call('HINCRBY', m, f .. 'items', n)}
end
local ok, r = pcall(claim)
if ok and r[1] == 'OK' then return r end
redis.call('SET', KEYS[2], '1')
redis.call('DEL', KEYS[2])
return ok and r or {'STALE'}
)lua";

// KEYS[1] meta; ARGV id, link index, unused claim. Gives back the part of a
// claim that was not added, unless the filter was deleted (or recreated)
// since the claim. Replies 1 when applied. A settle resent after a lost
// reply runs twice (an ambiguous retry): each count stops at 0 rather than
// go negative, which would make the meta hash unreadable (DataLoss) for
// every later call.
const char kSettleSource[] = R"lua(
local m = KEYS[1]
if redis.call('HGET', m, 'id') ~= ARGV[1] then return 0 end
local unused = tonumber(ARGV[3])
for _, f in ipairs({'link:' .. ARGV[2] .. ':items', 'inserted_count'}) do
  local cur = tonumber(redis.call('HGET', m, f)) or 0
  local back = math.min(unused, math.max(cur, 0))
  if back > 0 then redis.call('HINCRBY', m, f, -back) end
end
return 1
)lua";

// EVAL (not EVALSHA) so that the call can share a pipeline with other
// commands; Redis caches the compiled script by its text's digest.
RedisArgs EvalArgs(const char* source, const std::string& meta,
                   const std::string& guard) {
  RedisArgs a;
  a.Add("EVAL").Add(source).Add("2").Add(meta).Add(guard);
  return a;
}

// A key in the filter's hash tag that never exists at rest: the claim
// script sets and deletes it to abort the caller's watched transaction.
std::string GuardKey(std::string_view name) {
  return absl::StrCat("bf:{", AsAbsl(name), "}:guard");
}

bool IsStatus(const RedisReply& r, std::string_view text) {
  return (r.type() == RedisReply::Type::kStatus ||
          r.type() == RedisReply::Type::kString) &&
         r.str() == text;
}

// Marks (*in_older)[i] for the items whose probes are all set in some
// sub-filter j < older, given the replies to probe 0 (one BITFIELD_RO per
// sub-filter, probe0[j], from round trip 1): then probe p of the items whose
// probes 0..p-1 were set, one pipeline per round across the sub-filters,
// until none survive (an absent item stops at its first 0 bit). false on an
// unexpected reply or a reconnect (the WATCH is gone).
absl::StatusOr<bool> FindInOlder(RedisClient* client, std::string_view name,
                                 const std::vector<ChainLink>& links,
                                 size_t older, const std::vector<HashPair>& h,
                                 const RedisReply* probe0, int64_t reconnects,
                                 std::vector<char>* in_older) {
  std::vector<std::vector<uint32_t>> alive(older);
  for (size_t j = 0; j < older; j++) {
    const RedisReply& g = probe0[j];
    if (!g.is_array() || g.elements().size() != h.size()) return false;
    for (uint32_t i = 0; i < h.size(); i++) {
      if (g.elements()[i].integer() != 0) alive[j].push_back(i);
    }
  }
  for (uint32_t p = 1;; p++) {
    std::vector<RedisArgs> round;
    std::vector<size_t> which;
    for (size_t j = 0; j < older; j++) {
      if (alive[j].empty()) continue;
      if (p >= links[j].spec.hashes) {
        for (uint32_t i : alive[j]) (*in_older)[i] = 1;
        alive[j].clear();
        continue;
      }
      RedisArgs a;
      a.Add("BITFIELD_RO").Add(RedisBloom::BitmapKey(name, j));
      for (uint32_t i : alive[j]) {
        a.Add("GET").Add("u1").AddUint(
            RedisBitOffset(ProbeBit(h[i], p, links[j].spec.bits)));
      }
      round.push_back(std::move(a));
      which.push_back(j);
    }
    if (round.empty()) return true;
    absl::StatusOr<std::vector<RedisReply>> r = client->Pipeline(round);
    if (!r.ok()) return r.status();
    if (client->reconnects() != reconnects) return false;
    for (size_t w = 0; w < which.size(); w++) {
      std::vector<uint32_t>& list = alive[which[w]];
      const RedisReply& g = (*r)[w];
      if (!g.is_array() || g.elements().size() != list.size()) return false;
      std::vector<uint32_t> still;
      for (size_t s = 0; s < list.size(); s++) {
        if (g.elements()[s].integer() != 0) still.push_back(list[s]);
      }
      list = std::move(still);
    }
  }
}

// Round trip 1's commands: WATCH of the next sub-filter's key and the
// guard, the claim of h.size() slots, and probe 0 of every item in every
// sub-filter older than the newest.
std::vector<RedisArgs> ClaimPipeline(std::string_view name,
                                     const std::vector<ChainLink>& links,
                                     const std::string& token,
                                     const std::vector<HashPair>& h) {
  const std::string guard = GuardKey(name);
  std::vector<RedisArgs> first;
  first.push_back(
      RedisArgs{"WATCH", RedisBloom::BitmapKey(name, links.size()), guard});
  first.push_back(EvalArgs(kClaimSource, RedisBloom::MetaKey(name), guard));
  first.back().Add(token).AddUint(h.size());
  for (size_t j = 0; j + 1 < links.size(); j++) {
    RedisArgs a;
    a.Add("BITFIELD_RO").Add(RedisBloom::BitmapKey(name, j));
    for (const HashPair& hp : h) {
      a.Add("GET").Add("u1").AddUint(
          RedisBitOffset(ProbeBit(hp, 0, links[j].spec.bits)));
    }
    first.push_back(std::move(a));
  }
  return first;
}

// Reads the EXEC reply of AppendTransaction's transaction: item i (not
// skipped) was added when one of its k old bits was 0. false when the reply
// is not one BITFIELD array of the expected length.
bool ReadAdded(const RedisReply& exec, const std::vector<char>& skip,
               uint32_t k, std::vector<char>* added, uint64_t* count) {
  const uint64_t sent = skip.size() - std::count(skip.begin(), skip.end(), 1);
  if (!exec.is_array() || exec.elements().size() != 1 ||
      !exec.elements()[0].is_array() ||
      exec.elements()[0].elements().size() != sent * k) {
    return false;
  }
  const std::vector<RedisReply>& bits = exec.elements()[0].elements();
  size_t at = 0;
  for (size_t i = 0; i < skip.size(); i++) {
    if (skip[i]) continue;
    bool changed = false;
    for (uint32_t p = 0; p < k; p++) changed |= bits[at++].integer() == 0;
    (*added)[i] = changed;
    *count += changed;
  }
  return true;
}

}  // namespace

absl::StatusOr<bool> RedisBloomImpl::LeanAdd(std::string_view name,
                                             const std::vector<HashPair>& h,
                                             BloomAddResults* out) {
  auto cached = cache_.find(std::string(name));
  if (cached == cache_.end()) return false;
  absl::StatusOr<bool> usable = LeanPathUsable(name);
  if (!usable.ok() || !*usable) return usable;
  Layout* layout = cached->second.get();
  const uint64_t n = h.size();
  const size_t newest_index = layout->links.size() - 1;
  const ChainLink& newest = layout->links.back();
  if (n == 0 || newest.items + n > newest.spec.capacity) return false;
  const std::string meta = MetaKey(name);
  const std::string guard = GuardKey(name);
  const std::string id = layout->id;
  const std::vector<ChainLink> links = layout->links;
  const size_t older = newest_index;
  // Without older sub-filters the transaction joins the claim's pipeline:
  // a refused claim touches the guard key, so the EXEC aborts.
  const bool one_trip = older == 0;

  // Round trip 1: watch for an expansion (and the guard), claim room, probe
  // 0 in the older sub-filters, or (one_trip) the transaction.
  std::vector<RedisArgs> first = ClaimPipeline(name, links, layout->token(), h);
  std::vector<char> in_older(n, 0);
  if (one_trip) AppendTransaction(name, newest_index, h, in_older, &first);
  int64_t reconnects = client_->reconnects();
  absl::StatusOr<std::vector<RedisReply>> r1 = client_->Pipeline(first);
  if (!r1.ok()) return r1.status();
  // A resent claim may have run twice (counts high by up to n), a resent
  // transaction without its first run's WATCH.
  if (client_->reconnects() != reconnects) {
    out->ambiguous_retries++;
    reconnects = client_->reconnects();
  }
  const RedisReply& claim = (*r1)[1];
  if (!claim.is_array() || claim.elements().empty() ||
      !IsStatus(claim.elements()[0], "OK")) {
    // STALE, FULL, or an error (say, the meta key is no longer a hash):
    // nothing was claimed, and a transaction in this pipeline aborted on
    // the touched guard; the add script decides and words any error.
    if (one_trip && !r1->back().is_nil()) {
      return UnexpectedReply(*client_, name, r1->back());
    }
    if (!one_trip) (void)client_->Command({"UNWATCH"});
    cache_.erase(std::string(name));
    return false;
  }
  // After a claim every way out settles it. Unexpected replies (a key
  // replaced by another type meanwhile) hand the batch to the add script.
  auto give_back = [&]() -> absl::StatusOr<bool> {
    if (!one_trip) (void)client_->Command({"UNWATCH"});
    RedisArgs undo = EvalArgs(kSettleSource, meta, guard);
    undo.Add(id).AddUint(newest_index).AddUint(n);
    absl::StatusOr<RedisReply> r = client_->Command(undo);
    if (!r.ok()) return r.status();
    cache_.erase(std::string(name));
    return false;
  };
  const uint64_t claimed_items = static_cast<uint64_t>(
      claim.elements().size() > 1 ? claim.elements()[1].integer() : 0);

  const RedisReply* exec = nullptr;
  absl::StatusOr<std::vector<RedisReply>> r2;
  if (one_trip) {
    exec = &r1->back();
  } else {
    // Items present in an older sub-filter answer 0 and are not added.
    absl::StatusOr<bool> found = FindInOlder(client_, name, links, older, h,
                                             &(*r1)[2], reconnects, &in_older);
    if (!found.ok()) return found.status();
    if (!*found) return give_back();
    if (std::count(in_older.begin(), in_older.end(), 1) ==
        static_cast<std::ptrdiff_t>(n)) {
      (void)client_->Command({"UNWATCH"});
    } else {
      // Round trip 2: the bits, atomically, unless an expansion ran.
      std::vector<RedisArgs> tx;
      AppendTransaction(name, newest_index, h, in_older, &tx);
      reconnects = client_->reconnects();
      r2 = client_->Pipeline(tx);
      if (!r2.ok()) return r2.status();
      // The resent transaction ran without the WATCH, and the first one
      // may have run: its new items now answer 0 and are not counted.
      if (client_->reconnects() != reconnects) out->ambiguous_retries++;
      exec = &r2->back();
    }
  }

  std::vector<char> added(n, 0);
  uint64_t count = 0;
  const bool aborted = exec != nullptr && exec->is_nil();
  if (exec != nullptr && !aborted &&
      !ReadAdded(*exec, in_older, newest.spec.hashes, &added, &count)) {
    return give_back();
  }

  // Last round trip, only when some item was not added (or the transaction
  // aborted): give back the unused part of the claim.
  if (aborted || count < n) {
    absl::StatusOr<bool> settled =
        SettleClaim(name, id, newest_index, n - count, out);
    if (!settled.ok()) return settled.status();
    if (aborted || !*settled) {
      cache_.erase(std::string(name));
      return false;
    }
  }
  layout->links.back().items = claimed_items - (n - count);
  layout->items += count;
  out->added.reserve(out->added.size() + n);
  for (uint64_t i = 0; i < n; i++) out->added.push_back(added[i] != 0);
  return true;
}

absl::StatusOr<bool> RedisBloomImpl::LeanPathUsable(std::string_view name) {
  if (lean_checked_) return lean_adds_;
  // A Redis user refused EVAL, WATCH or MULTI would let the pipelined
  // BITFIELD run unguarded: such a connection keeps to the add script.
  std::vector<RedisArgs> probe;
  probe.push_back(RedisArgs{"WATCH", GuardKey(name)});
  probe.push_back(RedisArgs{"EVAL", "return 1", "0"});
  probe.push_back(RedisArgs{"MULTI"});
  probe.push_back(RedisArgs{"DISCARD"});
  probe.push_back(RedisArgs{"UNWATCH"});
  absl::StatusOr<std::vector<RedisReply>> r = client_->Pipeline(probe);
  if (!r.ok()) return r.status();
  lean_checked_ = true;
  for (const RedisReply& reply : *r) {
    if (reply.is_error()) lean_adds_ = false;
  }
  return lean_adds_;
}

absl::StatusOr<bool> RedisBloomImpl::SettleClaim(std::string_view name,
                                                 const std::string& id,
                                                 size_t newest_index,
                                                 uint64_t unused,
                                                 BloomAddResults* out) {
  RedisArgs settle = EvalArgs(kSettleSource, MetaKey(name), GuardKey(name));
  settle.Add(id).AddUint(newest_index).AddUint(unused);
  const int64_t reconnects = client_->reconnects();
  absl::StatusOr<RedisReply> r = client_->Command(settle);
  if (!r.ok()) return r.status();
  if (client_->reconnects() != reconnects) out->ambiguous_retries++;
  if (r->is_error()) return BloomScriptError(*client_, name, *r);
  return r->integer() == 1;
}

void RedisBloomImpl::AppendTransaction(std::string_view name,
                                       size_t newest_index,
                                       const std::vector<HashPair>& h,
                                       const std::vector<char>& skip,
                                       std::vector<RedisArgs>* out) {
  const LinkSpec& spec =
      cache_.find(std::string(name))->second->links[newest_index].spec;
  RedisArgs set;
  set.Add("BITFIELD").Add(BitmapKey(name, newest_index));
  for (size_t i = 0; i < h.size(); i++) {
    if (skip[i]) continue;
    for (uint32_t p = 0; p < spec.hashes; p++) {
      set.Add("SET")
          .Add("u1")
          .AddUint(RedisBitOffset(ProbeBit(h[i], p, spec.bits)))
          .Add("1");
    }
  }
  out->push_back(RedisArgs{"MULTI"});
  out->push_back(std::move(set));
  out->push_back(RedisArgs{"EXEC"});
}

}  // namespace siftdb
