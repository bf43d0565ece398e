// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// CRC32C throughput: the hardware (SSE4.2, three streams) and portable
// (slicing-by-8) paths on 4 KiB, 64 KiB and 1 MiB buffers, plus the
// dispatching crc32c::Value. Reports bytes/s.
//
//   crc32c_bench [--benchmark_filter=...]

#include <cstdint>
#include <string>

#include "benchmark/benchmark.h"
#include "util/crc32c.h"
#include "util/crc32c_internal.h"
#include "util/random.h"

namespace siftdb {
namespace {

std::string RandomBuffer(size_t n) {
  Random rnd(301);
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rnd.Next());
  return s;
}

template <uint32_t (*Fn)(uint32_t, const char*, size_t)>
void BM_Crc32c(benchmark::State& state) {
  const std::string data = RandomBuffer(static_cast<size_t>(state.range(0)));
  uint32_t crc = 0;
  for (auto _ : state) {
    crc = Fn(crc, data.data(), data.size());
    benchmark::DoNotOptimize(crc);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          state.range(0));
}

uint32_t Dispatching(uint32_t crc, const char* data, size_t n) {
  return crc32c::Extend(crc, data, n);
}

void Sizes(benchmark::internal::Benchmark* b) {
  b->Arg(4 << 10)->Arg(64 << 10)->Arg(1 << 20);
}

BENCHMARK_TEMPLATE(BM_Crc32c, crc32c::ExtendHardware)
    ->Name("BM_Crc32cHardware")
    ->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_Crc32c, crc32c::ExtendPortable)
    ->Name("BM_Crc32cPortable")
    ->Apply(Sizes);
BENCHMARK_TEMPLATE(BM_Crc32c, Dispatching)
    ->Name("BM_Crc32cValue")
    ->Apply(Sizes);

}  // namespace
}  // namespace siftdb

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  benchmark::AddCustomContext(
      "crc32c_hardware",
      siftdb::crc32c::IsHardwareAccelerated() ? "sse4.2" : "none");
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
