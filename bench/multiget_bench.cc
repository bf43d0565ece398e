// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// multiget_bench: DB::MultiGet against a loop of DB::Get on an existing DB,
// alternating in one process. db_bench's multireadrandom and readrandom
// run one after the other, seconds apart, and on the shared 2-core VM two
// runs of the same readrandom a few seconds apart differ by up to 1.5x: a
// ratio of the two moved between 0.9x and 1.6x from pair to pair. Here each
// round reads `--chunk` random keys with Gets, then as many with MultiGets
// of `--batch_size` (the order flips every round), timing each with the
// thread's CPU clock, so that the machine's drift falls on both alike; the
// report gives the medians and the quartiles of the per-round ratios.
//
//   db_bench --db=/tmp/mg --num=1000000 --benchmarks=fillrandom,compact
//   multiget_bench --db=/tmp/mg --num=1000000 --batch_size=8,32
//
// Keys are db_bench's (--key_size decimal digits, zero-padded), drawn
// uniformly from [0, --num), so with a fillrandom DB about 63% exist. The
// DB is opened with a block cache of --cache_size bytes, read once through
// (--warmup keys) before the rounds, and never written.

#include <time.h>

#include <algorithm>
#include <cstdio>
#include <memory>
#include <random>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/alternating_report.h"
#include "siftdb/cache.h"
#include "siftdb/db.h"

ABSL_FLAG(std::string, db, "", "an existing DB (db_bench's fillrandom)");
ABSL_FLAG(int64_t, num, 1000000, "keys are drawn from [0, num)");
ABSL_FLAG(int, key_size, 16, "key length (db_bench's --key_size)");
ABSL_FLAG(std::string, batch_size, "8,32", "MultiGet batch sizes, a list");
ABSL_FLAG(int, rounds, 200, "rounds per batch size");
ABSL_FLAG(int, chunk, 3200, "keys per variant per round");
ABSL_FLAG(int64_t, cache_size, int64_t{1} << 30, "block cache bytes");
ABSL_FLAG(int64_t, warmup, -1, "keys read before the rounds (-1: num)");

namespace siftdb::bench {
namespace {

double ThreadCpuMicros() {
  timespec ts;
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) * 1e6 +
         static_cast<double>(ts.tv_nsec) / 1e3;
}

class Reader {
 public:
  Reader(DB* db, int64_t num, int key_size)
      : db_(db), num_(num), key_size_(key_size), rng_(301) {}

  // Written over *key, keeping its buffer: no allocation per key.
  void NextKey(std::string* key) {
    const uint64_t k = rng_() % static_cast<uint64_t>(num_);
    key->clear();
    absl::StrAppendFormat(key, "%0*d", key_size_, k);
  }

  // CPU microseconds for `n` Gets; counts the keys found.
  double Gets(int n) {
    std::string key, value;
    const double start = ThreadCpuMicros();
    for (int i = 0; i < n; i++) {
      NextKey(&key);
      found_ += db_->Get(ReadOptions(), key, &value).ok() ? 1 : 0;
    }
    return ThreadCpuMicros() - start;
  }

  // CPU microseconds for `n` keys read in MultiGets of `batch`.
  double MultiGets(int n, int batch) {
    keys_.resize(static_cast<size_t>(batch));
    views_.resize(static_cast<size_t>(batch));
    const double start = ThreadCpuMicros();
    for (int i = 0; i < n; i += batch) {
      for (int j = 0; j < batch; j++) {
        NextKey(&keys_[j]);
        views_[j] = keys_[j];
      }
      for (const absl::Status& s :
           db_->MultiGet(ReadOptions(), views_, &values_)) {
        found_ += s.ok() ? 1 : 0;
      }
    }
    return ThreadCpuMicros() - start;
  }

  int64_t found() const { return found_; }

 private:
  DB* const db_;
  const int64_t num_;
  const int key_size_;
  std::mt19937_64 rng_;
  std::vector<std::string> keys_;
  std::vector<std::string_view> views_;
  std::vector<std::string> values_;
  int64_t found_ = 0;
};

int Run() {
  const std::string path = absl::GetFlag(FLAGS_db);
  const int64_t num = absl::GetFlag(FLAGS_num);
  const int chunk = absl::GetFlag(FLAGS_chunk);
  const int rounds = absl::GetFlag(FLAGS_rounds);
  std::vector<int> batches;
  for (absl::string_view b : absl::StrSplit(absl::GetFlag(FLAGS_batch_size),
                                            ',', absl::SkipEmpty())) {
    int v = 0;
    if (!absl::SimpleAtoi(b, &v) || v < 1) {
      std::fprintf(stderr, "multiget_bench: bad --batch_size entry '%s'\n",
                   std::string(b).c_str());
      return 2;
    }
    batches.push_back(v);
  }
  if (path.empty() || num < 1 || chunk < 1 || rounds < 1 || batches.empty()) {
    std::fprintf(stderr,
                 "multiget_bench: --db is required; --num, --chunk, "
                 "--rounds and --batch_size must be positive\n");
    return 2;
  }
  Options options;
  options.block_cache =
      NewLRUCache(static_cast<size_t>(absl::GetFlag(FLAGS_cache_size)));
  auto db = DB::OpenForReadOnly(options, path);
  if (!db.ok()) {
    std::fprintf(stderr, "multiget_bench: %s\n",
                 db.status().ToString().c_str());
    return 1;
  }
  Reader reader(db->get(), num, absl::GetFlag(FLAGS_key_size));
  const int64_t warmup = absl::GetFlag(FLAGS_warmup);
  reader.Gets(static_cast<int>(warmup < 0 ? num : warmup));
  std::printf(
      "multiget_bench: %s, keys from [0, %lld), %d rounds of %d keys "
      "per variant, thread CPU time\n",
      path.c_str(), static_cast<long long>(num), rounds, chunk);
  for (const int batch : batches) {
    AlternatingReport::Layout layout;
    layout.label_width = 24;
    AlternatingReport report("Get loop", "MultiGet", layout);
    std::vector<double> speedups;  // per round: Get time / MultiGet time
    double times[2] = {0, 0};
    for (int round = 0; round < rounds; round++) {
      const bool multiget_first = round % 2 == 1;
      for (int step = 0; step < 2; step++) {
        const int variant = (step == 0) == multiget_first ? 1 : 0;
        times[variant] =
            variant == 0 ? reader.Gets(chunk) : reader.MultiGets(chunk, batch);
      }
      report.Record("CPU us/key", 0, times[0] / chunk, 3);
      report.Record("CPU us/key", 1, times[1] / chunk, 3);
      speedups.push_back(times[0] / times[1]);
    }
    std::sort(speedups.begin(), speedups.end());
    std::printf("\nbatch %d\n", batch);
    report.Print();
    std::printf(
        "MultiGet speedup per round: median %.3fx, quartiles %.3f-%.3f, "
        "range %.3f-%.3f\n",
        speedups[speedups.size() / 2], speedups[speedups.size() / 4],
        speedups[3 * speedups.size() / 4], speedups.front(), speedups.back());
  }
  std::printf("keys found: %lld\n", static_cast<long long>(reader.found()));
  return 0;
}

}  // namespace
}  // namespace siftdb::bench

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  return siftdb::bench::Run();
}
