// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloom (include/siftdb/redis_bloom.h): the client half of the
// Redis-backed scalable Bloom filter. It hashes items, plans which
// sub-filters a batch may touch (including the ones the batch may create),
// turns probe positions into Redis bit offsets (or, for bit arrays small
// enough to be copied into the script, packed byte/mask records: probe mode
// 'b', see UseBulkProbes) and lets one Lua script
// (redis/bloom/redis_bloom_scripts.cc) apply the batch atomically.
//
// Client cache: per filter name, the layout last read from or written to
// Redis (incarnation id, layout version, sub-filter geometry, items in the
// newest sub-filter). Scripts check the token "<id>:<version>" and answer
// STALE when it is out of date, so the cache only saves round trips and can
// never make an answer wrong.

#include "siftdb/redis_bloom.h"

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_dump.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_bloom_partition_layout.h"
#include "redis/bloom/redis_bloom_partitioned.h"
#include "redis/bloom/redis_bloom_probes.h"
#include "redis/bloom/redis_bloom_scripts.h"
#include "redis/bloom/redis_bloom_util.h"
#include "redis/client/redis_client.h"
#include "util/absl_compat.h"

namespace siftdb {

using redis_bloom::AddOffsets;
using redis_bloom::BloomName;
using redis_bloom::BloomNotFound;
using redis_bloom::BloomScriptError;
using redis_bloom::BloomWrongType;
using redis_bloom::BulkProbes;
using redis_bloom::ChainHeader;
using redis_bloom::ChainLink;
using redis_bloom::FormatDouble;
using redis_bloom::IsOkReply;
using redis_bloom::IsStaleReply;
using redis_bloom::kMaxAttempts;
using redis_bloom::LinkSpec;
using redis_bloom::ParseUint;
using redis_bloom::TooContended;
using redis_bloom::UnexpectedReply;
using redis_bloom::UseBulkProbes;
using redis_bloom::WithReply;

namespace {

struct PlanLink {
  LinkSpec spec;
  uint64_t start = 0;  // first 0-based item that may reach this link
  bool too_big = false;
  // Probes travel as one packed block and the script tests them from a copy
  // of the bit array (only for existing sub-filters older than the newest).
  bool bulk = false;
};

void AddPlanLink(RedisArgs* args, const PlanLink& p) {
  args->AddUint(p.spec.capacity)
      .Add(FormatDouble(p.spec.error))
      .Add(FormatDouble(p.spec.bpe))
      .AddUint(p.spec.bits)
      .AddUint(p.spec.bytes)
      .AddUint(p.spec.hashes)
      .AddUint(p.spec.n2)
      .AddUint(p.start)
      .Add(p.too_big ? "1" : "0")
      .Add(p.bulk ? "b" : "f");
}

}  // namespace

std::string RedisBloom::MetaKey(std::string_view name) {
  return absl::StrCat("bf:{", AsAbsl(name), "}:meta");
}

std::string RedisBloom::BitmapKey(std::string_view name, size_t index) {
  return absl::StrCat("bf:{", AsAbsl(name), "}:bitmap:", index);
}

absl::StatusOr<std::unique_ptr<RedisBloom>> RedisBloom::Open(
    const RedisBloomOptions& options) {
  absl::StatusOr<RedisReadFrom> read_from = redis_bloom::ReadFrom(options);
  if (!read_from.ok()) return read_from.status();
  absl::StatusOr<std::unique_ptr<RedisClient>> client =
      RedisClient::Connect(redis_bloom::ToClientOptions(options));
  if (!client.ok()) return client.status();
  // Unpartitioned filters go to RedisBloomImpl unchanged; partitioned ones
  // and Redis Cluster routing are the front end's (redis_bloom_partitioned.h).
  const int wait_replicas = options.wait_replicas;
  const absl::Duration wait_timeout = options.wait_timeout;
  auto bloom = std::make_unique<RedisBloomPartitioned>(
      *std::move(client),
      [wait_replicas, wait_timeout](RedisBloomImpl* node) {
        node->set_wait(wait_replicas, wait_timeout);
      },
      options.retry_deadline);
  if (*read_from == RedisReadFrom::kReplicaPreferred) {
    bloom->seed_bloom()->set_replica_reads(options.replica_retry_interval);
  }
  return bloom;
}

RedisBloom::~RedisBloom() = default;

absl::Status RedisBloom::Reserve(std::string_view name,
                                 const BloomReserveOptions& options) {
  absl::Status valid = redis_bloom::ValidateReserveOptions(name, options);
  if (!valid.ok()) return valid;
  if (options.partitions != 1) {
    return absl::UnimplementedError(
        BloomName(name) +
        ": partitions > 1 need the RedisBloom that RedisBloom::Open returns");
  }
  return Reserve(name, options.error_rate, options.capacity, options.expansion,
                 options.nonscaling);
}

RedisBloomImpl::RedisBloomImpl(RedisClient* client)
    : client_(client), rng_(redis_bloom::RandomSeed(this)) {}

RedisBloomImpl::RedisBloomImpl(std::unique_ptr<RedisClient> client)
    : RedisBloomImpl(client.get()) {
  owned_client_ = std::move(client);
}

RedisBloomImpl::~RedisBloomImpl() = default;

std::string RedisBloomImpl::NewId() { return absl::StrFormat("%016x", rng_()); }

absl::StatusOr<const RedisBloomImpl::Layout*> RedisBloomImpl::Fetch(
    std::string_view name) {
  cache_.erase(std::string(name));
  const std::string meta = MetaKey(name);
  absl::StatusOr<RedisReply> reply = client_->Command({"HGETALL", meta});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    if (reply->str().rfind("WRONGTYPE", 0) == 0) {
      return BloomWrongType(*client_, name);
    }
    return client_->ServerErrorStatus("HGETALL", *reply);
  }
  if (!reply->is_array()) return UnexpectedReply(*client_, name, *reply);
  if (reply->elements().empty()) return BloomNotFound(name);
  redis_bloom::FieldMap fields;
  const auto& e = reply->elements();
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    fields[e[i].str()] = e[i + 1].str();
  }
  auto layout = std::make_unique<Layout>();
  redis_bloom::FieldReader r(fields, meta);
  // A meta hash of a layout this code does not know must not be misread:
  // refuse it rather than answer "absent" for items it may hold.
  const std::string format = r.String("format");
  if (r.ok() && format != "1") {
    return absl::UnimplementedError(absl::StrFormat(
        "%s: meta hash %s has format \"%s\"; this siftdb reads format 1",
        BloomName(name), meta, format));
  }
  layout->id = r.String("id");
  layout->version = static_cast<int64_t>(r.Uint("version"));
  layout->options = static_cast<uint32_t>(r.Uint("options"));
  layout->growth = static_cast<uint32_t>(r.Uint("expansion"));
  layout->error_rate = r.Double("error_rate");
  layout->items = r.Uint("inserted_count");
  uint64_t filters = r.Uint("filters");
  if (r.ok() && (filters == 0 || filters > redis_bloom::kMaxLinks)) {
    r.Fail(absl::StrFormat("filters = %d", filters));
  }
  for (uint64_t i = 0; r.ok() && i < filters; i++) {
    std::string p = absl::StrCat("link:", i, ":");
    ChainLink link;
    link.spec.capacity = r.Uint(p + "capacity");
    link.spec.error = r.Double(p + "error");
    link.spec.bpe = r.Double(p + "bpe");
    link.spec.bits = r.Uint(p + "bits");
    link.spec.bytes = r.Uint(p + "bytes");
    link.spec.hashes = static_cast<uint32_t>(r.Uint(p + "hashes"));
    link.spec.n2 = static_cast<uint8_t>(r.Uint(p + "n2"));
    link.items = r.Uint(p + "items");
    if (r.ok() && (link.spec.bits == 0 || link.spec.hashes == 0 ||
                   link.spec.bits != link.spec.bytes * 8)) {
      r.Fail(absl::StrFormat("sub-filter %d geometry", i));
    }
    layout->links.push_back(link);
  }
  if (!r.ok()) return r.status();
  const Layout* out = layout.get();
  cache_[std::string(name)] = std::move(layout);
  return out;
}

