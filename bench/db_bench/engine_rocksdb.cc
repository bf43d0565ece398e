// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The RocksDB adapter of db_bench (comparison build only: compiled when
// SIFTDB_BENCH_COMPARE=ON finds Debian's librocksdb-dev, RocksDB 7.8).
// Configured like siftdb: block-based tables with a 10 bits/key full Bloom
// filter (NewBloomFilterPolicy), snappy, the same block cache, write buffer,
// table file size, block size and level-1 size (10 MiB, LevelDB's shape:
// RocksDB's own defaults are 64 MiB buffers and a 256 MiB level 1).
// RocksDB's concurrency and level-0 triggers stay at its defaults.
//
// Caveat printed beside every comparison: Debian builds librocksdb with
// assertions enabled and without the SSE4.2 CRC32C instruction, which costs
// RocksDB about 30% on writes.

#include <dlfcn.h>

#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_format.h"
#include "bench/db_bench/engine.h"
#include "rocksdb/cache.h"
#include "rocksdb/db.h"
#include "rocksdb/filter_policy.h"
#include "rocksdb/iterator.h"
#include "rocksdb/options.h"
#include "rocksdb/rate_limiter.h"
#include "rocksdb/slice_transform.h"
#include "rocksdb/table.h"
#include "rocksdb/version.h"

// Not in RocksDB's public headers but exported by librocksdb: says whether
// the library computes CRC32C with the hardware instruction ("Supported on
// x86" / "Not supported on x86"). Printed so the caveat above is checkable.
namespace rocksdb::crc32c {
std::string IsFastCrc32Supported();
}  // namespace rocksdb::crc32c

