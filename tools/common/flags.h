// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ParseToolFlags: the one command-line front end of siftdb's tools (all but
// sift_bf, whose redis-cli-style parser ends options at the first argument
// that is not one). A tool defines its flags with ABSL_FLAG in its own files
// and hands argv here.
//
// Accepted forms: `--name=value`, `-name=value`, `--name value` (flags that
// are not bool), `--name` / `--noname` and `--name=true|false|1|0|yes|no`
// (bool flags); `--` ends the flags; any other argument is positional (also
// one that starts with '-' followed by a digit, so negative numbers pass).
//
// Outcomes, the same in every tool:
//   --help / -help / --helpfull: the usage text, then the tool's own flags
//     with their defaults and help, on stdout; exit code 0.
//   --version: "<program> (siftdb) MAJOR.MINOR.PATCH" on stdout; exit 0.
//   an unknown flag, a flag without its value, a value the flag's type does
//     not take (absl's own parser: numbers are checked for range and
//     garbage), a refused flag, or positional arguments where none are
//     taken: one line on stderr naming the flag and why; exit code 2.
//   a flag in `ignored`: accepted, its value parsed nowhere, and named once
//     on stderr as ignored.
//   --undefok=a,b (gflags'): the names in it that are not the tool's flags
//     are accepted and ignored like `ignored` (not an ABSL_FLAG: absl's
//     own parser library defines one of that name).
// Runtime failures after parsing are the tool's to report (exit code 1).
//
// Why not absl::ParseCommandLine: Debian 12's absl (20220623) exits 1 on
// --help and on bad flags, and aborts the process on some values; tools
// must exit 0 and 2 instead (docs/tools.md).
//
// Thread safety: call once, from main, before other threads start.

#ifndef SIFTDB_TOOLS_COMMON_FLAGS_H_
#define SIFTDB_TOOLS_COMMON_FLAGS_H_

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace siftdb::tools {

// Exit codes every tool uses.
inline constexpr int kExitOk = 0;
inline constexpr int kExitFailure = 1;  // the work failed
inline constexpr int kExitUsage = 2;    // the command line is wrong

struct ToolFlagsSpec {
  // The program's name in messages, e.g. "ldb".
  std::string program;
  // Printed first by --help: a synopsis and examples, ending in '\n'.
  std::string usage;
  // A flag belongs to the tool (may be set, is listed by --help) when the
  // file that defines it has one of these strings in its path, e.g.
  // "tools/ldb/". Flags defined elsewhere in the binary are unknown here.
  std::vector<std::string> flag_sources;
  // Names (without dashes) accepted and ignored, with a note on stderr.
  std::vector<std::string> ignored;
  // Names refused with the given reason (exit 2), e.g. features that do not
  // exist yet: {"ttl", "siftdb has no TTL databases"}.
  std::map<std::string, std::string, std::less<>> refused;
  // When false, a positional argument is a usage error.
  bool takes_positional = true;
};

struct ToolArgs {
  std::vector<std::string> positional;
  // Flags given on the command line (canonical names), in order.
  std::vector<std::string> set_flags;
  bool WasSet(std::string_view name) const;
};

// Parses argv[1..argc). Returns the arguments when the tool should run;
// otherwise it has printed what it had to and returns the exit code in
// *exit_code (0 for --help / --version, 2 for a usage error).
std::optional<ToolArgs> ParseToolFlags(const ToolFlagsSpec& spec, int argc,
                                       const char* const* argv, int* exit_code);

// The text --help prints (exposed for tests).
std::string ToolHelpText(const ToolFlagsSpec& spec);

// Reports a usage error found after parsing (e.g. a missing --db): one line
// "<program>: <message> (try --help)" on stderr; returns kExitUsage.
int UsageError(std::string_view program, std::string_view message);

}  // namespace siftdb::tools

#endif  // SIFTDB_TOOLS_COMMON_FLAGS_H_
