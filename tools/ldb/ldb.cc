// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ldb: inspect and edit a siftdb database from the command line, with
// RocksDB ldb's forms:
//
//   ldb --db=DIR [--hex | --key_hex | --value_hex] COMMAND [ARGS]
//   get KEY | put KEY VALUE | delete KEY
//   scan | dump | idump   [--from=KEY] [--to=KEY] [--max_keys=N]
//                         [--count_only]
//   approxsize [--from=KEY] [--to=KEY]
//   manifest_dump [--path=MANIFEST] | list_live_files_metadata
//   compact | repair | checkpoint --checkpoint_dir=DIR
//   stats | checkconsistency | sstables
//
// Keys and values are text (also when they start with 0x) unless --hex
// (both), --key_hex or --value_hex is given. The read commands open the DB
// read-only (they write nothing and work while the DB is open elsewhere);
// manifest_dump, list_live_files_metadata and idump read the files without
// opening the DB; put, delete, compact and checkpoint take its lock; repair
// runs RepairDB on the closed DB.
//
// Exit status: 0 success; 1 failure (DB error, key not found,
// inconsistency); 2 bad command line (unknown command or flag, missing
// --db, wrong arguments, bad hex or number). It never creates a database
// unless --create_if_missing.

#include <sys/stat.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "siftdb/db.h"
#include "tools/common/flags.h"
#include "tools/ldb/commands.h"

ABSL_FLAG(std::string, db, "", "Database directory (required)");
ABSL_FLAG(bool, hex, false,
          "Keys and values are hex (0x optional), on the command line and in "
          "the output");
ABSL_FLAG(bool, key_hex, false, "Keys are hex, in and out");
ABSL_FLAG(bool, value_hex, false, "Values are hex, in and out");
ABSL_FLAG(std::string, from, "",
          "scan/dump/idump/approxsize: first key (inclusive)");
ABSL_FLAG(std::string, to, "",
          "scan/dump/idump/approxsize: end key (exclusive); unset: no end");
ABSL_FLAG(int64_t, max_keys, -1,
          "scan/dump/idump: print at most this many entries (-1: all)");
ABSL_FLAG(int64_t, limit, -1, "Old name of --max_keys");
ABSL_FLAG(bool, count_only, false,
          "scan/dump/idump: print only the number of entries in range");
ABSL_FLAG(bool, create_if_missing, false,
          "Create the database when it does not exist");
ABSL_FLAG(std::string, checkpoint_dir, "",
          "checkpoint: the directory to create the copy in (must not exist)");
ABSL_FLAG(std::string, path, "",
          "manifest_dump: the MANIFEST file (default: the one CURRENT names)");

namespace siftdb::ldb {
namespace {

std::string Usage() {
  std::string u =
      "usage: ldb --db=DIR [--hex | --key_hex | --value_hex] "
      "[--create_if_missing] COMMAND [ARGS]\n"
      "commands:\n";
  for (const Command& c : Commands()) {
    u += *c.usage == '\0' ? absl::StrFormat("  %s\n", c.name)
                          : absl::StrFormat("  %-24s %s\n", c.name, c.usage);
  }
  u += "Keys and values are text (also when they start with 0x) unless\n"
       "--hex, --key_hex or --value_hex is given.\n"
       "Exit status: 0 success, 1 failure, 2 bad command line.\n";
  return u;
}

bool IsDirectory(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode);
}

// The arguments from the flags and the positional arguments after the
// command's name.
CommandArgs ArgsFromFlags(const tools::ToolArgs& parsed) {
  CommandArgs a;
  a.args.assign(parsed.positional.begin() + 1, parsed.positional.end());
  a.key_hex = absl::GetFlag(FLAGS_hex) || absl::GetFlag(FLAGS_key_hex);
  a.value_hex = absl::GetFlag(FLAGS_hex) || absl::GetFlag(FLAGS_value_hex);
  a.from = absl::GetFlag(FLAGS_from);
  a.to = absl::GetFlag(FLAGS_to);
  a.has_to = !a.to.empty();
  a.max_keys = parsed.WasSet("max_keys") ? absl::GetFlag(FLAGS_max_keys)
                                         : absl::GetFlag(FLAGS_limit);
  a.count_only = absl::GetFlag(FLAGS_count_only);
  a.db_path = absl::GetFlag(FLAGS_db);
  a.checkpoint_dir = absl::GetFlag(FLAGS_checkpoint_dir);
  a.manifest_path = absl::GetFlag(FLAGS_path);
  return a;
}

// Opens the DB as the command asks and runs it.
int OpenAndRun(const Command& command, const CommandArgs& a) {
  Options options;
  options.create_if_missing = absl::GetFlag(FLAGS_create_if_missing);
  options.paranoid_checks = command.paranoid;
  if (!options.create_if_missing && !IsDirectory(a.db_path)) {
    absl::FPrintF(stderr,
                  "ldb: no database at %s (pass --create_if_missing to "
                  "create one)\n",
                  a.db_path);
    return kExitFailure;
  }
  if (command.open == OpenMode::kClosed) return command.run(nullptr, a);
  absl::StatusOr<std::unique_ptr<DB>> db =
      command.open == OpenMode::kReadOnly && !options.create_if_missing
          ? DB::OpenForReadOnly(options, a.db_path)
          : DB::Open(options, a.db_path);
  if (!db.ok()) {
    absl::FPrintF(stderr, "ldb: cannot open the database at %s: %s\n",
                  a.db_path, db.status().ToString());
    return kExitFailure;
  }
  const int result = command.run(db->get(), a);
  const absl::Status closed = (*db)->Close();
  if (!closed.ok()) {
    absl::FPrintF(stderr, "ldb: closing the database at %s: %s\n", a.db_path,
                  closed.ToString());
    return kExitFailure;
  }
  return result;
}

int Main(int argc, char** argv) {
  tools::ToolFlagsSpec spec;
  spec.program = "ldb";
  spec.usage = Usage();
  spec.flag_sources = {"tools/ldb/"};
  spec.refused = {
      {"ttl", "siftdb has no TTL databases"},
      {"column_family", "siftdb has no column families"},
      {"try_load_options", "siftdb has no OPTIONS file"},
  };
  int exit_code = kExitOk;
  std::optional<tools::ToolArgs> parsed =
      tools::ParseToolFlags(spec, argc, argv, &exit_code);
  if (!parsed.has_value()) return exit_code;
  if (parsed->positional.empty()) {
    return tools::UsageError("ldb", "no command given");
  }
  const std::string name = parsed->positional[0];
  const Command* command = FindCommand(name);
  if (command == nullptr) {
    return tools::UsageError("ldb",
                             absl::StrFormat("unknown command '%s'", name));
  }
  const CommandArgs a = ArgsFromFlags(*parsed);
  if (static_cast<int>(a.args.size()) != command->num_args) {
    return tools::UsageError(
        "ldb",
        absl::StrFormat("%s takes %d argument%s%s, got %d", name,
                        command->num_args, command->num_args == 1 ? "" : "s",
                        command->num_args == 0
                            ? ""
                            : absl::StrCat(" (", command->usage, ")"),
                        a.args.size()));
  }
  if (a.db_path.empty())
    return tools::UsageError("ldb", "--db=DIR is required");
  if (parsed->WasSet("max_keys") && parsed->WasSet("limit")) {
    return tools::UsageError("ldb", "give --max_keys or --limit, not both");
  }
  return OpenAndRun(*command, a);
}

}  // namespace
}  // namespace siftdb::ldb

int main(int argc, char** argv) { return siftdb::ldb::Main(argc, argv); }
