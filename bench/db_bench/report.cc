// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "bench/db_bench/report.h"

#include <ctime>
#include <fstream>
#include <map>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_format.h"
#include "absl/strings/string_view.h"
#include "siftdb/options.h"

namespace siftdb::bench {
namespace {

constexpr char kSeparator[] =
    "------------------------------------------------\n";

// "2 * <model name>" and the cache size, from /proc/cpuinfo (Linux).
void CpuInfo(std::string* cpu, std::string* cache) {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  int count = 0;
  std::string model;
  while (std::getline(in, line)) {
    const size_t colon = line.find(':');
    if (colon == std::string::npos) continue;
    absl::string_view key =
        absl::StripAsciiWhitespace(absl::string_view(line).substr(0, colon));
    absl::string_view value =
        absl::StripAsciiWhitespace(absl::string_view(line).substr(colon + 1));
    if (key == "model name") {
      count++;
      model = std::string(value);
    } else if (key == "cache size") {
      *cache = std::string(value);
    }
  }
  *cpu = count > 0 ? absl::StrFormat("%d * %s", count, model) : "unknown";
  if (cache->empty()) *cache = "unknown";
}

std::string LoadText() {
  const double load = LoadAverage();
  return load < 0 ? "unknown" : absl::StrFormat("%.2f", load);
}

std::string MiB(double bytes) {
  return absl::StrFormat("%.1f MiB", bytes / 1048576.0);
}

}  // namespace

double LoadAverage() {
  std::ifstream in("/proc/loadavg");
  double load = -1;
  if (!(in >> load)) return -1;
  return load;
}

std::string FormatHeader(const BenchConfig& config,
                         const std::vector<std::string>& engine_descriptions) {
  std::string out;
  for (size_t i = 0; i < engine_descriptions.size(); i++) {
    out += absl::StrFormat("%-12s%s\n", config.engines[i] + ":",
                           engine_descriptions[i]);
  }
  const std::time_t now = std::time(nullptr);
  char date[64];
  std::strftime(date, sizeof(date), "%a %b %e %H:%M:%S %Y",
                std::localtime(&now));
  out += absl::StrFormat("Date:       %s\n", date);
  std::string cpu, cache;
  CpuInfo(&cpu, &cache);
  out += absl::StrFormat("CPU:        %s\n", cpu);
  out += absl::StrFormat("CPUCache:   %s\n", cache);
  out += absl::StrFormat("Load:       %s (1-minute average at start)\n",
                         LoadText());

  const double num = static_cast<double>(config.num);
  const int compressed =
      static_cast<int>(config.value_size * config.compression_ratio + 0.5);
  const int key_bytes = config.key_size + config.key_prefix;
  if (config.key_prefix > 0) {
    out +=
        absl::StrFormat("Keys:       %d bytes each (%d-byte common prefix)\n",
                        key_bytes, config.key_prefix);
  } else {
    out += absl::StrFormat("Keys:       %d bytes each\n", key_bytes);
  }
  out += absl::StrFormat(
      "Values:     %d bytes each (%d bytes after compression)\n",
      config.value_size, compressed);
  out += absl::StrFormat("Entries:    %d\n", config.num);
  out += absl::StrFormat("RawSize:    %.1f MB (estimated)\n",
                         (key_bytes + config.value_size) * num / 1048576.0);
  out += absl::StrFormat(
      "FileSize:   %.1f MB (estimated)\n",
      (key_bytes + config.value_size * config.compression_ratio) * num /
          1048576.0);
  const EngineConfig& e = config.engine;
  if (!e.bloom_bits_per_level.empty()) {
    std::string list;
    for (double b : e.bloom_bits_per_level) {
      absl::StrAppendFormat(&list, "%s%g", list.empty() ? "" : ",", b);
    }
    out += absl::StrFormat(
        "Filter:     %s bits/key by level %s\n", list,
        e.use_ribbon_filter ? "Ribbon (Bloom-equivalent)" : "Bloom");
  } else if (e.bloom_bits > 0) {
    out += absl::StrFormat(
        "Filter:     %g bits/key %s\n", e.bloom_bits,
        e.use_ribbon_filter ? "Ribbon (Bloom-equivalent)" : "Bloom");
    if (e.optimize_filters_for_memory_budget) {
      out.insert(out.size() - 1, ", tree-wide average allocated by level");
    }
  } else {
    out += "Filter:     none\n";
  }
  if (e.optimize_filters_for_hits && out.ends_with("\n") &&
      (e.bloom_bits > 0 || !e.bloom_bits_per_level.empty())) {
    out.insert(out.size() - 1, ", none on the bottommost level");
  }
  if (e.cache_filter_blocks && !out.starts_with("Filter:     none")) {
    out.insert(out.size() - 1,
               e.pin_l0_filter_blocks
                   ? ", kept in the block cache (level 0 pinned)"
                   : ", kept in the block cache");
  }
  if (e.partition_filters && !out.starts_with("Filter:     none") &&
      out.ends_with("\n")) {
    out.insert(out.size() - 1,
               absl::StrFormat(", partitioned (%d-byte partitions)",
                               e.filter_partition_size));
  }
  out += absl::StrFormat("Compression: %s", e.compression);
  if (e.compression_level != EngineConfig::kDefaultCompressionLevel) {
    out += absl::StrFormat(" (level %d)", e.compression_level);
  }
  if (!e.bottommost_compression.empty()) {
    out += absl::StrFormat(", bottommost %s", e.bottommost_compression);
  }
  if (e.compression_max_dict_bytes > 0) {
    out += absl::StrFormat(
        ", zstd dictionaries of %d bytes (%s)", e.compression_max_dict_bytes,
        e.compression_zstd_max_train_bytes > 0
            ? absl::StrFormat("trained on %d bytes",
                              e.compression_zstd_max_train_bytes)
            : std::string("raw samples"));
  }
  out += "\n";
  out += absl::StrFormat(
      "Options:    block cache %s, write buffer %s, max file %s%s, block %d "
      "B, %d open files\n",
      MiB(e.block_cache_size), MiB(e.write_buffer_size), MiB(e.max_file_size),
      e.target_file_size_multiplier == 1
          ? ""
          : absl::StrFormat(" x%d per level", e.target_file_size_multiplier),
      e.block_size, e.max_open_files);
  out += absl::StrFormat(
      "Levels:     level-0 compaction/slowdown/stop at %d/%d/%d tables; "
      "level 1 %s, x%g per level%s\n",
      e.level0_file_num_compaction_trigger, e.level0_slowdown_writes_trigger,
      e.level0_stop_writes_trigger,
      MiB(static_cast<double>(e.max_bytes_for_level_base)),
      e.max_bytes_for_level_multiplier,
      e.level_compaction_dynamic_level_bytes
          ? " (dynamic: set from the last level)"
          : "");
  out += absl::StrFormat("Threads:    %d\n", config.threads);
  if (config.sync) out += "Sync:       every write waits for fdatasync\n";
  if (config.batch_size > 1) {
    out += absl::StrFormat("Batches:    %d entries per write\n",
                           config.batch_size);
  }
  if (config.duration > 0) {
    out += absl::StrFormat(
        "Duration:   %d s per benchmark (counts unbounded)\n", config.duration);
  }
  if (e.prefix_size > 0) {
    out += absl::StrFormat(
        "Prefixes:   %d-byte prefix extractor, %s", e.prefix_size,
        e.total_order_seek ? "total-order seeks (--total_order_seek)"
                           : "seeks stay in their prefix");
    if (config.key_groups > 0) {
      out += absl::StrFormat("; %d groups written, as many absent",
                             config.key_groups);
    }
    out += "\n";
  }
  if (e.disable_auto_compactions) {
    out += "Compaction: automatic compactions off (LevelDB compacts anyway)\n";
  }
  if (!e.free_compaction_inputs_early) {
    out += "Compaction: siftdb holds inputs until each compaction ends\n";
  }
  out += absl::StrFormat(
      "Checks:     every entry of outputs read back before install "
      "(paranoid_file_checks): %s\n",
      e.paranoid_file_checks ? "yes" : "no");
  if (e.subcompactions == 1) {
    out += "Compaction: one thread per compaction\n";
  } else if (e.subcompactions > 1) {
    out += absl::StrFormat(
        "Compaction: up to %d threads per compaction (not LevelDB)\n",
        e.subcompactions);
  } else {
    out += absl::StrFormat(
        "Compaction: up to %d threads per compaction in siftdb, 1 in RocksDB "
        "and LevelDB (their defaults)\n",
        Options().max_subcompactions);
  }
  if (config.write_rate_limit > 0) {
    out += absl::StrFormat(
        "WriteRate:  limited to %.2f MB/s of keys and values (all threads)\n",
        static_cast<double>(config.write_rate_limit) / 1048576.0);
  }
  out += absl::StrFormat("DB:         %s%s\n", config.db,
                         config.engines.size() > 1 ? "-<engine>" : "");
#ifndef NDEBUG
  out += "WARNING: Assertions are enabled; benchmarks unnecessarily slow\n";
#endif
  out += kSeparator;
  return out;
}

namespace {

// The measured benchmarks of the first engine (not text, not skipped), with
// their labels: repeated names are numbered "readrandom(2)".
std::vector<std::pair<size_t, std::string>> Rows(const EngineResults& base) {
  std::vector<std::pair<size_t, std::string>> rows;
  std::map<std::string, int> seen;
  for (size_t b = 0; b < base.results.size(); b++) {
    const BenchResult& r = base.results[b];
    if (r.text.has_value() || r.skip_reason.has_value()) continue;
    const int n = ++seen[r.name];
    rows.emplace_back(b,
                      n == 1 ? r.name : absl::StrFormat("%s(%d)", r.name, n));
  }
  return rows;
}

std::string EngineColumns(const std::vector<EngineResults>& all,
                          const char* first, int first_width = 16) {
  std::string out = absl::StrFormat("%-*s", first_width, first);
  for (const EngineResults& e : all) out += absl::StrFormat(" %11s", e.engine);
  return out;
}

// One row per benchmark: metric per engine, then each engine's ratio to the
// first engine's.
std::string MetricTable(const std::vector<EngineResults>& all,
                        double (*metric)(const BenchResult&)) {
  const EngineResults& base = all[0];
  std::string out = EngineColumns(all, "benchmark");
  for (size_t i = 1; i < all.size(); i++) {
    out += absl::StrFormat(
        " %16s", absl::StrFormat("%s/%s", all[i].engine, base.engine));
  }
  out += "\n";
  for (const auto& [b, label] : Rows(base)) {
    const double v0 = metric(base.results[b]);
    out += absl::StrFormat("%-16s", label);
    for (const EngineResults& e : all) {
      const BenchResult& r = e.results[b];
      out += r.skip_reason.has_value() ? absl::StrFormat(" %11s", "-")
                                       : absl::StrFormat(" %11.3f", metric(r));
    }
    for (size_t i = 1; i < all.size(); i++) {
      const BenchResult& r = all[i].results[b];
      out += r.skip_reason.has_value() || v0 <= 0
                 ? absl::StrFormat(" %16s", "-")
                 : absl::StrFormat(" %15.2fx", metric(r) / v0);
    }
    out += "\n";
  }
  return out;
}

}  // namespace

std::string FormatComparison(const std::vector<EngineResults>& all) {
  if (all.empty()) return "";
  const EngineResults& base = all[0];
  std::string out = kSeparator;
  out += absl::StrFormat(
      "Comparison, micros/op (ratio = engine / %s: above 1.00 means %s is "
      "faster)\n",
      base.engine, base.engine);
  out += MetricTable(all, [](const BenchResult& r) { return r.micros_per_op; });

  out +=
      "\nProcess CPU micros/op (all threads, background compaction "
      "included; less disturbed by other load on the machine)\n";
  out += MetricTable(all,
                     [](const BenchResult& r) { return r.cpu_micros_per_op; });

  out +=
      "\nWhole run per engine (CPU: all threads, background work included;"
      " load: 1-minute average at its start)\n";
  out += EngineColumns(all, "");
  out += absl::StrFormat("\n%-16s", "wall seconds");
  for (const EngineResults& e : all) {
    out += absl::StrFormat(" %11.1f", e.wall_seconds);
  }
  out += absl::StrFormat("\n%-16s", "CPU seconds");
  for (const EngineResults& e : all) {
    out += absl::StrFormat(" %11.1f", e.cpu_seconds);
  }
  out += absl::StrFormat("\n%-16s", "load at start");
  for (const EngineResults& e : all) {
    out += e.load_before < 0 ? absl::StrFormat(" %11s", "-")
                             : absl::StrFormat(" %11.2f", e.load_before);
  }
  out += absl::StrFormat("\n%-16s", "peak RSS MiB");
  for (const EngineResults& e : all) {
    out +=
        e.peak_rss_bytes < 0
            ? absl::StrFormat(" %11s", "-")
            : absl::StrFormat(
                  " %11.1f", static_cast<double>(e.peak_rss_bytes) / 1048576.0);
  }
  out += "\n";

  // Every benchmark that measured the directory: the fills, and
  // waitforcompaction (a text result, so not among Rows). Wide enough for
  // "waitforcompaction(2)".
  constexpr int kSizeLabelWidth = 22;
  std::string sizes;
  std::map<std::string, int> seen;
  for (size_t b = 0; b < base.results.size(); b++) {
    if (!base.results[b].db_bytes.has_value()) continue;
    const std::string& name = base.results[b].name;
    const int n = ++seen[name];
    const std::string label =
        n == 1 ? name : absl::StrFormat("%s(%d)", name, n);
    sizes += absl::StrFormat("%-*s", kSizeLabelWidth, label);
    for (const EngineResults& e : all) {
      const BenchResult& r = e.results[b];
      sizes +=
          r.db_bytes.has_value()
              ? absl::StrFormat(" %11.1f",
                                static_cast<double>(*r.db_bytes) / 1048576.0)
              : absl::StrFormat(" %11s", "-");
    }
    sizes += "\n";
  }
  if (!sizes.empty()) {
    out +=
        "\nDB size after fills and waitforcompaction, MiB (apparent bytes "
        "of the db directory, logs included)\n";
    out += EngineColumns(all, "benchmark", kSizeLabelWidth) + "\n" + sizes;
  }
  for (const EngineResults& e : all) {
    if (e.engine == "rocksdb") {
      out +=
          "\nNOTE: when the RocksDB linked here is Debian's librocksdb "
          "(not a release build, such as the release-anchor script makes), "
          "it has assertions on and no hardware CRC32C (about 30% cost on "
          "writes); compare RocksDB's write numbers with that in mind.\n";
    }
  }
  return out;
}

}  // namespace siftdb::bench
