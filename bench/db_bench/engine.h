// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// BenchEngine: the small interface db_bench drives, so the same workloads
// run against siftdb and, in the comparison build (SIFTDB_BENCH_COMPARE=ON),
// against LevelDB and RocksDB. One adapter file per engine:
// engine_siftdb.cc, engine_leveldb.cc, engine_rocksdb.cc.
//
// Thread safety: after Open() succeeds, Put/Delete/Get/NewCursor/Counter may
// be called from many threads at once (each engine's DB is thread-safe).
// Open, Close, Destroy and CompactAll are called by one thread while no
// other thread uses the engine.
// Ownership: a cursor must be destroyed before its engine is closed.

#ifndef SIFTDB_BENCH_DB_BENCH_ENGINE_H_
#define SIFTDB_BENCH_DB_BENCH_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace siftdb::bench {

// How every engine is configured; filled from the command-line flags so the
// engines of one comparison are set up alike.
struct EngineConfig {
  bool create_if_missing = true;
  size_t block_cache_size = size_t{8} << 20;
  size_t write_buffer_size = size_t{4} << 20;
  // Level-1 table size (siftdb's and RocksDB's target_file_size_base,
  // LevelDB's max_file_size) and its growth per level below.
  size_t max_file_size = size_t{2} << 20;
  int target_file_size_multiplier = 1;
  // Leveled compaction shape (siftdb's defaults; RocksDB's names).
  int level0_file_num_compaction_trigger = 4;
  int level0_slowdown_writes_trigger = 8;
  int level0_stop_writes_trigger = 12;
  // Write control (siftdb's; RocksDB's names). 0 limits: off.
  uint64_t soft_pending_compaction_bytes_limit = uint64_t{64} << 30;
  uint64_t hard_pending_compaction_bytes_limit = uint64_t{256} << 30;
  uint64_t delayed_write_rate = uint64_t{16} << 20;
  uint64_t max_bytes_for_level_base = uint64_t{10} << 20;
  double max_bytes_for_level_multiplier = 10;
  // Options::level_compaction_dynamic_level_bytes (siftdb and RocksDB,
  // whose 7.x default is also false; LevelDB has static targets only).
  bool level_compaction_dynamic_level_bytes = false;
  // Threads per compaction (siftdb and RocksDB max_subcompactions; LevelDB
  // has one background thread and ignores it); 0 leaves each engine's
  // default.
  int subcompactions = 0;
  // siftdb's Options::free_compaction_inputs_early (the others hold every
  // compaction input until the compaction ends).
  bool free_compaction_inputs_early = true;
  // siftdb's Options::wal_mmap_writes (the others write(2) each record).
  bool wal_mmap_writes = true;
  // Options::disable_auto_compactions (siftdb's and RocksDB's): only
  // explicit compactions run. LevelDB has no such switch and compacts.
  bool disable_auto_compactions = false;
  // Writes skip the log (siftdb's WriteOptions::disable_wal, RocksDB's
  // disableWAL). LevelDB has no such option: its adapter refuses it.
  bool disable_wal = false;
  // Bytes/s that flushes and compactions may write to table files
  // (siftdb's Options::rate_limiter, RocksDB's GenericRateLimiter; the
  // flag --rate_limiter_bytes_per_sec). 0: unlimited. LevelDB has no
  // limiter: its adapter refuses a non-zero rate.
  int64_t rate_limiter_bytes_per_sec = 0;
  // --prefix_size > 0: a fixed-length prefix extractor of that many bytes
  // (siftdb and RocksDB), and cursors whose seeks stay in the target's
  // prefix (prefix_same_as_start). LevelDB has none: the runner stops its
  // cursors at the prefix itself.
  int prefix_size = 0;
  // --total_order_seek: cursors ignore the prefix filters and limits (the
  // baseline a prefix seek is measured against).
  bool total_order_seek = false;
  // siftdb's Options::paranoid_file_checks: flush and compaction read every
  // entry of each output back before installing it (RocksDB keeps its
  // default, false; LevelDB has no such check).
  bool paranoid_file_checks = false;
  size_t block_size = 4096;
  int max_open_files = 1000;
  // --advise_random_on_open (siftdb's and RocksDB's option; LevelDB has no
  // such advice and keeps the OS's read-around).
  bool advise_random_on_open = true;
  // Block compression by RocksDB's names: "none", "snappy", "lz4" or
  // "zstd" (LevelDB: snappy or none only).
  std::string compression = "snappy";
  // The compressor level (siftdb and RocksDB: CompressionOptions::level);
  // kDefaultCompressionLevel: the library's default.
  static constexpr int kDefaultCompressionLevel = 32767;
  int compression_level = kDefaultCompressionLevel;
  // zstd dictionaries (CompressionOptions::max_dict_bytes and
  // zstd_max_train_bytes, siftdb and RocksDB); 0: none / raw samples.
  uint64_t compression_max_dict_bytes = 0;
  uint64_t compression_zstd_max_train_bytes = 0;
  // Compression of the bottommost level (Options::bottommost_compression,
  // siftdb and RocksDB); empty: the level's own.
  std::string bottommost_compression;
  // Bloom filter bits per key; 0 disables filters. LevelDB takes whole bits
  // (rounded).
  double bloom_bits = 10;
  // Ribbon filters at bloom_bits bits/key-equivalent instead of Bloom
  // (siftdb and RocksDB; LevelDB has none and ignores it).
  bool use_ribbon_filter = false;
  // Options::optimize_filters_for_hits (siftdb's and RocksDB's): no filter
  // in compaction outputs on the bottommost level. LevelDB refuses it.
  bool optimize_filters_for_hits = false;
  // Filters in the block cache, level-0 ones pinned (siftdb's
  // cache_filter_blocks / pin_l0_filter_blocks_in_cache; RocksDB's
  // cache_index_and_filter_blocks / pin_l0_filter_and_index_blocks_in_cache,
  // which also cache its index blocks). LevelDB refuses them.
  bool cache_filter_blocks = false;
  // --partition_filters / --metadata_block_size: siftdb's partition_filters
  // and filter_partition_size; RocksDB's partition_filters (with
  // kTwoLevelIndexSearch) and metadata_block_size.
  bool partition_filters = false;
  size_t filter_partition_size = 4096;
  bool pin_l0_filter_blocks = false;
  // siftdb only (LevelDB and RocksDB refuse them): bits/key by level
  // (Options::filter_bits_per_key_per_level; empty: bloom_bits on every
  // level), or bloom_bits as the tree-wide average allocated by level
  // (Options::optimize_filters_for_memory_budget).
  std::vector<double> bloom_bits_per_level;
  bool optimize_filters_for_memory_budget = false;
  // Count the comparator's calls (LevelDB's --comparisons); engines that
  // cannot report Comparisons() ignore it.
  bool count_comparisons = false;

