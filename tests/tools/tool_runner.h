// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Runs a built program (db_bench, ldb) as a child process and captures its
// exit status, stdout and stderr, for the "tools" suite's black-box tests.
// Programs are found under the build directory (test::BinaryDir()); a
// test fails when its program is not built.
//
// Thread safety: none needed; each test runs its programs one at a time.

#ifndef SIFTDB_TESTS_TOOLS_TOOL_RUNNER_H_
#define SIFTDB_TESTS_TOOLS_TOOL_RUNNER_H_

#include <string>
#include <vector>

#include "tests/support/paths.h"

namespace siftdb::test {

struct ToolResult {
  int exit_code = -1;  // -1: did not exit normally
  std::string out;     // stdout
  std::string err;     // stderr
};

// BinaryDir() (tests/support/paths.h) + "/" + <relative>, or "" when that is
// not an executable.
std::string FindTool(const std::string& relative);

// Runs `program` with `args` (no shell: arguments are passed as they are).
// `scratch_dir` holds the captured output files.
ToolResult RunTool(const std::string& program,
                   const std::vector<std::string>& args,
                   const std::string& scratch_dir);

// The lines of `text`, without their newlines.
std::vector<std::string> Lines(const std::string& text);

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_TOOLS_TOOL_RUNNER_H_
