// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomPartitioned (redis_bloom_partitioned.h): Info, Card, the dump,
// and the key commands (Delete, Expire, Persist, Ttl). Each reads the meta
// hash fresh where acting on a stale view could lose or leak keys.

#include <cmath>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_partitioned.h"
#include "redis/bloom/redis_bloom_util.h"
#include "util/absl_compat.h"

namespace siftdb {

using redis_bloom::BloomName;
using redis_bloom::PartitionedMeta;

namespace {

// Creates the meta hash only when the key is missing. Returns 1 when made.
const RedisScript& CreateMetaScript() {
  static const RedisScript* script = new RedisScript(R"lua(
if redis.call('EXISTS', KEYS[1]) == 1 then return 0 end
redis.call('HSET', KEYS[1], unpack(ARGV))
return 1
)lua");
  return *script;
}

std::vector<int64_t> AllParts(int64_t n) {
  std::vector<int64_t> all;
  for (int64_t i = 0; i < n; i++) all.push_back(i);
  return all;
}

}  // namespace

absl::Status RedisBloomPartitioned::CreateMeta(std::string_view name,
                                               const PartitionedMeta& meta) {
  RedisArgs args;
  for (const std::string& f : redis_bloom::MetaFields(meta)) args.Add(f);
  absl::StatusOr<RedisReply> reply = MetaEval(name, CreateMetaScript(), args);
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    if (reply->str().rfind("WRONGTYPE", 0) == 0) {
      return redis_bloom::WithReply(
          absl::FailedPreconditionError(BloomName(name) + ": WRONGTYPE"),
          redis_bloom::kWrongTypeReply);
    }
    return absl::UnavailableError(absl::StrFormat(
        "%s: creating the meta hash: %s", BloomName(name), reply->str()));
  }
  if (!reply->is_integer() || reply->integer() != 1) {
    return redis_bloom::WithReply(
        absl::AlreadyExistsError(BloomName(name) + " already exists"),
        "ERR item exists");
  }
  return absl::OkStatus();
}

absl::StatusOr<BloomInfo> RedisBloomPartitioned::Info(std::string_view name) {
  if (Cached(name) == nullptr) {
    absl::StatusOr<BloomInfo> r;
    bool partitioned = false;
    absl::Status s = Plain(
        name,
        [&](RedisBloomImpl* b) {
          r = b->Info(name);
          return r.status();
        },
        &partitioned);
    if (!s.ok()) return s;
    if (!partitioned) return r;
  }
  absl::StatusOr<BloomInfo> r = PartitionedInfo(*Cached(name));
  if (!absl::IsNotFound(r.status())) return r;
  absl::StatusOr<const View*> fresh = Reload(name);
  if (!fresh.ok()) return fresh.status();
  if (*fresh == nullptr) return redis_bloom::BloomNotFound(name);
  return PartitionedInfo(**fresh);
}

absl::StatusOr<BloomInfo> RedisBloomPartitioned::PartitionedInfo(
    const View& view) {
  std::vector<BloomInfo> res(view.names.size());
  absl::Status s = FanOut(
      view, AllParts(view.meta.partitions), [&](RedisBloomImpl* b, int64_t p) {
        absl::StatusOr<BloomInfo> r = b->Info(view.names[p]);
        if (!r.ok()) return r.status();
        res[p] = *std::move(r);
        return absl::OkStatus();
      });
  if (!s.ok()) return s;
  BloomInfo out;
  for (const BloomInfo& r : res) {
    out.capacity += r.capacity;
    out.size += r.size;
    out.filters += r.filters;
    out.items += r.items;
    out.sub_filters.insert(out.sub_filters.end(), r.sub_filters.begin(),
                           r.sub_filters.end());
  }
  out.error_rate = view.meta.error_rate;
  out.nonscaling = view.meta.nonscaling;
  out.options = res[0].options;
  out.growth = res[0].growth;
  if (!view.meta.nonscaling) {
    out.expansion = static_cast<uint32_t>(view.meta.expansion);
  }
  return out;
}

