// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Partitioned Bloom filters on a local Redis Cluster (issue #21): for 1, 2
// and 3 masters (cluster-enabled redis-servers this program starts on
// loopback, slots split in equal contiguous ranges with CLUSTER
// ADDSLOTSRANGE), a filter with as many partitions as masters (1: the
// unpartitioned filter) takes MAdd batches of --batch items from one
// client, then MExists of the same (present) items. Per configuration and
// operation: wall-clock items/s and the server CPU per item of each master
// (INFO cpu: used_cpu_user + used_cpu_sys deltas), medians of --rounds
// rounds, each on a new filter. The machine's load (uptime) is printed
// first: the masters, the client and its fan-out threads share its cores.
//
//   redis_bloom_partition_bench [--items=200000] [--batch=1000]
//                               [--rounds=3] [--masters=1,2,3]

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "bench/local_redis.h"
#include "redis/client/redis_client.h"
#include "siftdb/redis_bloom.h"

ABSL_FLAG(int64_t, items, 200000, "items added (and checked) per round");
ABSL_FLAG(int64_t, batch, 1000, "items per MAdd / MExists call");
ABSL_FLAG(int, rounds, 3, "rounds per configuration (medians)");
ABSL_FLAG(std::vector<std::string>, masters,
          std::vector<std::string>({"1", "2", "3"}),
          "cluster sizes to measure");

namespace siftdb {
namespace {

[[noreturn]] void Die(const std::string& what) {
  std::fprintf(stderr, "redis_bloom_partition_bench: %s\n", what.c_str());
  std::exit(1);
}

std::unique_ptr<RedisClient> Connect(const std::string& endpoint) {
  RedisClientOptions o;
  o.endpoint = endpoint;
  auto c = RedisClient::Connect(o);
  if (!c.ok()) Die(std::string(c.status().message()));
  return std::move(*c);
}

RedisReply Must(RedisClient* c, const std::vector<std::string>& argv) {
  auto r = c->Command(argv);
  if (!r.ok()) Die(std::string(r.status().message()));
  if (r->is_error()) Die(absl::StrCat(argv[0], ": ", r->str()));
  return *std::move(r);
}

double ServerCpu(RedisClient* c) {
  std::string info = Must(c, {"INFO", "cpu"}).str();
  double total = 0;
  for (absl::string_view line : absl::StrSplit(info, '\n')) {
    for (const char* field : {"used_cpu_user:", "used_cpu_sys:"}) {
      if (absl::StartsWith(line, field)) {
        double v = 0;
        if (absl::SimpleAtod(absl::StripAsciiWhitespace(
                                 line.substr(std::string(field).size())),
                             &v)) {
          total += v;
        }
      }
    }
  }
  return total;
}

// Whether nothing listens on loopback `port` now.
bool PortFree(int port) {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  addr.sin_port = htons(static_cast<uint16_t>(port));
  const bool free =
      bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return free;
}

// A port whose cluster bus port (+10000) is free too, so a node never
// starts beside (or answers for) another program's server.
int PickClusterPort() {
  static unsigned seed = static_cast<unsigned>(getpid());
  for (int attempt = 0; attempt < 500; attempt++) {
    const int port = 20000 + static_cast<int>(rand_r(&seed) % 9000);
    if (PortFree(port) && PortFree(port + 10000)) return port;
  }
  Die("no free port pair");
}

// A cluster of `n` masters with equal contiguous slot ranges.
struct LocalCluster {
  std::vector<std::unique_ptr<bench::LocalRedis>> nodes;
  std::vector<std::unique_ptr<RedisClient>> clients;

