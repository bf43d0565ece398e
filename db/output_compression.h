// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Which compression a new table gets: Options::compression, overridden per
// output level by compression_per_level and, for a compaction writing the
// bottommost level, by bottommost_compression (RocksDB's rules; see
// include/siftdb/options.h and docs/operations.md). Also whether it gets a
// filter, and of what size: by level (db/filter_budget.h), and none for a
// bottommost output under optimize_filters_for_hits.
// Thread safety: pure functions.

#ifndef SIFTDB_DB_OUTPUT_COMPRESSION_H_
#define SIFTDB_DB_OUTPUT_COMPRESSION_H_

#include "absl/status/status.h"
#include "siftdb/options.h"
#include "table/table_options.h"

namespace siftdb {

class Version;

// The type for a table written to `level`; `bottommost` only for a
// compaction output on the bottommost level (never for a flush).
// compression_per_level[i] applies to level i, except that under
// level_compaction_dynamic_level_bytes its entry 1 applies to the base
// level, 2 to the one below, and so on (RocksDB's rule), so that the same
// list fits however deep the tree is.
CompressionType OutputCompression(const Options& options, int level,
                                  bool bottommost, int base_level = 1);

// `base` with the compression (type, level and dictionary size; for a
// bottommost output from bottommost_compression_opts when it is enabled)
// of a table written to `level`, its filter policy sized for that level
// (OutputFilterPolicy; `deepest_level` is the deepest level holding a table
// now), and without a filter policy for a bottommost output under
// Options::optimize_filters_for_hits.
TableOptions OutputTableOptions(const TableOptions& base,
                                const Options& options, int level,
                                int deepest_level, bool bottommost,
                                int base_level = 1);

// The deepest level of `v` holding a table (0 when none does).
int DeepestNonEmptyLevel(const Version& v);

// Whether a compaction writing `output_level` of `v` writes the bottommost
// level: no deeper level holds a table.
bool IsBottommostOutput(const Version& v, int output_level);

// InvalidArgument naming the field when compression, an entry of
// compression_per_level or bottommost_compression is not a block type this
// build knows (bottommost_compression may also be kDisableCompressionOption),
// or a dictionary size of compression_opts or of an enabled
// bottommost_compression_opts is out of range.
absl::Status ValidateCompressionOptions(const Options& options);

}  // namespace siftdb

#endif  // SIFTDB_DB_OUTPUT_COMPRESSION_H_
