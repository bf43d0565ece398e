// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The siftdb adapter of db_bench, and the engine registry.

#include <atomic>
#include <charconv>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/db_bench/engine.h"
#include "siftdb/comparator.h"
#include "siftdb/db.h"
#include "siftdb/rate_limiter.h"
#include "siftdb/slice_transform.h"
#include "siftdb/write_batch.h"

#ifndef SIFTDB_VERSION
#define SIFTDB_VERSION "unknown"
#endif

namespace siftdb::bench {
namespace {

// A name flags.cc accepted (IsCompressionName) as siftdb's type.
CompressionType CompressionByName(const std::string& name) {
  if (name == "none") return kNoCompression;
  if (name == "lz4") return kLZ4Compression;
  if (name == "zstd") return kZstdCompression;
  return kSnappyCompression;
}

class SiftdbCursor final : public BenchCursor {
 public:
  explicit SiftdbCursor(std::unique_ptr<Iterator> it) : it_(std::move(it)) {}
  bool Valid() const override { return it_->Valid(); }
  void SeekToFirst() override { it_->SeekToFirst(); }
  void SeekToLast() override { it_->SeekToLast(); }
  void Seek(std::string_view target) override { it_->Seek(target); }
  void Next() override { it_->Next(); }
  void Prev() override { it_->Prev(); }
  std::string_view key() const override { return it_->key(); }
  std::string_view value() const override { return it_->value(); }
  absl::Status status() const override { return it_->status(); }

 private:
  std::unique_ptr<Iterator> it_;
};

// Bytewise order, counting its calls (LevelDB's --comparisons). It keeps
// the bytewise comparator's name, so databases stay interchangeable with
// runs that do not count.
class CountingComparator final : public Comparator {
 public:
  int Compare(std::string_view a, std::string_view b) const override {
    count_.fetch_add(1, std::memory_order_relaxed);
    return BytewiseComparator()->Compare(a, b);
  }
  const char* Name() const override { return BytewiseComparator()->Name(); }
  void FindShortestSeparator(std::string* start,
                             std::string_view limit) const override {
    BytewiseComparator()->FindShortestSeparator(start, limit);
  }
  void FindShortSuccessor(std::string* key) const override {
    BytewiseComparator()->FindShortSuccessor(key);
  }
  uint64_t Take() { return count_.exchange(0, std::memory_order_relaxed); }

 private:
  mutable std::atomic<uint64_t> count_{0};
};

// The per-level table of "siftdb.stats": its lines up to the summary that
// starts with "flushes:".
std::string LevelTableOf(const std::string& stats) {
  const size_t end = stats.find("\nflushes:");
  return end == std::string::npos ? stats : stats.substr(0, end);
}

class SiftdbEngine final : public BenchEngine {
 public:
  std::string_view Name() const override { return "siftdb"; }

  std::string Description() const override {
    return absl::StrFormat("version %s", SIFTDB_VERSION);
  }

