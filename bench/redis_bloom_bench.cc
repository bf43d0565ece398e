// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Throughput and memory of the Redis-backed Bloom filter against a local
// redis-server that this program starts itself (or --redis=HOST:PORT):
//   BM_MAdd / BM_MExists       items/s, batches of --batch (1000) items from
//                              one client, in a pre-sized 1% filter (MExists
//                              also at capacity 100k, where the bit array is
//                              small enough to be tested inside the script)
//   BM_MAddGrown               MAdd to an auto-created filter (capacity 100)
//                              grown to 200k items: 12 older sub-filters
//   BM_RawBitfield*            the same probe traffic as plain BITFIELD
//                              commands without a script (the floor)
// then prints memory per item at 1% (MEMORY USAGE of all keys) beside
// RedisBloom's 1.57 MB per million items and the theoretical 9.59 bits, and
// the cost of a batch that triggers an expansion.
//
// then the ceiling report (bench/redis_bloom_ceiling.h): lean MAdd and
// MExists beside the raw BITFIELD floors with 1, 2 and 4 sub-filters.
// With --tls the local server also listens for TLS (a self-signed
// certificate made with the openssl command), and a last table compares
// Exists (one item), MExists and MAdd (batches of --batch) through plain TCP
// and TLS, alternating, three rounds: medians and TLS/plain ratios
// (alternating_report.h).
// With --sentinel a master, 2 replicas and 3 Sentinels are started besides
// (local_sentinel.h), and two last tables compare, the same way: Exists
// and MExists of added items on a replica beside the master, once the
// replicas have every add (replica/master, the replica read through a
// plain redis:// connection to it, then through the fenced
// ?read_from=replica_preferred of RedisBloom::Open), and the TLS table's
// calls on the master through the Sentinels
// (redis+sentinel://.../benchmaster) beside directly (sentinel/direct).
// --benchmark_filter=NONE skips the Google Benchmark part.
//
//   redis_bloom_bench [--redis=127.0.0.1:6379|URL] [--batch=1000]
//                     [--memory_items=1000000] [--ceiling_batches=200]
//                     [--only_ceiling] [--ceiling_clients=1] [--tls]
//                     [--sentinel]
//                     [benchmark flags]

#include <fcntl.h>
#include <hiredis.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/alternating_report.h"
#include "bench/bench_tls.h"
#include "bench/local_redis.h"
#include "bench/local_sentinel.h"
#include "bench/redis_bloom_ceiling.h"
#include "benchmark/benchmark.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_counting_bloom_impl.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"

namespace siftdb {
namespace {

std::string g_endpoint;
size_t g_batch = 1000;
size_t g_memory_items = 1000000;
size_t g_ceiling_batches = 200;
bool g_only_ceiling = false;
int g_ceiling_clients = 1;

using bench::LocalRedis;

std::unique_ptr<RedisClient> Connect() {
  RedisClientOptions o;
  o.endpoint = g_endpoint;
  auto c = RedisClient::Connect(o);
  if (!c.ok()) {
    std::fprintf(stderr, "%s\n", std::string(c.status().message()).c_str());
    std::exit(1);
  }
  return std::move(*c);
}

// Adds server CPU per batch and the throughput the server alone could
// sustain at that cost.
void ReportServerCpu(benchmark::State& state, RedisClient* client,
                     double cpu_before) {
  double cpu = ServerCpuSeconds(client) - cpu_before;
  if (state.iterations() == 0 || cpu <= 0) return;
  double per_batch = cpu / static_cast<double>(state.iterations());
  state.counters["server_cpu_us_per_batch"] = per_batch * 1e6;
  state.counters["server_bound_items_per_s"] =
      static_cast<double>(g_batch) / per_batch;
}

std::vector<std::string> Batch(const std::string& prefix, uint64_t start,
                               size_t n) {
  std::vector<std::string> out;
  out.reserve(n);
  for (size_t i = 0; i < n; i++) out.push_back(absl::StrCat(prefix, start + i));
  return out;
}

// Filters are pre-sized (range(0) items at 1%) so that no run expands them:
// 2M items keep the bit array (2.8 MB) near the CPU caches, 20M (28 MB) do
// not, and every probe then misses.
std::string BenchName(int64_t capacity) {
  return absl::StrCat("bench", capacity);
}

bool FreshFilter(RedisBloom* bloom, int64_t capacity) {
  (void)bloom->Delete(BenchName(capacity));
  return bloom->Reserve(BenchName(capacity), 0.01, capacity).ok();
}

void BM_MAdd(benchmark::State& state) {
  auto client = Connect();
  RedisBloomImpl bloom(client.get());
  const int64_t capacity = state.range(0);
  if (!FreshFilter(&bloom, capacity)) {
    state.SkipWithError("reserve failed");
    return;
  }
  uint64_t next = 0;
  const double cpu_before = ServerCpuSeconds(client.get());
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<std::string> items = Batch("m", next, g_batch);
    next += g_batch;
    state.ResumeTiming();
    auto r = bloom.MAdd(BenchName(capacity), items);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * g_batch));
  ReportServerCpu(state, client.get(), cpu_before);
}

