// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RocksDB's db_bench flags that scripts such as RocksDB's tools/benchmark.sh
// pass, and db_bench's command-line description for the tools front end.
// Three kinds (docs/db_bench.md has the table):
//   mapped   - defined here and applied to siftdb's Options or to the run;
//   ignored  - they tune RocksDB only (threads, caches, reporting); accepted
//              and named once on stderr by the front end;
//   refused  - siftdb lacks the feature: a value that asks for it is a usage
//              error naming the feature, a value meaning today's behaviour
//              (e.g. --prefix_size=0) is accepted.

#include <string>
#include <vector>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/flag.h"
#include "absl/flags/reflection.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "bench/db_bench/flags.h"
#include "util/absl_compat.h"

// --- Mapped ---
ABSL_FLAG(bool, statistics, false,
          "Print the engine's statistics (siftdb.stats) after the last "
          "benchmark, under STATISTICS:");
ABSL_FLAG(std::string, compression_type, "",
          "RocksDB's compression name: none, snappy, lz4 or zstd; empty: "
          "--compression decides");
ABSL_FLAG(bool, sync, false, "Every write waits for fdatasync of the log");
ABSL_FLAG(int32_t, duration, 0,
          "Seconds each benchmark runs, its operation count then unbounded; "
          "0: run --num / --reads operations");
ABSL_FLAG(int64_t, target_file_size_base, 0,
          "Target bytes of level-1 tables (Options::target_file_size_base); "
          "0: --max_file_size");
ABSL_FLAG(int32_t, target_file_size_multiplier, 1,
          "Each level's tables target this many times the level above's "
          "(Options::target_file_size_multiplier, in [1, 100]); LevelDB "
          "takes 1 only");
ABSL_FLAG(int64_t, max_bytes_for_level_base, int64_t{10} << 20,
          "Level-1 target bytes (Options::max_bytes_for_level_base)");
ABSL_FLAG(double, max_bytes_for_level_multiplier, 10,
          "Growth of each level's target over the one above "
          "(Options::max_bytes_for_level_multiplier)");
ABSL_FLAG(bool, level_compaction_dynamic_level_bytes, false,
          "Level targets set from the last level's size, level 0 compacting "
          "into the base level (Options::level_compaction_dynamic_level_"
          "bytes; siftdb and RocksDB, LevelDB ignores it)");
ABSL_FLAG(int32_t, level0_file_num_compaction_trigger, 4,
          "Level-0 tables that start a compaction "
          "(Options::level0_file_num_compaction_trigger)");
ABSL_FLAG(int32_t, level0_slowdown_writes_trigger, 8,
          "Level-0 tables at which writes slow down "
          "(Options::level0_slowdown_writes_trigger)");
ABSL_FLAG(int32_t, level0_stop_writes_trigger, 12,
          "Level-0 tables at which writes stop "
          "(Options::level0_stop_writes_trigger)");
ABSL_FLAG(int64_t, soft_pending_compaction_bytes_limit, int64_t{64} << 30,
          "Estimated pending compaction bytes at which writes slow down "
          "(Options::soft_pending_compaction_bytes_limit; 0: off)");
ABSL_FLAG(int64_t, hard_pending_compaction_bytes_limit, int64_t{256} << 30,
          "Estimated pending compaction bytes at which writes stop "
          "(Options::hard_pending_compaction_bytes_limit; 0: off)");
ABSL_FLAG(int64_t, delayed_write_rate, int64_t{16} << 20,
          "Bytes/s of writes while slowed down (Options::delayed_write_rate; "
          "0: 16 MiB/s)");
ABSL_FLAG(int64_t, batch_size, 1,
          "Entries per write of the fill, overwrite and delete benchmarks "
          "(one WriteBatch each); fillbatch always uses 1000");
ABSL_FLAG(int32_t, readwritepercent, 90,
          "readrandomwriterandom: percent of operations that are reads");
ABSL_FLAG(int32_t, num_levels, 7,
          "Levels of the LSM tree: siftdb has 7; larger values are accepted "
          "(siftdb's 7th level is never full in a benchmark), smaller are "
          "refused");
