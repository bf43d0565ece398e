// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Write-ahead log append throughput through the POSIX Env, in a fresh
// temporary directory: records of 100 bytes and 4 KiB, each followed by
// nothing (AddRecord flushes to the OS) or by Sync (fdatasync). Reports
// records/s and bytes/s of payload.
//
//   log_bench [--benchmark_filter=...]
// Set TMPDIR to measure another file system (the Sync numbers depend on it
// entirely).

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "benchmark/benchmark.h"
#include "siftdb/env.h"
#include "util/random.h"
#include "wal/log_writer.h"

namespace siftdb {
namespace {

// A directory removed at exit.
class BenchDir {
 public:
  BenchDir() {
    const char* base = std::getenv("TMPDIR");
    std::string tmpl = std::string(base != nullptr ? base : "/tmp") +
                       "/siftdb-logbench-XXXXXX";
    if (mkdtemp(tmpl.data()) != nullptr) path_ = tmpl;
  }
  ~BenchDir() {
    std::error_code ec;
    if (!path_.empty()) std::filesystem::remove_all(path_, ec);
  }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

BenchDir& Dir() {
  static BenchDir* dir = new BenchDir();
  return *dir;
}

void BM_LogAppend(benchmark::State& state) {
  const size_t record_size = static_cast<size_t>(state.range(0));
  const bool sync = state.range(1) != 0;
  if (Dir().path().empty()) {
    state.SkipWithError("cannot create a temporary directory");
    return;
  }
  Env* env = Env::Default();
  const std::string fname = Dir().path() + "/000001.log";
  auto file = env->NewWritableFile(fname);
  if (!file.ok()) {
    state.SkipWithError(std::string(file.status().message()).c_str());
    return;
  }
  Random rnd(42);
  std::string record(record_size, '\0');
  for (char& c : record) c = static_cast<char>(rnd.Next());
  log::Writer writer(file->get());

  for (auto _ : state) {
    absl::Status s = writer.AddRecord(record);
    if (s.ok() && sync) s = (*file)->Sync();
    if (!s.ok()) {
      state.SkipWithError(std::string(s.message()).c_str());
      break;
    }
  }
  state.SetItemsProcessed(state.iterations());
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations()) *
                          static_cast<int64_t>(record_size));
  (*file)->Close().IgnoreError();
  env->RemoveFile(fname).IgnoreError();
}

BENCHMARK(BM_LogAppend)
    ->ArgNames({"record_bytes", "sync"})
    ->Args({100, 0})
    ->Args({4096, 0})
    ->Args({100, 1})
    ->Args({4096, 1})
    ->UseRealTime();  // Sync time is I/O wait, not CPU

}  // namespace
}  // namespace siftdb

BENCHMARK_MAIN();