namespace siftdb::bench {
namespace {

// A name flags.cc accepted (IsCompressionName) as RocksDB's type.
rocksdb::CompressionType RocksDBCompression(const std::string& name) {
  if (name == "none") return rocksdb::kNoCompression;
  if (name == "lz4") return rocksdb::kLZ4Compression;
  if (name == "zstd") return rocksdb::kZSTD;
  return rocksdb::kSnappyCompression;
}

absl::Status FromRocksDB(const rocksdb::Status& s) {
  if (s.ok()) return absl::OkStatus();
  if (s.IsNotFound()) return absl::NotFoundError(s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(s.ToString());
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(s.ToString());
  return absl::InternalError(absl::StrFormat("rocksdb: %s", s.ToString()));
}

rocksdb::Slice ToSlice(std::string_view s) {
  return rocksdb::Slice(s.data(), s.size());
}

class RocksDBCursor final : public BenchCursor {
 public:
  explicit RocksDBCursor(rocksdb::Iterator* it) : it_(it) {}
  bool Valid() const override { return it_->Valid(); }
  void SeekToFirst() override { it_->SeekToFirst(); }
  void SeekToLast() override { it_->SeekToLast(); }
  void Seek(std::string_view target) override { it_->Seek(ToSlice(target)); }
  void Next() override { it_->Next(); }
  void Prev() override { it_->Prev(); }
  std::string_view key() const override {
    rocksdb::Slice k = it_->key();
    return std::string_view(k.data(), k.size());
  }
  std::string_view value() const override {
    rocksdb::Slice v = it_->value();
    return std::string_view(v.data(), v.size());
  }
  absl::Status status() const override { return FromRocksDB(it_->status()); }

 private:
  std::unique_ptr<rocksdb::Iterator> it_;
};

class RocksDBEngine final : public BenchEngine {
 public:
  ~RocksDBEngine() override { Close(); }

  std::string_view Name() const override { return "rocksdb"; }

  std::string Description() const override {
    // Which library this is matters: Debian's librocksdb (under /usr) has
    // assertions on; a release build from source does not.
    Dl_info info{};
    const char* library =
        dladdr(reinterpret_cast<void*>(&rocksdb::DB::ListColumnFamilies),
               &info) != 0 &&
                info.dli_fname != nullptr
            ? info.dli_fname
            : "unknown library";
    return absl::StrFormat("RocksDB %d.%d.%d (%s%s; CRC32C: %s)", ROCKSDB_MAJOR,
                           ROCKSDB_MINOR, ROCKSDB_PATCH, library,
                           std::string_view(library).starts_with("/usr/")
                               ? ", Debian's: assertions on"
                               : "",
                           rocksdb::crc32c::IsFastCrc32Supported());
  }

  absl::Status Open(const EngineConfig& config,
                    const std::string& path) override {
    if (!config.bloom_bits_per_level.empty() ||
        config.optimize_filters_for_memory_budget) {
      // RocksDB sizes filters by level only through a custom FilterPolicy
      // (FilterBuildingContext::level_at_creation); no option does it.
      return absl::InvalidArgumentError(
          "rocksdb: --filter_bits_per_key_per_level and "
          "--optimize_filters_for_memory_budget are not supported (RocksDB "
          "has no per-level filter size option)");
    }
    rocksdb::BlockBasedTableOptions table;
    table.block_cache = rocksdb::NewLRUCache(config.block_cache_size);
    table.block_size = config.block_size;
    table.cache_index_and_filter_blocks = config.cache_filter_blocks;
    table.pin_l0_filter_and_index_blocks_in_cache = config.pin_l0_filter_blocks;
    if (config.partition_filters) {
      table.partition_filters = true;
      table.index_type =
          rocksdb::BlockBasedTableOptions::IndexType::kTwoLevelIndexSearch;
      table.metadata_block_size = config.filter_partition_size;
    }
    if (config.bloom_bits > 0) {
      table.filter_policy.reset(
          config.use_ribbon_filter
              ? rocksdb::NewRibbonFilterPolicy(config.bloom_bits)
              : rocksdb::NewBloomFilterPolicy(config.bloom_bits, false));
    }
    options_ = rocksdb::Options();
    options_.create_if_missing = config.create_if_missing;
    options_.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
    options_.write_buffer_size = config.write_buffer_size;
    options_.target_file_size_base = config.max_file_size;
    options_.target_file_size_multiplier = config.target_file_size_multiplier;
    if (config.subcompactions > 0) {
      options_.max_subcompactions =
          static_cast<uint32_t>(config.subcompactions);
    }
    options_.disable_auto_compactions = config.disable_auto_compactions;
    disable_wal_ = config.disable_wal;
    options_.optimize_filters_for_hits = config.optimize_filters_for_hits;
    if (config.rate_limiter_bytes_per_sec > 0) {
      options_.rate_limiter.reset(
          rocksdb::NewGenericRateLimiter(config.rate_limiter_bytes_per_sec));
    }
    if (config.prefix_size > 0) {
      options_.prefix_extractor.reset(
          rocksdb::NewFixedPrefixTransform(config.prefix_size));
      cursor_options_.prefix_same_as_start = true;
    }
    cursor_options_.total_order_seek = config.total_order_seek;
    options_.max_bytes_for_level_base = uint64_t{10} << 20;
    options_.level_compaction_dynamic_level_bytes =
        config.level_compaction_dynamic_level_bytes;
    // RocksDB's own defaults unless the flags change them.
    options_.soft_pending_compaction_bytes_limit =
        config.soft_pending_compaction_bytes_limit;
    options_.hard_pending_compaction_bytes_limit =
        config.hard_pending_compaction_bytes_limit;
    options_.delayed_write_rate = config.delayed_write_rate;
    options_.max_open_files = config.max_open_files;
    options_.advise_random_on_open = config.advise_random_on_open;
    options_.compression = RocksDBCompression(config.compression);
    if (!config.bottommost_compression.empty()) {
      options_.bottommost_compression =
          RocksDBCompression(config.bottommost_compression);
    }
    // RocksDB's own sentinel for "the library's default" is the same 32767.
    options_.compression_opts.level = config.compression_level;
    options_.compression_opts.max_dict_bytes =
        static_cast<uint32_t>(config.compression_max_dict_bytes);
    options_.compression_opts.zstd_max_train_bytes =
        static_cast<uint32_t>(config.compression_zstd_max_train_bytes);
    // RocksDB applies bottommost_compression_opts, not compression_opts,
    // to its bottommost level once that is enabled; mirror the dictionary
    // there too so both engines compress their bottom alike.
    if (config.compression_max_dict_bytes > 0) {
      options_.bottommost_compression_opts = options_.compression_opts;
      options_.bottommost_compression_opts.enabled = true;
    }
    rocksdb::DB* db = nullptr;
    rocksdb::Status s = rocksdb::DB::Open(options_, path, &db);
    if (!s.ok()) return FromRocksDB(s);
    db_.reset(db);
    return absl::OkStatus();
  }

  void Close() override { db_.reset(); }

  absl::Status Destroy(const std::string& path) override {
    return FromRocksDB(rocksdb::DestroyDB(path, options_));
  }

  absl::Status Put(bool sync, std::string_view key,
                   std::string_view value) override {
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    wo.disableWAL = disable_wal_;
    return FromRocksDB(db_->Put(wo, ToSlice(key), ToSlice(value)));
  }

  absl::Status Delete(bool sync, std::string_view key) override {
    rocksdb::WriteOptions wo;
    wo.sync = sync;
    wo.disableWAL = disable_wal_;
    return FromRocksDB(db_->Delete(wo, ToSlice(key)));
  }

  absl::StatusOr<bool> Get(std::string_view key, std::string* value) override {
    rocksdb::Status s = db_->Get(rocksdb::ReadOptions(), ToSlice(key), value);
    if (s.ok()) return true;
    if (s.IsNotFound()) return false;
    return FromRocksDB(s);
  }

  // RocksDB's batched MultiGet (one sorted pass per level, batched filter
  // and block lookups), the API its own db_bench's multireadrandom uses.
  absl::Status MultiGet(std::span<const std::string_view> keys,
                        std::vector<std::string>* values,
                        std::vector<bool>* found) override {
    std::vector<rocksdb::Slice> slices;
    slices.reserve(keys.size());
    for (std::string_view k : keys) slices.push_back(ToSlice(k));
    std::vector<rocksdb::PinnableSlice> pinned(keys.size());
    std::vector<rocksdb::Status> statuses(keys.size());
    db_->MultiGet(rocksdb::ReadOptions(), db_->DefaultColumnFamily(),
                  keys.size(), slices.data(), pinned.data(), statuses.data());
    values->resize(keys.size());
    found->assign(keys.size(), false);
    for (size_t i = 0; i < keys.size(); i++) {
      if (statuses[i].ok()) {
        (*values)[i].assign(pinned[i].data(), pinned[i].size());
        (*found)[i] = true;
      } else if (!statuses[i].IsNotFound()) {
        return FromRocksDB(statuses[i]);
      }
    }
    return absl::OkStatus();
  }

  std::unique_ptr<BenchCursor> NewCursor() override {
    return std::make_unique<RocksDBCursor>(db_->NewIterator(cursor_options_));
  }

  absl::Status CompactAll() override {
    return FromRocksDB(
        db_->CompactRange(rocksdb::CompactRangeOptions(), nullptr, nullptr));
  }

  std::optional<std::string> StatsText() override {
    return Property("rocksdb.stats");
  }
  std::optional<std::string> SSTablesText() override {
    return Property("rocksdb.levelstats");
  }
  // Filter counters would need options.statistics, which slows every
  // operation; the comparison leaves them off.
  std::optional<uint64_t> Counter(std::string_view) override {
    return std::nullopt;
  }

 private:
  std::optional<std::string> Property(const char* name) {
    std::string value;
    if (db_ == nullptr || !db_->GetProperty(name, &value)) return std::nullopt;
    return value;
  }

  rocksdb::Options options_;
  bool disable_wal_ = false;
  rocksdb::ReadOptions cursor_options_;  // every cursor's
  std::unique_ptr<rocksdb::DB> db_;
};

}  // namespace

std::unique_ptr<BenchEngine> NewRocksDBEngine() {
  return std::make_unique<RocksDBEngine>();
}

}  // namespace siftdb::bench
