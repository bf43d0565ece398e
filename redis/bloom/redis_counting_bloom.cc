// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisCountingBloom (include/siftdb/redis_bloom.h): a counting Bloom filter
// in plain Redis. Layout for filter NAME:
//   cbf:{NAME}:meta      hash: format, id, error_rate, capacity, counters,
//                        hashes, bytes, counter_bits (4), items
//   cbf:{NAME}:counters  string of 4-bit cells; cell i is BITFIELD u4 #i
// Sizing follows the classic filter (bpe = -ln(e)/ln(2)^2, k = ceil(ln2 bpe),
// one cell per "bit"), rounded up to 16 cells (8 bytes). An item's cells are
// the distinct values of (a + i*b) mod cells, i < k, with RedisBloom's hash
// pair (a, b); each add increments every distinct cell once, so removals
// mirror adds exactly.

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_bloom_scripts.h"
#include "redis/bloom/redis_bloom_util.h"
#include "redis/bloom/redis_counting_bloom_impl.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"
#include "util/absl_compat.h"

namespace siftdb {

namespace {

using redis_bloom::WithReply;

constexpr int kMaxAttempts = 10;

std::string Quoted(std::string_view name) {
  return absl::StrFormat("counting bloom filter '%s'", name);
}

absl::Status NotFound(std::string_view name) {
  return WithReply(absl::NotFoundError(Quoted(name) + " not found"),
                   "ERR not found");
}

absl::Status ScriptError(const RedisClient& client, std::string_view name,
                         const RedisReply& reply) {
  const std::string& text = reply.str();
  if (text == "ERR not found") return NotFound(name);
  if (text == "ERR item exists") {
    return WithReply(absl::AlreadyExistsError(Quoted(name) + " already exists"),
                     text);
  }
  if (text.rfind("WRONGTYPE", 0) == 0) {
    return WithReply(absl::FailedPreconditionError(absl::StrFormat(
                         "redis %s: %s: key %s holds the wrong kind of value",
                         client.endpoint(), Quoted(name),
                         RedisCountingBloom::MetaKey(name))),
                     redis_bloom::kWrongTypeReply);
  }
  return client.ServerErrorStatus(Quoted(name), reply);
}

absl::Status Unexpected(const RedisClient& client, std::string_view name,
                        const RedisReply& reply) {
  return absl::InternalError(
      absl::StrFormat("redis %s: %s: unexpected script reply %s",
                      client.endpoint(), Quoted(name), reply.DebugString()));
}

bool FirstIs(const RedisReply& reply, std::string_view word) {
  return reply.is_array() && !reply.elements().empty() &&
         reply.elements()[0].str() == word;
}

// Appends per-item cell counts, then the cells, to args.
void AddCells(RedisArgs* args, const std::vector<std::string_view>& items,
              uint64_t counters, uint32_t hashes) {
  std::vector<std::vector<uint64_t>> cells(items.size());
  for (size_t i = 0; i < items.size(); i++) {
    redis_bloom::HashPair h = redis_bloom::HashItem(items[i]);
    std::vector<uint64_t>& c = cells[i];
    for (uint32_t r = 0; r < hashes; r++) {
      c.push_back(redis_bloom::ProbeBit(h, r, counters));
    }
    std::sort(c.begin(), c.end());
    c.erase(std::unique(c.begin(), c.end()), c.end());
    args->AddUint(c.size());
  }
  for (const auto& c : cells) {
    for (uint64_t cell : c) args->AddUint(cell);
  }
}

}  // namespace

std::string RedisCountingBloom::MetaKey(std::string_view name) {
  return absl::StrCat("cbf:{", AsAbsl(name), "}:meta");
}

std::string RedisCountingBloom::CountersKey(std::string_view name) {
  return absl::StrCat("cbf:{", AsAbsl(name), "}:counters");
}

absl::StatusOr<std::unique_ptr<RedisCountingBloom>> RedisCountingBloom::Open(
    const RedisBloomOptions& options) {
  absl::StatusOr<RedisReadFrom> read_from = redis_bloom::ReadFrom(options);
  if (!read_from.ok()) return read_from.status();
  if (*read_from == RedisReadFrom::kReplicaPreferred) {
    // Its reads have no replication fence (RedisBloom's have): a replica
    // behind the master would read recent adds as absent.
    return absl::InvalidArgumentError(
        "redis counting bloom: read_from=replica_preferred is not "
        "supported: a replica behind the master would read recent adds as "
        "absent");
  }
  absl::StatusOr<std::unique_ptr<RedisClient>> client =
      RedisClient::Connect(redis_bloom::ToClientOptions(options));
  if (!client.ok()) return client.status();
  return std::make_unique<RedisCountingBloomImpl>(*std::move(client));
}

RedisCountingBloom::~RedisCountingBloom() = default;

RedisCountingBloomImpl::RedisCountingBloomImpl(RedisClient* client)
    : client_(client), rng_(redis_bloom::RandomSeed(this)) {}

RedisCountingBloomImpl::RedisCountingBloomImpl(
    std::unique_ptr<RedisClient> client)
    : RedisCountingBloomImpl(client.get()) {
  owned_client_ = std::move(client);
}

RedisCountingBloomImpl::~RedisCountingBloomImpl() = default;

absl::Status RedisCountingBloomImpl::Create(std::string_view name,
                                            double error_rate, int64_t capacity,
                                            bool fail_if_exists) {
  absl::Status s = redis_bloom::ValidateParams(error_rate, capacity, 1);
  if (!s.ok()) return s;
  absl::StatusOr<redis_bloom::LinkSpec> spec =
      redis_bloom::ComputeLink(static_cast<uint64_t>(capacity), error_rate);
  if (!spec.ok()) return spec.status();
  uint64_t counters =
      (static_cast<uint64_t>(static_cast<double>(capacity) * spec->bpe) + 15) /
      16 * 16;
  uint64_t bytes = counters / 2;
  if (bytes > redis_bloom::kMaxLinkBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: %d counters need %d bytes, above Redis's string limit",
        Quoted(name), counters, bytes));
  }
  RedisArgs args;
  args.Add(fail_if_exists ? "reserve" : "ensure")
      .Add(absl::StrFormat("%016x", rng_()))
      .Add(redis_bloom::FormatDouble(error_rate))
      .AddInt(capacity)
      .AddUint(counters)
      .AddUint(spec->hashes)
      .AddUint(bytes);
  cache_.erase(std::string(name));
  absl::StatusOr<RedisReply> reply = client_->Eval(
      redis_bloom::CountingReserveScript(), {MetaKey(name)}, args);
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return ScriptError(*client_, name, *reply);
  if (!FirstIs(*reply, "OK")) return Unexpected(*client_, name, *reply);
  return absl::OkStatus();
}

