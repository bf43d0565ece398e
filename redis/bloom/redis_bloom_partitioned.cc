// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomPartitioned (redis_bloom_partitioned.h): routing, adds and
// membership. Key commands, Info, Card and the dump are in
// redis_bloom_partitioned_keys.cc.

#include "redis/bloom/redis_bloom_partitioned.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_util.h"

namespace siftdb {

using redis_bloom::BloomNodes;
using redis_bloom::PartitionedMeta;

RedisBloomPartitioned::RedisBloomPartitioned(
    std::unique_ptr<RedisClient> client, BloomNodes::Configure configure,
    absl::Duration retry_deadline)
    : owned_client_(std::move(client)),
      seed_bloom_(std::make_unique<RedisBloomImpl>(owned_client_.get())),
      retry_deadline_(retry_deadline),
      rng_(redis_bloom::RandomSeed(this)) {
  if (configure) configure(seed_bloom_.get());
  nodes_ = std::make_unique<BloomNodes>(owned_client_.get(), seed_bloom_.get(),
                                        owned_client_->options(), configure);
}

RedisBloomPartitioned::RedisBloomPartitioned(RedisClient* client)
    : seed_bloom_(std::make_unique<RedisBloomImpl>(client)),
      retry_deadline_(client->options().retry_deadline),
      rng_(redis_bloom::RandomSeed(this)) {
  nodes_ = std::make_unique<BloomNodes>(client, seed_bloom_.get(),
                                        client->options(), nullptr);
}

RedisBloomPartitioned::~RedisBloomPartitioned() = default;

std::string RedisBloomPartitioned::NewId() {
  return absl::StrFormat("%016x", rng_());
}

std::string RedisBloomPartitioned::PartitionOf(std::string_view name,
                                               const PartitionedMeta& meta,
                                               int64_t i) {
  return redis_bloom::PartitionName(name, meta.id, i, meta.partitions);
}

const RedisBloomPartitioned::View* RedisBloomPartitioned::Cached(
    std::string_view name) const {
  auto it = cache_.find(std::string(name));
  return it == cache_.end() ? nullptr : it->second.get();
}

bool RedisBloomPartitioned::ForeignLayout(const absl::Status& s) {
  return absl::IsUnimplemented(s) || absl::IsDataLoss(s);
}

absl::Status RedisBloomPartitioned::OnNode(
    std::string_view name,
    const std::function<absl::Status(RedisBloomImpl*)>& fn) {
  const absl::Time deadline = absl::Now() + retry_deadline_;
  absl::Duration backoff = absl::Milliseconds(5);
  while (true) {
    absl::StatusOr<RedisBloomImpl*> bloom = nodes_->BloomFor(name);
    if (!bloom.ok()) return bloom.status();
    absl::Status s = fn(*bloom);
    if (!BloomNodes::IsRedirect(s, nodes_->is_cluster()) ||
        absl::Now() > deadline) {
      return s;
    }
    redirect_retries_++;
    nodes_->Refresh().IgnoreError();  // a failed reload: the retry says
    absl::SleepFor(backoff);
    backoff = std::min(backoff * 2, absl::Milliseconds(200));
  }
}

absl::StatusOr<RedisReply> RedisBloomPartitioned::MetaCall(
    std::string_view name,
    const std::function<absl::StatusOr<RedisReply>(RedisClient*)>& fn) {
  absl::StatusOr<RedisReply> out;
  absl::Status s = OnNode(name, [&](RedisBloomImpl*) -> absl::Status {
    absl::StatusOr<RedisClient*> client = nodes_->ClientFor(name);
    if (!client.ok()) return client.status();
    out = fn(*client);
    if (!out.ok()) return out.status();
    if (out->is_error()) {
      absl::Status e = (*client)->ServerErrorStatus("meta", *out);
      if (BloomNodes::IsRedirect(e, nodes_->is_cluster())) return e;
    }
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  return out;
}

absl::StatusOr<RedisReply> RedisBloomPartitioned::MetaCommand(
    std::string_view name, const RedisArgs& args) {
  return MetaCall(name, [&](RedisClient* c) { return c->Command(args); });
}

absl::StatusOr<RedisReply> RedisBloomPartitioned::MetaEval(
    std::string_view name, const RedisScript& script, const RedisArgs& args) {
  return MetaCall(name, [&](RedisClient* c) {
    return c->Eval(script, {MetaKey(name)}, args);
  });
}

absl::StatusOr<const RedisBloomPartitioned::View*>
RedisBloomPartitioned::Reload(std::string_view name) {
  cache_.erase(std::string(name));
  absl::StatusOr<RedisReply> reply =
      MetaCommand(name, RedisArgs{"HGETALL", MetaKey(name)});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) {
    if (reply->str().rfind("WRONGTYPE", 0) == 0) {
      absl::StatusOr<RedisClient*> c = nodes_->ClientFor(name);
      if (c.ok()) return redis_bloom::BloomWrongType(**c, name);
    }
    return absl::UnavailableError(absl::StrFormat(
        "%s: HGETALL: %s", redis_bloom::BloomName(name), reply->str()));
  }
  std::vector<std::pair<std::string, std::string>> fields;
  const auto& e = reply->elements();
  bool partitioned = false;
  for (size_t i = 0; i + 1 < e.size(); i += 2) {
    fields.emplace_back(e[i].str(), e[i + 1].str());
    if (e[i].str() == "format" &&
        e[i + 1].str() == redis_bloom::kPartitionedFormat) {
      partitioned = true;
    }
  }
  if (!partitioned) return nullptr;
  absl::StatusOr<PartitionedMeta> meta =
      redis_bloom::ParseMeta(fields, MetaKey(name));
  if (!meta.ok()) return meta.status();
  absl::Status probed = nodes_->Probe();
  if (!probed.ok()) return probed;
  auto view = std::make_unique<View>();
  view->meta = *std::move(meta);
  for (int64_t i = 0; i < view->meta.partitions; i++) {
    view->names.push_back(redis_bloom::PartitionName(name, view->meta.id, i,
                                                     view->meta.partitions));
  }
  const View* out = view.get();
  cache_[std::string(name)] = std::move(view);
  return out;
}

absl::StatusOr<std::optional<PartitionedMeta>> RedisBloomPartitioned::ReadMeta(
    std::string_view name) {
  absl::StatusOr<const View*> v = Reload(name);
  if (!v.ok()) return v.status();
  if (*v == nullptr) return std::nullopt;
  return (*v)->meta;
}

absl::Status RedisBloomPartitioned::Plain(
    std::string_view name,
    const std::function<absl::Status(RedisBloomImpl*)>& fn, bool* partitioned) {
  *partitioned = false;
  absl::Status s = OnNode(name, fn);
  if (!ForeignLayout(s)) return s;
  absl::StatusOr<const View*> v = Reload(name);
  if (!v.ok() || *v == nullptr) return s;
  *partitioned = true;
  return absl::OkStatus();
}

absl::Status RedisBloomPartitioned::FanOut(const View& view,
                                           const std::vector<int64_t>& parts,
                                           const PartFn& fn) {
  const absl::Time deadline = absl::Now() + retry_deadline_;
  absl::Duration backoff = absl::Milliseconds(5);
  std::vector<int64_t> pending = parts;
  std::vector<absl::Status> status(view.names.size());
  while (!pending.empty()) {
    std::vector<std::string> filters;
    std::vector<std::function<void(RedisBloomImpl*)>> tasks;
    for (int64_t p : pending) {
      filters.push_back(view.names[p]);
      tasks.push_back([&status, &fn, p](RedisBloomImpl* bloom) {
        status[p] = fn(bloom, p);
      });
    }
    absl::Status ran = nodes_->RunParallel(filters, tasks);
    if (!ran.ok()) return ran;
    std::vector<int64_t> again;
    for (int64_t p : pending) {
      if (BloomNodes::IsRedirect(status[p], nodes_->is_cluster())) {
        again.push_back(p);
      } else if (!status[p].ok()) {
        return status[p];
      }
    }
    if (!again.empty()) {
      if (absl::Now() > deadline) return status[again[0]];
      redirect_retries_ += static_cast<int64_t>(again.size());
      nodes_->Refresh().IgnoreError();
      absl::SleepFor(backoff);
      backoff = std::min(backoff * 2, absl::Milliseconds(200));
    }
    pending = std::move(again);
  }
  return absl::OkStatus();
}

absl::Status RedisBloomPartitioned::Reserve(std::string_view name,
                                            double error_rate, int64_t capacity,
                                            int64_t expansion,
                                            bool nonscaling) {
  return OnNode(name, [&](RedisBloomImpl* b) {
    return b->Reserve(name, error_rate, capacity, expansion, nonscaling);
  });
}

absl::Status RedisBloomPartitioned::Reserve(std::string_view name,
                                            const BloomReserveOptions& o) {
  absl::Status valid = redis_bloom::ValidateReserveOptions(name, o);
  if (!valid.ok()) return valid;
  if (o.partitions == 1) {
    return Reserve(name, o.error_rate, o.capacity, o.expansion, o.nonscaling);
  }
  return ReservePartitioned(name, o);
}

absl::Status RedisBloomPartitioned::ReservePartitioned(
    std::string_view name, const BloomReserveOptions& o) {
  absl::Status probed = nodes_->Probe();
  if (!probed.ok()) return probed;
  View view;
  view.meta.id = NewId();
  view.meta.partitions = o.partitions;
  view.meta.error_rate = o.error_rate;
  view.meta.capacity = o.capacity;
  view.meta.expansion = o.expansion;
  view.meta.nonscaling = o.nonscaling;
  std::vector<int64_t> all;
  for (int64_t i = 0; i < o.partitions; i++) {
    view.names.push_back(
        redis_bloom::PartitionName(name, view.meta.id, i, o.partitions));
    all.push_back(i);
  }
  const int64_t cap = redis_bloom::PartitionCapacity(o.capacity, o.partitions);
  absl::Status s = FanOut(view, all, [&](RedisBloomImpl* b, int64_t p) {
    return b->Reserve(view.names[p], o.error_rate, cap, o.expansion,
                      o.nonscaling);
  });
  if (s.ok()) s = CreateMeta(name, view.meta);
  if (!s.ok()) {
    // Best effort: the partitions of this new id are unreachable anyway.
    FanOut(view, all, [&](RedisBloomImpl* b, int64_t p) {
      return b->Delete(view.names[p]).status();
    }).IgnoreError();
    return s;
  }
  cache_[std::string(name)] = std::make_unique<View>(std::move(view));
  return absl::OkStatus();
}

absl::StatusOr<bool> RedisBloomPartitioned::Add(std::string_view name,
                                                std::string_view item) {
  if (Cached(name) == nullptr) {
    absl::StatusOr<bool> r;
    bool partitioned = false;
    absl::Status s = Plain(
        name,
        [&](RedisBloomImpl* b) {
          r = b->Add(name, item);
          return r.status();
        },
        &partitioned);
    if (!s.ok()) return s;
    if (!partitioned) return r;
  }
  absl::StatusOr<BloomAddResults> r = AddItems(name, {item}, nullptr);
  if (!r.ok()) return r.status();
  if (r->added.empty()) return r->stopped;
  return bool{r->added[0]};
}

absl::StatusOr<BloomAddResults> RedisBloomPartitioned::MAdd(
    std::string_view name, const std::vector<std::string_view>& items) {
  return AddItems(name, items, nullptr);
}

absl::StatusOr<BloomAddResults> RedisBloomPartitioned::MAdd(
    std::string_view name, const std::vector<std::string>& items) {
  std::vector<std::string_view> views(items.begin(), items.end());
  return AddItems(name, views, nullptr);
}

absl::StatusOr<BloomAddResults> RedisBloomPartitioned::Insert(
    std::string_view name, const std::vector<std::string_view>& items,
    const BloomInsertOptions& options) {
  return AddItems(name, items, &options);
}

absl::StatusOr<BloomAddResults> RedisBloomPartitioned::AddItems(
    std::string_view name, const std::vector<std::string_view>& items,
    const BloomInsertOptions* insert) {
  std::string last_id;
  for (int attempt = 0; attempt < redis_bloom::kMaxAttempts; attempt++) {
    const View* view = Cached(name);
    if (view == nullptr) {
      absl::StatusOr<BloomAddResults> r;
      bool partitioned = false;
      absl::Status s = Plain(
          name,
          [&](RedisBloomImpl* b) {
            r = insert != nullptr ? b->Insert(name, items, *insert)
                                  : b->MAdd(name, items);
            return r.status();
          },
          &partitioned);
      if (!s.ok()) return s;
      if (!partitioned) return r;
      continue;
    }
    absl::StatusOr<BloomAddResults> r = PartitionedAdd(*view, items);
    if (!absl::IsNotFound(r.status())) return r;
    // A partition is missing: the filter was deleted (and maybe made
    // again) by someone else. Read the meta hash again.
    const std::string id = view->meta.id;
    absl::StatusOr<const View*> fresh = Reload(name);
    if (!fresh.ok()) return fresh.status();
    if (*fresh != nullptr && (*fresh)->meta.id == id) return r;
  }
  return redis_bloom::TooContended(name);
}

absl::StatusOr<BloomAddResults> RedisBloomPartitioned::PartitionedAdd(
    const View& view, const std::vector<std::string_view>& items) {
  const int64_t n = view.meta.partitions;
  std::vector<std::vector<std::string_view>> sub(n);
  std::vector<std::vector<size_t>> index(n);
  for (size_t i = 0; i < items.size(); i++) {
    const int64_t p = redis_bloom::RouteItem(items[i], n);
    sub[p].push_back(items[i]);
    index[p].push_back(i);
  }
  std::vector<int64_t> parts;
  for (int64_t p = 0; p < n; p++) {
    if (!sub[p].empty()) parts.push_back(p);
  }
  std::vector<BloomAddResults> res(n);
  BloomInsertOptions nocreate;
  nocreate.nocreate = true;
  absl::Status s = FanOut(view, parts, [&](RedisBloomImpl* b, int64_t p) {
    absl::StatusOr<BloomAddResults> r =
        b->Insert(view.names[p], sub[p], nocreate);
    if (!r.ok()) return r.status();
    res[p] = *std::move(r);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  BloomAddResults out;
  std::vector<bool> added(items.size(), false);
  size_t stop = items.size();
  for (int64_t p : parts) {
    const BloomAddResults& r = res[p];
    for (size_t k = 0; k < r.added.size(); k++) added[index[p][k]] = r.added[k];
    if (r.added.size() < sub[p].size() && index[p][r.added.size()] < stop) {
      // This partition stopped (NONSCALING full): the whole batch reports
      // as stopped at its first unprocessed item.
      stop = index[p][r.added.size()];
      out.stopped = r.stopped;
    }
    out.ambiguous_retries += r.ambiguous_retries;
  }
  added.resize(stop);
  out.added = std::move(added);
  return out;
}

absl::StatusOr<bool> RedisBloomPartitioned::Exists(std::string_view name,
                                                   std::string_view item) {
  if (Cached(name) == nullptr) {
    absl::StatusOr<bool> r;
    bool partitioned = false;
    absl::Status s = Plain(
        name,
        [&](RedisBloomImpl* b) {
          r = b->Exists(name, item);
          return r.status();
        },
        &partitioned);
    if (!s.ok()) return s;
    if (!partitioned) return r;
  }
  absl::StatusOr<std::vector<bool>> r = ExistsItems(name, {item});
  if (!r.ok()) return r.status();
  return bool{(*r)[0]};
}

absl::StatusOr<std::vector<bool>> RedisBloomPartitioned::MExists(
    std::string_view name, const std::vector<std::string_view>& items) {
  return ExistsItems(name, items);
}

absl::StatusOr<std::vector<bool>> RedisBloomPartitioned::MExists(
    std::string_view name, const std::vector<std::string>& items) {
  std::vector<std::string_view> views(items.begin(), items.end());
  return ExistsItems(name, views);
}

absl::StatusOr<std::vector<bool>> RedisBloomPartitioned::ExistsItems(
    std::string_view name, const std::vector<std::string_view>& items) {
  for (int attempt = 0; attempt < redis_bloom::kMaxAttempts; attempt++) {
    const View* view = Cached(name);
    if (view == nullptr) {
      absl::StatusOr<std::vector<bool>> r;
      bool partitioned = false;
      absl::Status s = Plain(
          name,
          [&](RedisBloomImpl* b) {
            r = b->MExists(name, items);
            return r.status();
          },
          &partitioned);
      if (!s.ok()) return s;
      if (!partitioned) return r;
      continue;
    }
    absl::StatusOr<std::vector<bool>> r = PartitionedExists(*view, items);
    if (!r.ok()) return r.status();
    if (std::all_of(r->begin(), r->end(), [](bool b) { return b; })) return r;
    // An absent item: make sure the view was still current (a filter
    // deleted and made again elsewhere leaves this one's partitions
    // missing, which read as empty).
    const std::string id = view->meta.id;
    absl::StatusOr<const View*> fresh = Reload(name);
    if (!fresh.ok()) return fresh.status();
    if (*fresh != nullptr && (*fresh)->meta.id == id) return r;
  }
  return redis_bloom::TooContended(name);
}

absl::StatusOr<std::vector<bool>> RedisBloomPartitioned::PartitionedExists(
    const View& view, const std::vector<std::string_view>& items) {
  const int64_t n = view.meta.partitions;
  std::vector<std::vector<std::string_view>> sub(n);
  std::vector<std::vector<size_t>> index(n);
  for (size_t i = 0; i < items.size(); i++) {
    const int64_t p = redis_bloom::RouteItem(items[i], n);
    sub[p].push_back(items[i]);
    index[p].push_back(i);
  }
  std::vector<int64_t> parts;
  for (int64_t p = 0; p < n; p++) {
    if (!sub[p].empty()) parts.push_back(p);
  }
  std::vector<std::vector<bool>> res(n);
  absl::Status s = FanOut(view, parts, [&](RedisBloomImpl* b, int64_t p) {
    absl::StatusOr<std::vector<bool>> r = b->MExists(view.names[p], sub[p]);
    if (!r.ok()) return r.status();
    if (r->size() != sub[p].size()) {
      return absl::InternalError("MExists: reply count differs");
    }
    res[p] = *std::move(r);
    return absl::OkStatus();
  });
  if (!s.ok()) return s;
  std::vector<bool> out(items.size(), false);
  for (int64_t p : parts) {
    for (size_t k = 0; k < res[p].size(); k++) out[index[p][k]] = res[p][k];
  }
  return out;
}

}  // namespace siftdb
