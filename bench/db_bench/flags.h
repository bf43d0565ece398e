// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// db_bench's command-line flags (absl flags, named and defaulted like
// LevelDB's db_bench so its scripts run unchanged: `--name=value`) and the
// validated BenchConfig built from them.
//
// RocksDB's commonly scripted flags (tools/benchmark.sh) are defined in
// flags_rocksdb.cc: mapped to siftdb where it has an equivalent, accepted and
// ignored with a note where they only tune RocksDB, refused where siftdb
// lacks the feature (docs/db_bench.md lists each).
//
// Thread safety: ConfigFromFlags() reads the global flags; call it once from
// main() after ParseToolFlags. A BenchConfig is a plain value.

#ifndef SIFTDB_BENCH_DB_BENCH_FLAGS_H_
#define SIFTDB_BENCH_DB_BENCH_FLAGS_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "bench/db_bench/engine.h"
#include "tools/common/flags.h"

namespace siftdb::bench {

// LevelDB's default benchmark list, restricted to what db_bench supports,
// plus readmissing and seekrandom (see docs/db_bench.md).
inline constexpr char kDefaultBenchmarks[] =
    "fillseq,fillsync,fillrandom,overwrite,readrandom,readrandom,readmissing,"
    "readseq,readreverse,compact,readrandom,readmissing,seekrandom,readseq,"
    "readreverse,fill100K";

struct BenchConfig {
  std::vector<std::string> benchmarks;  // in run order, no empty names
  std::vector<std::string> engines;     // "siftdb" unless --engines
  int64_t num = 1000000;                // --num
  int64_t reads = -1;                   // --reads; < 0: num
  int threads = 1;                      // --threads
  int value_size = 100;                 // --value_size
  int key_size = 16;                    // --key_size
  int key_prefix = 0;                   // --key_prefix: 'a's before each key
  // --keys_per_prefix > 0: keys come in num / keys_per_prefix groups, each
  // key starting with its group's engine.prefix_size digits (even groups
  // written, odd ones absent); 0: no groups.
  uint64_t key_groups = 0;
  // seekrandom with key groups: the percentage of seeks to absent groups.
  int absent_prefix_percent = 50;
  double compression_ratio = 0.5;  // --compression_ratio
  bool histogram = false;          // --histogram
  bool comparisons = false;        // --comparisons
  bool statistics = false;         // --statistics
  bool sync = false;               // --sync: every write fsyncs
  int64_t batch_size = 1;          // --batch_size: entries per write
  int duration = 0;                // --duration seconds; 0: by count
  int readwritepercent = 90;       // --readwritepercent
  bool use_existing_db = false;    // --use_existing_db
  uint64_t seed = 301;             // --seed
  // --benchmark_write_rate_limit: bytes/s of keys and values written, summed
  // over the writing threads; 0 = as fast as the engine goes.
  uint64_t write_rate_limit = 0;
  std::string db;       // --db (never empty)
  EngineConfig engine;  // the options every engine gets
  // Flags accepted with a behaviour that differs from what they ask for,
  // one line each, printed once on stderr before the run.
  std::vector<std::string> notes;
};

// Reads and checks the flags; InvalidArgument naming the flag otherwise (a
// usage error: exit code 2). `args` tells which flags were given.
absl::StatusOr<BenchConfig> ConfigFromFlags(const tools::ToolArgs& args);

// Whether `name` is a compression EngineConfig takes: none, snappy, lz4 or
// zstd (RocksDB's names).
bool IsCompressionName(std::string_view name);

// RocksDB's flags (flags_rocksdb.cc): checks them and applies them to
// *config; InvalidArgument naming the flag and the missing feature for a
// value siftdb cannot honour.
absl::Status ApplyRocksDBFlags(const tools::ToolArgs& args,
                               BenchConfig* config);

// The command-line front end's description of db_bench: its flags, the
// RocksDB flags accepted and ignored, and those refused. (gflags'
// --undefok=a,b is the front end's: tools/common/flags.h.)
tools::ToolFlagsSpec DbBenchFlagsSpec(int argc, const char* const* argv);

// The database directory of `engine` in a run of `config`: --db itself for
// a single engine, --db + "-" + engine when several are compared.
std::string EngineDbPath(const BenchConfig& config, const std::string& engine);

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_DB_BENCH_FLAGS_H_
