// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The siftdb adapter of db_bench, and the engine registry.

#include <charconv>
#include <memory>
#include <string>
#include <utility>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "bench/db_bench/engine.h"
#include "siftdb/db.h"

#ifndef SIFTDB_VERSION
#define SIFTDB_VERSION "unknown"
#endif

namespace siftdb::bench {
namespace {

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

class SiftdbEngine final : public BenchEngine {
 public:
  std::string_view Name() const override { return "siftdb"; }

  std::string Description() const override {
    return absl::StrFormat("version %s", SIFTDB_VERSION);
  }

  absl::Status Open(const EngineConfig& config,
                    const std::string& path) override {
    options_ = Options();
    options_.create_if_missing = config.create_if_missing;
    options_.block_cache_size = config.block_cache_size;
    options_.write_buffer_size = config.write_buffer_size;
    options_.max_file_size = config.max_file_size;
    options_.max_subcompactions = config.subcompactions;
    options_.free_compaction_inputs_early = config.free_compaction_inputs_early;
    options_.paranoid_file_checks = config.paranoid_file_checks;
    options_.block_size = config.block_size;
    options_.max_open_files = config.max_open_files;
    options_.compression = config.snappy ? kSnappyCompression : kNoCompression;
    options_.filter_bits_per_key = config.bloom_bits;
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
    WriteOptions wo;
    wo.sync = sync;
    return db_->Put(wo, key, value);
  }

  absl::Status Delete(bool sync, std::string_view key) override {
    WriteOptions wo;
    wo.sync = sync;
    return db_->Delete(wo, key);
  }

  absl::StatusOr<bool> Get(std::string_view key, std::string* value) override {
    absl::Status s = db_->Get(ReadOptions(), key, value);
    if (s.ok()) return true;
    if (absl::IsNotFound(s)) return false;
    return s;
  }

  std::unique_ptr<BenchCursor> NewCursor() override {
    return std::make_unique<SiftdbCursor>(db_->NewIterator(ReadOptions()));
  }

  absl::Status CompactAll() override {
    return db_->CompactRange(nullptr, nullptr);
  }

  std::optional<std::string> StatsText() override {
    return Property("siftdb.stats");
  }
  std::optional<std::string> SSTablesText() override {
    return Property("siftdb.sstables");
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

  Options options_;
  std::unique_ptr<DB> db_;
};

}  // namespace

std::unique_ptr<BenchEngine> NewSiftdbEngine() {
  return std::make_unique<SiftdbEngine>();
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