absl::StatusOr<const RedisBloomImpl::Layout*> RedisBloomImpl::Cached(
    std::string_view name) {
  auto it = cache_.find(std::string(name));
  if (it != cache_.end()) return it->second.get();
  return Fetch(name);
}

absl::Status RedisBloomImpl::Reserve(std::string_view name, double error_rate,
                                     int64_t capacity, int64_t expansion,
                                     bool nonscaling) {
  absl::Status s = redis_bloom::ValidateParams(error_rate, capacity,
                                               nonscaling ? 1 : expansion);
  if (!s.ok()) return s;
  absl::StatusOr<BloomAddResults> r =
      AddChunk(name, {}, 0, 0, CreateMode::kReserve,
               CreateParams{error_rate, capacity, expansion, nonscaling});
  return r.status();
}

absl::StatusOr<bool> RedisBloomImpl::Add(std::string_view name,
                                         std::string_view item) {
  absl::StatusOr<BloomAddResults> r = MAdd(name, std::vector{item});
  if (!r.ok()) return r.status();
  if (!r->stopped.ok()) return r->stopped;
  return r->added.at(0);
}

absl::StatusOr<BloomAddResults> RedisBloomImpl::MAdd(
    std::string_view name, const std::vector<std::string_view>& items) {
  return AddBatch(
      name, items, CreateMode::kAdd,
      CreateParams{redis_bloom::kDefaultErrorRate,
                   static_cast<int64_t>(redis_bloom::kDefaultCapacity),
                   redis_bloom::kDefaultExpansion, false});
}

