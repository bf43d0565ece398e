// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sst_dump: inspect siftdb table files.
//
//   sst_dump --file=<table or directory>
//   --command=scan|check|verify|raw|identify
//            [--show_properties] [--show_filter] [--from=K] [--to=K]
//            [--output_hex] [--input_hex] [--limit=N]
//
// A directory means every *.sst file in it, in name order. Exit status: 0
// when every file passed, 1 when any file is not a table, is damaged or
// could not be read (each problem is printed on stderr), 2 on bad usage.

#include <algorithm>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "siftdb/env.h"
#include "tools/common/args.h"
#include "tools/common/hex.h"
#include "tools/sst_dump/sst_dump.h"
#include "util/absl_compat.h"

namespace siftdb::sst_dump {
namespace {

int UsageError(const tools::ArgParser& args, std::string_view message) {
  std::fprintf(stderr, "sst_dump: %s\n%s", std::string(message).c_str(),
               args.Usage().c_str());
  return 2;
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
  }
  if (s.ok() && opts.show_properties) s = ShowProperties(env, path, stdout);
  if (s.ok() && opts.show_filter) s = ShowFilter(env, path, stdout);
  return s;
}

// Registers every sst_dump flag on *args.
void AddSstDumpFlags(tools::ArgParser* args) {
  args->AddFlag("file", "PATH",
                "a table file, or a directory: its *.sst files");
  args->AddFlag("command", "CMD",
                "scan (default): print entries; check: verify + entry-level "
                "checks; verify: every block's CRC; raw: dump every block; "
                "identify: is it a siftdb table");
  args->AddBoolFlag("show_properties", "also print the table properties");
  args->AddBoolFlag("show_filter",
                    "also print filter statistics (keys, bits, k, fill, FP)");
  args->AddFlag("from", "KEY", "scan: first user key (inclusive)");
  args->AddFlag("to", "KEY", "scan: last user key (exclusive)");
  args->AddFlag("limit", "N", "scan: print at most N entries");
  args->AddBoolFlag("output_hex", "print keys and values in hex");
  args->AddBoolFlag("input_hex", "--from/--to are given in hex");
  args->AddBoolFlag("help", "print this help");
}

// Fills *opts from the output and scan flags. An error whose message is
// what to show next to the usage on a malformed --from/--to/--limit.
absl::Status ParseDumpOptions(const tools::ArgParser& args, DumpOptions* opts) {
  opts->output_hex = args.GetBool("output_hex");
  opts->show_properties = args.GetBool("show_properties");
  opts->show_filter = args.GetBool("show_filter");
  for (const char* bound : {"from", "to"}) {
    if (!args.Has(bound)) continue;
    std::string value = args.GetString(bound);
    if (args.GetBool("input_hex")) {
      auto decoded = tools::FromHex(value);
      if (!decoded.ok()) {
        return absl::InvalidArgumentError(
            absl::StrFormat("--%s: %s", bound, decoded.status().message()));
      }
      value = *decoded;
    }
    (std::string_view(bound) == "from" ? opts->from : opts->to) = value;
  }
  auto limit = args.GetUint64("limit", 0);
  if (!limit.ok()) return limit.status();
  opts->limit = *limit;
  return absl::OkStatus();
}

// The table files `path` names: itself, or a directory's *.sst files in
// name order. An error whose message is what to print otherwise.
absl::StatusOr<std::vector<std::string>> TableFilesAt(Env* env,
                                                      const std::string& path) {
  std::vector<std::string> files;
  if (env->IsDirectory(path)) {
    auto children = env->GetChildren(path);
    if (!children.ok()) return children.status();
    for (const std::string& name : *children) {
      if (name.size() > 4 && name.ends_with(".sst")) {
        files.push_back(path + "/" + name);
      }
    }
    std::sort(files.begin(), files.end());
    if (files.empty()) {
      return absl::NotFoundError(path + ": no *.sst files in the directory");
    }
  } else if (!env->FileExists(path)) {
    return absl::NotFoundError(path + ": no such file or directory");
  } else {
    files.push_back(path);
  }
  return files;
}

// Runs `command` on every file (with a "==> file <==" header when there
// are several), printing each failure on stderr. The exit status: 1 when
// any file failed, else 0.
int DumpFiles(Env* env, const std::vector<std::string>& files,
              const std::string& command, const DumpOptions& opts) {
  int failed = 0;
  for (const std::string& file : files) {
    if (files.size() > 1) std::fprintf(stdout, "==> %s <==\n", file.c_str());
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
  return failed > 0 ? 1 : 0;
}

int Main(int argc, char** argv) {
  tools::ArgParser args("sst_dump",
                        "sst_dump --file=<table or directory> "
                        "[--command=scan|check|verify|raw|identify] [options]");
  AddSstDumpFlags(&args);

  absl::Status s = args.Parse(argc, argv);
  if (!s.ok()) return UsageError(args, AsStd(s.message()));
  if (args.GetBool("help")) {
    std::fputs(args.Usage().c_str(), stdout);
    return 0;
  }
  if (!args.positional().empty()) {
    return UsageError(args, "unexpected argument " + args.positional()[0]);
  }
  const std::string path = args.GetString("file");
  if (path.empty()) return UsageError(args, "--file is required");
  const std::string command = args.GetString("command", "scan");
  if (command != "scan" && command != "check" && command != "verify" &&
      command != "raw" && command != "identify") {
    return UsageError(args, "unknown --command=" + command);
  }

  DumpOptions opts;
  s = ParseDumpOptions(args, &opts);
  if (!s.ok()) return UsageError(args, AsStd(s.message()));

  Env* env = Env::Default();
  absl::StatusOr<std::vector<std::string>> files = TableFilesAt(env, path);
  if (!files.ok()) {
    std::fprintf(stderr, "sst_dump: %s\n",
                 std::string(files.status().message()).c_str());
    return 1;
  }
  return DumpFiles(env, *files, command, opts);
}

}  // namespace
}  // namespace siftdb::sst_dump

int main(int argc, char** argv) { return siftdb::sst_dump::Main(argc, argv); }