  absl::Status Open(const EngineConfig& config,
                    const std::string& path) override {
    options_ = Options();
    write_options_ = WriteOptions();
    write_options_.disable_wal = config.disable_wal;
    options_.create_if_missing = config.create_if_missing;
    options_.block_cache_size = config.block_cache_size;
    options_.write_buffer_size = config.write_buffer_size;
    options_.target_file_size_base = config.max_file_size;
    options_.target_file_size_multiplier = config.target_file_size_multiplier;
    options_.level0_file_num_compaction_trigger =
        config.level0_file_num_compaction_trigger;
    options_.level0_slowdown_writes_trigger =
        config.level0_slowdown_writes_trigger;
    options_.soft_pending_compaction_bytes_limit =
        config.soft_pending_compaction_bytes_limit;
    options_.hard_pending_compaction_bytes_limit =
        config.hard_pending_compaction_bytes_limit;
    options_.delayed_write_rate = config.delayed_write_rate;
    options_.level0_stop_writes_trigger = config.level0_stop_writes_trigger;
    options_.max_bytes_for_level_base = config.max_bytes_for_level_base;
    options_.max_bytes_for_level_multiplier =
        config.max_bytes_for_level_multiplier;
    options_.level_compaction_dynamic_level_bytes =
        config.level_compaction_dynamic_level_bytes;
    if (config.count_comparisons) options_.comparator = &comparator_;
    if (config.subcompactions > 0) {
      options_.max_subcompactions = config.subcompactions;
    }
    options_.free_compaction_inputs_early = config.free_compaction_inputs_early;
    options_.wal_mmap_writes = config.wal_mmap_writes;
    options_.disable_auto_compactions = config.disable_auto_compactions;
    if (config.prefix_size > 0) {
      options_.prefix_extractor =
          NewFixedPrefixTransform(static_cast<size_t>(config.prefix_size));
      cursor_options_.prefix_same_as_start = true;
    }
    cursor_options_.total_order_seek = config.total_order_seek;
    options_.paranoid_file_checks = config.paranoid_file_checks;
    options_.block_size = config.block_size;
    options_.max_open_files = config.max_open_files;
    options_.advise_random_on_open = config.advise_random_on_open;
    options_.compression = CompressionByName(config.compression);
    if (!config.bottommost_compression.empty()) {
      options_.bottommost_compression =
          CompressionByName(config.bottommost_compression);
    }
    options_.compression_opts.level = config.compression_level;
    options_.compression_opts.max_dict_bytes =
        config.compression_max_dict_bytes;
    options_.compression_opts.zstd_max_train_bytes =
        config.compression_zstd_max_train_bytes;
    options_.filter_bits_per_key = config.bloom_bits;
    options_.optimize_filters_for_hits = config.optimize_filters_for_hits;
    options_.cache_filter_blocks = config.cache_filter_blocks;
    options_.partition_filters = config.partition_filters;
    options_.filter_partition_size = config.filter_partition_size;
    options_.pin_l0_filter_blocks_in_cache = config.pin_l0_filter_blocks;
    options_.filter_bits_per_key_per_level = config.bloom_bits_per_level;
    options_.optimize_filters_for_memory_budget =
        config.optimize_filters_for_memory_budget;
    if (config.rate_limiter_bytes_per_sec > 0) {
      options_.rate_limiter =
          NewGenericRateLimiter(config.rate_limiter_bytes_per_sec);
    }
    if (config.use_ribbon_filter && config.bloom_bits > 0) {
      options_.filter_policy = NewRibbonFilterPolicy(config.bloom_bits);
    } else if (config.use_ribbon_filter &&
               !config.bloom_bits_per_level.empty()) {
      // The kind only: filter_bits_per_key_per_level sizes each level.
      options_.filter_policy = NewRibbonFilterPolicy(10);
    }
    // Remote filter mirror: the --remote_filter* flags (a later issue) fill
    // config.remote_filter_*; empty address: no mirror.
    if (!config.remote_filter_address.empty()) {
      RemoteFilterOptions& rf = options_.remote_filter;
      rf.endpoints = {config.remote_filter_address};
      rf.name = config.remote_filter_name;
      if (config.remote_filter_mode.empty() ||
          config.remote_filter_mode == "async") {
        rf.mode = RemoteFilterOptions::Mode::kAsync;
      } else if (config.remote_filter_mode == "sync") {
        rf.mode = RemoteFilterOptions::Mode::kSync;
      } else {
        return absl::InvalidArgumentError(
            absl::StrFormat("--remote_filter_mode=%s: must be async or sync",
                            config.remote_filter_mode));
      }
    }
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(options_, path);
    if (!db.ok()) return db.status();
    db_ = *std::move(db);
    return absl::OkStatus();
  }

  void Close() override { db_.reset(); }

  absl::Status Destroy(const std::string& path) override {
    return DestroyDB(path, options_);
  }

  absl::Status Put(bool sync, std::string_view key,
                   std::string_view value) override {
    WriteOptions wo = write_options_;
    wo.sync = sync;
    return db_->Put(wo, key, value);
  }

  absl::Status Delete(bool sync, std::string_view key) override {
    WriteOptions wo = write_options_;
    wo.sync = sync;
    return db_->Delete(wo, key);
  }

  absl::StatusOr<bool> Get(std::string_view key, std::string* value) override {
    absl::Status s = db_->Get(ReadOptions(), key, value);
    if (s.ok()) return true;
    if (absl::IsNotFound(s)) return false;
    return s;
  }

  absl::Status MultiGet(std::span<const std::string_view> keys,
                        std::vector<std::string>* values,
                        std::vector<bool>* found) override {
    std::vector<absl::Status> statuses =
        db_->MultiGet(ReadOptions(), keys, values);
    found->assign(keys.size(), false);
    for (size_t i = 0; i < keys.size(); ++i) {
      if (statuses[i].ok()) {
        (*found)[i] = true;
      } else if (!absl::IsNotFound(statuses[i])) {
        return statuses[i];
      }
    }
    return absl::OkStatus();
  }

  std::unique_ptr<BenchCursor> NewCursor() override {
    return std::make_unique<SiftdbCursor>(db_->NewIterator(cursor_options_));
  }

  absl::Status CompactAll() override {
    return db_->CompactRange(nullptr, nullptr);
  }

  absl::Status WriteEntries(bool sync,
                            const std::vector<BatchEntry>& entries) override {
    siftdb::WriteBatch batch;
    for (const BatchEntry& e : entries) {
      if (e.value.has_value()) {
        batch.Put(e.key, *e.value);
      } else {
        batch.Delete(e.key);
      }
    }
    WriteOptions wo = write_options_;
    wo.sync = sync;
    return db_->Write(wo, &batch);
  }

  absl::Status Flush() override { return db_->Flush(FlushOptions()); }

