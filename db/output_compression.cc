// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/output_compression.h"

#include <algorithm>
#include <string>

#include "absl/strings/str_format.h"
#include "db/filter_budget.h"
#include "db/version.h"
#include "db/version_edit.h"
#include "table/compression.h"
#include "table/compression_dict.h"

namespace siftdb {

CompressionType OutputCompression(const Options& options, int level,
                                  bool bottommost, int base_level) {
  if (bottommost &&
      options.bottommost_compression != kDisableCompressionOption) {
    return options.bottommost_compression;
  }
  const auto& per_level = options.compression_per_level;
  if (per_level.empty()) return options.compression;
  const size_t i =
      level <= 0 ? 0 : static_cast<size_t>(std::max(1, level - base_level + 1));
  return i < per_level.size() ? per_level[i] : per_level.back();
}

TableOptions OutputTableOptions(const TableOptions& base,
                                const Options& options, int level,
                                int deepest_level, bool bottommost,
                                int base_level) {
  TableOptions out = base;
  out.filter_policy =
      OutputFilterPolicy(base.filter_policy, options, level, deepest_level);
  out.compression = OutputCompression(options, level, bottommost, base_level);
  const CompressionOptions& tuning =
      bottommost && options.bottommost_compression_opts.enabled
          ? options.bottommost_compression_opts
          : options.compression_opts;
  out.compression_level = tuning.level;
  out.compression_max_dict_bytes = tuning.max_dict_bytes;
  out.compression_zstd_max_train_bytes = tuning.zstd_max_train_bytes;
  // optimize_filters_for_hits: no filter at the bottom (a table without
  // one answers "may match" for every key).
  if (bottommost && options.optimize_filters_for_hits) {
    out.filter_policy = nullptr;
  }
  return out;
}

int DeepestNonEmptyLevel(const Version& v) {
  for (int level = kNumLevels - 1; level > 0; level--) {
    if (v.NumFiles(level) > 0) return level;
  }
  return 0;
}

bool IsBottommostOutput(const Version& v, int output_level) {
  for (int level = output_level + 1; level < kNumLevels; level++) {
    if (v.NumFiles(level) > 0) return false;
  }
  return true;
}

absl::Status ValidateCompressionOptions(const Options& o) {
  auto bad = [](const std::string& what, uint8_t type) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "invalid option: %s = %d (unknown type; known: 0 none, 1 snappy, "
        "4 lz4, 7 zstd)",
        what, static_cast<int>(type)));
  };
  if (!IsBlockCompressionType(o.compression)) {
    return bad("compression", o.compression);
  }
  for (size_t i = 0; i < o.compression_per_level.size(); i++) {
    if (!IsBlockCompressionType(o.compression_per_level[i])) {
      return bad(absl::StrFormat("compression_per_level[%d]", i),
                 o.compression_per_level[i]);
    }
  }
  if (o.bottommost_compression != kDisableCompressionOption &&
      !IsBlockCompressionType(o.bottommost_compression)) {
    return bad("bottommost_compression", o.bottommost_compression);
  }
  for (const auto& [name, c] :
       {std::pair<const char*, const CompressionOptions*>{"compression_opts",
                                                          &o.compression_opts},
        {"bottommost_compression_opts", &o.bottommost_compression_opts}}) {
    // A disabled bottommost_compression_opts is never read.
    if (c == &o.bottommost_compression_opts && !c->enabled) continue;
    const size_t dict = c->max_dict_bytes;
    if (dict != 0 &&
        (dict < kMinCompressionDictBytes || dict > kMaxCompressionDictBytes)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "invalid option: %s.max_dict_bytes = %d (0 for none, or %d to %d)",
          name, dict, kMinCompressionDictBytes, kMaxCompressionDictBytes));
    }
    if (c->zstd_max_train_bytes > (size_t{1} << 30)) {
      return absl::InvalidArgumentError(absl::StrFormat(
          "invalid option: %s.zstd_max_train_bytes = %d (at most 1 GiB)", name,
          c->zstd_max_train_bytes));
    }
  }
  return absl::OkStatus();
}

}  // namespace siftdb
