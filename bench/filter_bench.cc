// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// filter_bench: accuracy and speed of siftdb's local filters.
//
// Stores --keys 16-byte big-endian counters 2i and queries two absent sets of
// the same size: the adjacent counters 2i+1 (what a weak hash lets through)
// and random 16-byte keys. Prints
//   1. false-positive rates at 5, 10, 15 and 20 bits/key for the blocked and
//      classic policies beside the formulas of filter/bloom_math.h, with the
//      count of false negatives (must be 0);
//      (and siftdb.Ribbon at the same bits/key-equivalents);
//   2. build and query time per key at --speed_bits bits/key, each the
//      median (and the best) of --runs runs. Times are the benchmark
//      thread's CPU time (time spent descheduled on a busy shared machine is
//      not counted; cache pollution by other processes still is), or wall
//      time with --wall_clock.
//
//   3. blocked Bloom vs Ribbon at 5, 7, 10 and 15 bits/key(-equivalent):
//      bits/key, FP on adjacent and random keys, build and query ns/key
//      (medians of --runs), and Ribbon's ratios to Bloom in the same run;
//      in the comparison build also RocksDB's Bloom and Ribbon at the same
//      settings, timed the same way (ratios to siftdb's blocked Bloom).
//
// Keys are generated a chunk at a time into a buffer that stays in cache, as
// the key of a real lookup is; only the filter work is timed. (Streaming the
// keys from a 16 MB array instead measures this machine's memory: a last
// line reports that figure too.) Query loops issue independent lookups, so
// the figures are throughput (the CPU overlaps the cache misses of
// consecutive keys), not single-lookup latency.
//
// Usage: filter_bench [--keys=1000000] [--runs=5] [--speed_bits=10]
//                     [--wall_clock]

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "filter/bloom_math.h"
#include "filter/filter_hash.h"
#include "filter/filter_reader.h"
#include "filter/ribbon_builder.h"
#include "siftdb/filter_policy.h"
#ifdef SIFTDB_BENCH_HAVE_ROCKSDB
#include "bench/filter_bench_rocksdb.h"
#endif

ABSL_FLAG(int64_t, keys, 1000000, "stored keys (and absent keys per set)");
ABSL_FLAG(int32_t, runs, 5, "timed runs per figure; the median is printed");
ABSL_FLAG(double, speed_bits, 10, "bits per key of the timing section");
ABSL_FLAG(bool, wall_clock, false,
          "time with the wall clock instead of the thread's CPU time");