ABSL_FLAG(int32_t, compaction_style, 0,
          "0 (leveled), siftdb's only compaction style");

// --- Refused unless they mean today's behaviour ---
ABSL_FLAG(int32_t, prefix_size, 0,
          "Options::prefix_extractor = NewFixedPrefixTransform(N): prefixes "
          "of N bytes in the filters, and cursors that stay in a seek's "
          "prefix (prefix_same_as_start); 0: none");
ABSL_FLAG(int64_t, keys_per_prefix, 0,
          "With --prefix_size: keys in num/N groups, each key starting with "
          "its group's --prefix_size digits (only even groups are written; "
          "seekrandom seeks to a group prefix, half of them absent ones)");
ABSL_FLAG(int32_t, absent_prefix_percent, 50,
          "With --keys_per_prefix: the percentage of seekrandom's seeks that "
          "go to absent (odd) groups; 0 or 100 time present or absent "
          "prefixes alone (siftdb's extension)");
ABSL_FLAG(bool, total_order_seek, false,
          "Cursors ignore prefix filters and prefix limits "
          "(ReadOptions::total_order_seek)");
ABSL_FLAG(bool, disable_wal, false,
          "Writes skip the log (WriteOptions::disable_wal, RocksDB's "
          "disableWAL); refused with --sync and by the LevelDB adapter");
ABSL_FLAG(int64_t, rate_limiter_bytes_per_sec, 0,
          "Bytes/s that flushes and compactions may write to table files "
          "(Options::rate_limiter, RocksDB's flag); 0: unlimited; refused "
          "by the LevelDB adapter");
ABSL_FLAG(bool, advise_random_on_open, true,
          "Options::advise_random_on_open (RocksDB's flag and default): "
          "tables are read at random, no read-around on page faults; "
          "LevelDB has no such option");
ABSL_FLAG(bool, use_direct_reads, false,
          "false only: siftdb reads through the page cache (no O_DIRECT)");
ABSL_FLAG(bool, use_direct_io_for_flush_and_compaction, false,
          "false only: siftdb writes through the page cache (no O_DIRECT)");
ABSL_FLAG(bool, optimize_filters_for_hits, false,
          "Options::optimize_filters_for_hits: compaction outputs on the "
          "bottommost level get no filter (less filter memory; reads of "
          "absent keys read their blocks); LevelDB refuses it");
ABSL_FLAG(bool, cache_index_and_filter_blocks, false,
          "Filters kept in (charged to, evicted from) the block cache: "
          "siftdb's Options::cache_filter_blocks (its index blocks stay "
          "with the tables), RocksDB's option of this name; LevelDB "
          "refuses it");
ABSL_FLAG(bool, partition_filters, false,
          "Partitioned filters: siftdb's Options::partition_filters "
          "(partitions of --metadata_block_size bytes plus an index), "
          "RocksDB's option of this name (with its two-level index "
          "search); LevelDB refuses it");
ABSL_FLAG(int64_t, metadata_block_size, 4096,
          "With --partition_filters: target bytes of one filter partition "
          "(siftdb's filter_partition_size, RocksDB's option of this name)");
ABSL_FLAG(bool, pin_l0_filter_and_index_blocks_in_cache, false,
          "With --cache_index_and_filter_blocks: level-0 filters pinned in "
          "the cache (siftdb's pin_l0_filter_blocks_in_cache, RocksDB's "
          "option of this name; RocksDB's default, false, is this flag's)");
ABSL_FLAG(bool, disable_auto_compactions, false,
          "Options::disable_auto_compactions: only explicit compactions "
          "(the compact benchmark) merge tables; LevelDB ignores it");
ABSL_FLAG(bool, lenient, false,
          "Accepted for command lines written when --disable_wal=1 needed "
          "it; changes nothing now. Flags whose stand-in would flatter "
          "siftdb stay refused");