absl::StatusOr<BloomAddResults> RedisBloomImpl::MAdd(
    std::string_view name, const std::vector<std::string>& items) {
  std::vector<std::string_view> views(items.begin(), items.end());
  return MAdd(name, views);
}

absl::StatusOr<BloomAddResults> RedisBloomImpl::Insert(
    std::string_view name, const std::vector<std::string_view>& items,
    const BloomInsertOptions& options) {
  CreateParams p{options.error_rate.value_or(redis_bloom::kDefaultErrorRate),
                 options.capacity.value_or(
                     static_cast<int64_t>(redis_bloom::kDefaultCapacity)),
                 options.expansion.value_or(redis_bloom::kDefaultExpansion),
                 options.nonscaling};
  absl::Status s = redis_bloom::ValidateParams(
      p.error_rate, p.capacity, options.nonscaling ? 1 : p.expansion);
  if (!s.ok()) return s;
  return AddBatch(name, items,
                  options.nocreate ? CreateMode::kNoCreate : CreateMode::kAdd,
                  p);
}

absl::StatusOr<BloomAddResults> RedisBloomImpl::AddBatch(
    std::string_view name, const std::vector<std::string_view>& items,
    CreateMode mode, const CreateParams& create) {
  BloomAddResults all;
  if (items.empty()) {
    return absl::InvalidArgumentError(BloomName(name) + ": no items to add");
  }
  for (size_t begin = 0; begin < items.size(); begin += kMaxScriptItems) {
    size_t end = std::min(items.size(), begin + kMaxScriptItems);
    absl::StatusOr<BloomAddResults> part;
    for (int attempt = 0;; attempt++) {
      const int64_t connection = client_->reconnects();
      part = AddChunk(name, items, begin, end, mode, create);
      if (!part.ok()) return part.status();
      if (wait_replicas_ == 0) break;
      absl::Status waited = WaitForReplicas(name);
      if (!waited.ok()) return waited;
      // WAIT counts the replicas of the server it ran on. If the client
      // reconnected since the step began (a failover, or a retried
      // connection error), the step may have run on another server, which
      // this WAIT says nothing about: run the step again (adds are
      // idempotent) and WAIT again, on the one connection.
      if (client_->reconnects() == connection) break;
      if (attempt == 3) {
        return absl::UnavailableError(absl::StrFormat(
            "%s: the connection changed between the add and its WAIT %d "
            "times; the items may not be replicated",
            BloomName(name), attempt + 1));
      }
      all.ambiguous_retries++;
    }
    all.added.insert(all.added.end(), part->added.begin(), part->added.end());
    all.ambiguous_retries += part->ambiguous_retries;
    if (!part->stopped.ok()) {
      all.stopped = part->stopped;
      break;
    }
  }
  return all;
}

