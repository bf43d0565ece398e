// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "bench/redis_bloom_ceiling.h"

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <vector>

#include "absl/strings/str_cat.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/client/redis_client.h"

namespace siftdb {
namespace {

struct Sample {
  double cpu_ns_per_item = 0;
  double wall_items_per_s = 0;
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Batches go in blocks of kBlock, alternating between the two sides (which
// side starts alternates too), so that both see the same load on a shared
// machine. step(side, b) runs batch b of one side.
constexpr size_t kBlock = 10;

template <typename Step>
void MeasurePair(RedisClient* probe, size_t batches, size_t batch, Step step,
                 Sample out[2]) {
  double cpu[2] = {0, 0};
  double wall[2] = {0, 0};
  for (size_t begin = 0; begin < batches; begin += kBlock) {
    const size_t end = std::min(batches, begin + kBlock);
    for (int k = 0; k < 2; k++) {
      const int side = (begin / kBlock) % 2 == 0 ? k : 1 - k;
      const double cpu0 = ServerCpuSeconds(probe);
      auto t0 = std::chrono::steady_clock::now();
      for (size_t b = begin; b < end; b++) {
        if (!step(side, b)) {
          std::fprintf(stderr, "ceiling: a batch failed\n");
          std::exit(1);
        }
      }
      wall[side] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      cpu[side] += ServerCpuSeconds(probe) - cpu0;
    }
  }
  const double items = static_cast<double>(batches * batch);
  for (int side = 0; side < 2; side++) {
    out[side] = Sample{cpu[side] * 1e9 / items, items / wall[side]};
  }
}

// The raw floor's command: every probe of every item as one BITFIELD.
bool RawBitfield(RedisClient* client, const std::vector<std::string>& items,
                 const redis_bloom::LinkSpec& spec, bool set) {
  RedisArgs args;
  args.Add(set ? "BITFIELD" : "BITFIELD_RO").Add("raw");
  for (const std::string& item : items) {
    redis_bloom::HashPair h = redis_bloom::HashItem(item);
    for (uint32_t r = 0; r < spec.hashes; r++) {
      args.Add(set ? "SET" : "GET")
          .Add("u1")
          .AddUint(redis_bloom::RedisBitOffset(
              redis_bloom::ProbeBit(h, r, spec.bits)));
      if (set) args.Add("1");
    }
  }
  auto r = client->Command(args);
  return r.ok() && r->is_array();
}

// A filter of `links` sub-filters whose newest holds 2M items at 1%.
bool BuildFilter(RedisBloomImpl* bloom, const std::string& name, int links) {
  (void)bloom->Delete(name);
  const int64_t growth = links == 1 ? 2 : links == 2 ? 20 : 12;
  int64_t first = 2000000;
  for (int i = 1; i < links; i++) first /= growth;
  if (!bloom->Reserve(name, 0.01, first, growth).ok()) return false;
  for (uint64_t next = 0;; next += 1000) {
    auto info = bloom->Info(name);
    if (!info.ok()) return false;
    if (static_cast<int>(info->filters) >= links) return true;
    std::vector<std::string> items;
    for (int i = 0; i < 1000; i++)
      items.push_back(absl::StrCat("fill", next + i));
    if (!bloom->MAdd(name, items).ok()) return false;
  }
}

}  // namespace

double ServerCpuSeconds(RedisClient* client) {
  auto r = client->Command({"INFO", "cpu"});
  if (!r.ok()) return 0;
  double total = 0;
  for (const char* key : {"used_cpu_user:", "used_cpu_sys:"}) {
    size_t at = r->str().find(key);
    if (at != std::string::npos) {
      total += std::atof(r->str().c_str() + at + std::strlen(key));
    }
  }
  return total;
}

void CeilingReport(const std::string& endpoint, size_t batch, size_t batches) {
  RedisClientOptions o;
  o.endpoint = endpoint;
  auto client = RedisClient::Connect(o);
  auto probe = RedisClient::Connect(o);
  if (!client.ok() || !probe.ok()) return;
  RedisBloomImpl bloom(client->get());
  std::printf(
      "\nCeiling: lean MAdd vs one raw BITFIELD SET per batch, MExists "
      "(present) vs one raw BITFIELD_RO; %zu batches of %zu per "
      "measurement, sides alternating every 10 batches, 3 rounds, medians; "
      "server CPU from INFO cpu\n",
      batches, batch);
  std::printf("  %-4s %-8s %12s %12s %9s %12s %12s %9s %11s\n", "subs", "op",
              "cpu ns/item", "raw ns/item", "cpu x raw", "wall items/s",
              "raw items/s", "wall/raw", "wall/bound");
  for (int links : {1, 2, 4}) {
    const std::string name = absl::StrCat("ceil", links);
    if (!BuildFilter(&bloom, name, links)) {
      std::printf("  %d: could not build the filter\n", links);
      continue;
    }
    auto info = bloom.Info(name);
    const BloomSubFilterInfo& newest = info->sub_filters.back();
    redis_bloom::LinkSpec spec;
    spec.bits = newest.bits;
    spec.hashes = newest.hashes;
    (void)(*client)->Command({"DEL", "raw"});
    (void)(*client)->Command({"SETRANGE", "raw", absl::StrCat(newest.bytes - 1),
                              std::string(1, '\0')});
    // [op][new/raw] per round.
    std::vector<double> v[2][2][2];  // op, side, cpu/wall
    uint64_t next = 0;
    for (int round = 0; round < 3; round++) {
      std::vector<std::vector<std::string>> items(batches);
      for (auto& b : items) {
        for (size_t i = 0; i < batch; i++) {
          b.push_back(absl::StrCat("c", links, "-", next++));
        }
      }
      Sample s[2][2];
      for (int op = 0; op < 2; op++) {
        MeasurePair(
            probe->get(), batches, batch,
            [&](int side, size_t b) {
              if (side == 1) {
                return RawBitfield(client->get(), items[b], spec, op == 0);
              }
              return op == 0 ? bloom.MAdd(name, items[b]).ok()
                             : bloom.MExists(name, items[b]).ok();
            },
            s[op]);
      }
      for (int op = 0; op < 2; op++) {
        for (int side = 0; side < 2; side++) {
          v[op][side][0].push_back(s[op][side].cpu_ns_per_item);
          v[op][side][1].push_back(s[op][side].wall_items_per_s);
        }
        // Ratios per round, their median below.
      }
    }
    for (int op = 0; op < 2; op++) {
      std::vector<double> cpu_ratio, wall_ratio, bound;
      for (int r = 0; r < 3; r++) {
        cpu_ratio.push_back(v[op][0][0][r] / v[op][1][0][r]);
        wall_ratio.push_back(v[op][0][1][r] / v[op][1][1][r]);
        bound.push_back(v[op][0][1][r] * v[op][0][0][r] / 1e9);
      }
      std::printf(
          "  %-4d %-8s %12.0f %12.0f %9.3f %12.0f %12.0f %9.3f %11.3f\n", links,
          op == 0 ? "MAdd" : "MExists", Median(v[op][0][0]),
          Median(v[op][1][0]), Median(cpu_ratio), Median(v[op][0][1]),
          Median(v[op][1][1]), Median(wall_ratio), Median(bound));
    }
    (void)bloom.Delete(name);
    (void)(*client)->Command({"DEL", "raw"});
  }
  std::printf(
      "  cpu x raw: server CPU per item over the raw command's; wall/bound: "
      "wall items/s over the rate the server CPU alone allows\n");
}

}  // namespace siftdb
