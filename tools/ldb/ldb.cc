// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ldb: inspect and edit a siftdb database from the command line.
//
//   ldb --db=DIR get KEY | put KEY VALUE | delete KEY
//       | scan [--from=KEY] [--to=KEY] [--limit=N] | dump | compact
//       | stats | checkconsistency | sstables
//       | checkpoint --checkpoint_dir=DIR | repair
//   Options: --hex (keys and values in hex, in and out; an argument that
//   starts with 0x is hex anyway), --create_if_missing.
//
// The read commands (get, scan, dump, stats, checkconsistency, sstables)
// open the DB read-only: they write nothing (no log flushed, no MANIFEST,
// no LOG) and work while the DB is open in another process. put, delete,
// compact and checkpoint open it for writing (they take its lock); repair
// runs RepairDB on the closed DB.
//
// Exit status: 0 success; 1 failure (DB error, key not found,
// inconsistency); 2 bad command line (unknown command, missing --db, wrong
// arguments). It never creates a database unless --create_if_missing.

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/str_format.h"
#include "siftdb/db.h"
#include "tools/ldb/commands.h"

ABSL_FLAG(std::string, db, "", "Database directory (required)");
ABSL_FLAG(bool, hex, false,
          "Keys and values are hex, on the command line and in the output");
ABSL_FLAG(std::string, from, "", "scan: first key (inclusive)");
ABSL_FLAG(std::string, to, "", "scan: end key (exclusive); unset: no end");
ABSL_FLAG(int64_t, limit, -1, "scan: print at most this many entries");
ABSL_FLAG(bool, create_if_missing, false,
          "Create the database when it does not exist");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "checkpoint: the directory to create the copy in (must not exist)");

namespace siftdb::ldb {
namespace {

std::string Usage() {
  std::string u =
      "usage: ldb --db=DIR [--hex] [--create_if_missing] COMMAND [ARGS]\n"
      "commands:\n";
  for (const Command& c : Commands()) {
    u += *c.usage == '\0' ? absl::StrFormat("  %s\n", c.name)
                          : absl::StrFormat("  %-17s %s\n", c.name, c.usage);
  }
  u += "Keys and values are text unless --hex is given or they start with "
       "0x.\n";
  return u;
}

int UsageError(const std::string& message) {
  absl::FPrintF(stderr, "ldb: %s\n%s", message, Usage());
  return kExitUsage;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

int Main(int argc, char** argv) {
  absl::SetProgramUsageMessage(Usage());
  std::vector<char*> positional = absl::ParseCommandLine(argc, argv);
  if (positional.size() < 2) return UsageError("no command given");
  const std::string name = positional[1];
  const Command* command = FindCommand(name);
  if (command == nullptr) {
    return UsageError(absl::StrFormat("unknown command '%s'", name));
  }
  CommandArgs a;
  for (size_t i = 2; i < positional.size(); i++) {
    a.args.emplace_back(positional[i]);
  }
  if (static_cast<int>(a.args.size()) != command->num_args) {
    return UsageError(absl::StrFormat(
        "%s takes %d argument%s (%s), got %d", name, command->num_args,
        command->num_args == 1 ? "" : "s", command->usage, a.args.size()));
  }
  const std::string db_path = absl::GetFlag(FLAGS_db);
  if (db_path.empty()) return UsageError("--db=DIR is required");
  a.hex = absl::GetFlag(FLAGS_hex);
  a.from = absl::GetFlag(FLAGS_from);
  a.to = absl::GetFlag(FLAGS_to);
  a.has_to = !a.to.empty();
  a.limit = absl::GetFlag(FLAGS_limit);
  a.db_path = db_path;
  a.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);

  Options options;
  options.create_if_missing = absl::GetFlag(FLAGS_create_if_missing);
  options.paranoid_checks = command->paranoid;
  if (!options.create_if_missing && !IsDirectory(db_path)) {
    absl::FPrintF(stderr,
                  "ldb: no database at %s (pass --create_if_missing to "
                  "create one)\n",
                  db_path);
    return kExitFailure;
  }
  if (command->open == OpenMode::kClosed) return command->run(nullptr, a);
  absl::StatusOr<std::unique_ptr<DB>> db =
      command->open == OpenMode::kReadOnly && !options.create_if_missing
          ? DB::OpenForReadOnly(options, db_path)
          : DB::Open(options, db_path);
  if (!db.ok()) {
    absl::FPrintF(stderr, "ldb: cannot open the database at %s: %s\n", db_path,
                  db.status().ToString());
    return kExitFailure;
  }
  const int result = command->run(db->get(), a);
  const absl::Status closed = (*db)->Close();
  if (!closed.ok()) {
    absl::FPrintF(stderr, "ldb: closing the database at %s: %s\n", db_path,
                  closed.ToString());
    return kExitFailure;
  }
  return result;
}

}  // namespace
}  // namespace siftdb::ldb

int main(int argc, char** argv) { return siftdb::ldb::Main(argc, argv); }
