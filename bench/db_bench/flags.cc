// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "bench/db_bench/flags.h"

#include <unistd.h>

#include <cstdint>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "util/absl_compat.h"

// --- Workload (names and defaults as LevelDB's db_bench) ---
ABSL_FLAG(std::string, benchmarks, siftdb::bench::kDefaultBenchmarks,
          "Comma-separated list of benchmarks to run in order. LevelDB's: "
          "fillseq, fillsync, fillrandom, fillbatch, overwrite, fill100K, "
          "readrandom, readrandomsmall, readmissing, readhot, readseq, "
          "readreverse, seekrandom, seekordered, open, deleteseq, "
          "deleterandom, readwhilewriting, compact, crc32c, snappycomp, "
          "snappyuncomp, stats, sstables, heapprofile (skipped). RocksDB's: "
          "fillseqdeterministic, filluniquerandom, readrandomwriterandom, "
          "updaterandom, newiterator, flush, levelstats, memstats, "
          "multireadrandom (--batch_size keys per DB::MultiGet), "
          "waitforcompaction");
ABSL_FLAG(int64_t, num, 1000000, "Number of key/values to place in the DB");
ABSL_FLAG(int64_t, reads, -1,
          "Number of read operations per thread; negative: --num");
ABSL_FLAG(int32_t, threads, 1, "Threads running each benchmark concurrently");
ABSL_FLAG(int32_t, value_size, 100, "Size of each value in bytes");
ABSL_FLAG(int32_t, key_size, 16,
          "Size of each key in bytes (zero-padded decimal numbers)");
ABSL_FLAG(double, compression_ratio, 0.5,
          "Values compress to this fraction of their size");
ABSL_FLAG(int32_t, key_prefix, 0,
          "Bytes of 'a' before every key (LevelDB's common key prefix); keys "
          "are --key_size + --key_prefix bytes");
ABSL_FLAG(bool, histogram, false,
          "Print latency percentiles (p50, p99, p99.9, max) per benchmark");
ABSL_FLAG(bool, comparisons, false,
          "Print the comparator's calls after each benchmark (siftdb counts "
          "them with a wrapping comparator of the same name)");
ABSL_FLAG(bool, reuse_logs, false,
          "LevelDB's option to append to the old log and MANIFEST on open: "
          "siftdb always starts new ones, so true is accepted with a note");
ABSL_FLAG(uint64_t, seed, 301,
          "Seed of the key and value generators (each thread of each "
          "benchmark gets the next seed)");
ABSL_FLAG(uint64_t, benchmark_write_rate_limit, 0,
          "Pace the writes of every benchmark to this many bytes/s of keys "
          "and values, over all threads (RocksDB's flag name); 0: no limit. "
          "Compares engines' DB sizes at one ingest rate");
ABSL_FLAG(std::string, db, "",
          "Database directory; default /tmp/siftdb_bench-<uid>");
ABSL_FLAG(bool, use_existing_db, false,
          "Reuse the database at --db instead of starting fresh; fill "
          "benchmarks are then skipped");

// --- Engine options (mapped to siftdb::Options) ---
ABSL_FLAG(double, bloom_bits, 10,
          "Bloom filter bits per key (Options::filter_bits_per_key); 0 "
          "disables filters");
ABSL_FLAG(bool, use_ribbon_filter, false,
          "Ribbon filters (NewRibbonFilterPolicy(--bloom_bits)) instead of "
          "Bloom: about 30% less space at the same false-positive rate "
          "(RocksDB's flag name; LevelDB ignores it)");
ABSL_FLAG(std::string, filter_bits_per_key_per_level, "",
          "siftdb: Bloom (or Ribbon) bits/key of the tables of each level, "
          "comma-separated, the last repeating, 0: no filter there "
          "(Options::filter_bits_per_key_per_level); empty: --bloom_bits "
          "everywhere. LevelDB and RocksDB refuse it");
ABSL_FLAG(bool, optimize_filters_for_memory_budget, false,
          "siftdb: --bloom_bits is the average over the tree, allocated by "
          "level to minimise wasted reads of absent keys (Options::"
          "optimize_filters_for_memory_budget, the Monkey allocation). "
          "LevelDB and RocksDB refuse it");
