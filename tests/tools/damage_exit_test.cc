// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The tools never print damaged data as if good: with a byte of a table's
// data block flipped, `ldb get|scan|dump` and `sst_dump --command=scan|check`
// exit non-zero and name the file and the offset of the damaged block.

#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::test {
namespace damage_exit_test {

using ::testing::HasSubstr;

TEST(ToolsOnDamageTest, ReadCommandsExitNonZeroNamingFileAndOffset) {
  TempDir dir;
  const std::string db = dir.Join("db");
  const std::string ldb = FindTool("tools/ldb");
  const std::string sst_dump = FindTool("tools/sst_dump");
  ASSERT_FALSE(ldb.empty() || sst_dump.empty()) << "tools not built";
  for (int i = 0; i < 20; i++) {
    ToolResult r = RunTool(ldb,
                           {"--db=" + db, "--create_if_missing", "put",
                            absl::StrFormat("key%06d", i), "value"},
                           dir.path());
    ASSERT_EQ(0, r.exit_code) << r.err;
  }
  // The first put's table: flip a byte of its only data block's first
  // value (3 length bytes and a 17-byte internal key before it).
  const std::string table = db + "/000005.sst";
  {
    std::fstream f(table, std::ios::in | std::ios::out | std::ios::binary);
    ASSERT_TRUE(f.good()) << table;
    f.seekg(21);
    char c;
    f.get(c);
    f.seekp(21);
    f.put(static_cast<char>(c ^ 0x01));
  }
  const std::vector<std::vector<std::string>> commands = {
      {ldb, "--db=" + db, "get", "key000000"},
      {ldb, "--db=" + db, "scan"},
      {ldb, "--db=" + db, "dump"},
      {sst_dump, "--file=" + table, "--command=scan"},
      {sst_dump, "--file=" + table, "--command=check"},
  };
  for (const auto& cmd : commands) {
    std::vector<std::string> args(cmd.begin() + 1, cmd.end());
    ToolResult r = RunTool(cmd[0], args, dir.path());
    EXPECT_NE(0, r.exit_code) << args[args.size() - 1] << ": " << r.out;
    EXPECT_THAT(r.err, HasSubstr(table)) << args[args.size() - 1];
    EXPECT_THAT(r.err, HasSubstr("offset 0")) << args[args.size() - 1];
  }
}

}  // namespace damage_exit_test
}  // namespace siftdb::test
