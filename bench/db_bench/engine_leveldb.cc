// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The LevelDB adapter of db_bench (comparison build only: compiled when
// SIFTDB_BENCH_COMPARE=ON finds LevelDB 1.23: a release build from source
// (LEVELDB_INCLUDE_DIR / LEVELDB_LIBRARY) or Debian's libleveldb-dev).
// Configured like siftdb: 10 bits/key Bloom filter (NewBloomFilterPolicy),
// snappy, the same block cache, write buffer, file size and block size.

#include <dlfcn.h>

#include <memory>
#include <string>
#include <string_view>
#include <utility>

#include "absl/strings/str_format.h"
#include "bench/db_bench/engine.h"
#include "leveldb/cache.h"
#include "leveldb/db.h"
#include "leveldb/filter_policy.h"
#include "leveldb/iterator.h"
#include "leveldb/options.h"
#include "leveldb/write_batch.h"

namespace siftdb::bench {
namespace {

absl::Status FromLevelDB(const leveldb::Status& s) {
  if (s.ok()) return absl::OkStatus();
  if (s.IsNotFound()) return absl::NotFoundError(s.ToString());
  if (s.IsCorruption()) return absl::DataLossError(s.ToString());
  if (s.IsInvalidArgument()) return absl::InvalidArgumentError(s.ToString());
  return absl::InternalError(absl::StrFormat("leveldb: %s", s.ToString()));
}

leveldb::Slice ToSlice(std::string_view s) {
  return leveldb::Slice(s.data(), s.size());
}

class LevelDBCursor final : public BenchCursor {
 public:
  explicit LevelDBCursor(leveldb::Iterator* it) : it_(it) {}
  bool Valid() const override { return it_->Valid(); }
  void SeekToFirst() override { it_->SeekToFirst(); }
  void SeekToLast() override { it_->SeekToLast(); }
  void Seek(std::string_view target) override { it_->Seek(ToSlice(target)); }
  void Next() override { it_->Next(); }
  void Prev() override { it_->Prev(); }
  std::string_view key() const override {
    leveldb::Slice k = it_->key();
    return std::string_view(k.data(), k.size());
  }
  std::string_view value() const override {
    leveldb::Slice v = it_->value();
    return std::string_view(v.data(), v.size());
  }
  absl::Status status() const override { return FromLevelDB(it_->status()); }

 private:
  std::unique_ptr<leveldb::Iterator> it_;
};

class LevelDBEngine final : public BenchEngine {
 public:
  ~LevelDBEngine() override { Close(); }

  std::string_view Name() const override { return "leveldb"; }

  std::string Description() const override {
    // Name the library loaded (Debian's under /usr, or a release build
    // from source): the figures depend on which.
    Dl_info info{};
    const char* library =
        dladdr(reinterpret_cast<void*>(&leveldb::DestroyDB), &info) != 0 &&
                info.dli_fname != nullptr
            ? info.dli_fname
            : "unknown library";
    return absl::StrFormat(
        "LevelDB %d.%d (%s%s)", leveldb::kMajorVersion, leveldb::kMinorVersion,
        library,
        std::string_view(library).starts_with("/usr/") ? ", Debian's" : "");
  }

