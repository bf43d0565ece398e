// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// docs/errors.md, "Options": every field of Options that can be set to a
// value siftdb refuses. Each case opens an existing database with the bad
// value (InvalidArgument naming the field and the allowed range), then
// reopens it with the value fixed and finds every acknowledged entry.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/errors/errors_util.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace options_errors_test {

constexpr int kEntries = 50;

// Opens a database of kEntries entries with each mutation of the options
// in turn: each must fail with InvalidArgument naming all of `parts`;
// afterwards the database opens with good options and holds its data.
void ExpectRejected(std::initializer_list<std::function<void(Options*)>> bad,
                    std::initializer_list<std::string_view> parts) {
  TempDir dir;
  const std::string path = dir.Join("db");
  ASSERT_NO_FATAL_FAILURE(MakeDb(path, kEntries, /*flush=*/false));
  auto files = [&] {
    std::vector<std::string> names;
    for (const auto& e : std::filesystem::directory_iterator(path)) {
      names.push_back(e.path().filename().string() + " " +
                      std::to_string(e.file_size()));
    }
    std::sort(names.begin(), names.end());
    return names;
  };
  const std::vector<std::string> before = files();
  for (const auto& mutate : bad) {
    Options o = CatalogueOptions(false);
    mutate(&o);
    auto db = DB::Open(o, path);
    EXPECT_TRUE(
        HasError(db.status(), absl::StatusCode::kInvalidArgument, parts));
    // Refused before the directory was touched (no recovery ran: the log
    // holding the entries is still there, unconverted).
    EXPECT_EQ(before, files());
  }
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path, kEntries));
}

// Opens a database with an accepted-but-surprising value and checks that
// it works: writes, reads, reopens.
void ExpectAccepted(const std::function<void(Options*)>& mutate) {
  TempDir dir;
  const std::string path = dir.Join("db");
  ASSERT_NO_FATAL_FAILURE(MakeDb(path, kEntries, /*flush=*/true));
  Options o = CatalogueOptions(false);
  mutate(&o);
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path, kEntries, o));
}

TEST(ErrorsOptions, WriteBufferSizeOutOfRange) {
  ExpectRejected({[](Options* o) { o->write_buffer_size = 1000; },
                  [](Options* o) { o->write_buffer_size = size_t{5} << 30; }},
                 {"invalid option: write_buffer_size", "[4 KiB, 4 GiB]"});
}

TEST(ErrorsOptions, MaxOpenFilesTooSmall) {
  ExpectRejected({[](Options* o) { o->max_open_files = 15; },
                  [](Options* o) { o->max_open_files = -1; }},
                 {"invalid option: max_open_files", ">= 16"});
}

TEST(ErrorsOptions, BlockSizeOutOfRange) {
  ExpectRejected({[](Options* o) { o->block_size = 255; },
                  [](Options* o) { o->block_size = (size_t{64} << 20) + 1; }},
                 {"invalid option: block_size", "[256, 64 MiB]"});
}

TEST(ErrorsOptions, BlockRestartIntervalTooSmall) {
  ExpectRejected({[](Options* o) { o->block_restart_interval = 0; },
                  [](Options* o) { o->block_restart_interval = -3; }},
                 {"invalid option: block_restart_interval", ">= 1"});
}

TEST(ErrorsOptions, CompressionUnknown) {
  ExpectRejected(
      {[](Options* o) { o->compression = static_cast<CompressionType>(9); }},
      {"invalid option: compression = 9", "unknown type"});
  ExpectRejected(
      {[](Options* o) {
        o->compression_per_level = {kNoCompression, kZstdCompression,
                                    static_cast<CompressionType>(2)};
      }},
      {"invalid option: compression_per_level[2] = 2", "unknown type"});
  ExpectRejected({[](Options* o) {
                   o->compression_per_level = {kDisableCompressionOption};
                 }},
                 {"invalid option: compression_per_level[0] = 255"});
  ExpectRejected(
      {[](Options* o) {
        o->bottommost_compression = static_cast<CompressionType>(3);
      }},
      {"invalid option: bottommost_compression = 3", "unknown type"});
  ExpectRejected(
      {[](Options* o) { o->compression = kDisableCompressionOption; }},
      {"invalid option: compression = 255"});
}

TEST(ErrorsOptions, CompressionDictOutOfRange) {
  ExpectRejected(
      {[](Options* o) { o->compression_opts.max_dict_bytes = 255; },
       [](Options* o) {
         o->compression_opts.max_dict_bytes = (size_t{16} << 20) + 1;
       }},
      {"invalid option: compression_opts.max_dict_bytes", "or 256 to"});
  ExpectRejected({[](Options* o) {
                   o->compression_opts.max_dict_bytes = 4096;
                   o->compression_opts.zstd_max_train_bytes =
                       (size_t{1} << 30) + 1;
                 }},
                 {"invalid option: compression_opts.zstd_max_train_bytes",
                  "at most 1 GiB"});
  // bottommost_compression_opts: checked the same way once enabled.
  ExpectRejected({[](Options* o) {
                   o->bottommost_compression_opts.enabled = true;
                   o->bottommost_compression_opts.max_dict_bytes = 255;
                 }},
                 {"invalid option: bottommost_compression_opts.max_dict_bytes",
                  "or 256 to"});
}