ABSL_FLAG(int64_t, cache_size, int64_t{8} << 20,
          "Block cache bytes (Options::block_cache_size)");
ABSL_FLAG(int64_t, write_buffer_size, int64_t{4} << 20,
          "MemTable bytes before a flush (Options::write_buffer_size)");
ABSL_FLAG(int64_t, max_file_size, int64_t{2} << 20,
          "Target table file bytes (Options::max_file_size)");
ABSL_FLAG(int, subcompactions, 0,
          "Threads that may merge one compaction "
          "(Options::max_subcompactions; RocksDB's flag name; LevelDB ignores "
          "it); 0: each engine's own default");
ABSL_FLAG(bool, free_compaction_inputs_early, true,
          "siftdb: compactions install outputs and delete merged inputs as "
          "they go (Options::free_compaction_inputs_early)");
ABSL_FLAG(bool, wal_mmap_writes, true,
          "siftdb: append the write-ahead log through a memory mapping "
          "instead of one write(2) per write group "
          "(Options::wal_mmap_writes)");
ABSL_FLAG(bool, paranoid_file_checks, false,
          "siftdb: flush and compaction also read every entry of each table "
          "they write back before installing it (RocksDB's name and default; "
          "the open, block-CRC and entry-count check always runs)");
ABSL_FLAG(int32_t, block_size, 4096,
          "Data block bytes before compression (Options::block_size)");
ABSL_FLAG(int32_t, open_files, 1000,
          "Table files kept open (Options::max_open_files)");
ABSL_FLAG(std::string, compression, "snappy",
          "Block compression: none, snappy, lz4 or zstd (LevelDB's 1/0 also "
          "work; LevelDB itself has snappy and none only)");
ABSL_FLAG(int32_t, compression_level, 32767,
          "Compressor level for lz4 and zstd (Options::compression_opts."
          "level); 32767: the library's default");
ABSL_FLAG(int64_t, compression_max_dict_bytes, 0,
          "zstd dictionary bytes per table (Options::compression_opts."
          "max_dict_bytes; RocksDB's name); 0: none");
ABSL_FLAG(int64_t, compression_zstd_max_train_bytes, 0,
          "Bytes of blocks zstd's trainer builds each dictionary from "
          "(Options::compression_opts.zstd_max_train_bytes); 0: raw samples");
ABSL_FLAG(std::string, bottommost_compression, "",
          "Compression of the bottommost level (Options::"
          "bottommost_compression): none, snappy, lz4 or zstd; empty: the "
          "level's own");

// --- Comparison build ---
ABSL_FLAG(std::string, engines, "siftdb",
          "Comma-separated engines to run and compare side by side "
          "(siftdb, and leveldb,rocksdb in the SIFTDB_BENCH_COMPARE=ON "
          "build)");

// --- Remote filter mirror (Options::remote_filter) ---
ABSL_FLAG(std::string, remote_filter, "",
          "Mirror the filters into Redis at HOST:PORT (or unix:/path); "
          "empty: no mirror");
ABSL_FLAG(std::string, remote_filter_name, "db_bench",
          "The DB's name in Redis (keys under the hash tag {name})");
ABSL_FLAG(std::string, remote_filter_mode, "async",
          "async (the mirror lags, bounded) or sync (a write returns once "
          "its keys are in Redis)");

