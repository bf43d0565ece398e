// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Test helper: every live table of a DB, as siftdb.sstables lists them,
// opened from its file, with the level it is on. Tests read a table's
// properties, filter bytes or blocks from it. Failures to open or list are
// reported as test failures and the table is left out.

#ifndef SIFTDB_TESTS_DB_LIVE_TABLES_H_
#define SIFTDB_TESTS_DB_LIVE_TABLES_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "siftdb/db.h"
#include "table/table.h"

namespace siftdb {

struct OpenedLiveTable {
  int level = -1;
  std::string file;  // path of the .sst file
  uint64_t file_size = 0;
  std::unique_ptr<Table> table;
};

std::vector<OpenedLiveTable> OpenLiveTables(DB* db, const std::string& path);

}  // namespace siftdb

#endif  // SIFTDB_TESTS_DB_LIVE_TABLES_H_