absl::StatusOr<int64_t> RedisBloomPartitioned::Card(std::string_view name) {
  if (Cached(name) == nullptr) {
    absl::StatusOr<int64_t> r;
    absl::Status s = OnNode(name, [&](RedisBloomImpl* b) {
      r = b->Card(name);
      return r.status();
    });
    if (!s.ok()) return s;
    // A partitioned meta hash has no count of its own: 0 may be one.
    if (*r != 0) return r;
    absl::StatusOr<const View*> v = Reload(name);
    if (!v.ok()) return v.status();
    if (*v == nullptr) return r;
  }
  const View& view = *Cached(name);
  std::vector<int64_t> res(view.names.size(), 0);
  absl::Status s = FanOut(view, AllParts(view.meta.partitions),
                          [&](RedisBloomImpl* b, int64_t p) {
                            absl::StatusOr<int64_t> r = b->Card(view.names[p]);
                            if (!r.ok()) return r.status();
                            res[p] = *r;
                            return absl::OkStatus();
                          });
  if (!s.ok()) return s;
  int64_t sum = 0;
  for (int64_t c : res) sum += c;
  return sum;
}

absl::StatusOr<BloomDumpChunk> RedisBloomPartitioned::ScanDump(
    std::string_view name, int64_t iterator) {
  int64_t p = 0, inner = 0;
  const bool ours = iterator == redis_bloom::kDumpHeaderIterator ||
                    redis_bloom::SplitDumpIterator(iterator, &p, &inner);
  if (iterator == 0 || ours) {
    // A dump starts from a fresh read; later chunks use the cached view.
    const View* view = iterator == 0 ? nullptr : Cached(name);
    if (view == nullptr) {
      absl::StatusOr<const View*> fresh = Reload(name);
      if (!fresh.ok()) return fresh.status();
      view = *fresh;
    }
    if (view != nullptr) {
      if (iterator == 0) {
        return BloomDumpChunk{redis_bloom::kDumpHeaderIterator,
                              redis_bloom::EncodeDumpHeader(view->meta)};
      }
      return PartitionedScan(*view, iterator);
    }
    if (ours) return redis_bloom::BloomNotFound(name);
  }
  absl::StatusOr<BloomDumpChunk> r;
  absl::Status s = OnNode(name, [&](RedisBloomImpl* b) {
    r = b->ScanDump(name, iterator);
    return r.status();
  });
  if (!s.ok()) return s;
  return r;
}

absl::StatusOr<BloomDumpChunk> RedisBloomPartitioned::PartitionedScan(
    const View& view, int64_t iterator) {
  int64_t p = 0, inner = 0;
  if (iterator != redis_bloom::kDumpHeaderIterator &&
      !redis_bloom::SplitDumpIterator(iterator, &p, &inner)) {
    return absl::InvalidArgumentError("not a partitioned dump iterator");
  }
  while (p < view.meta.partitions) {
    BloomDumpChunk chunk;
    absl::Status s = FanOut(view, {p}, [&](RedisBloomImpl* b, int64_t q) {
      absl::StatusOr<BloomDumpChunk> r = b->ScanDump(view.names[q], inner);
      if (!r.ok()) return r.status();
      chunk = *std::move(r);
      return absl::OkStatus();
    });
    if (!s.ok()) return s;
    if (chunk.next_iterator != 0) {
      if (chunk.next_iterator >= (int64_t{1} << redis_bloom::kDumpInnerBits)) {
        return absl::OutOfRangeError("partition too large to dump");
      }
      chunk.next_iterator = redis_bloom::DumpIterator(p, chunk.next_iterator);
      return chunk;
    }
    p++;  // this partition is done: the next one's header
    inner = 0;
  }
  return BloomDumpChunk{0, ""};
}

absl::Status RedisBloomPartitioned::LoadChunk(std::string_view name,
                                              int64_t iterator,
                                              std::string_view data) {
  int64_t p = 0, inner = 0;
  if (iterator == redis_bloom::kDumpHeaderIterator ||
      redis_bloom::SplitDumpIterator(iterator, &p, &inner)) {
    return PartitionedLoad(name, iterator, data);
  }
  return OnNode(name, [&](RedisBloomImpl* b) {
    return b->LoadChunk(name, iterator, data);
  });
}

