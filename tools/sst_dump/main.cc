// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sst_dump: inspect siftdb table files, with RocksDB sst_dump's forms.
//
//   sst_dump [--file=]<table or directory>...
//            [--command=check|scan|raw|verify|identify|recompress|none]
//            [--read_num=N] [--from=K] [--to=K] [--prefix=P]
//            [--input_key_hex] [--output_hex] [--noverify_checksum]
//            [--show_properties] [--show_filter]
//
// A directory means every *.sst and *.ldb file in it, in name order. The
// default command, check, prints nothing when every table is sound. Exit
// status: 0 when every file passed, 1 when any file is not a table, is
// damaged or could not be read (each problem is printed on stderr), 2 on
// bad usage.

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/strings/str_format.h"
#include "siftdb/env.h"
#include "tools/common/flags.h"
#include "tools/common/hex.h"
#include "tools/sst_dump/sst_dump.h"

ABSL_FLAG(std::string, file, "",
          "A table file, or a directory: its *.sst and *.ldb files (a "
          "positional path works too)");
ABSL_FLAG(std::string, command, "check",
          "check: verify + entry-level checks, silent when sound; scan: print "
          "entries; verify: every block's CRC and the block layout; raw: dump "
          "every block; identify: is it a siftdb table; recompress: data size "
          "with each compression (writes nothing); none: only --show_*");
ABSL_FLAG(uint64_t, read_num, 0, "scan: print at most N entries (0: all)");
ABSL_FLAG(uint64_t, limit, 0, "Old name of --read_num");
ABSL_FLAG(bool, verify_checksum, true,
          "scan: verify block checksums while reading");
ABSL_FLAG(std::string, from, "", "scan: first user key (inclusive)");
ABSL_FLAG(std::string, to, "", "scan: end user key (exclusive)");
ABSL_FLAG(std::string, prefix, "", "scan: only user keys with this prefix");
ABSL_FLAG(bool, input_key_hex, false, "--from/--to/--prefix are hex");
ABSL_FLAG(bool, input_hex, false, "Old name of --input_key_hex");
ABSL_FLAG(bool, output_hex, false, "Print keys and values in hex");
ABSL_FLAG(bool, show_properties, false, "Also print the table properties");
ABSL_FLAG(bool, show_filter, false,
          "Also print filter statistics (keys, bits, k, fill, FP rate)");

