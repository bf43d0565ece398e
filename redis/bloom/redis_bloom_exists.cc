// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloom's membership queries (Exists, MExists): a filter whose newest
// sub-filter is large is probed without a script, sub-filter by sub-filter;
// one whose bit arrays are small enough to copy, through the read-only
// exists script
// (redis/bloom/redis_bloom_scripts.cc). See redis/bloom/redis_bloom.cc for the
// client cache and its token.

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_bloom_probes.h"
#include "redis/bloom/redis_bloom_scripts.h"
#include "redis/bloom/redis_bloom_util.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"
#include "util/absl_compat.h"

namespace siftdb {

using redis_bloom::BloomScriptError;
using redis_bloom::ChainLink;
using redis_bloom::IsOkReply;
using redis_bloom::IsStaleReply;
using redis_bloom::kMaxAttempts;
using redis_bloom::LinkSpec;
using redis_bloom::TooContended;
using redis_bloom::UnexpectedReply;

using redis_bloom::AddOffsets;
using redis_bloom::BulkProbes;
using redis_bloom::UseBulkProbes;

namespace {

// Reads Redis bits `offsets` of `key` in one MULTI / EXEC together with the
// filter's token. Returns the bits (0/1), or nullopt when the token is no
// longer `token` (refresh and retry), or an empty vector with *missing set
// when the meta key is missing or not a hash (RedisBloom answers 0).
absl::StatusOr<std::optional<std::vector<uint8_t>>> ReadBits(
    RedisClient* client, std::string_view name, const std::string& token,
    const std::string& key, const std::vector<uint64_t>& offsets,
    bool* missing) {
  RedisArgs probes;
  probes.Add("BITFIELD_RO").Add(key);
  for (uint64_t off : offsets) probes.Add("GET").Add("u1").AddUint(off);
  std::vector<RedisArgs> cmds;
  cmds.push_back(RedisArgs{"MULTI"});
  cmds.push_back(
      RedisArgs{"HMGET", RedisBloom::MetaKey(name), "id", "version"});
  cmds.push_back(std::move(probes));
  cmds.push_back(RedisArgs{"EXEC"});
  absl::StatusOr<std::vector<RedisReply>> replies = client->Pipeline(cmds);
  if (!replies.ok()) return replies.status();
  const RedisReply& exec = replies->back();
  if (exec.is_error()) return client->ServerErrorStatus("EXEC", exec);
  if (!exec.is_array() || exec.elements().size() != 2) {
    return UnexpectedReply(*client, name, exec);
  }
  const RedisReply& ids = exec.elements()[0];
  if (ids.is_error() || !ids.is_array() || ids.elements().size() != 2 ||
      ids.elements()[0].is_nil()) {
    *missing = true;
    return std::optional<std::vector<uint8_t>>(std::vector<uint8_t>());
  }
  if (absl::StrCat(ids.elements()[0].str(), ":", ids.elements()[1].str()) !=
      token) {
    return std::optional<std::vector<uint8_t>>();
  }
  const RedisReply& bits = exec.elements()[1];
  if (bits.is_error()) return client->ServerErrorStatus("BITFIELD_RO", bits);
  if (!bits.is_array() || bits.elements().size() != offsets.size()) {
    return UnexpectedReply(*client, name, bits);
  }
  std::vector<uint8_t> out(offsets.size());
  for (size_t i = 0; i < offsets.size(); i++) {
    out[i] = bits.elements()[i].integer() == 1 ? 1 : 0;
  }
  return std::optional<std::vector<uint8_t>>(std::move(out));
}

// Membership in sub-filter `link` with every probe of every item in one
// MULTI + token + BITFIELD_RO + EXEC (ExistsInLink's choice when most items
// are expected present).
absl::StatusOr<std::optional<std::vector<bool>>> ExistsInOneRound(
    RedisClient* client, std::string_view name,
    const RedisBloomImpl::Layout& layout, size_t link,
    const std::vector<redis_bloom::HashPair>& h) {
  const LinkSpec& spec = layout.links[link].spec;
  std::vector<uint64_t> offsets;
  offsets.reserve(h.size() * spec.hashes);
  for (const redis_bloom::HashPair& hp : h) {
    for (uint32_t r = 0; r < spec.hashes; r++) {
      offsets.push_back(
          redis_bloom::RedisBitOffset(redis_bloom::ProbeBit(hp, r, spec.bits)));
    }
  }
  bool missing = false;
  absl::StatusOr<std::optional<std::vector<uint8_t>>> bits =
      ReadBits(client, name, layout.token(), RedisBloom::BitmapKey(name, link),
               offsets, &missing);
  if (!bits.ok()) return bits.status();
  if (missing) {
    return std::optional<std::vector<bool>>(std::vector<bool>(h.size(), false));
  }
  if (!bits->has_value()) return std::optional<std::vector<bool>>();
  std::vector<bool> out(h.size());
  size_t present = 0;
  for (size_t i = 0, g = 0; i < h.size(); i++) {
    bool all = true;
    for (uint32_t r = 0; r < spec.hashes; r++, g++) {
      if ((**bits)[g] == 0) all = false;
    }
    out[i] = all;
    present += all;
  }
  layout.recent_present_share =
      static_cast<double>(present) / static_cast<double>(h.size());
  return std::optional<std::vector<bool>>(std::move(out));
}

// When the last probe of this filter found at least this share of its
// items present, the next reads every bit in one round.
constexpr double kOneRoundShare = 0.75;

// Membership in sub-filter `link`, without a script, in two rounds of
// MULTI + token + one BITFIELD_RO + EXEC: probe 0 of every item, then the
// other probes of the items whose probe 0 was set. An absent item usually
// stops at its first bit, so a batch of absent items costs about one probe
// per item instead of `hashes`; a batch of present items pays one more round
// trip. Bits are never cleared while the token holds, so an item whose probe
// 0 was set stays so: the answer is that of the second read. When the
// previous call found most of its items present (recent_present_share),
// every probe goes in one round instead: present items cost no second
// round trip and no repeated token check, absent ones `hashes` probes.
// nullopt: the token changed, refresh and retry.
absl::StatusOr<std::optional<std::vector<bool>>> ExistsInLink(
    RedisClient* client, std::string_view name,
    const RedisBloomImpl::Layout& layout, size_t link,
    const std::vector<redis_bloom::HashPair>& h) {
  const LinkSpec& spec = layout.links[link].spec;
  const std::string key = RedisBloom::BitmapKey(name, link);
  const std::string token = layout.token();
  if (spec.hashes > 1 && !h.empty() &&
      layout.recent_present_share >= kOneRoundShare) {
    return ExistsInOneRound(client, name, layout, link, h);
  }
  std::vector<uint64_t> offsets(h.size());
  for (size_t i = 0; i < h.size(); i++) {
    offsets[i] =
        redis_bloom::RedisBitOffset(redis_bloom::ProbeBit(h[i], 0, spec.bits));
  }
  bool missing = false;
  absl::StatusOr<std::optional<std::vector<uint8_t>>> first =
      ReadBits(client, name, token, key, offsets, &missing);
  if (!first.ok()) return first.status();
  if (missing) {
    return std::optional<std::vector<bool>>(std::vector<bool>(h.size(), false));
  }
  if (!first->has_value()) return std::optional<std::vector<bool>>();
  std::vector<bool> out(h.size());
  std::vector<size_t> survivors;
  for (size_t i = 0; i < h.size(); i++) {
    if ((**first)[i] != 0) survivors.push_back(i);
  }
  if (spec.hashes == 1 || survivors.empty()) {
    for (size_t i : survivors) out[i] = true;
    layout.recent_present_share =
        static_cast<double>(survivors.size()) / static_cast<double>(h.size());
    return std::optional<std::vector<bool>>(std::move(out));
  }
  offsets.clear();
  for (size_t i : survivors) {
    for (uint32_t r = 1; r < spec.hashes; r++) {
      offsets.push_back(redis_bloom::RedisBitOffset(
          redis_bloom::ProbeBit(h[i], r, spec.bits)));
    }
  }
  absl::StatusOr<std::optional<std::vector<uint8_t>>> rest =
      ReadBits(client, name, token, key, offsets, &missing);
  if (!rest.ok()) return rest.status();
  // Deleted (or re-created) between the rounds: start again.
  if (missing || !rest->has_value()) return std::optional<std::vector<bool>>();
  size_t g = 0;
  size_t present = 0;
  for (size_t i : survivors) {
    bool all = true;
    for (uint32_t r = 1; r < spec.hashes; r++, g++) {
      if ((**rest)[g] == 0) all = false;
    }
    out[i] = all;
    present += all;
  }
  layout.recent_present_share =
      static_cast<double>(present) / static_cast<double>(h.size());
  return std::optional<std::vector<bool>>(std::move(out));
}

// Membership in a chain whose newest sub-filter is too large to copy into
// a script: ExistsInLink on each sub-filter, newest first (it holds the most
// items), for the items not found yet. Every round checks the token, and
// bits are never cleared while it holds, so an item found stays found.
absl::StatusOr<std::optional<std::vector<bool>>> ExistsInChain(
    RedisClient* client, std::string_view name,
    const RedisBloomImpl::Layout& layout,
    const std::vector<redis_bloom::HashPair>& h) {
  std::vector<bool> out(h.size(), false);
  std::vector<size_t> left(h.size());
  for (size_t i = 0; i < h.size(); i++) left[i] = i;
  for (size_t j = layout.links.size(); j-- > 0 && !left.empty();) {
    std::vector<redis_bloom::HashPair> sub(left.size());
    for (size_t i = 0; i < left.size(); i++) sub[i] = h[left[i]];
    absl::StatusOr<std::optional<std::vector<bool>>> found =
        ExistsInLink(client, name, layout, j, sub);
    if (!found.ok() || !found->has_value()) return found;
    std::vector<size_t> still;
    for (size_t i = 0; i < left.size(); i++) {
      if ((**found)[i]) {
        out[left[i]] = true;
      } else {
        still.push_back(left[i]);
      }
    }
    left = std::move(still);
  }
  return std::optional<std::vector<bool>>(std::move(out));
}

}  // namespace

absl::StatusOr<bool> RedisBloomImpl::Exists(std::string_view name,
                                            std::string_view item) {
  absl::StatusOr<std::vector<bool>> r = MExists(name, std::vector{item});
  if (!r.ok()) return r.status();
  return r->at(0);
}

absl::StatusOr<std::vector<bool>> RedisBloomImpl::MExists(
    std::string_view name, const std::vector<std::string>& items) {
  std::vector<std::string_view> views(items.begin(), items.end());
  return MExists(name, views);
}

absl::StatusOr<std::vector<bool>> RedisBloomImpl::MExists(
    std::string_view name, const std::vector<std::string_view>& items) {
  std::vector<bool> all;
  all.reserve(items.size());
  RedisClient* reader = ReadClient();
  for (size_t begin = 0; begin < items.size(); begin += kMaxScriptItems) {
    size_t end = std::min(items.size(), begin + kMaxScriptItems);
    absl::StatusOr<std::vector<bool>> part =
        ExistsChunk(reader, name, items, begin, end);
    if (!part.ok() && reader != client_ && absl::IsUnavailable(part.status())) {
      // The replica failed: the master answers (it holds everything).
      DropReplica();
      reader = client_;
      part = ExistsChunk(reader, name, items, begin, end);
    }
    if (!part.ok()) return part.status();
    all.insert(all.end(), part->begin(), part->end());
  }
  return all;
}

absl::StatusOr<std::vector<bool>> RedisBloomImpl::ExistsChunk(
    RedisClient* reader, std::string_view name,
    const std::vector<std::string_view>& items, size_t begin, size_t end) {
  const size_t n = end - begin;
  std::vector<redis_bloom::HashPair> h(n);
  for (size_t i = 0; i < n; i++) h[i] = redis_bloom::HashItem(items[begin + i]);
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    absl::StatusOr<const Layout*> layout = Cached(name);
    if (!layout.ok()) {
      // RedisBloom answers 0 for a missing key and for a key of another type.
      if (absl::IsNotFound(layout.status()) ||
          absl::IsFailedPrecondition(layout.status())) {
        return std::vector<bool>(n, false);
      }
      return layout.status();
    }
    const std::vector<ChainLink>& links = (*layout)->links;
    if (!UseBulkProbes(links.back().spec, n)) {
      absl::StatusOr<std::optional<std::vector<bool>>> direct =
          ExistsInChain(reader, name, **layout, h);
      if (!direct.ok()) return direct.status();
      if (direct->has_value()) return std::move(**direct);
      cache_.erase(std::string(name));
      continue;
    }
    RedisArgs args;
    args.Add((*layout)->token()).AddUint(n).AddUint(links.size());
    for (const ChainLink& l : links) {
      args.AddUint(l.spec.hashes).Add(UseBulkProbes(l.spec, n) ? "b" : "f");
    }
    for (const ChainLink& l : links) {
      if (UseBulkProbes(l.spec, n)) {
        args.Add(BulkProbes(h, l.spec));
      } else {
        AddOffsets(&args, h, 0, l.spec);
      }
    }
    absl::StatusOr<RedisReply> reply =
        reader->Eval(redis_bloom::ExistsScript(), {MetaKey(name)}, args);
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) return BloomScriptError(*reader, name, *reply);
    if (IsStaleReply(*reply)) {
      cache_.erase(std::string(name));
      continue;
    }
    if (reply->is_array() && !reply->elements().empty() &&
        reply->elements()[0].str() == "NONE") {
      cache_.erase(std::string(name));
      return std::vector<bool>(n, false);
    }
    if (!IsOkReply(*reply, 2) || reply->elements()[1].str().size() != n) {
      return UnexpectedReply(*reader, name, *reply);
    }
    std::vector<bool> out(n);
    const std::string& bits = reply->elements()[1].str();
    for (size_t i = 0; i < n; i++) out[i] = bits[i] == '1';
    return out;
  }
  return TooContended(name);
}

}  // namespace siftdb