void BM_MExists(benchmark::State& state) {
  auto client = Connect();
  RedisBloomImpl bloom(client.get());
  const int64_t capacity = state.range(0);
  const bool absent = state.range(1) == 1;
  // Half full at most, so that filling never adds a sub-filter.
  const uint64_t kPresent = std::min<uint64_t>(200000, capacity / 2);
  // Reuse the MAdd filter when it holds enough items, else fill one.
  auto card = bloom.Card(BenchName(capacity));
  if (!card.ok() || *card < static_cast<int64_t>(kPresent) * 9 / 10) {
    if (!FreshFilter(&bloom, capacity)) {
      state.SkipWithError("reserve failed");
      return;
    }
    for (uint64_t i = 0; i < kPresent; i += 10000) {
      (void)bloom.MAdd(BenchName(capacity), Batch("m", i, 10000));
    }
  }
  uint64_t next = 0;
  const double cpu_before = ServerCpuSeconds(client.get());
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<std::string> items =
        Batch(absent ? "x" : "m", next % (kPresent - g_batch), g_batch);
    next += g_batch;
    state.ResumeTiming();
    auto r = bloom.MExists(BenchName(capacity), items);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * g_batch));
  ReportServerCpu(state, client.get(), cpu_before);
}

// Adds to a filter auto-created with RedisBloom's default capacity (100,
// expansion 2) and grown to range(0) items first: every batch also tests
// the older sub-filters (about log2(items / 100) of them).
void BM_MAddGrown(benchmark::State& state) {
  auto client = Connect();
  RedisBloomImpl bloom(client.get());
  const uint64_t before = static_cast<uint64_t>(state.range(0));
  const std::string name = absl::StrCat("grown", before);
  (void)bloom.Delete(name);
  for (uint64_t i = 0; i < before; i += 10000) {
    auto r = bloom.MAdd(name, Batch("g", i, 10000));
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
  }
  auto info = bloom.Info(name);
  uint64_t next = before;
  const double cpu_before = ServerCpuSeconds(client.get());
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<std::string> items = Batch("g", next, g_batch);
    next += g_batch;
    state.ResumeTiming();
    auto r = bloom.MAdd(name, items);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * g_batch));
  if (info.ok()) {
    state.counters["sub_filters_at_start"] = static_cast<double>(info->filters);
  }
  ReportServerCpu(state, client.get(), cpu_before);
  (void)bloom.Delete(name);
}

// The floor: the same probes sent as one plain BITFIELD (SET) or
// BITFIELD_RO (GET) per batch, no script, no counts, no atomic checks.
void BM_RawBitfield(benchmark::State& state) {
  auto client = Connect();
  const int64_t capacity = state.range(0);
  const bool set = state.range(1) == 1;
  auto spec = redis_bloom::ComputeLink(capacity, 0.005);
  (void)client->Command({"DEL", "raw"});
  (void)client->Command(
      {"SETRANGE", "raw", absl::StrCat(spec->bytes - 1), std::string(1, '\0')});
  uint64_t next = 0;
  const double cpu_before = ServerCpuSeconds(client.get());
  for (auto _ : state) {
    state.PauseTiming();
    std::vector<std::string> items = Batch("m", next, g_batch);
    next += g_batch;
    state.ResumeTiming();
    RedisArgs args;
    args.Add(set ? "BITFIELD" : "BITFIELD_RO").Add("raw");
    for (const std::string& item : items) {
      redis_bloom::HashPair h = redis_bloom::HashItem(item);
      for (uint32_t r = 0; r < spec->hashes; r++) {
        args.Add(set ? "SET" : "GET")
            .Add("u1")
            .AddUint(redis_bloom::RedisBitOffset(
                redis_bloom::ProbeBit(h, r, spec->bits)));
        if (set) args.Add("1");
      }
    }
    auto r = client->Command(args);
    if (!r.ok()) {
      state.SkipWithError(std::string(r.status().message()).c_str());
      return;
    }
  }
  state.SetItemsProcessed(static_cast<int64_t>(state.iterations() * g_batch));
  ReportServerCpu(state, client.get(), cpu_before);
  (void)client->Command({"DEL", "raw"});
}