absl::Status RedisBloomPartitioned::PartitionedLoad(std::string_view name,
                                                    int64_t iterator,
                                                    std::string_view data) {
  if (iterator == redis_bloom::kDumpHeaderIterator) {
    absl::StatusOr<PartitionedMeta> meta = redis_bloom::DecodeDumpHeader(data);
    if (!meta.ok()) {
      return redis_bloom::WithReply(
          absl::InvalidArgumentError(absl::StrFormat("%s: %s", BloomName(name),
                                                     meta.status().message())),
          "ERR received bad data");
    }
    absl::Status probed = nodes_->Probe();
    if (!probed.ok()) return probed;
    meta->id = NewId();
    absl::Status s = CreateMeta(name, *meta);
    if (!s.ok()) return s;
    return Reload(name).status();
  }
  int64_t p = 0, inner = 0;
  redis_bloom::SplitDumpIterator(iterator, &p, &inner);
  const View* view = Cached(name);
  if (view == nullptr) {
    absl::StatusOr<const View*> fresh = Reload(name);
    if (!fresh.ok()) return fresh.status();
    view = *fresh;
  }
  if (view == nullptr) return redis_bloom::BloomNotFound(name);
  if (p >= view->meta.partitions) {
    return redis_bloom::WithReply(
        absl::InvalidArgumentError(absl::StrFormat(
            "%s: iterator %d names partition %d of %d", BloomName(name),
            iterator, p, view->meta.partitions)),
        "ERR received bad data");
  }
  return FanOut(*view, {p}, [&](RedisBloomImpl* b, int64_t q) {
    return b->LoadChunk(view->names[q], inner, data);
  });
}

absl::StatusOr<bool> RedisBloomPartitioned::Delete(std::string_view name) {
  absl::StatusOr<const View*> view = Reload(name);
  if (!view.ok()) return view.status();
  if (*view == nullptr) {
    absl::StatusOr<bool> r;
    absl::Status s = OnNode(name, [&](RedisBloomImpl* b) {
      r = b->Delete(name);
      return r.status();
    });
    if (!s.ok()) return s;
    return r;
  }
  const View copy = **view;
  return PartitionedDelete(name, copy);
}

absl::StatusOr<bool> RedisBloomPartitioned::PartitionedDelete(
    std::string_view name, const View& view) {
  // The meta hash first: from now on the filter reads as absent, whatever
  // happens to the partitions.
  absl::StatusOr<RedisReply> del =
      MetaCommand(name, RedisArgs{"DEL", MetaKey(name)});
  cache_.erase(std::string(name));
  if (!del.ok()) return del.status();
  if (!del->is_integer()) {
    return absl::UnavailableError(
        absl::StrFormat("%s: DEL: %s", BloomName(name), del->DebugString()));
  }
  if (del->integer() == 0) return false;  // someone else deleted it
  absl::Status s = FanOut(view, AllParts(view.meta.partitions),
                          [&](RedisBloomImpl* b, int64_t p) {
                            return b->Delete(view.names[p]).status();
                          });
  if (!s.ok()) {
    return absl::Status(
        s.code(), absl::StrFormat("%s is deleted (it reads as absent) but some "
                                  "partition keys (bf:{%s/%s/...}) remain: %s",
                                  BloomName(name), AsAbsl(name), view.meta.id,
                                  s.message()));
  }
  return true;
}

absl::StatusOr<bool> RedisBloomPartitioned::Expire(std::string_view name,
                                                   absl::Duration ttl,
                                                   BloomExpireIf condition) {
  absl::StatusOr<const View*> view = Reload(name);
  if (!view.ok()) return view.status();
  if (*view == nullptr || ttl == absl::InfiniteDuration() ||
      ttl > kMaxBloomTtl) {
    // Unpartitioned (or refused by the same checks as there).
    absl::StatusOr<bool> r;
    absl::Status s = OnNode(name, [&](RedisBloomImpl* b) {
      r = b->Expire(name, ttl, condition);
      return r.status();
    });
    if (!s.ok()) return s;
    return r;
  }
  const int64_t ms =
      ttl <= absl::ZeroDuration()
          ? 0
          : absl::ToInt64Milliseconds(absl::Ceil(ttl, absl::Milliseconds(1)));
  const View copy = **view;
  return PartitionedExpire(name, copy, 0, ms, condition);
}

absl::StatusOr<bool> RedisBloomPartitioned::ExpireAt(std::string_view name,
                                                     absl::Time when,
                                                     BloomExpireIf condition) {
  absl::StatusOr<const View*> view = Reload(name);
  if (!view.ok()) return view.status();
  const absl::Duration since_epoch = when - absl::UnixEpoch();
  if (*view == nullptr || since_epoch > kMaxBloomTtl) {
    absl::StatusOr<bool> r;
    absl::Status s = OnNode(name, [&](RedisBloomImpl* b) {
      r = b->ExpireAt(name, when, condition);
      return r.status();
    });
    if (!s.ok()) return s;
    return r;
  }
  const int64_t ms = when <= absl::UnixEpoch()
                         ? 0
                         : absl::ToInt64Milliseconds(
                               absl::Ceil(since_epoch, absl::Milliseconds(1)));
  const View copy = **view;
  return PartitionedExpire(name, copy, ms, -1, condition);
}