namespace siftdb::bench {
namespace {

std::vector<std::string> SplitList(const std::string& list) {
  std::vector<std::string> out;
  for (absl::string_view part : absl::StrSplit(AsAbsl(list), ',')) {
    absl::string_view name = absl::StripAsciiWhitespace(part);
    if (!name.empty()) out.emplace_back(name);
  }
  return out;
}

absl::Status CheckAtLeast(const char* flag, int64_t value, int64_t min) {
  if (value >= min) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s=%d: must be at least %d", flag, value, min));
}

}  // namespace

bool IsCompressionName(std::string_view name) {
  return name == "none" || name == "snappy" || name == "lz4" || name == "zstd";
}

namespace {

// --bloom_bits, --compression (LevelDB's spellings included),
// --compression_level, the dictionary flags and --bottommost_compression.
absl::Status ApplyFilterAndCompression(EngineConfig* e) {
  const double bloom_bits = absl::GetFlag(FLAGS_bloom_bits);
  if (!(bloom_bits >= 0 && bloom_bits <= 100)) {
    // LevelDB's default of -1 ("no filter") is accepted as 0.
    if (bloom_bits < 0) {
      e->bloom_bits = 0;
    } else {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--bloom_bits=%g: must be between 0 and 100", bloom_bits));
    }
  } else {
    e->bloom_bits = bloom_bits;
  }
  e->use_ribbon_filter = absl::GetFlag(FLAGS_use_ribbon_filter);
  e->bloom_bits_per_level.clear();
  for (const std::string& part :
       SplitList(absl::GetFlag(FLAGS_filter_bits_per_key_per_level))) {
    double bits;
    if (!absl::SimpleAtod(part, &bits) || !(bits >= 0 && bits <= 100)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "--filter_bits_per_key_per_level: \"%s\" is not a number in "
          "[0, 100]",
          part));
    }
    e->bloom_bits_per_level.push_back(bits);
  }
  e->optimize_filters_for_memory_budget =
      absl::GetFlag(FLAGS_optimize_filters_for_memory_budget);
  if (e->optimize_filters_for_memory_budget &&
      !e->bloom_bits_per_level.empty()) {
    return absl::InvalidArgumentError(
        "--optimize_filters_for_memory_budget with "
        "--filter_bits_per_key_per_level: choose one");
  }