// Wall-clock time: the work happens in the server, not in this process.
BENCHMARK(BM_MAdd)
    ->ArgName("capacity")
    ->Arg(2000000)
    ->Arg(20000000)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0)
    ->UseRealTime();
BENCHMARK(BM_MExists)
    ->ArgNames({"capacity", "absent"})
    ->Args({2000000, 0})
    ->Args({2000000, 1})
    ->Args({20000000, 0})
    ->Args({100000, 0})
    ->Args({100000, 1})
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0)
    ->UseRealTime();
BENCHMARK(BM_MAddGrown)
    ->ArgName("items")
    ->Arg(200000)
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0)
    ->UseRealTime();
BENCHMARK(BM_RawBitfield)
    ->ArgNames({"capacity", "set"})
    ->Args({2000000, 1})
    ->Args({2000000, 0})
    ->Args({20000000, 1})
    ->Unit(benchmark::kMicrosecond)
    ->MinTime(2.0)
    ->UseRealTime();

int64_t MemoryUsage(RedisClient* client, const std::string& name,
                    size_t links) {
  int64_t total = 0;
  std::vector<std::string> keys = {RedisBloom::MetaKey(name)};
  for (size_t j = 0; j < links; j++)
    keys.push_back(RedisBloom::BitmapKey(name, j));
  for (const std::string& k : keys) {
    auto r = client->Command({"MEMORY", "USAGE", k, "SAMPLES", "0"});
    if (r.ok() && r->is_integer()) total += r->integer();
  }
  return total;
}

void MemoryReport() {
  auto client = Connect();
  RedisBloomImpl bloom(client.get());
  const size_t n = g_memory_items;
  std::printf(
      "\nMemory per item at 1%% (%zu items, MEMORY USAGE of all keys):\n", n);
  struct Case {
    const char* label;
    int64_t capacity;
    bool nonscaling;
  };
  for (const Case& c :
       {Case{"scaling, pre-sized", static_cast<int64_t>(n), false},
        Case{"NONSCALING, pre-sized", static_cast<int64_t>(n), true},
        Case{"scaling, default capacity 100 (auto-grown)", 100, false}}) {
    std::string name = absl::StrCat("mem-", c.capacity, c.nonscaling);
    (void)bloom.Delete(name);
    if (!bloom.Reserve(name, 0.01, c.capacity, 2, c.nonscaling).ok()) continue;
    for (size_t i = 0; i < n; i += 10000) {
      (void)bloom.MAdd(name, Batch("mem", i, std::min<size_t>(10000, n - i)));
    }
    auto info = bloom.Info(name);
    int64_t bytes = MemoryUsage(client.get(), name, info->filters);
    std::printf(
        "  %-44s %5zu sub-filters  %8.3f MB  %6.2f bits/item  (RedisBloom "
        "BF.INFO Size %.3f MB)\n",
        c.label, static_cast<size_t>(info->filters), bytes / 1e6,
        bytes * 8.0 / n, info->size / 1e6);
    (void)bloom.Delete(name);
  }
  std::printf(
      "  reference: RedisBloom 1.57 MB per 1M items (scaling, pre-sized); "
      "theory -ln(0.01)/ln(2)^2 = 9.59 bits/item (1.20 MB per 1M)\n");
}