absl::Status RedisCountingBloomImpl::Reserve(std::string_view name,
                                             double error_rate,
                                             int64_t capacity) {
  return Create(name, error_rate, capacity, /*fail_if_exists=*/true);
}

absl::StatusOr<RedisCountingBloomImpl::Geometry>
RedisCountingBloomImpl::GetGeometry(std::string_view name, bool create) {
  auto it = cache_.find(std::string(name));
  if (it != cache_.end()) return it->second;
  for (int attempt = 0; attempt < 2; attempt++) {
    absl::StatusOr<RedisReply> reply =
        client_->Command({"HMGET", MetaKey(name), "id", "counters", "hashes"});
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) return ScriptError(*client_, name, *reply);
    if (!reply->is_array() || reply->elements().size() != 3) {
      return Unexpected(*client_, name, *reply);
    }
    const auto& e = reply->elements();
    if (e[0].is_nil()) {
      if (!create) return NotFound(name);
      absl::Status s = Create(name, redis_bloom::kDefaultErrorRate,
                              redis_bloom::kDefaultCapacity,
                              /*fail_if_exists=*/false);
      if (!s.ok()) return s;
      continue;
    }
    Geometry g;
    g.id = e[0].str();
    uint64_t hashes = 0;
    if (!redis_bloom::ParseUint(e[1].str(), &g.counters) ||
        !redis_bloom::ParseUint(e[2].str(), &hashes) || g.counters == 0 ||
        hashes == 0 || hashes > 4096) {
      return absl::DataLossError(absl::StrFormat(
          "%s: meta hash %s is malformed", Quoted(name), MetaKey(name)));
    }
    g.hashes = static_cast<uint32_t>(hashes);
    cache_[std::string(name)] = g;
    return g;
  }
  return NotFound(name);
}

absl::StatusOr<std::vector<bool>> RedisCountingBloomImpl::Update(
    std::string_view name, const std::vector<std::string_view>& items,
    bool add) {
  if (items.empty()) return std::vector<bool>();
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    absl::StatusOr<Geometry> g = GetGeometry(name, /*create=*/add);
    if (!g.ok()) return g.status();
    RedisArgs args;
    args.Add(add ? "add" : "remove").Add(g->id).AddUint(items.size());
    AddCells(&args, items, g->counters, g->hashes);
    absl::StatusOr<RedisReply> reply = client_->Eval(
        redis_bloom::CountingUpdateScript(), {MetaKey(name)}, args);
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) {
      cache_.erase(std::string(name));
      if (add && reply->str() == "ERR not found")
        continue;  // deleted: recreate
      return ScriptError(*client_, name, *reply);
    }
    if (FirstIs(*reply, "STALE")) {
      cache_.erase(std::string(name));
      continue;
    }
    if (!FirstIs(*reply, "OK") || reply->elements().size() < 2 ||
        reply->elements()[1].str().size() != items.size()) {
      return Unexpected(*client_, name, *reply);
    }
    std::vector<bool> out(items.size());
    for (size_t i = 0; i < items.size(); i++) {
      out[i] = reply->elements()[1].str()[i] == '1';
    }
    return out;
  }
  return absl::AbortedError(Quoted(name) + ": kept changing under us");
}

