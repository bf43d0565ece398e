// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The command-line forms every siftdb tool shares (docs/tools.md): --help
// exits 0 listing the tool's flags, --version exits 0 printing
// "<program> (siftdb) <version>", an unknown flag exits 2 with one line
// naming it, and a bad number exits 2.

#ifndef SIFTDB_TESTS_TOOLS_COMMON_FORMS_H_
#define SIFTDB_TESTS_TOOLS_COMMON_FORMS_H_

#include <algorithm>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "siftdb/version.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::test {

inline void ExpectOneLine(const std::string& text) {
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 1) << text;
}

// `listed` is a flag --help must list; `bad_number` a command line with a
// malformed or out-of-range number.
inline void ExpectCommonForms(const std::string& tool,
                              const std::string& program,
                              const std::string& listed,
                              const std::vector<std::string>& bad_number,
                              const std::string& scratch) {
  using ::testing::HasSubstr;
  ASSERT_FALSE(tool.empty()) << program << " is not built";
  ToolResult r = RunTool(tool, {"--help"}, scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(listed));
  r = RunTool(tool, {"--version"}, scratch);
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, program + " (siftdb) " + Version() + "\n");
  r = RunTool(tool, {"--no_such_flag"}, scratch);
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--no_such_flag"));
  ExpectOneLine(r.err);
  r = RunTool(tool, bad_number, scratch);
  EXPECT_EQ(r.exit_code, 2) << bad_number[0] << ": " << r.out;
  ExpectOneLine(r.err);
}

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_TOOLS_COMMON_FORMS_H_
