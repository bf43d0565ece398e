// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The commands of ldb, siftdb's command-line database tool. Each command
// runs against an open DB, prints its results on stdout and its errors on
// stderr, and returns the process exit status:
//   kExitOk (0), kExitFailure (1: a DB error, a missing key, an
//   inconsistency), kExitUsage (2: bad command line).
//
// Thread safety: commands run one at a time on the main thread.

#ifndef SIFTDB_TOOLS_LDB_COMMANDS_H_
#define SIFTDB_TOOLS_LDB_COMMANDS_H_

#include <cstdint>
#include <string>
#include <vector>

#include "siftdb/db.h"

namespace siftdb::ldb {

inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;
inline constexpr int kExitUsage = 2;

// What a command gets from the command line.
struct CommandArgs {
  std::vector<std::string> args;  // positional arguments after the command
  bool hex = false;               // --hex: hex input and output
  std::string from;               // scan: first key (inclusive); "" = start
  std::string to;                 // scan: end key (exclusive); "" = end
  bool has_to = false;            // --to given
  int64_t limit = -1;             // scan: at most this many; < 0 = all
  std::string db_path;            // --db
  std::string checkpoint_dir;     // checkpoint: --checkpoint_dir
};

// How a command opens the database.
enum class OpenMode {
  // DB::OpenForReadOnly: no lock, nothing written (no log flushed, no
  // MANIFEST written), works while the DB is open in another process.
  kReadOnly,
  kReadWrite,  // DB::Open: takes the lock
  kClosed,     // the command works on the directory (repair): db is null
};

struct Command {
  const char* name;
  const char* usage;  // arguments, e.g. "KEY VALUE"
  int num_args;       // positional arguments required
  OpenMode open;
  bool paranoid;  // open with paranoid_checks
  int (*run)(DB* db, const CommandArgs& a);
};

// Every command, in the order `ldb --help` lists them.
const std::vector<Command>& Commands();
// The command named `name`, or null.
const Command* FindCommand(const std::string& name);

}  // namespace siftdb::ldb

#endif  // SIFTDB_TOOLS_LDB_COMMANDS_H_