namespace siftdb::bench {
namespace {

// RocksDB flags that only tune RocksDB's own machinery (background threads,
// cache shards, memtable kinds, periodic reports, file syncing): siftdb
// runs the benchmark the same without them.
const char* const kIgnoredRocksDBFlags[] = {
    "allow_concurrent_memtable_write",
    "bytes_per_sync",
    "cache_high_pri_pool_ratio",
    "cache_low_pri_pool_ratio",
    "cache_numshardbits",
    "delete_obsolete_files_period_micros",
    "hard_pending_compaction_bytes_limit",
    "max_background_compactions",
    "max_background_flushes",
    "max_background_jobs",
    "max_write_buffer_number",
    "memtablerep",
    "merge_operator",
    "min_level_to_compress",
    "prepopulate_block_cache",
    "report_file",
    "report_interval_seconds",
    "soft_pending_compaction_bytes_limit",
    "stats_interval_seconds",
    "stats_per_interval",
    "verify_checksum",
    "wal_dir",
};

// RocksDB features siftdb does not have, refused whatever their value.
const std::pair<const char*, const char*> kRefusedRocksDBFlags[] = {
    {"enable_blob_files", "siftdb has no blob files"},
    {"use_blob_db", "siftdb has no blob files"},
    {"transaction_db", "siftdb has no transactions"},
    {"optimistic_transaction_db", "siftdb has no transactions"},
    {"use_existing_keys", "siftdb's db_bench generates its keys"},
    {"universal_size_ratio", "siftdb has leveled compaction only"},
};

absl::Status Refuse(const std::string& flag_and_value, const std::string& why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("%s is not supported: %s", flag_and_value, why));
}

// --compression_type: none, snappy, lz4 or zstd; anything else names what
// is missing.
absl::Status ApplyCompressionType(BenchConfig* c) {
  const std::string type =
      absl::AsciiStrToLower(absl::GetFlag(FLAGS_compression_type));
  if (type.empty()) return absl::OkStatus();
  if (type == "no") {
    c->engine.compression = "none";
  } else if (IsCompressionName(type)) {
    c->engine.compression = type;
  } else {
    return Refuse("--compression_type=" + type,
                  "siftdb compresses blocks with none, snappy, lz4 or zstd");
  }
  return absl::OkStatus();
}

absl::Status CheckRange(const char* flag, int64_t value, int64_t min,
                        int64_t max) {
  if (value >= min && value <= max) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrFormat("--%s=%d: must be in [%d, %d]", flag, value, min, max));
}