namespace siftdb::sst_dump {
namespace {

constexpr char kUsage[] =
    "usage: sst_dump [--file=]<table or directory>... "
    "[--command=check|scan|raw|verify|identify|recompress|none] [flags]\n"
    "Exit status: 0 every file passed, 1 a file is damaged, not a table or\n"
    "unreadable, 2 bad command line.\n";

const std::vector<std::string>& Commands() {
  static const auto* const commands = new std::vector<std::string>{
      "check", "scan", "raw", "verify", "identify", "recompress", "none"};
  return *commands;
}

absl::Status RunOne(Env* env, const std::string& path,
                    const std::string& command, const DumpOptions& opts) {
  absl::Status s;
  if (command == "scan") {
    s = Scan(env, path, opts, stdout);
  } else if (command == "check") {
    s = Check(env, path, stdout);
  } else if (command == "verify") {
    s = Verify(env, path, stdout);
  } else if (command == "raw") {
    s = Raw(env, path, opts, stdout);
  } else if (command == "identify") {
    s = Identify(env, path, stdout);
  } else if (command == "recompress") {
    s = Recompress(env, path, stdout);
  }
  if (s.ok() && opts.show_properties) s = ShowProperties(env, path, stdout);
  if (s.ok() && opts.show_filter) s = ShowFilter(env, path, stdout);
  return s;
}

// Fills *opts from the output and scan flags; an InvalidArgument naming the
// flag on malformed hex.
absl::Status ParseDumpOptions(const tools::ToolArgs& args, DumpOptions* opts) {
  opts->output_hex = absl::GetFlag(FLAGS_output_hex);
  opts->show_properties = absl::GetFlag(FLAGS_show_properties);
  opts->show_filter = absl::GetFlag(FLAGS_show_filter);
  opts->verify_checksum = absl::GetFlag(FLAGS_verify_checksum);
  const bool hex =
      absl::GetFlag(FLAGS_input_key_hex) || absl::GetFlag(FLAGS_input_hex);
  struct Bound {
    const char* name;
    std::string value;
    std::optional<std::string>* out;
  };
  for (const Bound& b :
       {Bound{"from", absl::GetFlag(FLAGS_from), &opts->from},
        Bound{"to", absl::GetFlag(FLAGS_to), &opts->to},
        Bound{"prefix", absl::GetFlag(FLAGS_prefix), &opts->prefix}}) {
    if (!args.WasSet(b.name)) continue;
    std::string value = b.value;
    if (hex) {
      auto decoded = tools::FromHex(value);
      if (!decoded.ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--%s: %s", b.name, decoded.status().message()));
      }
      value = *decoded;
    }
    *b.out = value;
  }
  opts->limit = args.WasSet("read_num") ? absl::GetFlag(FLAGS_read_num)
                                        : absl::GetFlag(FLAGS_limit);
  return absl::OkStatus();
}

bool IsTableName(const std::string& name) {
  return (name.size() > 4 && name.ends_with(".sst")) ||
         (name.size() > 4 && name.ends_with(".ldb"));
}

// The table files `path` names: itself, or a directory's table files in
// name order.
absl::Status AddTableFilesAt(Env* env, const std::string& path,
                             std::vector<std::string>* files) {
  if (env->IsDirectory(path)) {
    auto children = env->GetChildren(path);
    if (!children.ok()) return children.status();
    std::vector<std::string> found;
    for (const std::string& name : *children) {
      if (IsTableName(name)) found.push_back(path + "/" + name);
    }
    if (found.empty()) {
      return absl::NotFoundError(path +
                                 ": no *.sst or *.ldb files in the directory");
    }
    std::sort(found.begin(), found.end());
    files->insert(files->end(), found.begin(), found.end());
  } else if (!env->FileExists(path)) {
    return absl::NotFoundError(path + ": no such file or directory");
  } else {
    files->push_back(path);
  }
  return absl::OkStatus();
}

// Runs `command` on every file (with a "==> file <==" header when there
// are several and the command prints per file), printing each failure on
// stderr. The exit status: 1 when any file failed, else 0.
int DumpFiles(Env* env, const std::vector<std::string>& files,
              const std::string& command, const DumpOptions& opts) {
  const bool quiet = (command == "check" || command == "none") &&
                     !opts.show_properties && !opts.show_filter;
  int failed = 0;
  for (const std::string& file : files) {
    if (files.size() > 1 && !quiet) std::printf("==> %s <==\n", file.c_str());
    std::fflush(stdout);
    absl::Status s = RunOne(env, file, command, opts);
    std::fflush(stdout);
    if (!s.ok()) {
      failed++;
      std::fprintf(stderr, "sst_dump: error: %s\n",
                   std::string(s.message()).c_str());
    }
  }
  if (files.size() > 1 && failed > 0) {
    std::fprintf(stderr, "sst_dump: %d of %zu files failed\n", failed,
                 files.size());
  }
  return failed > 0 ? tools::kExitFailure : tools::kExitOk;
}

int Main(int argc, char** argv) {
  tools::ToolFlagsSpec spec;
  spec.program = "sst_dump";
  spec.usage = kUsage;
  spec.flag_sources = {"tools/sst_dump/"};
  int exit_code = 0;
  std::optional<tools::ToolArgs> args =
      tools::ParseToolFlags(spec, argc, argv, &exit_code);
  if (!args.has_value()) return exit_code;

  std::vector<std::string> paths = args->positional;
  if (!absl::GetFlag(FLAGS_file).empty()) {
    paths.insert(paths.begin(), absl::GetFlag(FLAGS_file));
  }
  if (paths.empty()) {
    return tools::UsageError("sst_dump", "give a table or directory (--file)");
  }
  const std::string command = absl::GetFlag(FLAGS_command);
  if (std::find(Commands().begin(), Commands().end(), command) ==
      Commands().end()) {
    return tools::UsageError("sst_dump", "unknown --command=" + command);
  }
  if (args->WasSet("read_num") && args->WasSet("limit")) {
    return tools::UsageError("sst_dump",
                             "give --read_num or --limit, not both");
  }
  DumpOptions opts;
  absl::Status s = ParseDumpOptions(*args, &opts);
  if (!s.ok()) return tools::UsageError("sst_dump", std::string(s.message()));

  Env* env = Env::Default();
  std::vector<std::string> files;
  for (const std::string& path : paths) {
    s = AddTableFilesAt(env, path, &files);
    if (!s.ok()) {
      std::fprintf(stderr, "sst_dump: %s\n", std::string(s.message()).c_str());
      return tools::kExitFailure;
    }
  }
  return DumpFiles(env, files, command, opts);
}

}  // namespace
}  // namespace siftdb::sst_dump

int main(int argc, char** argv) { return siftdb::sst_dump::Main(argc, argv); }