absl::StatusOr<bool> RedisBloomPartitioned::PartitionedExpire(
    std::string_view name, const View& view, int64_t when_ms, int64_t ttl_ms,
    BloomExpireIf condition) {
  const std::string meta = MetaKey(name);
  // The meta node's clock and the meta hash's expiry decide the condition.
  absl::StatusOr<RedisReply> time = MetaCommand(name, RedisArgs{"TIME"});
  absl::StatusOr<RedisReply> pttl = MetaCommand(name, RedisArgs{"PTTL", meta});
  if (!time.ok()) return time.status();
  if (!pttl.ok()) return pttl.status();
  if (!time->is_array() || time->elements().size() != 2 ||
      !pttl->is_integer()) {
    return absl::UnavailableError(BloomName(name) + ": TIME / PTTL replies");
  }
  uint64_t sec = 0, usec = 0;
  redis_bloom::ParseUint(time->elements()[0].str(), &sec);
  redis_bloom::ParseUint(time->elements()[1].str(), &usec);
  const int64_t now_ms = static_cast<int64_t>(sec * 1000 + usec / 1000);
  if (pttl->integer() == -2) return false;
  if (ttl_ms >= 0) when_ms = ttl_ms == 0 ? 0 : now_ms + ttl_ms;
  const bool has = pttl->integer() >= 0;
  const int64_t current = now_ms + pttl->integer();
  bool apply = true;
  switch (condition) {
    case BloomExpireIf::kNoExpiry:
      apply = !has;
      break;
    case BloomExpireIf::kHasExpiry:
      apply = has;
      break;
    case BloomExpireIf::kLater:
      apply = has && when_ms > current;
      break;
    case BloomExpireIf::kSooner:
      apply = !has || when_ms < current;
      break;
    case BloomExpireIf::kAlways:
      break;
  }
  if (!apply) return false;
  // The meta hash first: it never outlives its partitions.
  absl::StatusOr<RedisReply> set =
      MetaCommand(name, RedisArgs{"PEXPIREAT", meta}.AddInt(when_ms));
  if (!set.ok()) return set.status();
  if (!set->is_integer() || set->integer() != 1) return false;
  if (when_ms <= now_ms) cache_.erase(std::string(name));
  const absl::Time at = absl::FromUnixMillis(when_ms);
  absl::Status s = FanOut(
      view, AllParts(view.meta.partitions), [&](RedisBloomImpl* b, int64_t p) {
        return b->ExpireAt(view.names[p], at, BloomExpireIf::kAlways).status();
      });
  if (!s.ok()) return s;
  return true;
}

absl::StatusOr<bool> RedisBloomPartitioned::Persist(std::string_view name) {
  absl::StatusOr<const View*> view = Reload(name);
  if (!view.ok()) return view.status();
  if (*view == nullptr) {
    absl::StatusOr<bool> r;
    absl::Status s = OnNode(name, [&](RedisBloomImpl* b) {
      r = b->Persist(name);
      return r.status();
    });
    if (!s.ok()) return s;
    return r;
  }
  const View copy = **view;
  // The partitions first: the meta hash never outlives them.
  absl::Status s = FanOut(copy, AllParts(copy.meta.partitions),
                          [&](RedisBloomImpl* b, int64_t p) {
                            return b->Persist(copy.names[p]).status();
                          });
  if (!s.ok()) return s;
  absl::StatusOr<RedisReply> r =
      MetaCommand(name, RedisArgs{"PERSIST", MetaKey(name)});
  if (!r.ok()) return r.status();
  return r->is_integer() && r->integer() == 1;
}

absl::StatusOr<absl::Duration> RedisBloomPartitioned::Ttl(
    std::string_view name) {
  // The meta hash's expiry is the filter's, partitioned or not.
  absl::StatusOr<absl::Duration> r;
  absl::Status s = OnNode(name, [&](RedisBloomImpl* b) {
    r = b->Ttl(name);
    return r.status();
  });
  if (!s.ok()) return s;
  return r;
}

}  // namespace siftdb