namespace siftdb {
namespace {

constexpr size_t kKeySize = 16;
constexpr size_t kChunk = 8192;  // keys per generated chunk (128 KiB)

uint64_t Mix64(uint64_t z) {  // SplitMix64's finalizer
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

enum class KeyKind {
  kStored,    // 16-byte big-endian 2i
  kAdjacent,  // 16-byte big-endian 2i + 1
  kRandom,    // 16 random bytes, a fixed function of i
};

// Writes key i of `kind` (16 bytes) at dst.
void MakeKey(KeyKind kind, uint64_t i, char* dst) {
  if (kind == KeyKind::kRandom) {
    const uint64_t a = Mix64(0x9E3779B97F4A7C15ull * (2 * i + 1));
    const uint64_t b = Mix64(0x9E3779B97F4A7C15ull * (2 * i + 2));
    std::memcpy(dst, &a, 8);
    std::memcpy(dst + 8, &b, 8);
    return;
  }
  const uint64_t v = 2 * i + (kind == KeyKind::kAdjacent ? 1 : 0);
  std::memset(dst, 0, 8);
  for (int j = 0; j < 8; ++j) dst[15 - j] = static_cast<char>(v >> (8 * j));
}

// Timestamps in nanoseconds: the benchmark thread's CPU time by default
// (on a shared, oversubscribed machine, wall time mostly measures how long
// the thread waited to be scheduled), or wall time with --wall_clock.
int64_t Now() {
  timespec ts;
  clock_gettime(absl::GetFlag(FLAGS_wall_clock) ? CLOCK_MONOTONIC
                                                : CLOCK_THREAD_CPUTIME_ID,
                &ts);
  return int64_t{ts.tv_sec} * 1000000000 + ts.tv_nsec;
}

double NanosSince(int64_t start) { return static_cast<double>(Now() - start); }

double Median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.empty() ? 0 : v[v.size() / 2];
}

double Min(const std::vector<double>& v) {
  return v.empty() ? 0 : *std::min_element(v.begin(), v.end());
}

// Calls fn(key) for keys [0, n) of `kind`, made a chunk at a time; returns
// the nanoseconds spent in fn only.
template <typename Fn>
double ForEachKey(KeyKind kind, size_t n, Fn&& fn) {
  static char buf[kChunk * kKeySize];
  double nanos = 0;
  for (size_t base = 0; base < n; base += kChunk) {
    const size_t count = std::min(kChunk, n - base);
    for (size_t j = 0; j < count; ++j) {
      MakeKey(kind, base + j, buf + j * kKeySize);
    }
    const int64_t start = Now();
    for (size_t j = 0; j < count; ++j) {
      fn(std::string_view(buf + j * kKeySize, kKeySize));
    }
    nanos += NanosSince(start);
  }
  return nanos;
}

// Keeps results observable so the compiler cannot drop the loops.
volatile size_t g_sink;

// Builds over the n stored keys; *add_ns and *finish_ns (when not null) get
// the time spent in AddKey and in Finish.
std::string Build(const FilterPolicy& policy, size_t n,
                  double* add_ns = nullptr, double* finish_ns = nullptr) {
  std::unique_ptr<FilterBitsBuilder> builder = policy.NewBuilder();
  const double add = ForEachKey(
      KeyKind::kStored, n, [&](std::string_view key) { builder->AddKey(key); });
  std::string filter;
  const int64_t start = Now();
  builder->Finish(&filter);
  if (finish_ns != nullptr) *finish_ns = NanosSince(start);
  if (add_ns != nullptr) *add_ns = add;
  return filter;
}

size_t CountMatches(const FilterReader& reader, KeyKind kind, size_t n,
                    double* nanos = nullptr) {
  size_t hits = 0;
  const double ns = ForEachKey(
      kind, n, [&](std::string_view key) { hits += reader.KeyMayMatch(key); });
  if (nanos != nullptr) *nanos = ns;
  return hits;
}

void AccuracyTable(size_t n) {
  const double dn = static_cast<double>(n);
  std::printf(
      "False positives: %zu stored keys (16-byte big-endian 2i), %zu absent "
      "keys per set\n",
      n, n);
  std::printf("%-8s %4s %3s %10s %9s %12s %12s %12s %6s\n", "policy", "bpk",
              "k", "bytes/key", "bits/key", "FP adjacent", "FP random",
              "FP theory", "FN");
  for (int kind = 0; kind < 3; ++kind) {
    for (double bpk : {5.0, 7.0, 10.0, 15.0, 20.0}) {
      const auto policy = kind == 0   ? NewBloomFilterPolicy(bpk)
                          : kind == 1 ? NewClassicBloomFilterPolicy(bpk)
                                      : NewRibbonFilterPolicy(bpk);
      const std::string filter = Build(*policy, n);
      const FilterReader reader(policy.get(), filter);
      const RibbonShape shape = RibbonShapeForBitsPerKey(bpk);
      // k: probes (Bloom) or lower result columns (Ribbon).
      const int k = kind == 0   ? BlockedOptimalK(bpk)
                    : kind == 1 ? ClassicOptimalK(bpk)
                                : shape.lower_columns;
      const double theory = kind == 0   ? BlockedFpRate(bpk, k)
                            : kind == 1 ? ClassicFpRate(bpk, k)
                                        : RibbonShapeFpRate(shape);
      const size_t false_negatives =
          n - CountMatches(reader, KeyKind::kStored, n);
      std::printf(
          "%-8s %4.0f %3d %10.3f %9.3f %11.4f%% %11.4f%% %11.4f%% %6zu\n",
          kind == 0   ? "blocked"
          : kind == 1 ? "classic"
                      : "ribbon",
          bpk, k, static_cast<double>(filter.size()) / dn,
          8.0 * static_cast<double>(filter.size()) / dn,
          100.0 * CountMatches(reader, KeyKind::kAdjacent, n) / dn,
          100.0 * CountMatches(reader, KeyKind::kRandom, n) / dn, 100 * theory,
          false_negatives);
    }
  }
  std::printf("\n");
}

// A copy of `filter` in a 64-byte-aligned buffer, as the table layer keeps it.
class AlignedFilter {
 public:
  explicit AlignedFilter(const std::string& filter)
      : size_(filter.size()),
        data_(static_cast<char*>(
                  std::aligned_alloc(64, (filter.size() + 63) / 64 * 64 + 64)),
              std::free) {
    std::memcpy(data_.get(), filter.data(), filter.size());
  }
  std::string_view view() const { return std::string_view(data_.get(), size_); }

