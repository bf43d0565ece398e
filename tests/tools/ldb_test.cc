// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Black-box tests of the ldb program on temporary databases: every command,
// text and hex keys, and the exit status of bad usage.

#include <sys/stat.h>

#include <filesystem>
#include <map>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::test {
namespace ldb_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

constexpr int kFailure = 1;
constexpr int kUsage = 2;

bool Exists(const std::string& path) {
  struct stat st;
  return stat(path.c_str(), &st) == 0;
}

class LdbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ldb_ = FindTool("tools/ldb");
    if (ldb_.empty()) GTEST_FAIL() << "ldb is not built under " << BinaryDir();
    db_ = dir_.Join("db");
  }

  // ldb --db=<db_> args...
  ToolResult Ldb(std::vector<std::string> args) {
    args.insert(args.begin(), "--db=" + db_);
    return RunTool(ldb_, args, dir_.path());
  }
  ToolResult LdbRaw(const std::vector<std::string>& args) {
    return RunTool(ldb_, args, dir_.path());
  }
  // Creates the DB with `keys` (text), each with value "v-<key>".
  void Fill(const std::vector<std::string>& keys) {
    for (const std::string& k : keys) {
      ToolResult r = Ldb({"--create_if_missing", "put", k, "v-" + k});
      ASSERT_EQ(r.exit_code, 0) << r.err;
    }
  }

  TempDir dir_;
  std::string ldb_;
  std::string db_;
};