// The flags that are refused unless they ask for today's behaviour.
absl::Status CheckMissingFeatures(BenchConfig* c) {
  const int32_t prefix_size = absl::GetFlag(FLAGS_prefix_size);
  const int64_t keys_per_prefix = absl::GetFlag(FLAGS_keys_per_prefix);
  if (absl::Status s = CheckRange("prefix_size", prefix_size, 0, 1 << 20);
      !s.ok()) {
    return s;
  }
  if (absl::Status s =
          CheckRange("keys_per_prefix", keys_per_prefix, 0, int64_t{1} << 40);
      !s.ok()) {
    return s;
  }
  const int32_t absent_prefix_percent =
      absl::GetFlag(FLAGS_absent_prefix_percent);
  if (absl::Status s =
          CheckRange("absent_prefix_percent", absent_prefix_percent, 0, 100);
      !s.ok()) {
    return s;
  }
  c->absent_prefix_percent = absent_prefix_percent;
  if (keys_per_prefix > 0 && prefix_size == 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--keys_per_prefix=%d needs --prefix_size > 0", keys_per_prefix));
  }
  c->engine.prefix_size = prefix_size;
  c->engine.total_order_seek = absl::GetFlag(FLAGS_total_order_seek);
  c->engine.advise_random_on_open = absl::GetFlag(FLAGS_advise_random_on_open);
  if (keys_per_prefix > 0) {
    c->key_groups =
        static_cast<uint64_t>(std::max<int64_t>(1, c->num / keys_per_prefix));
  }
  if (absl::GetFlag(FLAGS_use_direct_reads)) {
    return Refuse("--use_direct_reads=1",
                  "siftdb has no direct I/O (it reads through the page "
                  "cache, which would flatter its reads)");
  }
  if (absl::GetFlag(FLAGS_use_direct_io_for_flush_and_compaction)) {
    return Refuse("--use_direct_io_for_flush_and_compaction=1",
                  "siftdb has no direct I/O");
  }
  if (absl::GetFlag(FLAGS_compaction_style) != 0) {
    return Refuse(absl::StrFormat("--compaction_style=%d",
                                  absl::GetFlag(FLAGS_compaction_style)),
                  "siftdb has leveled compaction (0) only");
  }
  const int levels = absl::GetFlag(FLAGS_num_levels);
  if (levels < 7) {
    return Refuse(absl::StrFormat("--num_levels=%d", levels),
                  "siftdb's level count is fixed at 7");
  }
  if (levels > 7) {
    c->notes.push_back(absl::StrFormat(
        "--num_levels=%d: siftdb has 7 levels; with --max_bytes_for_level_"
        "base=%d its last level holds far more than this benchmark writes",
        levels, c->engine.max_bytes_for_level_base));
  }
  c->engine.disable_wal = absl::GetFlag(FLAGS_disable_wal);
  if (c->engine.disable_wal && absl::GetFlag(FLAGS_sync)) {
    return Refuse("--disable_wal=1 with --sync=1",
                  "a synced write needs the log");
  }
  c->engine.rate_limiter_bytes_per_sec =
      absl::GetFlag(FLAGS_rate_limiter_bytes_per_sec);
  if (c->engine.rate_limiter_bytes_per_sec < 0) {
    return Refuse(absl::StrFormat("--rate_limiter_bytes_per_sec=%d",
                                  c->engine.rate_limiter_bytes_per_sec),
                  "a rate is > 0 (0: unlimited)");
  }
  c->engine.disable_auto_compactions =
      absl::GetFlag(FLAGS_disable_auto_compactions);
  c->engine.optimize_filters_for_hits =
      absl::GetFlag(FLAGS_optimize_filters_for_hits);
  c->engine.cache_filter_blocks =
      absl::GetFlag(FLAGS_cache_index_and_filter_blocks);
  c->engine.pin_l0_filter_blocks =
      absl::GetFlag(FLAGS_pin_l0_filter_and_index_blocks_in_cache);
  c->engine.partition_filters = absl::GetFlag(FLAGS_partition_filters);
  const int64_t partition = absl::GetFlag(FLAGS_metadata_block_size);
  if (partition <= 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--metadata_block_size=%d: must be > 0", partition));
  }
  c->engine.filter_partition_size = static_cast<size_t>(partition);
  return absl::OkStatus();
}