 private:
  size_t size_;
  std::unique_ptr<char, void (*)(void*)> data_;
};

// Prints the speed section's title and column headers.
void PrintSpeedHeader(size_t n, double bpk, int runs) {
  std::printf(
      "Speed at %.1f bits/key, ns per key (%s), median (and best) of %d runs "
      "(%zu keys):\n",
      bpk, absl::GetFlag(FLAGS_wall_clock) ? "wall time" : "thread CPU time",
      runs, n);
  std::printf("%-8s %7s %6s %7s %12s %12s %12s %12s %10s\n", "policy", "build",
              "add", "finish", "KeyMayMatch", "reader:abs", "reader:stored",
              "probe:abs", "hash");
}

// ns per key of FilterKeyHash alone over the n random keys, one per run.
std::vector<double> TimeHashOnly(size_t n, int runs) {
  const double dn = static_cast<double>(n);
  std::vector<double> hash_ns;
  for (int r = 0; r < runs; ++r) {
    uint64_t acc = 0;
    hash_ns.push_back(
        ForEachKey(KeyKind::kRandom, n,
                   [&](std::string_view key) { acc += FilterKeyHash(key); }) /
        dn);
    g_sink = acc;
  }
  return hash_ns;
}

// ns per key of each speed column, one sample per run.
struct SpeedSamples {
  std::vector<double> build_ns, add_ns, finish_ns, policy_ns, absent_ns,
      stored_ns, probe_ns;
};

// Nanoseconds of reader.HashMayMatch over the hashes of the absent keys:
// each chunk is hashed into *hash_chunk untimed, then its probes are timed.
// A final partial chunk is not probed. Adds the matches to *hits.
double TimeProbeOnly(const FilterReader& reader, size_t n,
                     std::vector<uint64_t>* hash_chunk, size_t* hits) {
  double probe = 0;
  size_t j = 0;
  ForEachKey(KeyKind::kRandom, n, [&](std::string_view key) {
    (*hash_chunk)[j++] = FilterKeyHash(key);
    if (j == kChunk) {
      const int64_t start = Now();
      for (uint64_t h : *hash_chunk) *hits += reader.HashMayMatch(h);
      probe += NanosSince(start);
      j = 0;
    }
  });
  return probe;
}

// One timed run of `policy` over n keys: build, then the query columns;
// appends one sample to each column of *samples. *hash_chunk is scratch
// space of kChunk hashes.
void TimeOneRun(const FilterPolicy* policy, size_t n,
                std::vector<uint64_t>* hash_chunk, SpeedSamples* samples) {
  const double dn = static_cast<double>(n);
  double ns = 0, finish = 0;
  const std::string built = Build(*policy, n, &ns, &finish);
  samples->add_ns.push_back(ns / dn);
  samples->finish_ns.push_back(finish / dn);
  samples->build_ns.push_back((ns + finish) / dn);
  const AlignedFilter aligned(built);
  const std::string_view filter = aligned.view();

  size_t hits = 0;
  samples->policy_ns.push_back(ForEachKey(KeyKind::kRandom, n,
                                          [&](std::string_view key) {
                                            hits += policy->KeyMayMatch(key,
                                                                        filter);
                                          }) /
                               dn);

  const FilterReader reader(policy, filter);
  hits += CountMatches(reader, KeyKind::kRandom, n, &ns);
  samples->absent_ns.push_back(ns / dn);
  hits += CountMatches(reader, KeyKind::kStored, n, &ns);
  samples->stored_ns.push_back(ns / dn);

  // Probe only: hash a chunk untimed, then time the probes.
  const double probe = TimeProbeOnly(reader, n, hash_chunk, &hits);
  samples->probe_ns.push_back(probe / static_cast<double>(n / kChunk * kChunk));
  g_sink = hits;
}

// Prints a policy's row of medians, then its row of best runs.
void PrintSpeedRows(const char* policy_name, const SpeedSamples& s,
                    const std::vector<double>& hash_ns) {
  std::printf("%-8s %7.2f %6.2f %7.2f %12.2f %12.2f %12.2f %12.2f %10.2f\n",
              policy_name, Median(s.build_ns), Median(s.add_ns),
              Median(s.finish_ns), Median(s.policy_ns), Median(s.absent_ns),
              Median(s.stored_ns), Median(s.probe_ns), Median(hash_ns));
  // The fastest run shows the cost without interference from other
  // processes on a shared machine.
  std::printf("%-8s %7.2f %6.2f %7.2f %12.2f %12.2f %12.2f %12.2f %10.2f\n",
              "  (best)", Min(s.build_ns), Min(s.add_ns), Min(s.finish_ns),
              Min(s.policy_ns), Min(s.absent_ns), Min(s.stored_ns),
              Min(s.probe_ns), Min(hash_ns));
}

// For reference: the same blocked reader with the absent keys streamed
// from one 16 MB array (memory-bound on small VMs). Prints its median.
void StreamedKeysLine(size_t n, double bpk, int runs) {
  const double dn = static_cast<double>(n);
  std::vector<char> keys(n * kKeySize);
  for (size_t i = 0; i < n; ++i) {
    MakeKey(KeyKind::kRandom, i, keys.data() + i * kKeySize);
  }
  const auto policy = NewBloomFilterPolicy(bpk);
  const AlignedFilter aligned(Build(*policy, n));
  const FilterReader reader(policy.get(), aligned.view());
  std::vector<double> stream_ns;
  for (int r = 0; r < runs; ++r) {
    size_t hits = 0;
    const int64_t start = Now();
    for (size_t i = 0; i < n; ++i) {
      hits += reader.KeyMayMatch(
          std::string_view(keys.data() + i * kKeySize, kKeySize));
    }
    stream_ns.push_back(NanosSince(start) / dn);
    g_sink = hits;
  }
  std::printf(
      "blocked reader:abs with keys streamed from a %zu MB array: %.2f "
      "ns/key\n",
      n * kKeySize >> 20, Median(stream_ns));
}

void SpeedTable(size_t n, double bpk, int runs) {
  PrintSpeedHeader(n, bpk, runs);
  const std::vector<double> hash_ns = TimeHashOnly(n, runs);

  // Precomputed hashes of the absent keys, a chunk at a time, for the
  // probe-only column.
  std::vector<uint64_t> hash_chunk(kChunk);

  for (int kind = 0; kind < 3; ++kind) {
    const auto policy = kind == 0   ? NewBloomFilterPolicy(bpk)
                        : kind == 1 ? NewClassicBloomFilterPolicy(bpk)
                                    : NewRibbonFilterPolicy(bpk);
    SpeedSamples samples;
    for (int r = 0; r < runs; ++r) {
      TimeOneRun(policy.get(), n, &hash_chunk, &samples);
    }
    PrintSpeedRows(kind == 0   ? "blocked"
                   : kind == 1 ? "classic"
                               : "ribbon",
                   samples, hash_ns);
  }
  std::printf(
      "build = add + finish: AddKey of every key, then Finish. KeyMayMatch: "
      "the FilterPolicy "
      "call on absent keys\n(decodes the trailer per query). reader: "
      "FilterReader (trailer decoded once) on absent or\nstored keys. "
      "probe:abs: reader.HashMayMatch on precomputed hashes of absent keys. "
      "hash: XXH3 only.\n");

  StreamedKeysLine(n, bpk, runs);
}

#ifdef SIFTDB_BENCH_HAVE_ROCKSDB
// RocksDB's Bloom (or Ribbon) at bpk over the same keys, timed as
// TimeOneRun times siftdb's: prints its row, with build and absent-query
// ratios to siftdb's blocked Bloom of the same run.
void RocksDBRow(bool ribbon, double bpk, size_t n, int runs, double bloom_build,
                double bloom_absent) {
  const double dn = static_cast<double>(n);
  std::vector<double> build_ns, absent_ns, stored_ns;
  double bits = 0, adj = 0, rnd = 0;
  size_t false_negatives = 0;
  for (int r = 0; r < runs; ++r) {
    bench::RocksDBFilter filter(ribbon, bpk);
    double build = ForEachKey(
        KeyKind::kStored, n, [&](std::string_view key) { filter.AddKey(key); });
    const int64_t start = Now();
    filter.Finish();
    build += NanosSince(start);
    build_ns.push_back(build / dn);
    size_t hits = 0;
    absent_ns.push_back(ForEachKey(KeyKind::kRandom, n,
                                   [&](std::string_view key) {
                                     hits += filter.MayMatch(key);
                                   }) /
                        dn);
    rnd = hits / dn;
    hits = 0;
    stored_ns.push_back(ForEachKey(KeyKind::kStored, n,
                                   [&](std::string_view key) {
                                     hits += filter.MayMatch(key);
                                   }) /
                        dn);
    false_negatives = n - hits;
    hits = 0;
    ForEachKey(KeyKind::kAdjacent, n,
               [&](std::string_view key) { hits += filter.MayMatch(key); });
    adj = hits / dn;
    bits = 8.0 * static_cast<double>(filter.size()) / dn;
  }
  std::printf(
      "%-8s %4.0f %8.3f %9.4f%% %9.4f%% %8.2f %9.2f %9.2f %7.2f %7.2f%s\n",
      ribbon ? "rdb-rib" : "rdb-blm", bpk, bits, 100 * adj, 100 * rnd,
      Median(build_ns), Median(absent_ns), Median(stored_ns),
      Median(build_ns) / bloom_build, Median(absent_ns) / bloom_absent,
      false_negatives == 0 ? "" : "  FALSE NEGATIVES");
}
#endif

// Blocked Bloom vs Ribbon at each bits/key(-equivalent): space, accuracy
// and speed, with Ribbon's speed as a ratio to Bloom's of the same run.
void RibbonComparisonTable(size_t n, int runs) {
  const double dn = static_cast<double>(n);
  std::printf(
      "\nBlocked Bloom vs Ribbon, %zu keys, medians of %d runs (ns/key); "
      "ratio = ribbon / blocked:\n",
      n, runs);
  std::printf("%-8s %4s %8s %10s %10s %8s %9s %9s %7s %7s\n", "policy", "bpk",
              "bits/key", "FP adj", "FP random", "build", "q:absent",
              "q:stored", "xbuild", "xabs");
  std::vector<uint64_t> hash_chunk(kChunk);
  for (double bpk : {5.0, 7.0, 10.0, 15.0}) {
    double bloom_build = 0, bloom_absent = 0;
    for (bool ribbon : {false, true}) {
      const auto policy =
          ribbon ? NewRibbonFilterPolicy(bpk) : NewBloomFilterPolicy(bpk);
      const std::string filter = Build(*policy, n);
      const FilterReader reader(policy.get(), filter);
      const double adj = CountMatches(reader, KeyKind::kAdjacent, n) / dn;
      const double rnd = CountMatches(reader, KeyKind::kRandom, n) / dn;
      SpeedSamples s;
      for (int r = 0; r < runs; ++r) {
        TimeOneRun(policy.get(), n, &hash_chunk, &s);
      }
      const double build = Median(s.build_ns), absent = Median(s.absent_ns);
      if (!ribbon) {
        bloom_build = build;
        bloom_absent = absent;
      }
      std::printf(
          "%-8s %4.0f %8.3f %9.4f%% %9.4f%% %8.2f %9.2f %9.2f %7.2f %7.2f\n",
          ribbon ? "ribbon" : "blocked", bpk,
          8.0 * static_cast<double>(filter.size()) / dn, 100 * adj, 100 * rnd,
          build, absent, Median(s.stored_ns), build / bloom_build,
          absent / bloom_absent);
    }
#ifdef SIFTDB_BENCH_HAVE_ROCKSDB
    for (bool ribbon : {false, true}) {
      RocksDBRow(ribbon, bpk, n, runs, bloom_build, bloom_absent);
    }
#endif
  }
#ifdef SIFTDB_BENCH_HAVE_ROCKSDB
  std::printf(
      "rdb-blm / rdb-rib: %s's NewBloomFilterPolicy / NewRibbonFilterPolicy "
      "at the same bits/key, through the\nFilterBitsBuilder and "
      "FilterBitsReader its policy returns (ratios to siftdb's blocked Bloom "
      "above).\n",
      bench::RocksDBFilterLibrary().c_str());
#endif
}

}  // namespace
}  // namespace siftdb

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const size_t n = static_cast<size_t>(
      std::max<int64_t>(siftdb::kChunk, absl::GetFlag(FLAGS_keys)));
  const int runs = std::max(1, absl::GetFlag(FLAGS_runs));
  siftdb::AccuracyTable(n);
  siftdb::SpeedTable(n, absl::GetFlag(FLAGS_speed_bits), runs);
  siftdb::RibbonComparisonTable(n, runs);
  return 0;
}
