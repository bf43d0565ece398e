// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// MemTable insert and lookup, 16-byte keys and 100-byte values (the
// db_bench shape): inserts in sequential and random key order, lookups of
// present keys and of absent keys, in a MemTable of 100,000 entries
// (about three times the default 4 MiB write buffer).
//
//   memtable_bench [--benchmark_filter=...]

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "benchmark/benchmark.h"
#include "db/lookup_key.h"
#include "db/memtable.h"
#include "siftdb/comparator.h"
#include "util/random.h"

namespace siftdb {
namespace {

constexpr int kEntries = 100000;

std::string Key(uint64_t i) { return absl::StrFormat("%016d", i); }

// Keys 0, 2, 4, ... so odd keys are absent but inside the range.
std::vector<std::string> MakeKeys(bool random_order) {
  std::vector<std::string> keys;
  keys.reserve(kEntries);
  for (int i = 0; i < kEntries; i++) keys.push_back(Key(2 * uint64_t(i)));
  if (random_order) {
    Random rnd(301);
    for (int i = kEntries - 1; i > 0; i--) {
      std::swap(keys[i], keys[rnd.Uniform(i + 1)]);
    }
  }
  return keys;
}

void Insert(benchmark::State& state, bool random_order) {
  const InternalKeyComparator cmp(BytewiseComparator());
  const std::vector<std::string> keys = MakeKeys(random_order);
  const std::string value(100, 'v');
  for (auto _ : state) {
    state.PauseTiming();
    MemTable* mem = new MemTable(cmp);
    mem->Ref();
    state.ResumeTiming();
    SequenceNumber seq = 1;
    for (const std::string& k : keys) mem->Add(seq++, kTypeValue, k, value);
    state.PauseTiming();
    mem->Unref();
    state.ResumeTiming();
  }
  state.SetItemsProcessed(state.iterations() * kEntries);
}

void BM_InsertSequential(benchmark::State& state) { Insert(state, false); }
void BM_InsertRandom(benchmark::State& state) { Insert(state, true); }

void Lookup(benchmark::State& state, bool present) {
  const InternalKeyComparator cmp(BytewiseComparator());
  MemTable* mem = new MemTable(cmp);
  mem->Ref();
  const std::string value(100, 'v');
  SequenceNumber seq = 1;
  for (const std::string& k : MakeKeys(true)) {
    mem->Add(seq++, kTypeValue, k, value);
  }
  Random rnd(42);
  std::string got;
  absl::Status s;
  int64_t found = 0;
  for (auto _ : state) {
    const uint64_t i = rnd.Uniform(kEntries);
    LookupKey lkey(Key(2 * i + (present ? 0 : 1)), seq);
    found += mem->Get(lkey, &got, &s) ? 1 : 0;
  }
  benchmark::DoNotOptimize(found);
  state.SetItemsProcessed(state.iterations());
  mem->Unref();
}

void BM_LookupPresent(benchmark::State& state) { Lookup(state, true); }
void BM_LookupAbsent(benchmark::State& state) { Lookup(state, false); }

BENCHMARK(BM_InsertSequential)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_InsertRandom)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_LookupPresent);
BENCHMARK(BM_LookupAbsent);

}  // namespace
}  // namespace siftdb

BENCHMARK_MAIN();