TEST(ErrorsOptions, FilterBitsPerKeyOutOfRange) {
  ExpectRejected({[](Options* o) { o->filter_bits_per_key = -1; },
                  [](Options* o) { o->filter_bits_per_key = 101; },
                  [](Options* o) {
                    o->filter_bits_per_key =
                        std::numeric_limits<double>::quiet_NaN();
                  }},
                 {"invalid option: filter_bits_per_key", "[0, 100]"});
}

TEST(ErrorsOptions, FilterBitsPerKeyPerLevelOutOfRange) {
  ExpectRejected(
      {[](Options* o) {
         o->filter_bits_per_key_per_level = {10, -1};
       },
       [](Options* o) { o->filter_bits_per_key_per_level = {101}; },
       [](Options* o) {
         o->filter_bits_per_key_per_level = {
             std::numeric_limits<double>::quiet_NaN()};
       }},
      {"invalid option: filter_bits_per_key_per_level[", "[0, 100]"});
}

TEST(ErrorsOptions, FilterPerLevelAndBudgetTogether) {
  ExpectRejected({[](Options* o) {
                   o->filter_bits_per_key_per_level = {10, 5};
                   o->optimize_filters_for_memory_budget = true;
                 }},
                 {"invalid option: filter_bits_per_key_per_level set with "
                  "optimize_filters_for_memory_budget = true (choose one)"});
}

// Refused in every build (checked before the mirror's own options).
TEST(ErrorsOptions, FilterLevelWithoutFilterWithRemoteFilter) {
  ExpectRejected({[](Options* o) {
                    o->filter_bits_per_key_per_level = {10, 0};
                    o->remote_filter.mode = RemoteFilterOptions::Mode::kAsync;
                  },
                  [](Options* o) {
                    o->optimize_filters_for_memory_budget = true;
                    o->filter_bits_per_key = 1;
                    o->remote_filter.mode = RemoteFilterOptions::Mode::kSync;
                  }},
                 {"invalid option: ", "with Options.remote_filter on",
                  "the Redis mirror needs"});
}

TEST(ErrorsOptions, MemTableFilterRatioOutOfRange) {
  ExpectRejected({[](Options* o) { o->memtable_filter_ratio = -0.1; },
                  [](Options* o) { o->memtable_filter_ratio = 0.3; },
                  [](Options* o) {
                    o->memtable_filter_ratio =
                        std::numeric_limits<double>::quiet_NaN();
                  }},
                 {"invalid option: memtable_filter_ratio", "[0, 0.25]"});
}

TEST(ErrorsOptions, MaxSubcompactionsOutOfRange) {
  ExpectRejected({[](Options* o) { o->max_subcompactions = 0; },
                  [](Options* o) { o->max_subcompactions = -1; },
                  [](Options* o) { o->max_subcompactions = 65; }},
                 {"invalid option: max_subcompactions", "[1, 64]"});
}

TEST(ErrorsOptions, MaxFileSizeTooSmall) {
  ExpectRejected({[](Options* o) { o->max_file_size = 4095; }},
                 {"invalid option: max_file_size", ">= 4 KiB"});
}

TEST(ErrorsOptions, TargetFileSizeOutOfRange) {
  ExpectRejected({[](Options* o) { o->target_file_size_base = 4095; },
                  [](Options* o) { o->target_file_size_base = 0; }},
                 {"invalid option: target_file_size_base", ">= 4 KiB"});
  ExpectRejected({[](Options* o) { o->target_file_size_multiplier = 0; },
                  [](Options* o) { o->target_file_size_multiplier = 101; }},
                 {"invalid option: target_file_size_multiplier", "[1, 100]"});
  ExpectRejected({[](Options* o) {
                   o->target_file_size_base = uint64_t{1} << 31;
                   o->target_file_size_multiplier = 10;
                 }},
                 {"invalid option: target_file_size_base", "pass 1 TiB"});
}

// max_file_size is the old name of target_file_size_base: both set to
// different values is refused rather than one silently winning.
TEST(ErrorsOptions, MaxFileSizeDisagreesWithTargetFileSizeBase) {
  ExpectRejected({[](Options* o) {
                   o->max_file_size = 64 << 10;
                   o->target_file_size_base = 128 << 10;
                 }},
                 {"invalid option: max_file_size = 65536 and "
                  "target_file_size_base = 131072 disagree"});
}

TEST(ErrorsOptions, Level0TriggersOutOfOrder) {
  ExpectRejected({[](Options* o) { o->level0_file_num_compaction_trigger = 0; },
                  [](Options* o) { o->level0_slowdown_writes_trigger = 2; },
                  [](Options* o) { o->level0_stop_writes_trigger = 5; }},
                 {"invalid option: level0 triggers",
                  "1 <= compaction <= slowdown <= stop"});
}