  // --- Remote filter mirror (siftdb only; reserved for the
  // --remote_filter=HOST:PORT --remote_filter_name=NAME
  // --remote_filter_mode=async|sync flags of a later issue). Empty: off.
  std::string remote_filter_address;
  std::string remote_filter_name;
  std::string remote_filter_mode;
};

// An ordered cursor over one engine's keys (a thin wrapper of its iterator).
class BenchCursor {
 public:
  BenchCursor() = default;
  BenchCursor(const BenchCursor&) = delete;
  BenchCursor& operator=(const BenchCursor&) = delete;
  virtual ~BenchCursor() = default;

  virtual bool Valid() const = 0;
  virtual void SeekToFirst() = 0;
  virtual void SeekToLast() = 0;
  virtual void Seek(std::string_view target) = 0;
  virtual void Next() = 0;
  virtual void Prev() = 0;
  // REQUIRES: Valid(). Valid until the cursor moves.
  virtual std::string_view key() const = 0;
  virtual std::string_view value() const = 0;
  virtual absl::Status status() const = 0;
};

// One entry of a batched write: a Put, or a Delete when `value` is null.
struct BatchEntry {
  std::string_view key;
  std::optional<std::string_view> value;
};

class BenchEngine {
 public:
  BenchEngine() = default;
  BenchEngine(const BenchEngine&) = delete;
  BenchEngine& operator=(const BenchEngine&) = delete;
  virtual ~BenchEngine() = default;