  // "siftdb.levelstats" when this build has it, else the level table that
  // heads "siftdb.stats".
  std::optional<std::string> LevelStatsText() override {
    std::optional<std::string> text = Property("siftdb.levelstats");
    if (text.has_value()) return text;
    text = Property("siftdb.stats");
    if (!text.has_value()) return std::nullopt;
    return LevelTableOf(*text);
  }

  std::optional<std::string> MemStatsText() override {
    std::optional<std::string> bytes =
        Property("siftdb.approximate-memory-usage");
    std::optional<std::string> filters = Property("siftdb.filter-memory");
    std::optional<std::string> in_cache =
        Property("siftdb.filter-memory-in-cache");
    if (!bytes.has_value() || !filters.has_value() || !in_cache.has_value()) {
      return std::nullopt;
    }
    return absl::StrFormat(
        "approximate memory usage: %s bytes (MemTables, their filters, the "
        "block cache and the filters on the heap); table filters: %s bytes, "
        "%s of them in the block cache",
        *bytes, *filters, *in_cache);
  }

  std::optional<uint64_t> TakeComparisons() override {
    if (options_.comparator != &comparator_) return std::nullopt;
    return comparator_.Take();
  }

  std::optional<std::string> StatsText() override {
    return Property("siftdb.stats");
  }
  std::optional<std::string> SSTablesText() override {
    return Property("siftdb.sstables");
  }

  std::optional<bool> CompactionIdle() override {
    std::optional<std::string> pending = Property("siftdb.compaction-pending");
    std::optional<std::string> running =
        Property("siftdb.num-running-compactions");
    if (!pending.has_value() || !running.has_value()) return std::nullopt;
    // Without automatic compactions a due one never starts: idle once
    // nothing runs.
    if (options_.disable_auto_compactions) return *running == "0";
    return *pending == "0" && *running == "0";
  }

  std::optional<uint64_t> Counter(std::string_view name) override {
    std::optional<std::string> text =
        Property(absl::StrFormat("siftdb.counter.%s", name));
    if (!text.has_value()) return std::nullopt;
    uint64_t v = 0;
    auto [end, ec] =
        std::from_chars(text->data(), text->data() + text->size(), v);
    if (ec != std::errc()) return std::nullopt;
    return v;
  }

 private:
  std::optional<std::string> Property(const std::string& name) {
    std::string value;
    if (db_ == nullptr || !db_->GetProperty(name, &value)) return std::nullopt;
    return value;
  }

  CountingComparator comparator_;  // outlives db_ (declared first)
  Options options_;
  WriteOptions write_options_;  // disable_wal from the config
  ReadOptions cursor_options_;  // every cursor's
  std::unique_ptr<DB> db_;
};

}  // namespace

std::unique_ptr<BenchEngine> NewSiftdbEngine() {
  return std::make_unique<SiftdbEngine>();
}

absl::Status BenchEngine::WriteEntries(bool sync,
                                       const std::vector<BatchEntry>& entries) {
  for (const BatchEntry& e : entries) {
    absl::Status s =
        e.value.has_value() ? Put(sync, e.key, *e.value) : Delete(sync, e.key);
    if (!s.ok()) return s;
  }
  return absl::OkStatus();
}

absl::Status BenchEngine::MultiGet(std::span<const std::string_view> keys,
                                   std::vector<std::string>* values,
                                   std::vector<bool>* found) {
  values->assign(keys.size(), std::string());
  found->assign(keys.size(), false);
  for (size_t i = 0; i < keys.size(); ++i) {
    absl::StatusOr<bool> f = Get(keys[i], &(*values)[i]);
    if (!f.ok()) return f.status();
    (*found)[i] = *f;
  }
  return absl::OkStatus();
}

std::vector<std::string> AvailableEngines() {
  std::vector<std::string> names = {"siftdb"};
#ifdef SIFTDB_BENCH_HAVE_LEVELDB
  names.push_back("leveldb");
#endif
#ifdef SIFTDB_BENCH_HAVE_ROCKSDB
  names.push_back("rocksdb");
#endif
  return names;
}

absl::StatusOr<std::unique_ptr<BenchEngine>> NewEngine(std::string_view name) {
  if (name == "siftdb") return NewSiftdbEngine();
#ifdef SIFTDB_BENCH_HAVE_LEVELDB
  if (name == "leveldb") return NewLevelDBEngine();
#endif
#ifdef SIFTDB_BENCH_HAVE_ROCKSDB
  if (name == "rocksdb") return NewRocksDBEngine();
#endif
  return absl::InvalidArgumentError(absl::StrFormat(
      "--engines: unknown engine '%s' (this build has: %s%s)", name,
      absl::StrJoin(AvailableEngines(), ","),
      AvailableEngines().size() == 1
          ? "; configure with -DSIFTDB_BENCH_COMPARE=ON for leveldb,rocksdb"
          : ""));
}

}  // namespace siftdb::bench