  absl::Status Open(const EngineConfig& config,
                    const std::string& path) override {
    cache_.reset(leveldb::NewLRUCache(config.block_cache_size));
    filter_.reset(config.bloom_bits > 0
                      ? leveldb::NewBloomFilterPolicy(
                            static_cast<int>(config.bloom_bits + 0.5))
                      : nullptr);
    options_ = leveldb::Options();
    options_.create_if_missing = config.create_if_missing;
    options_.block_cache = cache_.get();
    options_.filter_policy = filter_.get();
    options_.write_buffer_size = config.write_buffer_size;
    options_.max_file_size = config.max_file_size;
    options_.block_size = config.block_size;
    options_.max_open_files = config.max_open_files;
    // LevelDB compresses with Snappy or not at all, at no level.
    if (config.compression != "snappy" && config.compression != "none") {
      return absl::InvalidArgumentError(absl::StrFormat(
          "leveldb: --compression=%s is not supported (LevelDB has snappy "
          "and none only)",
          config.compression));
    }
    if (config.target_file_size_multiplier != 1) {
      return absl::InvalidArgumentError(
          "leveldb: --target_file_size_multiplier is not supported (LevelDB "
          "writes tables of --max_file_size at every level)");
    }
    if (config.disable_wal) {
      return absl::InvalidArgumentError(
          "leveldb: --disable_wal is not supported (LevelDB always writes "
          "its log)");
    }
    if (config.rate_limiter_bytes_per_sec > 0) {
      return absl::InvalidArgumentError(
          "leveldb: --rate_limiter_bytes_per_sec is not supported (LevelDB "
          "has no rate limiter for its background writes)");
    }
    if (!config.bloom_bits_per_level.empty() ||
        config.optimize_filters_for_memory_budget) {
      return absl::InvalidArgumentError(
          "leveldb: --filter_bits_per_key_per_level and "
          "--optimize_filters_for_memory_budget are not supported (LevelDB "
          "gives every table the same filter)");
    }
    if (config.cache_filter_blocks) {
      return absl::InvalidArgumentError(
          "leveldb: --cache_index_and_filter_blocks is not supported "
          "(LevelDB keeps every open table's filter on the heap)");
    }
    if (config.partition_filters) {
      return absl::InvalidArgumentError(
          "leveldb: --partition_filters is not supported (LevelDB has one "
          "filter block per table)");
    }
    if (config.optimize_filters_for_hits) {
      return absl::InvalidArgumentError(
          "leveldb: --optimize_filters_for_hits is not supported (LevelDB "
          "builds a filter for every table)");
    }
    if (!config.bottommost_compression.empty()) {
      return absl::InvalidArgumentError(
          "leveldb: --bottommost_compression is not supported (LevelDB has "
          "one compression for every level)");
    }
    if (config.compression_max_dict_bytes != 0) {
      return absl::InvalidArgumentError(
          "leveldb: --compression_max_dict_bytes is not supported (LevelDB "
          "has no compression dictionaries)");
    }
    if (config.compression_level != EngineConfig::kDefaultCompressionLevel) {
      return absl::InvalidArgumentError(
          "leveldb: --compression_level is not supported (Snappy has no "
          "levels)");
    }
    options_.compression = config.compression == "snappy"
                               ? leveldb::kSnappyCompression
                               : leveldb::kNoCompression;
    leveldb::DB* db = nullptr;
    leveldb::Status s = leveldb::DB::Open(options_, path, &db);
    if (!s.ok()) return FromLevelDB(s);
    db_.reset(db);
    return absl::OkStatus();
  }

  // The DB goes before the cache and filter policy it uses.
  void Close() override { db_.reset(); }

  absl::Status Destroy(const std::string& path) override {
    return FromLevelDB(leveldb::DestroyDB(path, options_));
  }

  absl::Status Put(bool sync, std::string_view key,
                   std::string_view value) override {
    leveldb::WriteOptions wo;
    wo.sync = sync;
    return FromLevelDB(db_->Put(wo, ToSlice(key), ToSlice(value)));
  }

  absl::Status Delete(bool sync, std::string_view key) override {
    leveldb::WriteOptions wo;
    wo.sync = sync;
    return FromLevelDB(db_->Delete(wo, ToSlice(key)));
  }

  absl::StatusOr<bool> Get(std::string_view key, std::string* value) override {
    leveldb::Status s = db_->Get(leveldb::ReadOptions(), ToSlice(key), value);
    if (s.ok()) return true;
    if (s.IsNotFound()) return false;
    return FromLevelDB(s);
  }

  std::unique_ptr<BenchCursor> NewCursor() override {
    return std::make_unique<LevelDBCursor>(
        db_->NewIterator(leveldb::ReadOptions()));
  }

  absl::Status CompactAll() override {
    db_->CompactRange(nullptr, nullptr);
    return absl::OkStatus();
  }

  std::optional<std::string> StatsText() override {
    return Property("leveldb.stats");
  }
  std::optional<std::string> SSTablesText() override {
    return Property("leveldb.sstables");
  }
  // LevelDB keeps no filter counters.
  std::optional<uint64_t> Counter(std::string_view) override {
    return std::nullopt;
  }

 private:
  std::optional<std::string> Property(const char* name) {
    std::string value;
    if (db_ == nullptr || !db_->GetProperty(name, &value)) return std::nullopt;
    return value;
  }

  leveldb::Options options_;
  std::unique_ptr<leveldb::Cache> cache_;
  std::unique_ptr<const leveldb::FilterPolicy> filter_;
  std::unique_ptr<leveldb::DB> db_;  // declared last: destroyed first
};

}  // namespace

std::unique_ptr<BenchEngine> NewLevelDBEngine() {
  return std::make_unique<LevelDBEngine>();
}

}  // namespace siftdb::bench
