// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl's lines in the LOG that need more than one call to LogMessage:
// the options at open, compaction inputs, level summaries and write
// stalls. docs/operations.md ("The LOG") shows what they look like. None
// of this runs per write: a stall is logged when it starts and ends.

#include <algorithm>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "db/compaction.h"
#include "db/db_impl.h"
#include "siftdb/cache.h"
#include "siftdb/comparator.h"
#include "siftdb/filter_policy.h"
#include "siftdb/slice_transform.h"
#include "table/compression.h"

namespace siftdb {
namespace {

const char* ModeName(RemoteFilterOptions::Mode mode) {
  switch (mode) {
    case RemoteFilterOptions::Mode::kOff:
      return "off";
    case RemoteFilterOptions::Mode::kAsync:
      return "async";
    case RemoteFilterOptions::Mode::kSync:
      return "sync";
  }
  return "unknown";
}

// Appends "name: value" lines for the general and table options.
void DescribeCoreOptions(const Options& o, const std::string& filter_name,
                         bool own_log, std::vector<std::string>* out) {
  auto add = [out](std::string_view name, const std::string& value) {
    out->push_back(absl::StrFormat("Options.%s: %s", name, value));
  };
  auto num = [](uint64_t v) { return absl::StrFormat("%d", v); };
  auto flag = [](bool b) { return std::string(b ? "true" : "false"); };
  add("comparator", o.comparator->Name());
  add("create_if_missing", flag(o.create_if_missing));
  add("error_if_exists", flag(o.error_if_exists));
  add("paranoid_checks", flag(o.paranoid_checks));
  add("paranoid_file_checks", flag(o.paranoid_file_checks));
  add("env", o.env == Env::Default() ? "default (POSIX)" : "custom");
  add("info_log", own_log ? "LOG file in the DB directory" : "user logger");
  add("max_log_file_size", num(o.max_log_file_size));
  add("keep_log_file_num", num(o.keep_log_file_num));
  add("wal_mmap_writes", flag(o.wal_mmap_writes));
  add("write_buffer_size", num(o.write_buffer_size));
  add("memtable_filter_ratio", absl::StrFormat("%g", o.memtable_filter_ratio));
  add("max_open_files", num(o.max_open_files));
  add("advise_random_on_open", flag(o.advise_random_on_open));
  add("block_cache",
      o.block_cache == nullptr
          ? std::string("none (private cache)")
          : absl::StrFormat("shared, capacity %d", o.block_cache->Capacity()));
  add("block_cache_size",
      num(o.block_cache_size) + (o.block_cache != nullptr ? " (ignored)" : ""));
  add("block_size", num(o.block_size));
  add("block_restart_interval", num(o.block_restart_interval));
  add("compression", CompressionTypeName(o.compression));
  std::string per_level;
  for (CompressionType t : o.compression_per_level) {
    per_level += (per_level.empty() ? "" : ",") + CompressionTypeName(t);
  }
  add("compression_per_level", per_level.empty() ? "(compression)" : per_level);
  add("bottommost_compression",
      o.bottommost_compression == kDisableCompressionOption
          ? std::string("disabled (the level's)")
          : CompressionTypeName(o.bottommost_compression));
  auto add_tuning = [&](const std::string& name, const CompressionOptions& c) {
    add(name + ".level", c.level == CompressionOptions::kDefaultCompressionLevel
                             ? std::string("library default")
                             : absl::StrFormat("%d", c.level));
    add(name + ".max_dict_bytes", absl::StrFormat("%d", c.max_dict_bytes));
    add(name + ".zstd_max_train_bytes",
        absl::StrFormat("%d", c.zstd_max_train_bytes));
  };
  add_tuning("compression_opts", o.compression_opts);
  add("bottommost_compression_opts.enabled",
      flag(o.bottommost_compression_opts.enabled));
  if (o.bottommost_compression_opts.enabled) {
    add_tuning("bottommost_compression_opts", o.bottommost_compression_opts);
  }
  add("filter_bits_per_key", absl::StrFormat("%g", o.filter_bits_per_key));
  add("filter_policy", filter_name);
  std::string filter_levels;
  for (double b : o.filter_bits_per_key_per_level) {
    filter_levels +=
        absl::StrFormat("%s%g", filter_levels.empty() ? "" : ",", b);
  }
  add("filter_bits_per_key_per_level",
      filter_levels.empty() ? "(filter_bits_per_key)" : filter_levels);
  add("optimize_filters_for_memory_budget",
      flag(o.optimize_filters_for_memory_budget));
  add("prefix_extractor", o.prefix_extractor != nullptr
                              ? std::string(o.prefix_extractor->Name())
                              : std::string("none"));
  add("whole_key_filtering", flag(o.whole_key_filtering));
  add("partition_filters", flag(o.partition_filters));
  add("filter_partition_size", num(o.filter_partition_size));
  add("target_file_size_base", num(o.target_file_size_base));
  add("target_file_size_multiplier", num(o.target_file_size_multiplier));
  add("level0_file_num_compaction_trigger",
      num(o.level0_file_num_compaction_trigger));
  add("level0_slowdown_writes_trigger", num(o.level0_slowdown_writes_trigger));
  add("level0_stop_writes_trigger", num(o.level0_stop_writes_trigger));
  add("soft_pending_compaction_bytes_limit",
      num(o.soft_pending_compaction_bytes_limit));
  add("hard_pending_compaction_bytes_limit",
      num(o.hard_pending_compaction_bytes_limit));
  add("delayed_write_rate", num(o.delayed_write_rate));
  add("max_bytes_for_level_base", num(o.max_bytes_for_level_base));
  add("max_bytes_for_level_multiplier",
      absl::StrFormat("%g", o.max_bytes_for_level_multiplier));
  add("level_compaction_dynamic_level_bytes",
      flag(o.level_compaction_dynamic_level_bytes));
  add("max_subcompactions", num(o.max_subcompactions));
  add("free_compaction_inputs_early", flag(o.free_compaction_inputs_early));
  add("disable_auto_compactions", flag(o.disable_auto_compactions));
}

void DescribeRemoteFilterOptions(const RemoteFilterOptions& r,
                                 std::vector<std::string>* out) {
  auto add = [out](std::string_view name, const std::string& value) {
    out->push_back(
        absl::StrFormat("Options.remote_filter.%s: %s", name, value));
  };
  auto num = [](int v) { return absl::StrFormat("%d", v); };
  add("mode", ModeName(r.mode));
  add("endpoints", absl::StrJoin(r.endpoints, ","));
  add("username", r.username);
  add("password", r.password.empty() ? "(none)" : "(set)");  // never logged
  add("connect_timeout_ms", num(r.connect_timeout_ms));
  add("command_timeout_ms", num(r.command_timeout_ms));
  add("name", r.name);
  add("lease_ttl_ms", num(r.lease_ttl_ms));
  add("async_max_lag_ms", num(r.async_max_lag_ms));
  add("wait_replicas", num(r.wait_replicas));
  add("wait_timeout_ms", num(r.wait_timeout_ms));
  add("delete_grace_ms", num(r.delete_grace_ms));
}

std::string DescribeFiles(const Compaction& c, int which) {
  std::string r;
  for (int i = 0; i < c.num_input_files(which); i++) {
    const FileMetaData* f = c.input(which, i);
    absl::StrAppendFormat(&r, "%s%06d(%d)", i == 0 ? "" : " ", f->number,
                          f->file_size);
  }
  return r;
}

}  // namespace

void DBImpl::LogOptions() {
  std::vector<std::string> lines;
  DescribeCoreOptions(
      options_,
      filter_policy_ != nullptr ? filter_policy_->Name() : std::string("none"),
      owned_info_log_ != nullptr, &lines);
  DescribeRemoteFilterOptions(options_.remote_filter, &lines);
  for (const std::string& line : lines) LogMessage(line);
}

std::string DBImpl::LevelSummary() const {
  std::string r;
  for (int level = 0; level < kNumLevels; level++) {
    const int files = versions_->NumLevelFiles(level);
    if (files == 0) continue;
    absl::StrAppendFormat(&r, "%sL%d %d files %d bytes", r.empty() ? "" : ", ",
                          level, files, versions_->NumLevelBytes(level));
  }
  return r.empty() ? "no tables" : r;
}

void DBImpl::LogCompactionStart(int job, const char* reason,
                                const Compaction& c, size_t parts) {
  LogMessage(absl::StrFormat(
      "[job %d] compaction started (%s): level %d -> %d; inputs: level %d "
      "[%s] %d bytes, level %d [%s] %d bytes; %d part(s)",
      job, reason, c.level(), c.output_level(), c.level(), DescribeFiles(c, 0),
      c.InputBytes(0), c.output_level(), DescribeFiles(c, 1), c.InputBytes(1),
      parts));
}

void DBImpl::NoteWriteStall(const char* cause,
                            absl::FunctionRef<std::string()> detail) {
  const uint64_t now = env_->NowMicros();
  if (stall_cause_ != nullptr && std::string_view(stall_cause_) == cause) {
    stall_waits_++;
    return;
  }
  if (stall_cause_ != nullptr) EndWriteStall();
  stall_cause_ = cause;
  stall_start_micros_ = now;
  stall_waits_ = 1;
  LogMessage(absl::StrFormat("write stall started: %s (%s)", cause, detail()));
}

void DBImpl::EndWriteStall() {
  if (stall_cause_ == nullptr) return;
  LogMessage(absl::StrFormat(
      "write stall ended: %s, %.3f sec, %d wait(s)", stall_cause_,
      (std::max(stall_last_micros_, stall_start_micros_) -
       stall_start_micros_) /
          1e6,
      stall_waits_));
  stall_cause_ = nullptr;
}

}  // namespace siftdb