TEST_F(LdbTest, PutGetDeleteText) {
  ToolResult r = Ldb({"--create_if_missing", "put", "hello", "world"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "OK\n");

  r = Ldb({"get", "hello"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "world\n");

  r = Ldb({"delete", "hello"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Ldb({"get", "hello"});
  EXPECT_EQ(r.exit_code, kFailure);
  EXPECT_THAT(r.err, HasSubstr("not found"));
  EXPECT_THAT(r.out, IsEmpty());
}

TEST_F(LdbTest, GetOfAbsentKeyFails) {
  Fill({"a"});
  ToolResult r = Ldb({"get", "b"});
  EXPECT_EQ(r.exit_code, kFailure);
  EXPECT_THAT(r.err, HasSubstr("key b not found"));
}

TEST_F(LdbTest, HexKeysInAndOut) {
  // Binary key and value in hex, with and without the 0x prefix.
  ToolResult r = Ldb({"--create_if_missing", "--hex", "put", "00ff5c", "0102"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Ldb({"--key_hex", "get", "0x00ff5c"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "\\x01\\x02\n");  // text output escapes unprintables
  r = Ldb({"--hex", "get", "00FF5C"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0x0102\n");
  r = Ldb({"dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "\\x00\\xff\\x5c ==> \\x01\\x02\n");
  r = Ldb({"--hex", "dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0x00ff5c ==> 0x0102\n");
}

TEST_F(LdbTest, BadHexIsUsageError) {
  Fill({"a"});
  for (const char* bad : {"0xabc", "0xzz"}) {
    ToolResult r = Ldb({"--hex", "get", bad});
    EXPECT_EQ(r.exit_code, kUsage) << bad;
    EXPECT_THAT(r.err, HasSubstr(bad));
  }
  ToolResult r = Ldb({"--hex", "put", "6b", "not-hex"});
  EXPECT_EQ(r.exit_code, kUsage);
  EXPECT_THAT(r.err, HasSubstr("value 'not-hex'"));
}

TEST_F(LdbTest, ScanHonoursFromToAndLimit) {
  Fill({"e", "c", "a", "d", "b"});
  ToolResult r = Ldb({"scan"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("a ==> v-a", "b ==> v-b", "c ==> v-c",
                                        "d ==> v-d", "e ==> v-e"));
  r = Ldb({"scan", "--from=b", "--to=d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("b ==> v-b", "c ==> v-c"));
  r = Ldb({"scan", "--from=bb", "--limit=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("c ==> v-c", "d ==> v-d"));
  r = Ldb({"scan", "--limit=0"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, IsEmpty());
  r = Ldb({"--hex", "scan", "--from=63", "--limit=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("0x63 ==> 0x762d63"));
}

TEST_F(LdbTest, DumpListsEverything) {
  Fill({"k2", "k1", "k3"});
  ToolResult r = Ldb({"dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out),
              ElementsAre("k1 ==> v-k1", "k2 ==> v-k2", "k3 ==> v-k3"));
}

TEST_F(LdbTest, CompactKeepsContents) {
  std::vector<std::string> keys;
  for (int i = 0; i < 50; i++) keys.push_back("key" + std::to_string(100 + i));
  Fill(keys);
  ToolResult before = Ldb({"dump"});
  ASSERT_EQ(before.exit_code, 0) << before.err;
  ToolResult r = Ldb({"compact"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ToolResult after = Ldb({"dump"});
  ASSERT_EQ(after.exit_code, 0) << after.err;
  EXPECT_EQ(after.out, before.out);
  EXPECT_EQ(Lines(after.out).size(), 50u);
}

TEST_F(LdbTest, StatsAndSSTablesPrintProperties) {
  Fill({"a", "b"});
  ASSERT_EQ(Ldb({"compact"}).exit_code, 0);
  ToolResult r = Ldb({"stats"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, ::testing::Not(IsEmpty()));
  r = Ldb({"sstables"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
}

TEST_F(LdbTest, CheckConsistencyCountsEntries) {
  std::vector<std::string> keys;
  for (int i = 0; i < 30; i++) keys.push_back("k" + std::to_string(i));
  Fill(keys);
  ASSERT_EQ(Ldb({"delete", "k7"}).exit_code, 0);
  ToolResult r = Ldb({"checkconsistency"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "consistent: 29 entries\n");
  ASSERT_EQ(Ldb({"compact"}).exit_code, 0);
  r = Ldb({"checkconsistency"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "consistent: 29 entries\n");
}

TEST_F(LdbTest, CheckConsistencyOfEmptyDatabase) {
  ToolResult r = Ldb({"--create_if_missing", "checkconsistency"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "consistent: 0 entries\n");
}

TEST_F(LdbTest, MissingDatabaseIsNeverCreated) {
  ToolResult r = Ldb({"get", "a"});
  EXPECT_EQ(r.exit_code, kFailure);
  EXPECT_THAT(r.err, HasSubstr(db_));
  EXPECT_THAT(r.err, HasSubstr("--create_if_missing"));
  EXPECT_FALSE(Exists(db_));
  for (const char* cmd : {"put", "dump", "compact", "checkconsistency"}) {
    std::vector<std::string> args = {cmd};
    if (std::string(cmd) == "put") args = {"put", "k", "v"};
    r = Ldb(args);
    EXPECT_EQ(r.exit_code, kFailure) << cmd;
    EXPECT_FALSE(Exists(db_)) << cmd;
  }
}

TEST_F(LdbTest, DirectoryWithoutDatabaseFails) {
  ASSERT_EQ(mkdir(db_.c_str(), 0755), 0);
  ToolResult r = Ldb({"dump"});
  EXPECT_EQ(r.exit_code, kFailure);
  EXPECT_THAT(r.err, HasSubstr(db_));
}

TEST_F(LdbTest, BadUsageExitsWithTwo) {
  Fill({"a"});
  struct Case {
    std::vector<std::string> args;
    const char* message;
  };
  const std::vector<Case> cases = {
      {{"--db=" + db_}, "no command"},
      {{"--db=" + db_, "frobnicate"}, "unknown command 'frobnicate'"},
      {{"get", "a"}, "--db=DIR is required"},
      {{"--db=" + db_, "get"}, "get takes 1 argument"},
      {{"--db=" + db_, "get", "a", "b"}, "get takes 1 argument"},
      {{"--db=" + db_, "put", "a"}, "put takes 2 arguments"},
      {{"--db=" + db_, "dump", "extra"}, "dump takes 0 arguments"},
  };
  for (const Case& c : cases) {
    ToolResult r = LdbRaw(c.args);
    EXPECT_EQ(r.exit_code, kUsage) << c.message;
    EXPECT_THAT(r.err, HasSubstr(c.message));
    EXPECT_THAT(r.err, HasSubstr("(try --help)"));
    EXPECT_EQ(Lines(r.err).size(), 1u) << r.err;
  }
}

TEST_F(LdbTest, UnknownFlagFails) {
  ToolResult r = LdbRaw({"--db=" + db_, "--no_such_flag", "dump"});
  EXPECT_EQ(r.exit_code, kUsage);
  EXPECT_THAT(r.err, HasSubstr("no_such_flag"));
}

// name -> size of every file of dir.
std::map<std::string, uintmax_t> Sizes(const std::string& dir) {
  std::map<std::string, uintmax_t> out;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    out[e.path().filename().string()] = e.file_size();
  }
  return out;
}

// The read commands open the DB read-only: they work while another process
// (here: this one) has it open, and write nothing to the directory.
TEST_F(LdbTest, ReadCommandsWorkBesideAnOpenDBAndWriteNothing) {
  Fill({"a", "b", "c"});
  Options o;
  auto db = DB::Open(o, db_);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Put(WriteOptions(), "d", "v-d").ok());  // only in a log
  const auto before = Sizes(db_);
  ToolResult r = Ldb({"get", "d"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "v-d\n");
  r = Ldb({"scan"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 4u);
  for (const char* cmd : {"dump", "stats", "checkconsistency", "sstables"}) {
    r = Ldb({cmd});
    EXPECT_EQ(r.exit_code, 0) << cmd << ": " << r.err;
  }
  EXPECT_EQ(before, Sizes(db_)) << "a read command changed the directory";
  // A write command needs the lock the running DB holds.
  r = Ldb({"put", "e", "v-e"});
  EXPECT_EQ(r.exit_code, kFailure);
  EXPECT_THAT(r.err, HasSubstr("LOCK"));
}

TEST_F(LdbTest, CheckpointMakesAnOpenableCopy) {
  Fill({"a", "b"});
  const std::string cp = dir_.Join("cp");
  ToolResult r = Ldb({"checkpoint", "--checkpoint_dir=" + cp});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = LdbRaw({"--db=" + cp, "scan"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("a ==> v-a", "b ==> v-b"));
  // The directory must not exist; the flag is required.
  r = Ldb({"checkpoint", "--checkpoint_dir=" + cp});
  EXPECT_EQ(r.exit_code, kFailure);
  EXPECT_THAT(r.err, HasSubstr("already exists"));
  r = Ldb({"checkpoint"});
  EXPECT_EQ(r.exit_code, kUsage);
  EXPECT_THAT(r.err, HasSubstr("--checkpoint_dir"));
}

TEST_F(LdbTest, RepairRebuildsALostManifest) {
  Fill({"a", "b", "c"});
  ASSERT_EQ(Ldb({"compact"}).exit_code, 0);
  for (const auto& e : std::filesystem::directory_iterator(db_)) {
    const std::string name = e.path().filename().string();
    if (name == "CURRENT" || name.rfind("MANIFEST-", 0) == 0) {
      std::filesystem::remove(e.path());
    }
  }
  ToolResult r = Ldb({"scan"});
  EXPECT_EQ(r.exit_code, kFailure);
  r = Ldb({"repair"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Ldb({"scan"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("a ==> v-a", "b ==> v-b", "c ==> v-c"));
}

}  // namespace ldb_test
}  // namespace siftdb::test
