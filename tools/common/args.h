// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ArgParser: a small, strict command-line parser shared by siftdb's tools.
// Accepts `--name=value`, `--name value` (for flags that take a value),
// `--name` (boolean flags) and positional arguments; `--` ends flag
// parsing. Unknown flags, missing values and malformed numbers are
// InvalidArgument errors whose messages name the flag, so a tool can print
// them next to Usage() and exit non-zero.
//
// Thread safety: not thread-safe; build and query from one thread.

#ifndef SIFTDB_TOOLS_COMMON_ARGS_H_
#define SIFTDB_TOOLS_COMMON_ARGS_H_

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"

namespace siftdb::tools {

class ArgParser {
 public:
  // `usage_line` is printed first by Usage(), e.g.
  // "sst_dump --file=<path> --command=scan|check|...".
  ArgParser(std::string program, std::string usage_line);
  ArgParser(const ArgParser&) = delete;
  ArgParser& operator=(const ArgParser&) = delete;

  // A flag taking a value (value_name is shown in Usage(), e.g. "PATH").
  void AddFlag(std::string name, std::string value_name, std::string help);
  // A boolean flag: present means true; `--name=false|0|true|1` also work.
  void AddBoolFlag(std::string name, std::string help);

  // Parses argv[1..argc). May be called once.
  absl::Status Parse(int argc, const char* const* argv);

  bool Has(std::string_view name) const;
  // The value of a flag, or `default_value` when absent.
  std::string GetString(std::string_view name,
                        std::string_view default_value = "") const;
  // A boolean flag's value (false when absent).
  bool GetBool(std::string_view name) const;
  // An unsigned decimal value; InvalidArgument naming the flag when
  // malformed.
  absl::StatusOr<uint64_t> GetUint64(std::string_view name,
                                     uint64_t default_value) const;
  absl::StatusOr<double> GetDouble(std::string_view name,
                                   double default_value) const;

  const std::vector<std::string>& positional() const { return positional_; }
  const std::string& program() const { return program_; }

  // The usage line and one line per flag.
  std::string Usage() const;

 private:
  struct Spec {
    std::string value_name;  // empty: boolean
    std::string help;
  };

  const std::string program_;
  const std::string usage_line_;
  std::map<std::string, Spec, std::less<>> specs_;
  std::vector<std::string> order_;  // flags in the order they were added
  std::map<std::string, std::string, std::less<>> values_;
  std::vector<std::string> positional_;
};

}  // namespace siftdb::tools

#endif  // SIFTDB_TOOLS_COMMON_ARGS_H_
