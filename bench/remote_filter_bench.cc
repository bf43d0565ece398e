// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// remote_filter_bench: what the Redis mirror of the filters costs writers,
// and how fast remote readers pre-check keys, against a local redis-server
// that this program starts itself (or --redis=HOST:PORT, or a URL such as
// rediss://host:port?ca_cert=/ca.pem: docs/redis_client.md).
//
//   remote_filter_bench [--redis=HOST:PORT|URL] [--num=200000]
//                       [--probe_keys=1000000] [--batch=10000] [--tls]
//                       [--sentinel]
//
// 1. fillrandom (one Put of a 16-byte key and a 100-byte value per write,
//    keys in random order) with the mirror off, async and sync, with 1 and
//    8 writer threads, beside fillsync (an fdatasync per write, mirror
//    off): ops/s, micros per op per thread, and for the mirror the Redis
//    round trips per write group. A Redis round trip (PING) is measured
//    for scale.
// 2. Remote pre-checks from one connection (RemoteFilter) over a DB of
//    --probe_keys keys: absent keys (the common case for a pre-check) and
//    present keys, in batches of --batch, with the table filters cached
//    ("warm") and after ClearCache ("cold": the batch also fetches every
//    table filter it needs), with round trips per batch; and single-key
//    MayContain calls (one round trip each).
//
// 3. --tls: the local server also listens for TLS (a self-signed
//    certificate made with the openssl command); after the above, PING and
//    single-threaded fillrandom (mirror sync and async) run through plain
//    TCP and TLS alternately, three rounds, and the medians and TLS/plain
//    ratios are printed (the rounds and medians: alternating_report.h).
//
// 4. --sentinel: after the above (which keep to their own server), a
//    master, 2 replicas and 3 Sentinels are started (local_sentinel.h) and
//    a DB of --probe_keys keys is mirrored (async) into the master. Then,
//    alternately, three rounds each, medians and ratios of: RemoteFilter
//    MayContain (one absent key per call) and MayContainMany (warm batches
//    of --batch absent keys) through the Sentinels reading the master
//    beside ?read_from=replica_preferred (trust_replica on both readers),
//    once the replicas have every write (replication offsets) and the
//    replica reader is trusted, with the HMGET calls each server ran
//    (where the reads went): replica/master; then through the Sentinels
//    (redis+sentinel://.../benchmaster) beside directly (redis://master):
//    PING and the same probes, then single-threaded fillrandom with the
//    mirror sync and async: sentinel/direct.
//
// Custom main (not Google Benchmark's runner): each figure is one timed run
// of a whole workload, printed as a table.

#include <fcntl.h>
#include <hiredis.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/alternating_report.h"
#include "bench/bench_tls.h"
#include "bench/local_redis.h"
#include "bench/local_sentinel.h"
#include "db/db_impl.h"
#include "redis/client/redis_client.h"
#include "siftdb/db.h"
#include "siftdb/options.h"
#include "siftdb/remote_filter.h"
#include "siftdb/write_batch.h"