absl::StatusOr<BloomAddResults> RedisBloomImpl::AddChunk(
    std::string_view name, const std::vector<std::string_view>& items,
    size_t begin, size_t end, CreateMode mode, const CreateParams& create) {
  const uint64_t n = end - begin;
  std::vector<redis_bloom::HashPair> h(n);
  for (size_t i = 0; i < n; i++) h[i] = redis_bloom::HashItem(items[begin + i]);

  int64_t ambiguous = 0;
  if (lean_adds_ && mode != CreateMode::kReserve) {
    BloomAddResults lean;
    absl::StatusOr<bool> done = LeanAdd(name, h, &lean);
    if (!done.ok()) return done.status();
    if (*done) return lean;
    // Not applied: only a resent claim can have moved a count.
    ambiguous = lean.ambiguous_retries;
  }

  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    const bool last = attempt == kMaxAttempts - 1;
    const Layout* layout = nullptr;
    if (mode != CreateMode::kReserve) {
      absl::StatusOr<const Layout*> got = Cached(name);
      if (got.ok()) {
        layout = *got;
      } else if (!absl::IsNotFound(got.status())) {
        return got.status();
      } else if (mode == CreateMode::kNoCreate) {
        return got.status();
      }
    }

    // The plan: existing sub-filters, then the ones this batch may create.
    std::vector<PlanLink> plan;
    std::string expected;
    uint64_t assumed_room = 0;
    uint32_t growth;
    uint32_t options;
    std::string id;
    double requested_error;
    if (layout == nullptr) {
      double first_error =
          create.nonscaling ? create.error_rate
                            : create.error_rate * redis_bloom::kTighteningRatio;
      absl::StatusOr<LinkSpec> first = redis_bloom::ComputeLink(
          static_cast<uint64_t>(create.capacity), first_error);
      if (!first.ok()) return first.status();
      plan.push_back(PlanLink{*first, 0, false});
      assumed_room = std::min<uint64_t>(n, first->capacity);
      growth = static_cast<uint32_t>(create.expansion);
      options = redis_bloom::kOptDefault |
                (create.nonscaling ? redis_bloom::kOptNoScaling : 0);
      id = NewId();
      requested_error = create.error_rate;
    } else {
      expected = layout->token();
      for (size_t j = 0; j < layout->links.size(); j++) {
        const LinkSpec& spec = layout->links[j].spec;
        const bool older = j + 1 < layout->links.size();
        plan.push_back(
            PlanLink{spec, 0, false, older && UseBulkProbes(spec, n)});
      }
      const ChainLink& newest = layout->links.back();
      uint64_t room =
          newest.spec.capacity - std::min(newest.items, newest.spec.capacity);
      // Leave slack for adds by other clients since our last look.
      assumed_room = last ? 0 : (room > n ? std::min(n, room - n) : 0);
      growth = layout->growth;
      options = layout->options;
      requested_error = layout->error_rate;
    }
    const bool nonscaling = (options & redis_bloom::kOptNoScaling) != 0;
    if (!nonscaling) {
      uint64_t s = assumed_room;
      LinkSpec prev = plan.back().spec;
      while (s < n) {
        PlanLink next;
        next.start = s;
        if (growth == 0 ||
            prev.capacity > std::numeric_limits<uint64_t>::max() / growth) {
          next.too_big = true;
        } else {
          absl::StatusOr<LinkSpec> spec = redis_bloom::ComputeGrownLink(
              prev.capacity * growth,
              prev.error * redis_bloom::kTighteningRatio);
          if (spec.ok()) {
            next.spec = *spec;
          } else {
            next.too_big = true;
          }
        }
        plan.push_back(next);
        if (next.too_big) break;
        s += next.spec.capacity;
        prev = next.spec;
      }
    }

    RedisArgs args;
    args.Add(mode == CreateMode::kReserve    ? "reserve"
             : mode == CreateMode::kNoCreate ? "nocreate"
                                             : "add")
        .Add(expected)
        .AddUint(assumed_room)
        .AddUint(n)
        .AddUint(plan.size())
        .Add(id)
        .Add(FormatDouble(requested_error))
        .AddUint(growth)
        .AddUint(options);
    for (const PlanLink& p : plan) AddPlanLink(&args, p);
    for (const PlanLink& p : plan) {
      if (p.bulk) {
        args.Add(BulkProbes(h, p.spec));
      } else if (!p.too_big) {
        AddOffsets(&args, h, p.start, p.spec);
      }
    }

    const int64_t reconnects = client_->reconnects();
    absl::StatusOr<RedisReply> reply =
        client_->Eval(redis_bloom::AddScript(), {MetaKey(name)}, args);
    if (!reply.ok()) return reply.status();
    // A resent script whose first run went through answers 0 for the items
    // it added; counts stay exact.
    if (client_->reconnects() != reconnects) ambiguous++;
    if (reply->is_error()) {
      if (reply->str().rfind("WRONGTYPE", 0) == 0 ||
          reply->str() == "ERR not found") {
        cache_.erase(std::string(name));
      }
      return BloomScriptError(*client_, name, *reply);
    }
    if (IsStaleReply(*reply)) {
      cache_.erase(std::string(name));
      continue;
    }
    if (!IsOkReply(*reply, 5)) return UnexpectedReply(*client_, name, *reply);
    const auto& e = reply->elements();
    const std::string& results = e[1].str();
    const std::string& token = e[2].str();
    const uint64_t newest_items = static_cast<uint64_t>(e[3].integer());
    const size_t links = static_cast<size_t>(e[4].integer());

    // Refresh the cache from what the script reported.
    auto fresh = std::make_unique<Layout>();
    size_t colon = token.rfind(':');
    fresh->id = token.substr(0, colon);
    fresh->version = std::strtoll(token.c_str() + colon + 1, nullptr, 10);
    fresh->options = options;
    fresh->growth = growth;
    fresh->error_rate = requested_error;
    for (size_t j = 0; j < links && j < plan.size(); j++) {
      ChainLink link;
      link.spec = plan[j].spec;
      link.items = layout != nullptr && j < layout->links.size()
                       ? layout->links[j].items
                       : link.spec.capacity;  // filled before a newer one
      fresh->links.push_back(link);
    }
    if (fresh->links.size() != links)
      return UnexpectedReply(*client_, name, *reply);
    fresh->links.back().items = newest_items;
    cache_[std::string(name)] = std::move(fresh);

    BloomAddResults out;
    out.ambiguous_retries = ambiguous;
    out.added.reserve(results.size());
    for (char c : results) {
      if (c == '1' || c == '0') {
        out.added.push_back(c == '1');
      } else if (c == 'E') {
        out.stopped =
            WithReply(absl::ResourceExhaustedError(BloomName(name) +
                                                   " is NONSCALING and full"),
                      "ERR non scaling filter is full");
      } else {
        out.stopped = WithReply(
            absl::ResourceExhaustedError(
                BloomName(name) + ": its next sub-filter would exceed Redis's "
                                  "512 MB string limit"),
            "ERR problem inserting into filter");
      }
    }
    return out;
  }
  return TooContended(name);
}