  const std::string compression =
      absl::AsciiStrToLower(absl::GetFlag(FLAGS_compression));
  if (compression == "1" || compression == "true") {
    e->compression = "snappy";
  } else if (compression == "0" || compression == "false") {
    e->compression = "none";
  } else if (IsCompressionName(compression)) {
    e->compression = compression;
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--compression=%s: must be none, snappy, lz4 or zstd", compression));
  }
  const std::string bottommost =
      absl::AsciiStrToLower(absl::GetFlag(FLAGS_bottommost_compression));
  if (!bottommost.empty() && !IsCompressionName(bottommost)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--bottommost_compression=%s: must be none, snappy, lz4 or zstd "
        "(or empty: the level's own)",
        bottommost));
  }
  e->bottommost_compression = bottommost;
  e->compression_level = absl::GetFlag(FLAGS_compression_level);
  const int64_t dict_bytes = absl::GetFlag(FLAGS_compression_max_dict_bytes);
  const int64_t train_bytes =
      absl::GetFlag(FLAGS_compression_zstd_max_train_bytes);
  if (dict_bytes < 0 || train_bytes < 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--compression_max_dict_bytes=%d, --compression_zstd_max_train_"
        "bytes=%d: must not be negative",
        dict_bytes, train_bytes));
  }
  e->compression_max_dict_bytes = static_cast<uint64_t>(dict_bytes);
  e->compression_zstd_max_train_bytes = static_cast<uint64_t>(train_bytes);
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<BenchConfig> ConfigFromFlags(const tools::ToolArgs& args) {
  BenchConfig c;
  c.benchmarks = SplitList(absl::GetFlag(FLAGS_benchmarks));
  c.engines = SplitList(absl::GetFlag(FLAGS_engines));
  if (c.engines.empty()) {
    return absl::InvalidArgumentError("--engines: empty list");
  }
  c.num = absl::GetFlag(FLAGS_num);
  c.reads = absl::GetFlag(FLAGS_reads);
  c.threads = absl::GetFlag(FLAGS_threads);
  c.value_size = absl::GetFlag(FLAGS_value_size);
  c.key_size = absl::GetFlag(FLAGS_key_size);
  c.key_prefix = absl::GetFlag(FLAGS_key_prefix);
  c.comparisons = absl::GetFlag(FLAGS_comparisons);
  c.engine.count_comparisons = c.comparisons;
  if (absl::GetFlag(FLAGS_reuse_logs)) {
    c.notes.push_back(
        "--reuse_logs: siftdb starts a new log and MANIFEST on every open "
        "(it has no reuse_logs); reopening is not sped up");
  }
  c.compression_ratio = absl::GetFlag(FLAGS_compression_ratio);
  c.histogram = absl::GetFlag(FLAGS_histogram);
  c.use_existing_db = absl::GetFlag(FLAGS_use_existing_db);
  c.seed = absl::GetFlag(FLAGS_seed);
  c.write_rate_limit = absl::GetFlag(FLAGS_benchmark_write_rate_limit);
  c.db = absl::GetFlag(FLAGS_db);
  if (c.db.empty()) {
    c.db = absl::StrFormat("/tmp/siftdb_bench-%d", getuid());
  }

  absl::Status s;
  if (s.ok()) s = CheckAtLeast("num", c.num, 0);
  if (s.ok()) s = CheckAtLeast("threads", c.threads, 1);
  if (s.ok()) s = CheckAtLeast("value_size", c.value_size, 0);
  if (s.ok()) s = CheckAtLeast("key_size", c.key_size, 1);
  if (s.ok()) s = CheckAtLeast("key_prefix", c.key_prefix, 0);
  if (s.ok()) {
    s = CheckAtLeast("write_buffer_size",
                     absl::GetFlag(FLAGS_write_buffer_size), 4096);
  }
  if (s.ok()) {
    s = CheckAtLeast("max_file_size", absl::GetFlag(FLAGS_max_file_size), 4096);
  }
  if (s.ok()) {
    s = CheckAtLeast("subcompactions", absl::GetFlag(FLAGS_subcompactions), 0);
  }
  if (s.ok())
    s = CheckAtLeast("block_size", absl::GetFlag(FLAGS_block_size), 1);
  // LevelDB's scripts pass --cache_size=-1 and --open_files=0 for "the
  // default".
  int64_t cache_size = absl::GetFlag(FLAGS_cache_size);
  if (cache_size < 0) cache_size = int64_t{8} << 20;
  int open_files = absl::GetFlag(FLAGS_open_files);
  if (open_files <= 0) open_files = 1000;
  if (s.ok()) s = CheckAtLeast("open_files", open_files, 16);
  if (!s.ok()) return s;
  if (!(c.compression_ratio > 0 && c.compression_ratio <= 1)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--compression_ratio=%g: must be in (0, 1]", c.compression_ratio));
  }
  if (s = ApplyFilterAndCompression(&c.engine); !s.ok()) return s;
  c.engine.create_if_missing = !c.use_existing_db;
  c.engine.block_cache_size = cache_size;
  c.engine.write_buffer_size = absl::GetFlag(FLAGS_write_buffer_size);
  c.engine.max_file_size = absl::GetFlag(FLAGS_max_file_size);
  c.engine.subcompactions = absl::GetFlag(FLAGS_subcompactions);
  c.engine.free_compaction_inputs_early =
      absl::GetFlag(FLAGS_free_compaction_inputs_early);
  c.engine.paranoid_file_checks = absl::GetFlag(FLAGS_paranoid_file_checks);
  c.engine.wal_mmap_writes = absl::GetFlag(FLAGS_wal_mmap_writes);
  c.engine.block_size = absl::GetFlag(FLAGS_block_size);
  c.engine.max_open_files = open_files;
  c.engine.remote_filter_address = absl::GetFlag(FLAGS_remote_filter);
  c.engine.remote_filter_name = absl::GetFlag(FLAGS_remote_filter_name);
  c.engine.remote_filter_mode = absl::GetFlag(FLAGS_remote_filter_mode);
  if (!c.engine.remote_filter_address.empty() &&
      c.engine.remote_filter_mode != "async" &&
      c.engine.remote_filter_mode != "sync") {
    return absl::InvalidArgumentError(
        absl::StrFormat("--remote_filter_mode=%s: must be async or sync",
                        c.engine.remote_filter_mode));
  }
  if (s = ApplyRocksDBFlags(args, &c); !s.ok()) return s;
  return c;
}

std::string EngineDbPath(const BenchConfig& config, const std::string& engine) {
  if (config.engines.size() == 1) return config.db;
  return absl::StrFormat("%s-%s", config.db, engine);
}

}  // namespace siftdb::bench