namespace {

using Clock = std::chrono::steady_clock;
using Mode = siftdb::RemoteFilterOptions::Mode;

double Seconds(Clock::time_point a, Clock::time_point b) {
  return std::chrono::duration<double>(b - a).count();
}

using siftdb::bench::LocalRedis;

std::string g_endpoint;
int g_num = 200000;
int g_probe_keys = 1000000;
size_t g_batch = 10000;
int g_run = 0;
std::string g_modes = "off,async,sync,fillsync";
std::string g_threads = "1,8";
int g_repeat = 1;

double ProcessCpuSeconds();
double RedisCpuSeconds();

std::string Key(uint64_t i) { return absl::StrFormat("%016d", i); }

siftdb::Options DbOptions(Mode mode, const std::string& name) {
  siftdb::Options o;
  o.create_if_missing = true;
  if (mode != Mode::kOff) {
    o.remote_filter.mode = mode;
    o.remote_filter.endpoints = {g_endpoint};
    o.remote_filter.name = name;
  }
  return o;
}

std::string FreshDir() {
  std::string dir =
      absl::StrFormat("/tmp/siftdb-rfbench-db-%d-%d", getpid(), g_run++);
  std::filesystem::remove_all(dir);
  return dir;
}

std::string Property(siftdb::DB* db, const char* name) {
  std::string v;
  db->GetProperty(name, &v);
  return v;
}

long long Field(const std::string& text, const std::string& name) {
  size_t p = text.find(name + "=");
  if (p == std::string::npos) return -1;
  return std::atoll(text.c_str() + p + name.size() + 1);
}

// One fillrandom (or fillsync) run; prints a row and returns its ops/s.
double Fill(const char* label, Mode mode, int threads, bool sync, int num) {
  const std::string dir = FreshDir();
  const std::string name = absl::StrFormat("bench%d", g_run);
  auto db = siftdb::DB::Open(DbOptions(mode, name), dir);
  if (!db.ok()) {
    std::fprintf(stderr, "open: %s\n", db.status().ToString().c_str());
    std::exit(1);
  }
  // Let the mirror publish before timing.
  if (mode != Mode::kOff) {
    for (int i = 0; i < 500; i++) {
      if (Property(db->get(), "siftdb.remote-filter").find("state=trusted") !=
          std::string::npos) {
        break;
      }
      usleep(10000);
    }
  }
  const int per_thread = num / threads;
  const std::string value(100, 'v');
  siftdb::WriteOptions wo;
  wo.sync = sync;
  std::atomic<bool> failed{false};
  const double cpu0 = ProcessCpuSeconds(), redis0 = RedisCpuSeconds();
  const auto start = Clock::now();
  std::vector<std::thread> workers;
  for (int t = 0; t < threads; t++) {
    workers.emplace_back([&, t] {
      std::mt19937_64 rng(1000 + t);
      for (int i = 0; i < per_thread; i++) {
        if (!(*db)->Put(wo, Key(rng() % (uint64_t{1} << 40)), value).ok()) {
          failed = true;
          return;
        }
      }
    });
  }
  for (auto& w : workers) w.join();
  const double secs = Seconds(start, Clock::now());
  const int ops = per_thread * threads;
  const double cpu_us = (ProcessCpuSeconds() - cpu0) * 1e6 / ops;
  const double redis_us = (RedisCpuSeconds() - redis0) * 1e6 / ops;
  std::string mirror = mode == Mode::kOff
                           ? std::string("-")
                           : Property(db->get(), "siftdb.remote-filter");
  std::string rt_per_group = "-";
  if (mode != Mode::kOff) {
    const long long groups = Field(mirror, "groups");
    const long long trips = Field(mirror, "round_trips");
    if (groups > 0) {
      rt_per_group =
          absl::StrFormat("%.3f (%lld/%lld)",
                          static_cast<double>(trips) / groups, trips, groups);
    }
  }
  std::printf("%-10s %-6s %7d %10.0f %10.2f %8.2f %8.2f   %s%s\n", label,
              mode == Mode::kOff    ? "off"
              : mode == Mode::kSync ? "sync"
                                    : "async",
              threads, ops / secs, secs * 1e6 * threads / ops, cpu_us, redis_us,
              rt_per_group.c_str(), failed ? "  (FAILED writes)" : "");
  std::fflush(stdout);
  db->reset();
  std::filesystem::remove_all(dir);
  return ops / secs;
}

// CPU seconds used so far by this process (all threads).
double ProcessCpuSeconds() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u.ru_utime.tv_sec + u.ru_stime.tv_sec +
         (u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

// CPU seconds used so far by the redis-server (INFO cpu).
double RedisCpuSeconds() {
  siftdb::RedisClientOptions o;
  o.endpoint = g_endpoint;
  auto c = siftdb::RedisClient::Connect(o);
  if (!c.ok()) return 0;
  auto r = (*c)->Command({"INFO", "cpu"});
  if (!r.ok()) return 0;
  double total = 0;
  for (const char* field : {"used_cpu_sys:", "used_cpu_user:"}) {
    size_t p = r->str().find(field);
    if (p != std::string::npos) {
      total += std::atof(r->str().c_str() + p + std::strlen(field));
    }
  }
  return total;
}

double PingMicros() {
  siftdb::RedisClientOptions o;
  o.endpoint = g_endpoint;
  auto c = siftdb::RedisClient::Connect(o);
  if (!c.ok()) return -1;
  const int n = 20000;
  const auto start = Clock::now();
  for (int i = 0; i < n; i++) (void)(*c)->Command({"PING"});
  return Seconds(start, Clock::now()) * 1e6 / n;
}

// A DB of --probe_keys keys under `name` whose async mirror a reader can
// probe, flushes and compactions finished (the figures are about probing,
// not about a manifest that changes under the reader).
std::unique_ptr<siftdb::DB> ProbeDb(const std::string& dir,
                                    const std::string& name) {
  auto db = siftdb::DB::Open(DbOptions(Mode::kAsync, name), dir);
  if (!db.ok()) {
    std::fprintf(stderr, "open: %s\n", db.status().ToString().c_str());
    std::exit(1);
  }
  const std::string value(100, 'v');
  for (int i = 0; i < g_probe_keys; i += 1000) {
    siftdb::WriteBatch b;
    for (int j = i; j < std::min(g_probe_keys, i + 1000); j++) {
      b.Put(Key(static_cast<uint64_t>(j) * 7919 % 1000003 * 1000 + 1), value);
    }
    if (!(*db)->Write(siftdb::WriteOptions(), &b).ok()) std::exit(1);
  }
  (void)static_cast<siftdb::DBImpl*>(db->get())->WaitForBackgroundWork();
  return std::move(*db);
}

// Waits until `filter`'s answers cover every write of ProbeDb (the async
// mirror's watermark), for up to 10 s.
void WaitForMirror(siftdb::RemoteFilter* filter) {
  for (int i = 0; i < 1000; i++) {
    std::string_view k = "x";
    std::vector<bool> a;
    (void)filter->MayContainMany(std::span<const std::string_view>(&k, 1), &a);
    if (filter->watermark().complete_seq >=
        static_cast<uint64_t>(g_probe_keys)) {
      break;
    }
    usleep(10000);
  }
}

// A key ProbeDb did not write.
std::string AbsentKey(std::mt19937_64& rng) {
  return Key(rng() % 1000003 * 1000 + 2);
}

void Probe() {
  const std::string dir = FreshDir();
  const std::string name = "probe";
  std::unique_ptr<siftdb::DB> db = ProbeDb(dir, name);
  auto filter = siftdb::RemoteFilter::Open(g_endpoint, name);
  if (!filter.ok()) {
    std::fprintf(stderr, "reader: %s\n", filter.status().ToString().c_str());
    std::exit(1);
  }
  WaitForMirror(filter->get());
  std::printf(
      "\nremote pre-checks: %d keys in the DB (tables and a MemTable), one "
      "connection, batches of %zu keys\n",
      g_probe_keys, g_batch);
  std::printf("%-8s %-8s %12s %14s %12s %10s\n", "keys", "cache", "keys/s",
              "rt/batch", "no-answers", "status");
  std::mt19937_64 rng(42);
  auto run = [&](const char* kind, bool present, bool cold, int batches) {
    std::vector<std::string> keys(g_batch);
    std::vector<std::string_view> views(g_batch);
    std::vector<bool> answers;
    uint64_t no = 0, total = 0;
    double secs = 0;
    absl::Status last;
    const siftdb::RemoteFilterStats before = (*filter)->stats();
    for (int b = 0; b < batches; b++) {
      for (size_t i = 0; i < g_batch; i++) {
        keys[i] = present
                      ? Key(rng() % g_probe_keys * 7919 % 1000003 * 1000 + 1)
                      : AbsentKey(rng);
        views[i] = keys[i];
      }
      if (cold) (*filter)->ClearCache();
      const auto start = Clock::now();
      last = (*filter)->MayContainMany(views, &answers);
      secs += Seconds(start, Clock::now());
      for (bool a : answers) no += a ? 0 : 1;
      total += g_batch;
    }
    const siftdb::RemoteFilterStats after = (*filter)->stats();
    std::printf(
        "%-8s %-8s %12.0f %14.2f %12.4f %10s\n", kind, cold ? "cold" : "warm",
        total / secs,
        static_cast<double>(after.round_trips - before.round_trips) / batches,
        static_cast<double>(no) / total,
        last.ok() ? "OK" : std::string(last.message()).substr(0, 40).c_str());
    std::fflush(stdout);
  };
  const int rounds = static_cast<int>(std::max<size_t>(5, 200000 / g_batch));
  run("absent", false, false, 1);  // warms the cache
  run("absent", false, false, rounds);
  run("present", true, false, rounds);
  run("absent", false, true, std::max(3, rounds / 4));
  run("present", true, true, std::max(3, rounds / 4));
  // One key per call (MayContain): a round trip each, so this measures the
  // fixed cost of a reader's round trip (the trust checks it carries).
  {
    const int calls = 20000;
    uint64_t no = 0;
    absl::Status last;
    const auto start = Clock::now();
    for (int i = 0; i < calls; i++) {
      const std::string key = AbsentKey(rng);
      if (!(*filter)->MayContain(key, &last)) no++;
    }
    const double secs = Seconds(start, Clock::now());
    std::printf(
        "%-8s %-8s %12.0f %14.2f %12.4f %10s\n", "single", "warm", calls / secs,
        1.0, static_cast<double>(no) / calls,
        last.ok() ? "OK" : std::string(last.message()).substr(0, 40).c_str());
  }
  siftdb::RemoteFilterStats st = (*filter)->stats();
  std::printf(
      "table filters cached: %llu (%llu bytes); live sub-filters "
      "fetched whole: %llu; live bits probed: %llu\n",
      static_cast<unsigned long long>(st.cached_filters),
      static_cast<unsigned long long>(st.cached_bytes),
      static_cast<unsigned long long>(st.live_whole_fetches),
      static_cast<unsigned long long>(st.live_probe_bits));
  std::printf("mirror: %s\n",
              Property(db.get(), "siftdb.remote-filter").c_str());
  filter->reset();
  db.reset();
  std::filesystem::remove_all(dir);
}

// --tls: the same server through plain TCP and through TLS, alternating,
// three rounds; medians and TLS/plain ratios of a PING round trip and of
// single-threaded fillrandom with the mirror sync and async.
void TlsReport(const std::string& plain, const std::string& tls) {
  std::printf("\nTLS beside plain TCP (same server; medians of 3 rounds)\n");
  siftdb::bench::AlternatingReport report("plain", "tls", {});
  report.Alternate(3, [&](int t) {
    g_endpoint = t == 0 ? plain : tls;
    const char* label = t == 0 ? "plain" : "tls";
    report.Record("PING round trip (us)", t, PingMicros(), 1);
    report.Record("fillrandom sync 1t (ops/s)", t,
                  Fill(label, Mode::kSync, 1, false, g_num), 0);
    report.Record("fillrandom async 1t (ops/s)", t,
                  Fill(label, Mode::kAsync, 1, false, g_num), 0);
  });
  g_endpoint = plain;
  report.Print();
}

// --sentinel's reader figures: MayContain (10,000 calls of one absent key,
// one round trip each) and MayContainMany (2M absent keys in warm batches
// of --batch: enough time that a scheduling hiccup on the shared machine
// does not decide the figure). A status other than OK is printed: the
// figures then time "maybe" answers.
void RecordProbes(siftdb::bench::AlternatingReport* report, int variant,
                  siftdb::RemoteFilter* filter, const char* label) {
  std::mt19937_64 rng(7 + variant);
  absl::Status single, many;
  const int calls = 10000;
  auto start = Clock::now();
  for (int i = 0; i < calls; i++) {
    (void)filter->MayContain(AbsentKey(rng), &single);
  }
  report->Record("MayContain (us/call)", variant,
                 Seconds(start, Clock::now()) * 1e6 / calls, 1);
  const int batches = static_cast<int>(std::max<size_t>(5, 2000000 / g_batch));
  std::vector<std::string> keys(g_batch);
  std::vector<std::string_view> views(g_batch);
  std::vector<bool> answers;
  double secs = 0;
  for (int b = 0; b < batches; b++) {
    for (size_t i = 0; i < g_batch; i++) {
      keys[i] = AbsentKey(rng);
      views[i] = keys[i];
    }
    start = Clock::now();
    absl::Status st = filter->MayContainMany(views, &answers);
    secs += Seconds(start, Clock::now());
    if (!st.ok()) many = st;
  }
  report->Record("MayContainMany (keys/s)", variant,
                 static_cast<double>(batches) * g_batch / secs, 0);
  for (const absl::Status& st : {single, many}) {
    if (!st.ok()) {
      std::printf("  %s: %s\n", label, std::string(st.message()).c_str());
    }
  }
}

// --sentinel: a master, 2 replicas and 3 Sentinels (bench/local_sentinel.h)
// and a DB of --probe_keys keys mirrored (async) into the master. First
// RemoteFilter probes through the Sentinels reading the master beside
// read_from=replica_preferred (trust_replica on both readers), once the
// replicas have every write and the replica reader is trusted. Then the
// master through the Sentinels beside directly: a PING round trip and the
// probes, then single-threaded fillrandom with the mirror sync and async.
// Reads go before writes because a master that has just taken a fill
// answers round trips several times slower for some seconds on the shared
// machine (seen: PING 18 us before a sync fill, ~100 us just after).
// Every table: three alternating rounds, medians and ratios.
void SentinelReport(const siftdb::bench::LocalSentinelGroup& group) {
  const std::string direct = "redis://" + group.master_endpoint();
  const std::string sentinel = group.url();
  const std::string replica = sentinel + "?read_from=replica_preferred";
  const std::string saved = g_endpoint;
  g_endpoint = direct;
  const std::string dir = FreshDir();
  const std::string name = "sentinel-probe";
  std::unique_ptr<siftdb::DB> db = ProbeDb(dir, name);
  auto open_reader = [&](const std::string& url) {
    siftdb::RemoteFilterReaderOptions o;
    o.endpoints = {url};
    o.trust_replica = true;
    auto f = siftdb::RemoteFilter::Open(o, name);
    if (!f.ok()) {
      std::fprintf(stderr, "reader %s: %s\n", url.c_str(),
                   f.status().ToString().c_str());
      std::exit(1);
    }
    WaitForMirror(f->get());
    return std::move(*f);
  };
  std::unique_ptr<siftdb::RemoteFilter> readers[] = {
      open_reader(direct), open_reader(sentinel), open_reader(replica)};

  std::printf(
      "\nReplica reads beside master reads (RemoteFilter through the "
      "Sentinels, ?read_from=replica_preferred, trust_replica; %d keys, "
      "batches of %zu; medians of 3 rounds)\n",
      g_probe_keys, g_batch);
  if (!group.WaitReplicated()) {
    std::printf("  the replicas did not catch up with the master\n");
  }
  // A replica is trusted once it has been up longer than the lease.
  absl::Status why = absl::UnknownError("not asked");
  for (int i = 0; i < 300 && !why.ok(); i++) {
    std::mt19937_64 rng(i);
    (void)readers[2]->MayContain(AbsentKey(rng), &why);
    if (!why.ok()) usleep(100000);
  }
  if (!why.ok()) {
    std::printf("  replica reader not trusted: %s\n",
                std::string(why.message()).c_str());
  }
  auto hmgets = [&](int node) {
    return group.CommandCalls(
        node == 0 ? group.master_endpoint() : group.replica_endpoint(node - 1),
        "hmget");
  };
  long long before[3], after[3];
  for (int n = 0; n < 3; n++) before[n] = hmgets(n);
  siftdb::bench::AlternatingReport where("master", "replica", {});
  where.Alternate(3, [&](int v) {
    RecordProbes(&where, v, readers[1 + v].get(),
                 v == 0 ? "master" : "replica");
  });
  for (int n = 0; n < 3; n++) after[n] = hmgets(n);
  where.Print();
  std::printf(
      "reader round trips (HMGET calls) during these rounds: master %lld, "
      "replicas %lld and %lld\n",
      after[0] - before[0], after[1] - before[1], after[2] - before[2]);

  std::printf("\nSentinel beside direct (%s vs %s; medians of 3 rounds)\n",
              sentinel.c_str(), direct.c_str());
  siftdb::bench::AlternatingReport via("direct", "sentinel", {});
  via.Alternate(3, [&](int v) {
    g_endpoint = v == 0 ? direct : sentinel;
    via.Record("PING round trip (us)", v, PingMicros(), 1);
    RecordProbes(&via, v, readers[v].get(), v == 0 ? "direct" : "sentinel");
  });
  via.Alternate(3, [&](int v) {
    g_endpoint = v == 0 ? direct : sentinel;
    const char* label = v == 0 ? "direct" : "sentinel";
    via.Record("fillrandom sync 1t (ops/s)", v,
               Fill(label, Mode::kSync, 1, false, g_num), 0);
    via.Record("fillrandom async 1t (ops/s)", v,
               Fill(label, Mode::kAsync, 1, false, g_num), 0);
  });
  via.Print();
  for (auto& r : readers) r.reset();
  db.reset();
  std::filesystem::remove_all(dir);
  g_endpoint = saved;
}

}  // namespace

int main(int argc, char** argv) {
  bool fill = true, probe = true, tls = false, sentinel = false;
  for (int i = 1; i < argc; i++) {
    std::string a = argv[i];
    if (a.rfind("--redis=", 0) == 0) {
      g_endpoint = a.substr(8);
    } else if (a.rfind("--num=", 0) == 0) {
      g_num = std::atoi(a.c_str() + 6);
    } else if (a.rfind("--probe_keys=", 0) == 0) {
      g_probe_keys = std::atoi(a.c_str() + 13);
    } else if (a.rfind("--batch=", 0) == 0) {
      g_batch = static_cast<size_t>(std::atoll(a.c_str() + 8));
    } else if (a.rfind("--modes=", 0) == 0) {
      g_modes = a.substr(8);
    } else if (a.rfind("--threads=", 0) == 0) {
      g_threads = a.substr(10);
    } else if (a.rfind("--repeat=", 0) == 0) {
      g_repeat = std::max(1, std::atoi(a.c_str() + 9));
    } else if (a == "--tls") {
      tls = true;
    } else if (a == "--sentinel") {
      sentinel = true;
    } else if (a == "--fill_only") {
      probe = false;
    } else if (a == "--probe_only") {
      fill = false;
    } else {
      std::fprintf(stderr,
                   "usage: remote_filter_bench [--redis=HOST:PORT] "
                   "[--num=N] [--probe_keys=N] [--batch=N] [--fill_only|"
                   "--probe_only] [--modes=off,async,sync,fillsync] "
                   "[--threads=1,8] [--repeat=N] [--tls] [--sentinel]\n");
      return 2;
    }
  }
  LocalRedis local;
  if (tls && !g_endpoint.empty()) {
    std::fprintf(stderr, "--tls starts its own redis-server: no --redis\n");
    return 2;
  }
  if (g_endpoint.empty()) {
    if (!local.Start(tls, /*port_base=*/21000)) {
      std::fprintf(stderr, "could not start redis-server (is it installed?)\n");
      return 1;
    }
    g_endpoint = local.endpoint();
  }
  std::printf(
      "redis %s; Redis round trip (PING, one connection): %.1f us; "
      "%u CPUs\n",
      g_endpoint.c_str(), PingMicros(), std::thread::hardware_concurrency());
  if (fill) {
    std::printf("\nfillrandom: %d Puts of 16-byte keys / 100-byte values\n",
                g_num);
    std::printf("%-10s %-6s %7s %10s %10s %8s %8s   %s\n", "benchmark",
                "mirror", "threads", "ops/s", "us/op", "cpu/op", "redis/op",
                "redis round trips per group");
    auto has = [](const std::string& list, const std::string& item) {
      return ("," + list + ",").find("," + item + ",") != std::string::npos;
    };
    for (int round = 0; round < g_repeat; round++) {
      for (absl::string_view t : absl::StrSplit(g_threads, ',')) {
        const int threads = std::max(1, std::atoi(std::string(t).c_str()));
        if (has(g_modes, "off")) {
          Fill("fillrandom", Mode::kOff, threads, false, g_num);
        }
        if (has(g_modes, "async")) {
          Fill("fillrandom", Mode::kAsync, threads, false, g_num);
        }
        if (has(g_modes, "sync")) {
          Fill("fillrandom", Mode::kSync, threads, false, g_num);
        }
        if (has(g_modes, "fillsync")) {
          Fill("fillsync", Mode::kOff, threads, true,
               std::max(2000, g_num / 20));
        }
      }
    }
  }
  if (probe) Probe();
  if (tls) TlsReport(local.endpoint(), local.tls_url());
  if (sentinel) {
    siftdb::bench::LocalSentinelGroup group;
    if (!group.Start()) {
      std::fprintf(stderr, "could not start the Sentinel group\n");
      return 1;
    }
    SentinelReport(group);
  }
  return 0;
}
