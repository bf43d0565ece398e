// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The corruption sweep's base (tests/db/corruption_sweep_test.cc): where
// each part of a table file lies, the small DB every trial damages a copy
// of (three overlapping tables on levels 0, 1 and 2, built once per
// compression setting, with the tools' view of it), and file helpers.
// The in-process DBs run without fsync (NoSync()): no trial simulates a
// crash. Thread safety: none; the sweep runs on the test's thread.

#ifndef SIFTDB_TESTS_DB_CORRUPTION_SWEEP_BASE_H_
#define SIFTDB_TESTS_DB_CORRUPTION_SWEEP_BASE_H_

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "siftdb/env.h"
#include "siftdb/options.h"
#include "table/table.h"
#include "tests/support/temp_dir.h"

namespace siftdb::sweep {

// --- Table layout: which byte ranges of a table file hold which part.

enum class Part { kData, kFilter, kIndex, kProperties, kMetaindex, kFooter };

const char* PartName(Part part);

struct Region {
  uint64_t begin = 0;  // [begin, end): a block with its trailer, or a footer
  uint64_t end = 0;
};

struct TableLayout {
  std::map<Part, std::vector<Region>> parts;
  int data_blocks = 0;
  int snappy_blocks = 0;  // data and index blocks stored compressed
  // The user keys of each data block, as parts[Part::kData].
  std::vector<std::vector<std::string>> data_block_keys;
};

absl::StatusOr<std::unique_ptr<Table>> OpenTable(const std::string& path);

// Parses the intact table at `path` with the table layer's own code: the
// footer gives the metaindex and index handles, the metaindex the filter
// and properties handles, the index every data block's handle.
absl::StatusOr<TableLayout> ReadLayout(const std::string& path);

// An Env whose syncs only flush (shared, never destroyed).
Env* NoSync();

// --- Files and table contents.

std::string ReadBytes(const std::string& path);
void WriteBytes(const std::string& path, const std::string& bytes);
// The table files in `dir`, by name ("000005.sst"), sorted.
std::vector<std::string> TableNames(const std::string& dir);
// Every entry of a table as (internal key, value), read with verified
// checksums; an error when the table cannot be read through.
using Entries = std::vector<std::pair<std::string, std::string>>;
absl::StatusOr<Entries> ReadEntries(const std::string& path);
std::vector<std::string> SplitLines(const std::string& text);
bool IsPrefix(const std::vector<std::string>& prefix,
              const std::vector<std::string>& whole);

// --- The DB every trial damages a copy of.

inline constexpr int kKeys = 400;
inline constexpr int kLateKeys = 120;  // written only into the newest table

std::string Key(int i);
// Compressible, and different in every generation so a shadowed older
// value is a wrong answer.
std::string Value(int gen, int i);
Options SweepOptions(CompressionType compression);

struct BaseDb {
  test::TempDir dir;
  std::string path;
  // The right answer for every key written: a value, or nullopt (deleted).
  std::map<std::string, std::optional<std::string>> model;
  // Keys never written (Get must say NotFound or report damage).
  std::vector<std::string> absent;
  std::vector<std::string> tables;  // file names, e.g. "000005.sst"
  std::map<std::string, TableLayout> layouts;
  std::map<std::string, std::string> bytes;  // intact file contents
  // Per table: each user key it holds, with its value there (nullopt: a
  // deletion).
  std::map<std::string, std::map<std::string, std::optional<std::string>>>
      table_keys;
  // Every (user key, type, value) any original table holds: a table a
  // compaction writes may hold these only.
  std::set<std::tuple<std::string, int, std::string>> original_entries;
  // `ldb scan` output of the intact DB, and `sst_dump --command=scan`
  // output of each intact table.
  std::string ldb_scan;
  std::map<std::string, std::string> sst_scan;
};

// The base DB of each compression setting, with the tools' view of it,
// built once per process (nullptr after a fatal failure while building
// it); removed at exit.
BaseDb* Base(CompressionType compression);

}  // namespace siftdb::sweep

#endif  // SIFTDB_TESTS_DB_CORRUPTION_SWEEP_BASE_H_