TEST(ErrorsOptions, MaxBytesForLevelBaseTooSmall) {
  ExpectRejected({[](Options* o) { o->max_bytes_for_level_base = 4095; }},
                 {"invalid option: max_bytes_for_level_base", ">= 4 KiB"});
}

TEST(ErrorsOptions, MaxBytesForLevelMultiplierOutOfRange) {
  ExpectRejected(
      {[](Options* o) { o->max_bytes_for_level_multiplier = 1; },
       [](Options* o) { o->max_bytes_for_level_multiplier = 1000.5; },
       [](Options* o) {
         o->max_bytes_for_level_multiplier =
             std::numeric_limits<double>::quiet_NaN();
       }},
      {"invalid option: max_bytes_for_level_multiplier", "(1, 1000]"});
}

// Refused in every build (checked before the mirror's own options), and
// before a Redis server is contacted (the endpoint has none).
TEST(ErrorsOptions, OptimizeFiltersForHitsWithRemoteFilter) {
  ExpectRejected({[](Options* o) {
                    o->optimize_filters_for_hits = true;
                    o->remote_filter.mode = RemoteFilterOptions::Mode::kAsync;
                    o->remote_filter.endpoints = {"127.0.0.1:1"};
                    o->remote_filter.name = "catalogue";
                  },
                  [](Options* o) {
                    o->optimize_filters_for_hits = true;
                    o->remote_filter.mode = RemoteFilterOptions::Mode::kSync;
                  }},
                 {"invalid option: optimize_filters_for_hits = true",
                  "Options.remote_filter"});
}

#if SIFTDB_WITH_REDIS
TEST(ErrorsOptions, RemoteFilterInvalid) {
  auto mirror = [](Options* o) {
    o->remote_filter.mode = RemoteFilterOptions::Mode::kAsync;
    o->remote_filter.endpoints = {"127.0.0.1:1"};
    o->remote_filter.name = "catalogue";
  };
  ExpectRejected({[&](Options* o) {
                   mirror(o);
                   o->remote_filter.endpoints.clear();
                 }},
                 {"invalid option: Options.remote_filter.endpoints"});
  ExpectRejected({[&](Options* o) {
                   mirror(o);
                   o->remote_filter.endpoints = {"localhost:99999"};
                 }},
                 {"invalid option: Options.remote_filter.endpoints",
                  "localhost:99999", "bad port"});
  ExpectRejected(
      {[&](Options* o) {
         mirror(o);
         o->remote_filter.name = "bad{name}";
       },
       [&](Options* o) {
         mirror(o);
         o->remote_filter.name = "";
       }},
      {"invalid option: Options.remote_filter.name", "[A-Za-z0-9_.-]"});
  ExpectRejected({[&](Options* o) {
                   mirror(o);
                   o->remote_filter.lease_ttl_ms = 99;
                 }},
                 {"Options.remote_filter.lease_ttl_ms", ">= 100"});
  ExpectRejected({[&](Options* o) {
                   mirror(o);
                   o->remote_filter.command_timeout_ms = 0;
                 }},
                 {"Options.remote_filter.connect_timeout_ms", "> 0"});
  ExpectRejected({[&](Options* o) {
                   mirror(o);
                   o->remote_filter.delete_grace_ms = -1;
                 }},
                 {"Options.remote_filter.", "may be negative"});
}
#else
// Built without Redis: any mirror mode is refused up front, naming the
// option and the build setting, and the DB is left as it was.
TEST(ErrorsOptions, RemoteFilterInvalid) {
  for (auto mode :
       {RemoteFilterOptions::Mode::kAsync, RemoteFilterOptions::Mode::kSync}) {
    TempDir dir;
    const std::string path = dir.Join("db");
    ASSERT_NO_FATAL_FAILURE(MakeDb(path, kEntries, /*flush=*/false));
    Options o = CatalogueOptions(false);
    o.remote_filter.mode = mode;
    o.remote_filter.endpoints = {"127.0.0.1:1"};
    o.remote_filter.name = "catalogue";
    auto db = DB::Open(o, path);
    EXPECT_TRUE(HasError(db.status(), absl::StatusCode::kFailedPrecondition,
                         {"Options.remote_filter", "SIFTDB_WITH_REDIS=OFF"}));
    auto reopened = DB::Open(CatalogueOptions(false), path);
    ASSERT_TRUE(reopened.ok()) << reopened.status();
  }
}
#endif

// Accepted values whose effect is worth knowing.
TEST(ErrorsOptions, ZeroBlockCacheAndZeroFilterBitsAreAccepted) {
  ExpectAccepted([](Options* o) {
    o->block_cache_size = 0;     // no block cache
    o->filter_bits_per_key = 0;  // no filters in new tables
  });
}

}  // namespace options_errors_test
}  // namespace siftdb::test