  // "siftdb", "leveldb" or "rocksdb".
  virtual std::string_view Name() const = 0;
  // A one-line description for the header (version, filter, caveats).
  virtual std::string Description() const = 0;

  // Opens the database at `path`. REQUIRES: not open.
  virtual absl::Status Open(const EngineConfig& config,
                            const std::string& path) = 0;
  // Closes the database if open (waits for background work).
  virtual void Close() = 0;
  // Removes the database at `path`. REQUIRES: closed.
  virtual absl::Status Destroy(const std::string& path) = 0;

  virtual absl::Status Put(bool sync, std::string_view key,
                           std::string_view value) = 0;
  virtual absl::Status Delete(bool sync, std::string_view key) = 0;
  // True and *value set when found; false when absent; an error otherwise.
  virtual absl::StatusOr<bool> Get(std::string_view key,
                                   std::string* value) = 0;
  // Reads `keys` at one point in time where the engine can (DB::MultiGet);
  // per key: found or not, with values[i] set when found. The default
  // reads them one Get at a time.
  virtual absl::Status MultiGet(std::span<const std::string_view> keys,
                                std::vector<std::string>* values,
                                std::vector<bool>* found);
  virtual std::unique_ptr<BenchCursor> NewCursor() = 0;
  // Compacts the whole key space.
  virtual absl::Status CompactAll() = 0;
  // Applies the entries as one atomic write. The default writes them one
  // by one (not atomic): for engines without a batch adapter.
  virtual absl::Status WriteEntries(bool sync,
                                    const std::vector<BatchEntry>& entries);
  // Writes the MemTable to a table now; Unimplemented by default.
  virtual absl::Status Flush() {
    return absl::UnimplementedError("this engine has no flush in db_bench");
  }

  // The engine's statistics text and its table listing; nullopt when the
  // engine has none.
  virtual std::optional<std::string> StatsText() = 0;
  virtual std::optional<std::string> SSTablesText() = 0;
  // The per-level table (files, bytes, compaction I/O per level) and the
  // memory the engine uses; nullopt when the engine does not say.
  virtual std::optional<std::string> LevelStatsText() { return std::nullopt; }
  virtual std::optional<std::string> MemStatsText() { return std::nullopt; }
  // Comparator calls since the last call (when opened with
  // count_comparisons); nullopt when the engine does not count them.
  virtual std::optional<uint64_t> TakeComparisons() { return std::nullopt; }
  // True when no compaction is running or due (siftdb's
  // compaction-pending and num-running-compactions properties); nullopt
  // when the engine cannot say.
  virtual std::optional<bool> CompactionIdle() { return std::nullopt; }
  // A siftdb counter by name (e.g. "filter.negatives"); nullopt when the
  // engine does not keep it.
  virtual std::optional<uint64_t> Counter(std::string_view name) = 0;
};

// The engines this binary was built with, siftdb first.
std::vector<std::string> AvailableEngines();
// InvalidArgument naming the available engines for an unknown name.
absl::StatusOr<std::unique_ptr<BenchEngine>> NewEngine(std::string_view name);

// Factories defined by the adapter files.
std::unique_ptr<BenchEngine> NewSiftdbEngine();
#ifdef SIFTDB_BENCH_HAVE_LEVELDB
std::unique_ptr<BenchEngine> NewLevelDBEngine();
#endif
#ifdef SIFTDB_BENCH_HAVE_ROCKSDB
std::unique_ptr<BenchEngine> NewRocksDBEngine();
#endif

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_DB_BENCH_ENGINE_H_
