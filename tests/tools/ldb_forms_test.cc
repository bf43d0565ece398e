// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Black-box tests of ldb's RocksDB forms: the shared flag outcomes,
// --key_hex/--value_hex and the 0x-is-text rule, dump's range flags and
// --count_only, and the commands that show the DB's files: manifest_dump,
// list_live_files_metadata, idump, approxsize.

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/common_forms.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::test {
namespace ldb_forms_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class LdbFormsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ldb_ = FindTool("tools/ldb");
    if (ldb_.empty()) GTEST_FAIL() << "ldb is not built under " << BinaryDir();
    db_ = dir_.Join("db");
  }
  ToolResult Ldb(std::vector<std::string> args) {
    args.insert(args.begin(), "--db=" + db_);
    return RunTool(ldb_, args, dir_.path());
  }
  // Writes `keys` (value "v-<key>") through the library, then optionally
  // flushes them into a table with a full compaction.
  void Fill(const std::vector<std::string>& keys, bool compact) {
    Options o;
    o.create_if_missing = true;
    auto db = DB::Open(o, db_);
    ASSERT_TRUE(db.ok()) << db.status();
    for (const std::string& k : keys) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), k, "v-" + k).ok());
    }
    if (compact) {
      ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    }
    ASSERT_TRUE((*db)->Close().ok());
  }

  TempDir dir_;
  std::string ldb_;
  std::string db_;
};

TEST_F(LdbFormsTest, CommonForms) {
  ExpectCommonForms(ldb_, "ldb", "--max_keys", {"--max_keys=12x", "dump"},
                    dir_.path());
  ToolResult r = RunTool(ldb_, {"--help"}, dir_.path());
  for (const char* command : {"idump", "manifest_dump", "approxsize",
                              "list_live_files_metadata", "--count_only"}) {
    EXPECT_THAT(r.out, HasSubstr(command));
  }
}

TEST_F(LdbFormsTest, TtlIsRefused) {
  Fill({"a"}, false);
  ToolResult r = Ldb({"--ttl", "dump"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("--ttl is not supported: siftdb has no TTL"));
}

TEST_F(LdbFormsTest, ZeroXIsTextUnlessHex) {
  Fill({"0x6b", "k"}, false);
  ToolResult r = Ldb({"get", "0x6b"});  // the four-byte key "0x6b"
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "v-0x6b\n");
  r = Ldb({"--hex", "get", "0x6b"});  // the key "k"
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "0x762d6b\n");
  r = Ldb({"--key_hex", "get", "6b"});  // hex key, text value
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "v-k\n");
  r = Ldb({"--value_hex", "put", "k2", "0x0001"});  // text key, hex value
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Ldb({"--key_hex", "dump", "--from=0x6b32"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("0x6b32 ==> \\x00\\x01"));
}

TEST_F(LdbFormsTest, DumpHonoursRangeMaxKeysAndCountOnly) {
  Fill({"a", "b", "c", "d", "e"}, false);
  ToolResult r = Ldb({"dump", "--from=b", "--to=e", "--max_keys=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("b ==> v-b", "c ==> v-c"));
  r = Ldb({"dump", "--from=b", "--to=e", "--count_only"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Keys in range: 3\n");
  r = Ldb({"dump", "--limit=1"});  // the old name of --max_keys
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("a ==> v-a"));
  r = Ldb({"dump", "--limit=1", "--max_keys=2"});
  EXPECT_EQ(r.exit_code, 2);
}

TEST_F(LdbFormsTest, IdumpShowsSequencesAndDeletionsFromTablesAndLog) {
  // In the bottom level, where compaction zeroes the sequence numbers.
  Fill({"a", "b"}, /*compact=*/true);
  Options o;
  auto db = DB::Open(o, db_);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Delete(WriteOptions(), "a").ok());     // seq 3, log only
  ASSERT_TRUE((*db)->Put(WriteOptions(), "c", "v2").ok());  // seq 4
  ASSERT_TRUE((*db)->Close().ok());
  ToolResult r = Ldb({"idump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out),
              ElementsAre("a @ 3 : del", "a @ 0 : put ==> v-a",
                          "b @ 0 : put ==> v-b", "c @ 4 : put ==> v2"));
  r = Ldb({"idump", "--from=b", "--max_keys=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(Lines(r.out), ElementsAre("b @ 0 : put ==> v-b"));
  r = Ldb({"idump", "--to=b", "--count_only"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "Internal keys in range: 2\n");
  // dump shows the user's view of the same DB.
  r = Ldb({"dump"});
  EXPECT_THAT(Lines(r.out), ElementsAre("b ==> v-b", "c ==> v2"));
}

TEST_F(LdbFormsTest, ManifestDumpAndLiveFiles) {
  Fill({"apple", "banana", "cherry"}, /*compact=*/true);
  ToolResult r = Ldb({"list_live_files_metadata"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 1u) << r.out;
  EXPECT_THAT(lines[0], ::testing::MatchesRegex(
                            "[0-9]{6}\\.sst level [1-6], [0-9]+ bytes, "
                            "smallest apple, largest cherry, "
                            "compression snappy"));
  const std::string table = lines[0].substr(0, 10);
  r = Ldb({"--key_hex", "list_live_files_metadata"});
  EXPECT_THAT(r.out,
              HasSubstr("smallest 0x6170706c65, largest 0x636865727279"));

  r = Ldb({"manifest_dump"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("edit 1: VersionEdit {"));
  EXPECT_THAT(r.out, HasSubstr("Comparator: "));
  EXPECT_THAT(r.out, HasSubstr("AddFile: "));
  EXPECT_THAT(r.out, HasSubstr("current version: "));
  EXPECT_THAT(r.out, HasSubstr(" " + table + " "));
  r = Ldb({"manifest_dump", "--path=" + dir_.Join("nope")});
  EXPECT_EQ(r.exit_code, 1);
}

TEST_F(LdbFormsTest, ApproxSizeCountsFlushedRanges) {
  std::vector<std::string> keys;
  for (int i = 0; i < 2000; i++)
    keys.push_back("key" + std::to_string(10000 + i));
  Fill(keys, /*compact=*/true);
  ToolResult all = Ldb({"approxsize"});
  ASSERT_EQ(all.exit_code, 0) << all.err;
  ToolResult half = Ldb({"approxsize", "--from=key10000", "--to=key11000"});
  ASSERT_EQ(half.exit_code, 0) << half.err;
  ToolResult none = Ldb({"approxsize", "--from=x", "--to=y"});
  ASSERT_EQ(none.exit_code, 0) << none.err;
  const uint64_t a = std::stoull(all.out), h = std::stoull(half.out),
                 n = std::stoull(none.out);
  EXPECT_GT(a, 4096u);  // several data blocks
  EXPECT_GT(h, 0u);
  EXPECT_LT(h, a);
  EXPECT_EQ(n, 0u);
}

}  // namespace ldb_forms_test
}  // namespace siftdb::test