  explicit LocalCluster(int n) {
    for (int i = 0; i < n; i++) {
      bench::LocalRedisOptions o;
      // LocalRedis tries port_base + pid % 20000 first: make that the
      // pair just found free.
      o.port_base = PickClusterPort() - static_cast<int>(getpid() % 20000);
      o.extra_args = {"--cluster-enabled",      "yes",
                      "--cluster-config-file",  "nodes.conf",
                      "--cluster-node-timeout", "5000"};
      auto node = std::make_unique<bench::LocalRedis>();
      if (!node->Start(o)) Die("redis-server (cluster mode) did not start");
      clients.push_back(Connect(node->endpoint()));
      nodes.push_back(std::move(node));
    }
    for (int i = 0; i < n; i++) {
      const int lo = (i * 16384 + n - 1) / n;
      const int hi = ((i + 1) * 16384 + n - 1) / n - 1;
      Must(clients[i].get(),
           {"CLUSTER", "ADDSLOTSRANGE", absl::StrCat(lo), absl::StrCat(hi)});
      if (i > 0) {
        Must(clients[i].get(),
             {"CLUSTER", "MEET", "127.0.0.1", absl::StrCat(nodes[0]->port())});
      }
    }
    const absl::Time deadline = absl::Now() + absl::Seconds(30);
    for (auto& c : clients) {
      while (
          Must(c.get(), {"CLUSTER", "INFO"}).str().find("cluster_state:ok") ==
          std::string::npos) {
        if (absl::Now() > deadline) Die("cluster not ok within 30 s");
        absl::SleepFor(absl::Milliseconds(50));
      }
    }
    // Every node must also know every other one (the slot map it serves).
    for (auto& c : clients) {
      while (Must(c.get(), {"CLUSTER", "SLOTS"}).elements().size() !=
             static_cast<size_t>(n)) {
        if (absl::Now() > deadline) Die("slot map incomplete within 30 s");
        absl::SleepFor(absl::Milliseconds(50));
      }
    }
  }
  std::vector<double> Cpu() {
    std::vector<double> out;
    for (auto& c : clients) out.push_back(ServerCpu(c.get()));
    return out;
  }
};

struct Sample {
  double items_per_s = 0;
  std::vector<double> cpu_ns_per_item;  // per master
};

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// One round of `op` ("madd" / "mexists") over the items.
Sample Measure(LocalCluster* cluster, RedisBloom* bloom,
               const std::string& name, bool add, int64_t items,
               int64_t batch) {
  std::vector<std::vector<std::string>> batches;
  for (int64_t b = 0; b < items; b += batch) {
    std::vector<std::string> v;
    for (int64_t i = b; i < std::min(items, b + batch); i++) {
      v.push_back(absl::StrCat("item-", i));
    }
    batches.push_back(std::move(v));
  }
  std::vector<double> cpu0 = cluster->Cpu();
  auto t0 = std::chrono::steady_clock::now();
  for (const auto& v : batches) {
    if (add) {
      auto r = bloom->MAdd(name, v);
      if (!r.ok()) Die(std::string(r.status().message()));
    } else {
      auto r = bloom->MExists(name, v);
      if (!r.ok()) Die(std::string(r.status().message()));
      for (bool present : *r) {
        if (!present) Die("a false negative");
      }
    }
  }
  const double wall =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - t0)
          .count();
  std::vector<double> cpu1 = cluster->Cpu();
  Sample s;
  s.items_per_s = static_cast<double>(items) / wall;
  for (size_t i = 0; i < cpu0.size(); i++) {
    s.cpu_ns_per_item.push_back((cpu1[i] - cpu0[i]) * 1e9 /
                                static_cast<double>(items));
  }
  return s;
}

void Run(int masters, int64_t items, int64_t batch, int rounds) {
  LocalCluster cluster(masters);
  RedisBloomOptions o;
  o.endpoint = cluster.nodes[0]->endpoint();
  auto bloom = RedisBloom::Open(o);
  if (!bloom.ok()) Die(std::string(bloom.status().message()));
  std::vector<Sample> adds, reads;
  for (int r = 0; r < rounds; r++) {
    const std::string name = absl::StrCat("bench-", r);
    BloomReserveOptions ro;
    ro.error_rate = 0.01;
    ro.capacity = items;
    ro.partitions = masters;
    absl::Status s = (*bloom)->Reserve(name, ro);
    if (!s.ok()) Die(std::string(s.message()));
    adds.push_back(Measure(&cluster, bloom->get(), name, true, items, batch));
    reads.push_back(Measure(&cluster, bloom->get(), name, false, items, batch));
  }
  for (int op = 0; op < 2; op++) {
    const std::vector<Sample>& v = op == 0 ? adds : reads;
    std::vector<double> rate;
    for (const Sample& s : v) rate.push_back(s.items_per_s);
    std::string per_master;
    double total = 0;
    for (int m = 0; m < masters; m++) {
      std::vector<double> c;
      for (const Sample& s : v) c.push_back(s.cpu_ns_per_item[m]);
      const double med = Median(c);
      total += med;
      absl::StrAppend(&per_master, m == 0 ? "" : " / ",
                      absl::StrFormat("%.0f", med));
    }
    std::printf("%-7d %-10d %-8s %12.0f   %-22s %10.0f\n", masters, masters,
                op == 0 ? "MAdd" : "MExists", Median(rate), per_master.c_str(),
                total);
  }
  std::fflush(stdout);
}

}  // namespace
}  // namespace siftdb

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  std::printf("uptime: ");
  std::fflush(stdout);
  if (std::system("uptime") != 0) std::printf("\n");
  const int64_t items = absl::GetFlag(FLAGS_items);
  const int64_t batch = absl::GetFlag(FLAGS_batch);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  std::printf(
      "%lld items per round in batches of %lld, medians of %d rounds\n"
      "masters partitions op          items/s   server ns/item per master  "
      "ns/item all\n",
      static_cast<long long>(items), static_cast<long long>(batch), rounds);
  for (const std::string& m : absl::GetFlag(FLAGS_masters)) {
    int n = 0;
    if (!absl::SimpleAtoi(m, &n) || n < 1) siftdb::Die("bad --masters");
    siftdb::Run(n, items, batch, rounds);
  }
  std::printf("uptime: ");
  std::fflush(stdout);
  if (std::system("uptime") != 0) std::printf("\n");
  return 0;
}
