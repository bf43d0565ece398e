// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The shared command-line forms of db_stress and db_crashtest (their
// workloads are tested by the crash suite), and that the db_stress command
// lines db_crashtest builds still parse.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/common_forms.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::test {
namespace stress_tools_test {

using ::testing::HasSubstr;

TEST(StressToolsTest, DbStressForms) {
  TempDir dir;
  const std::string tool = FindTool("tools/db_stress");
  ExpectCommonForms(tool, "db_stress", "--sync_fraction",
                    {"--db=" + dir.Join("db"), "--mode=run", "--threads=x"},
                    dir.path());
  ToolResult r =
      RunTool(tool, {"--db=" + dir.Join("db"), "--mode=frob"}, dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown --mode=frob"));
  r = RunTool(tool, {"--db=" + dir.Join("db"), "--mode=run", "--", "x"},
              dir.path());
  EXPECT_EQ(r.exit_code, 2);
  // The flags db_crashtest passes, in its forms.
  r = RunTool(
      tool,
      {"--mode=run", "--subcompactions=2", "--seed=5", "--db=" + dir.Join("db"),
       "--threads=2", "--keys=100", "--duration_ms=200"},
      dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  r = RunTool(
      tool,
      {"--mode=verify", "--db=" + dir.Join("db"), "--threads=2", "--keys=100"},
      dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("verify: ok"));
}

TEST(StressToolsTest, DbCrashtestForms) {
  TempDir dir;
  const std::string tool = FindTool("tools/db_crashtest");
  ExpectCommonForms(tool, "db_crashtest", "--repair_every",
                    {"--db=" + dir.Join("db"), "--cycles=1e3"}, dir.path());
  ToolResult r =
      RunTool(tool, {"--db=" + dir.Join("db"), "--min_ms=10", "--max_ms=5"},
              dir.path());
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--max_ms must be >= --min_ms"));
  r = RunTool(
      tool,
      {"--db=" + dir.Join("db"), "--cycles=1", "--min_ms=50", "--max_ms=100",
       "--threads=2", "--keys=200", "--seed=3", "--subcompactions=2"},
      dir.path());
  EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_THAT(r.out, HasSubstr("1 cycles passed"));
}

}  // namespace stress_tools_test
}  // namespace siftdb::test
