// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The commands of ldb, siftdb's command-line database tool. Each command
// runs against an open DB (or, for the commands that read the files
// themselves, the closed directory), prints its results on stdout and its
// errors on stderr, and returns the process exit status:
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
#include "tools/common/flags.h"

namespace siftdb::ldb {

using tools::kExitFailure;
using tools::kExitOk;
using tools::kExitUsage;

// What a command gets from the command line.
struct CommandArgs {
  std::vector<std::string> args;  // positional arguments after the command
  bool key_hex = false;           // --hex / --key_hex: keys in hex
  bool value_hex = false;         // --hex / --value_hex: values in hex
  std::string from;               // first key (inclusive); "" = start
  std::string to;                 // end key (exclusive); "" = end
  bool has_to = false;            // --to given
  int64_t max_keys = -1;          // at most this many entries; < 0 = all
  bool count_only = false;        // print the count, not the entries
  std::string db_path;            // --db
  std::string checkpoint_dir;     // checkpoint: --checkpoint_dir
  std::string manifest_path;      // manifest_dump: --path (default: CURRENT's)
};

// How a command opens the database.
enum class OpenMode {
  // DB::OpenForReadOnly: no lock, nothing written (no log flushed, no
  // MANIFEST written), works while the DB is open in another process.
  kReadOnly,
  kReadWrite,  // DB::Open: takes the lock
  // The command reads (repair: rewrites) the directory's files itself: db
  // is null. Only repair writes.
  kClosed,
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

// The commands that read the DB's files without opening it
// (file_commands.cc).
int ManifestDump(DB* db, const CommandArgs& a);
int ListLiveFilesMetadata(DB* db, const CommandArgs& a);
int InternalDump(DB* db, const CommandArgs& a);

// Shared by the commands: prints "ldb: <what>: <status>", returns 1.
int Failed(std::string_view what, const absl::Status& s);
// Prints the status's message, returns 2.
int BadArg(const absl::Status& s);
// --from / --to decoded (keys: hex with --key_hex). Usage error text in the
// status when malformed.
absl::Status DecodeRange(const CommandArgs& a, std::string* from,
                         std::string* to);

}  // namespace siftdb::ldb

#endif  // SIFTDB_TOOLS_LDB_COMMANDS_H_