absl::StatusOr<BloomInfo> RedisBloomImpl::Info(std::string_view name) {
  absl::StatusOr<const Layout*> got = Fetch(name);
  if (!got.ok()) return got.status();
  const Layout& l = **got;
  BloomInfo info;
  info.filters = l.links.size();
  info.items = l.items;
  info.options = l.options;
  info.growth = l.growth;
  info.nonscaling = l.nonscaling();
  info.error_rate = l.error_rate;
  if (!info.nonscaling) info.expansion = l.growth;
  info.size = redis_bloom::kChainOverheadBytes;
  for (const ChainLink& link : l.links) {
    info.capacity += link.spec.capacity;
    info.size += redis_bloom::kLinkOverheadBytes + link.spec.bytes;
    BloomSubFilterInfo s;
    s.capacity = link.spec.capacity;
    s.error_rate = link.spec.error;
    s.bits_per_entry = link.spec.bpe;
    s.hashes = link.spec.hashes;
    s.bits = link.spec.bits;
    s.bytes = link.spec.bytes;
    s.items = link.items;
    info.sub_filters.push_back(s);
  }
  return info;
}

absl::StatusOr<int64_t> RedisBloomImpl::Card(std::string_view name) {
  absl::StatusOr<RedisReply> reply =
      client_->Command({"HGET", MetaKey(name), "inserted_count"});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    if (reply->str().rfind("WRONGTYPE", 0) == 0) {
      return BloomWrongType(*client_, name);
    }
    return client_->ServerErrorStatus("HGET", *reply);
  }
  if (reply->is_nil()) return 0;
  uint64_t v = 0;
  if (!ParseUint(reply->str(), &v))
    return UnexpectedReply(*client_, name, *reply);
  return static_cast<int64_t>(v);
}

absl::StatusOr<bool> RedisBloomImpl::Delete(std::string_view name) {
  cache_.erase(std::string(name));
  absl::StatusOr<RedisReply> reply =
      client_->Eval(redis_bloom::DeleteScript(), {MetaKey(name)}, RedisArgs());
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return BloomScriptError(*client_, name, *reply);
  return reply->integer() == 1;
}

}  // namespace siftdb
