// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "bench/redis_bloom_ceiling.h"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <thread>
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
  double client_ns_per_item = 0;  // this process's CPU (all its threads)
};

double ClientCpuSeconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + ts.tv_nsec * 1e-9;
}

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

// Batches go in blocks of kBlock, alternating between the two sides (which
// side starts alternates too), so that both see the same load on a shared
// machine. step(side, b) runs batch b of one side.
constexpr size_t kBlock = 10;

// Runs `batches` batches of each side on every one of `clients` connections
// at once (one thread each when clients > 1), so that with several clients
// the server never waits for one client's encoding or decoding. step(side,
// client, b) runs batch b of one side on one client.
template <typename Step>
void MeasurePair(RedisClient* probe, size_t batches, size_t batch, int clients,
                 Step step, Sample out[2]) {
  double cpu[2] = {0, 0};
  double wall[2] = {0, 0};
  double client_cpu[2] = {0, 0};
  std::atomic<bool> failed{false};
  auto run = [&](int side, int client, size_t begin, size_t end) {
    for (size_t b = begin; b < end; b++) {
      if (!step(side, client, b)) failed = true;
    }
  };
  for (size_t begin = 0; begin < batches; begin += kBlock) {
    const size_t end = std::min(batches, begin + kBlock);
    for (int k = 0; k < 2; k++) {
      const int side = (begin / kBlock) % 2 == 0 ? k : 1 - k;
      const double cpu0 = ServerCpuSeconds(probe);
      const double client0 = ClientCpuSeconds();
      auto t0 = std::chrono::steady_clock::now();
      if (clients == 1) {
        run(side, 0, begin, end);
      } else {
        std::vector<std::thread> threads;
        for (int c = 0; c < clients; c++) {
          threads.emplace_back(run, side, c, begin, end);
        }
        for (std::thread& t : threads) t.join();
      }
      wall[side] +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
              .count();
      client_cpu[side] += ClientCpuSeconds() - client0;
      cpu[side] += ServerCpuSeconds(probe) - cpu0;
      if (failed) {
        std::fprintf(stderr, "ceiling: a batch failed\n");
        std::exit(1);
      }
    }
  }
  const double items = static_cast<double>(batches * batch * clients);
  for (int side = 0; side < 2; side++) {
    out[side] = Sample{cpu[side] * 1e9 / items, items / wall[side],
                       client_cpu[side] * 1e9 / items};
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

void CeilingReport(const std::string& endpoint, size_t batch, size_t batches,
                   int clients) {
  RedisClientOptions o;
  o.endpoint = endpoint;
  auto probe = RedisClient::Connect(o);
  if (!probe.ok()) return;
  // One connection and one RedisBloom per client; client 0 also sets up.
  std::vector<std::unique_ptr<RedisClient>> conns;
  std::vector<std::unique_ptr<RedisBloomImpl>> blooms;
  for (int c = 0; c < clients; c++) {
    auto conn = RedisClient::Connect(o);
    if (!conn.ok()) return;
    conns.push_back(std::move(*conn));
    blooms.push_back(std::make_unique<RedisBloomImpl>(conns.back().get()));
  }
  RedisClient* client = conns[0].get();
  RedisBloomImpl& bloom = *blooms[0];
  std::printf(
      "\nCeiling: lean MAdd vs one raw BITFIELD SET per batch, MExists "
      "(present) vs one raw BITFIELD_RO; %zu batches of %zu per "
      "measurement on each of %d client connection(s) at once, sides "
      "alternating every 10 batches, 3 rounds, medians; server CPU from "
      "INFO cpu\n",
      batches, batch, clients);
  std::printf("  %-4s %-8s %12s %12s %9s %12s %12s %9s %11s %11s %12s %12s\n",
              "subs", "op", "cpu ns/item", "raw ns/item", "cpu x raw",
              "wall items/s", "raw items/s", "wall/raw", "wall/bound",
              "raw/bound", "client ns", "raw client ns");
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
    (void)client->Command({"DEL", "raw"});
    (void)client->Command({"SETRANGE", "raw", absl::StrCat(newest.bytes - 1),
                           std::string(1, '\0')});
    // [op][new/raw][server cpu/wall/client cpu] per round.
    std::vector<double> v[2][2][3];
    uint64_t next = 0;
    for (int round = 0; round < 3; round++) {
      // items[c][b]: batch b of client c.
      std::vector<std::vector<std::vector<std::string>>> items(clients);
      for (auto& per_client : items) {
        per_client.resize(batches);
        for (auto& b : per_client) {
          for (size_t i = 0; i < batch; i++) {
            b.push_back(absl::StrCat("c", links, "-", next++));
          }
        }
      }
      Sample s[2][2];
      for (int op = 0; op < 2; op++) {
        MeasurePair(
            probe->get(), batches, batch, clients,
            [&](int side, int c, size_t b) {
              const std::vector<std::string>& batch_items = items[c][b];
              if (side == 1) {
                return RawBitfield(conns[c].get(), batch_items, spec, op == 0);
              }
              return op == 0 ? blooms[c]->MAdd(name, batch_items).ok()
                             : blooms[c]->MExists(name, batch_items).ok();
            },
            s[op]);
      }
      for (int op = 0; op < 2; op++) {
        for (int side = 0; side < 2; side++) {
          v[op][side][0].push_back(s[op][side].cpu_ns_per_item);
          v[op][side][1].push_back(s[op][side].wall_items_per_s);
          v[op][side][2].push_back(s[op][side].client_ns_per_item);
        }
      }
    }
    for (int op = 0; op < 2; op++) {
      // Ratios per round, their medians printed.
      std::vector<double> cpu_ratio, wall_ratio, bound, raw_bound;
      for (int r = 0; r < 3; r++) {
        cpu_ratio.push_back(v[op][0][0][r] / v[op][1][0][r]);
        wall_ratio.push_back(v[op][0][1][r] / v[op][1][1][r]);
        bound.push_back(v[op][0][1][r] * v[op][0][0][r] / 1e9);
        raw_bound.push_back(v[op][1][1][r] * v[op][1][0][r] / 1e9);
      }
      std::printf(
          "  %-4d %-8s %12.0f %12.0f %9.3f %12.0f %12.0f %9.3f %11.3f "
          "%11.3f %12.0f %12.0f\n",
          links, op == 0 ? "MAdd" : "MExists", Median(v[op][0][0]),
          Median(v[op][1][0]), Median(cpu_ratio), Median(v[op][0][1]),
          Median(v[op][1][1]), Median(wall_ratio), Median(bound),
          Median(raw_bound), Median(v[op][0][2]), Median(v[op][1][2]));
    }
    (void)bloom.Delete(name);
    (void)client->Command({"DEL", "raw"});
  }
  std::printf(
      "  cpu x raw: server CPU per item over the raw command's; wall/bound "
      "(raw/bound): wall items/s over the rate the server CPU per item alone "
      "allows; client ns: this process's CPU per item (all threads)\n");
}

}  // namespace siftdb