absl::StatusOr<std::vector<bool>> RedisCountingBloomImpl::Add(
    std::string_view name, const std::vector<std::string_view>& items) {
  return Update(name, items, /*add=*/true);
}

absl::StatusOr<std::vector<bool>> RedisCountingBloomImpl::Remove(
    std::string_view name, const std::vector<std::string_view>& items) {
  return Update(name, items, /*add=*/false);
}

absl::StatusOr<std::vector<uint32_t>> RedisCountingBloomImpl::Read(
    std::string_view name, const std::vector<std::string_view>& items) {
  if (items.empty()) return std::vector<uint32_t>();
  for (int attempt = 0; attempt < kMaxAttempts; attempt++) {
    absl::StatusOr<Geometry> g = GetGeometry(name, /*create=*/false);
    if (!g.ok()) {
      if (absl::IsNotFound(g.status()) ||
          absl::IsFailedPrecondition(g.status())) {
        return std::vector<uint32_t>(items.size(), 0);
      }
      return g.status();
    }
    RedisArgs args;
    args.Add(g->id).AddUint(items.size());
    AddCells(&args, items, g->counters, g->hashes);
    absl::StatusOr<RedisReply> reply =
        client_->Eval(redis_bloom::CountingReadScript(), {MetaKey(name)}, args);
    if (!reply.ok()) return reply.status();
    if (reply->is_error()) return ScriptError(*client_, name, *reply);
    if (FirstIs(*reply, "NONE")) {
      cache_.erase(std::string(name));
      return std::vector<uint32_t>(items.size(), 0);
    }
    if (FirstIs(*reply, "STALE")) {
      cache_.erase(std::string(name));
      continue;
    }
    if (!FirstIs(*reply, "OK") || reply->elements().size() < 2 ||
        reply->elements()[1].elements().size() != items.size()) {
      return Unexpected(*client_, name, *reply);
    }
    std::vector<uint32_t> out(items.size());
    for (size_t i = 0; i < items.size(); i++) {
      out[i] =
          static_cast<uint32_t>(reply->elements()[1].elements()[i].integer());
    }
    return out;
  }
  return absl::AbortedError(Quoted(name) + ": kept changing under us");
}

absl::StatusOr<std::vector<bool>> RedisCountingBloomImpl::Exists(
    std::string_view name, const std::vector<std::string_view>& items) {
  absl::StatusOr<std::vector<uint32_t>> counts = Read(name, items);
  if (!counts.ok()) return counts.status();
  std::vector<bool> out(counts->size());
  for (size_t i = 0; i < counts->size(); i++) out[i] = (*counts)[i] > 0;
  return out;
}

absl::StatusOr<std::vector<uint32_t>> RedisCountingBloomImpl::Count(
    std::string_view name, const std::vector<std::string_view>& items) {
  return Read(name, items);
}

absl::StatusOr<CountingBloomInfo> RedisCountingBloomImpl::Info(
    std::string_view name) {
  absl::StatusOr<RedisReply> reply =
      client_->Command({"HGETALL", MetaKey(name)});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return ScriptError(*client_, name, *reply);
  if (!reply->is_array()) return Unexpected(*client_, name, *reply);
  if (reply->elements().empty()) return NotFound(name);
  redis_bloom::FieldMap fields;
  const auto& e = reply->elements();
  for (size_t i = 0; i + 1 < e.size(); i += 2)
    fields[e[i].str()] = e[i + 1].str();
  redis_bloom::FieldReader r(fields, MetaKey(name));
  CountingBloomInfo info;
  info.capacity = r.Uint("capacity");
  info.error_rate = r.Double("error_rate");
  info.counters = r.Uint("counters");
  info.hashes = static_cast<uint32_t>(r.Uint("hashes"));
  info.bytes = r.Uint("bytes");
  std::string items = r.String("items");
  if (!r.ok()) return r.status();
  info.items = std::strtoll(items.c_str(), nullptr, 10);
  return info;
}

absl::StatusOr<bool> RedisCountingBloomImpl::Delete(std::string_view name) {
  cache_.erase(std::string(name));
  absl::StatusOr<RedisReply> reply =
      client_->Command({"DEL", MetaKey(name), CountersKey(name)});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return ScriptError(*client_, name, *reply);
  return reply->integer() > 0;
}

}  // namespace siftdb