// The compaction shape: level-0 triggers, level targets, table size.
absl::Status ApplyShape(const tools::ToolArgs& args, BenchConfig* c) {
  EngineConfig& e = c->engine;
  e.level0_file_num_compaction_trigger =
      absl::GetFlag(FLAGS_level0_file_num_compaction_trigger);
  e.level0_slowdown_writes_trigger =
      absl::GetFlag(FLAGS_level0_slowdown_writes_trigger);
  e.level0_stop_writes_trigger =
      absl::GetFlag(FLAGS_level0_stop_writes_trigger);
  if (e.level0_file_num_compaction_trigger < 1 ||
      e.level0_slowdown_writes_trigger < e.level0_file_num_compaction_trigger ||
      e.level0_stop_writes_trigger < e.level0_slowdown_writes_trigger) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--level0_file_num_compaction_trigger=%d, "
        "--level0_slowdown_writes_trigger=%d, --level0_stop_writes_trigger="
        "%d: need 1 <= compaction <= slowdown <= stop",
        e.level0_file_num_compaction_trigger, e.level0_slowdown_writes_trigger,
        e.level0_stop_writes_trigger));
  }
  const int64_t soft = absl::GetFlag(FLAGS_soft_pending_compaction_bytes_limit);
  const int64_t hard = absl::GetFlag(FLAGS_hard_pending_compaction_bytes_limit);
  const int64_t rate = absl::GetFlag(FLAGS_delayed_write_rate);
  for (const auto& [name, value] :
       {std::pair<const char*, int64_t>{"soft_pending_compaction_bytes_limit",
                                        soft},
        {"hard_pending_compaction_bytes_limit", hard},
        {"delayed_write_rate", rate}}) {
    if (absl::Status s = CheckRange(name, value, 0, int64_t{1} << 60);
        !s.ok()) {
      return s;
    }
  }
  if (soft != 0 && hard != 0 && soft > hard) {
    return absl::InvalidArgumentError(
        absl::StrFormat("--soft_pending_compaction_bytes_limit=%d is above "
                        "--hard_pending_compaction_bytes_limit=%d",
                        soft, hard));
  }
  e.soft_pending_compaction_bytes_limit = static_cast<uint64_t>(soft);
  e.hard_pending_compaction_bytes_limit = static_cast<uint64_t>(hard);
  e.delayed_write_rate = static_cast<uint64_t>(rate);
  const int64_t base = absl::GetFlag(FLAGS_max_bytes_for_level_base);
  if (absl::Status s =
          CheckRange("max_bytes_for_level_base", base, 4096, int64_t{1} << 50);
      !s.ok()) {
    return s;
  }
  e.max_bytes_for_level_base = static_cast<uint64_t>(base);
  const double mult = absl::GetFlag(FLAGS_max_bytes_for_level_multiplier);
  if (!(mult > 1 && mult <= 1000)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "--max_bytes_for_level_multiplier=%g: must be in (1, 1000]", mult));
  }
  e.max_bytes_for_level_multiplier = mult;
  e.level_compaction_dynamic_level_bytes =
      absl::GetFlag(FLAGS_level_compaction_dynamic_level_bytes);
  if (args.WasSet("target_file_size_base")) {
    const int64_t size = absl::GetFlag(FLAGS_target_file_size_base);
    if (size != 0) {
      if (absl::Status s =
              CheckRange("target_file_size_base", size, 4096, int64_t{1} << 40);
          !s.ok()) {
        return s;
      }
      e.max_file_size = static_cast<size_t>(size);
    }
  }
  const int32_t file_mult = absl::GetFlag(FLAGS_target_file_size_multiplier);
  if (absl::Status s =
          CheckRange("target_file_size_multiplier", file_mult, 1, 100);
      !s.ok()) {
    return s;
  }
  e.target_file_size_multiplier = file_mult;
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyRocksDBFlags(const tools::ToolArgs& args,
                               BenchConfig* config) {
  config->statistics = absl::GetFlag(FLAGS_statistics);
  config->sync = absl::GetFlag(FLAGS_sync);
  config->duration = absl::GetFlag(FLAGS_duration);
  config->batch_size = absl::GetFlag(FLAGS_batch_size);
  config->readwritepercent = absl::GetFlag(FLAGS_readwritepercent);
  absl::Status s = CheckRange("duration", config->duration, 0, 86400 * 365);
  if (s.ok()) s = CheckRange("batch_size", config->batch_size, 1, 1000000);
  if (s.ok()) {
    s = CheckRange("readwritepercent", config->readwritepercent, 0, 100);
  }
  if (s.ok()) s = ApplyCompressionType(config);
  if (s.ok()) s = ApplyShape(args, config);
  if (s.ok()) s = CheckMissingFeatures(config);
  return s;
}

tools::ToolFlagsSpec DbBenchFlagsSpec(int argc, const char* const* argv) {
  tools::ToolFlagsSpec spec;
  spec.program = "db_bench";
  spec.usage =
      "db_bench: siftdb's benchmark; LevelDB 1.23's and RocksDB's db_bench "
      "flags and benchmark names (docs/db_bench.md).\n"
      "  db_bench --benchmarks=fillrandom,readrandom --num=100000\n"
      "Exit status: 0 when every benchmark ran, 1 when one failed, 2 for a "
      "bad command line (unknown or refused flag or benchmark, bad value).\n";
  spec.flag_sources = {"bench/db_bench/"};
  spec.takes_positional = false;
  for (const char* name : kIgnoredRocksDBFlags) spec.ignored.emplace_back(name);
  for (const auto& [name, why] : kRefusedRocksDBFlags) {
    spec.refused.emplace(name, why);
  }
  return spec;
}

}  // namespace siftdb::bench