void ExpansionReport() {
  auto client = Connect();
  RedisBloomImpl bloom(client.get());
  std::printf("\nCost of an expansion (batches of %zu, 1%%):\n", g_batch);
  for (int64_t cap : {int64_t{100000}, int64_t{1000000}}) {
    std::string name = absl::StrCat("exp-", cap);
    (void)bloom.Delete(name);
    (void)bloom.Reserve(name, 0.01, cap);
    uint64_t next = 0;
    double normal_us = 0;
    int normal = 0;
    double expand_us = 0;
    while (true) {
      auto items = Batch("e", next, g_batch);
      next += g_batch;
      auto t0 = std::chrono::steady_clock::now();
      (void)bloom.MAdd(name, items);
      double us = std::chrono::duration<double, std::micro>(
                      std::chrono::steady_clock::now() - t0)
                      .count();
      if (bloom.Info(name)->filters > 1) {
        expand_us = us;
        break;
      }
      normal_us += us;
      normal++;
    }
    std::printf(
        "  capacity %8lld: batch creating sub-filter 2 took %8.0f us; a plain "
        "batch %6.0f us on average\n",
        static_cast<long long>(cap), expand_us, normal_us / normal);
    (void)bloom.Delete(name);
  }
}

// Microseconds per call of `op`, `calls` times.
template <typename Op>
double MicrosPerCall(int calls, const Op& op) {
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = 0; i < calls; i++) op(i);
  return std::chrono::duration<double, std::micro>(
             std::chrono::steady_clock::now() - t0)
             .count() /
         calls;
}

// The --tls and --sentinel tables' layout.
bench::AlternatingReport::Layout ReportLayout() {
  return {.indent = "  ",
          .corner = "median us/call",
          .label_width = 22,
          .value_width = 10,
          .ratio_width = 10};
}

constexpr int kBatchCalls = 200;  // MAdd and MExists calls per figure

// us per MAdd call, adding kBatchCalls batches of --batch items t0, t1, ...
// to `name`.
double TimeMAdd(RedisBloomImpl* bloom, const std::string& name) {
  return MicrosPerCall(kBatchCalls, [&](int i) {
    (void)bloom->MAdd(name,
                      Batch("t", static_cast<uint64_t>(i) * g_batch, g_batch));
  });
}

// Records, for `variant`, us per MExists of the batches TimeMAdd added and
// per Exists of one of those items (`exists_calls` calls); adds the items
// read as absent (or failed) to *absent.
void RecordReads(bench::AlternatingReport* report, int variant,
                 RedisBloomImpl* bloom, const std::string& name,
                 int exists_calls, long long* absent) {
  const double mexists = MicrosPerCall(kBatchCalls, [&](int i) {
    auto r = bloom->MExists(
        name, Batch("t", static_cast<uint64_t>(i) * g_batch, g_batch));
    if (!r.ok()) {
      *absent += static_cast<long long>(g_batch);
      return;
    }
    for (bool b : *r) *absent += b ? 0 : 1;
  });
  const size_t added = kBatchCalls * g_batch;
  report->Record("Exists (1 item)", variant,
                 MicrosPerCall(exists_calls,
                               [&](int i) {
                                 auto r = bloom->Exists(
                                     name, absl::StrCat("t", i % added));
                                 *absent += r.ok() && *r ? 0 : 1;
                               }),
                 1);
  report->Record("MExists (batch)", variant, mexists, 1);
}

// Records, for `variant`, us per MAdd, MExists and Exists (TimeMAdd, then
// RecordReads) on a fresh filter `name` reached through `endpoint`.
void RecordBloomCalls(bench::AlternatingReport* report, int variant,
                      const std::string& endpoint, const std::string& name) {
  g_endpoint = endpoint;
  auto client = Connect();
  RedisBloomImpl bloom(client.get());
  (void)bloom.Delete(name);
  (void)bloom.Reserve(name, 0.01, 2000000);
  const double madd = TimeMAdd(&bloom, name);
  long long absent = 0;
  RecordReads(report, variant, &bloom, name, /*exists_calls=*/5000, &absent);
  report->Record("MAdd (batch)", variant, madd, 1);
  (void)bloom.Delete(name);
}

