// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// BuildTable: writes the entries of an iterator (a MemTable's, in internal
// key order) to table file meta->number, syncs it, and checks that it opens.

#ifndef SIFTDB_DB_BUILDER_H_
#define SIFTDB_DB_BUILDER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "db/version_edit.h"
#include "siftdb/comparator.h"
#include "siftdb/env.h"
#include "siftdb/iterator.h"
#include "siftdb/rate_limiter.h"
#include "table/table_options.h"

namespace siftdb {

class TableCache;

// On success with entries: meta->file_size, smallest and largest are set.
// With no entries: OK, meta->file_size == 0 and no file is left behind.
// On error the partial file is removed.
// input_files: the files the table's data wholly comes from (the log a
// flush empties), recorded as the table's siftdb.input.files property so
// that RepairDB without a MANIFEST can tell them superseded; empty when the
// table holds only part of its source (a recovery flush mid-log).
// Every append to the table first asks rate_limiter (may be null: none).
// REQUIRES: meta->number set; iter positioned anywhere.
absl::Status BuildTable(const std::string& dbname, Env* env,
                        const TableOptions& options, TableCache* table_cache,
                        Iterator* iter, FileMetaData* meta,
                        std::vector<uint64_t> input_files,
                        RateLimiter* rate_limiter);

// Checks table `number`, just written with `entries` entries from
// `smallest` to `largest`, before the MANIFEST names it, so that bytes
// damaged between the builder and the disk are never installed. Always:
// the table opens (footer, index, filter and properties blocks verified),
// every data block's CRC matches (read without decompressing), the blocks
// tile the data region, and the properties count `entries`. With `full`
// (Options::paranoid_file_checks) it also reads every entry back, without
// filling the block cache, and checks the count, the strictly increasing
// internal key order (by icmp) and the first and last keys. DataLoss
// naming the table and what differs.
absl::Status VerifyTableOutput(TableCache* table_cache, const Comparator* icmp,
                               uint64_t number, uint64_t file_size,
                               uint64_t entries, std::string_view smallest,
                               std::string_view largest, bool full);

}  // namespace siftdb

#endif  // SIFTDB_DB_BUILDER_H_