void TlsReport(const std::string& plain, const std::string& tls) {
  std::printf(
      "\nTLS beside plain TCP (same server; us per call, medians of 3 "
      "rounds; batches of %zu)\n",
      g_batch);
  bench::AlternatingReport report("plain", "tls", ReportLayout());
  int round = 0;
  report.Alternate(3, [&](int t) {
    RecordBloomCalls(&report, t, t == 0 ? plain : tls,
                     absl::StrCat("tls-", round, "-", t));
    round += t;
  });
  g_endpoint = plain;
  report.Print();
}

// --sentinel: a master, 2 replicas and 3 Sentinels (bench/local_sentinel.h).
// A filter is filled through the master; once the replicas have it,
// Exists and MExists on a replica beside the master (through a plain
// connection to it, then through RedisBloom::Open's fenced
// read_from=replica_preferred); then the TLS table's calls on
// the master through the Sentinels beside directly: the reads on that
// filter first, then MAdd to fresh filters (a master that has just taken
// writes answered round trips several times slower for some seconds on
// the shared machine, so the reads also start 3 s after the fill). Every
// table: three alternating rounds, medians and ratios.
void SentinelReport(const bench::LocalSentinelGroup& group) {
  // 20,000 Exists (about a second) per figure: 5000 took a quarter of a
  // second, and one hiccup on the shared machine could decide a median.
  constexpr int kExistsCalls = 20000;
  const std::string direct = "redis://" + group.master_endpoint();
  const std::string replica = "redis://" + group.replica_endpoint(0);
  const std::string sentinel = group.url();
  const std::string saved = g_endpoint;
  const std::string name = "sentinel-read";
  auto with_bloom = [&](const std::string& endpoint, const auto& fn) {
    g_endpoint = endpoint;
    auto client = Connect();
    RedisBloomImpl bloom(client.get());
    fn(&bloom);
  };
  with_bloom(direct, [&](RedisBloomImpl* bloom) {
    (void)bloom->Delete(name);
    (void)bloom->Reserve(name, 0.01, 2000000);
    (void)TimeMAdd(bloom, name);
  });

  const std::string replica_url = sentinel + "?read_from=replica_preferred";
  std::printf(
      "\nReplica reads beside master reads (us per call, medians of 3 "
      "rounds; batches of %zu)\n  master %s beside replica %s, plain "
      "connections\n",
      g_batch, direct.c_str(), replica.c_str());
  if (!group.WaitReplicated()) {
    std::printf("  the replicas did not catch up with the master\n");
  }
  sleep(3);  // let the master settle after the fill
  bench::AlternatingReport where("master", "replica", ReportLayout());
  long long absent[2] = {0, 0};
  where.Alternate(3, [&](int v) {
    with_bloom(v == 0 ? direct : replica, [&](RedisBloomImpl* bloom) {
      RecordReads(&where, v, bloom, name, kExistsCalls, &absent[v]);
    });
  });
  where.Print();
  std::printf(
      "  added items read as absent (or failed): master %lld, replica "
      "%lld\n",
      absent[0], absent[1]);

  // The same reads through RedisBloom::Open(...?read_from=replica_preferred):
  // each call fenced (INFO replication on the master and the replica) and
  // answered by the replica when it has caught up.
  std::printf("\nFenced replica reads (%s) beside the master\n",
              replica_url.c_str());
  bench::AlternatingReport fenced("master", "replica_pref", ReportLayout());
  long long fenced_absent[2] = {0, 0};
  long long by_replica = 0, by_master = 0;
  fenced.Alternate(3, [&](int v) {
    if (v == 0) {
      with_bloom(direct, [&](RedisBloomImpl* bloom) {
        RecordReads(&fenced, v, bloom, name, kExistsCalls, &fenced_absent[v]);
      });
      return;
    }
    RedisBloomOptions ro;
    ro.endpoint = replica_url;
    auto opened = RedisBloom::Open(ro);
    if (!opened.ok()) {
      std::printf("  RedisBloom::Open: %s\n",
                  opened.status().ToString().c_str());
      return;
    }
    auto* bloom = static_cast<RedisBloomImpl*>(opened->get());
    RecordReads(&fenced, v, bloom, name, kExistsCalls, &fenced_absent[v]);
    by_replica += bloom->replica_reads();
    by_master += bloom->master_reads();
  });
  fenced.Print();
  std::printf(
      "  added items read as absent (or failed): master %lld, "
      "replica_preferred %lld; read calls answered by a replica %lld, by "
      "the master %lld\n",
      fenced_absent[0], fenced_absent[1], by_replica, by_master);

  std::printf(
      "\nSentinel beside direct (%s vs %s; us per call, medians of 3 "
      "rounds; batches of %zu)\n",
      sentinel.c_str(), direct.c_str(), g_batch);
  bench::AlternatingReport via("direct", "sentinel", ReportLayout());
  long long via_absent = 0;
  via.Alternate(3, [&](int v) {
    with_bloom(v == 0 ? direct : sentinel, [&](RedisBloomImpl* bloom) {
      RecordReads(&via, v, bloom, name, kExistsCalls, &via_absent);
    });
  });
  int round = 0;
  via.Alternate(3, [&](int v) {
    with_bloom(v == 0 ? direct : sentinel, [&](RedisBloomImpl* bloom) {
      const std::string fresh = absl::StrCat("sentinel-", round, "-", v);
      (void)bloom->Delete(fresh);
      (void)bloom->Reserve(fresh, 0.01, 2000000);
      via.Record("MAdd (batch)", v, TimeMAdd(bloom, fresh), 1);
      (void)bloom->Delete(fresh);
    });
    round += v;
  });
  via.Print();
  with_bloom(direct, [&](RedisBloomImpl* bloom) { (void)bloom->Delete(name); });
  g_endpoint = saved;
}

}  // namespace
}  // namespace siftdb

int main(int argc, char** argv) {
  std::vector<char*> rest;
  bool tls = false, sentinel = false;
  for (int i = 0; i < argc; i++) {
    std::string a = argv[i];
    if (a.rfind("--redis=", 0) == 0) {
      siftdb::g_endpoint = a.substr(8);
    } else if (a.rfind("--batch=", 0) == 0) {
      siftdb::g_batch = std::stoul(a.substr(8));
    } else if (a.rfind("--ceiling_batches=", 0) == 0) {
      siftdb::g_ceiling_batches = std::stoul(a.substr(18));
    } else if (a.rfind("--ceiling_clients=", 0) == 0) {
      siftdb::g_ceiling_clients = std::stoi(a.substr(18));
    } else if (a == "--only_ceiling") {
      siftdb::g_only_ceiling = true;
    } else if (a == "--tls") {
      tls = true;
    } else if (a == "--sentinel") {
      sentinel = true;
    } else if (a.rfind("--memory_items=", 0) == 0) {
      siftdb::g_memory_items = std::stoul(a.substr(15));
    } else {
      rest.push_back(argv[i]);
    }
  }
  if (siftdb::g_ceiling_clients < 1 || siftdb::g_ceiling_clients > 64) {
    std::fprintf(stderr, "--ceiling_clients must be in [1, 64]\n");
    return 2;
  }
  siftdb::LocalRedis local;
  if (tls && !siftdb::g_endpoint.empty()) {
    std::fprintf(stderr, "--tls starts its own redis-server: no --redis\n");
    return 2;
  }
  if (siftdb::g_endpoint.empty()) {
    if (!local.Start(tls)) {
      std::fprintf(stderr, "could not start redis-server (is it installed?)\n");
      return 1;
    }
    siftdb::g_endpoint = local.endpoint();
  }
  std::printf("redis endpoint %s\n", siftdb::g_endpoint.c_str());
  if (!siftdb::g_only_ceiling) {
    int rest_argc = static_cast<int>(rest.size());
    benchmark::Initialize(&rest_argc, rest.data());
    benchmark::RunSpecifiedBenchmarks();
    benchmark::Shutdown();
    siftdb::MemoryReport();
    siftdb::ExpansionReport();
  }
  siftdb::CeilingReport(siftdb::g_endpoint, siftdb::g_batch,
                        siftdb::g_ceiling_batches, siftdb::g_ceiling_clients);
  if (tls) siftdb::TlsReport(local.endpoint(), local.tls_url());
  if (sentinel) {
    siftdb::bench::LocalSentinelGroup group;
    if (!group.Start()) {
      std::fprintf(stderr, "could not start the Sentinel group\n");
      return 1;
    }
    siftdb::SentinelReport(group);
  }
  return 0;
}
