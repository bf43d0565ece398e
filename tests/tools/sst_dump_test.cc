// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Black-box tests of sst_dump's RocksDB forms on the tables of a real DB:
// check (the default) silent on a sound table and exit 1 on a damaged
// one, --file=DIR and positional paths, scan --read_num/--prefix, verify,
// identify, raw, recompress and --show_properties (on zstd tables: the
// DB's bottommost compression).

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/common_forms.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::test {
namespace sst_dump_test {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

class SstDumpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    tool_ = FindTool("tools/sst_dump");
    if (tool_.empty()) GTEST_FAIL() << "sst_dump is not built";
    db_ = dir_.Join("db");
    Options o;
    o.create_if_missing = true;
    // The compaction's output is bottommost: its table is zstd's.
    o.bottommost_compression = kZstdCompression;
    auto db = DB::Open(o, db_);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 300; i++) {
      ASSERT_TRUE((*db)
                      ->Put(WriteOptions(), absl::StrFormat("key%04d", i),
                            std::string(50, 'a' + i % 26))
                      .ok());
    }
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    ASSERT_TRUE((*db)->Close().ok());
    for (const auto& e : std::filesystem::directory_iterator(db_)) {
      if (e.path().extension() == ".sst") tables_.push_back(e.path().string());
    }
    ASSERT_FALSE(tables_.empty());
    std::sort(tables_.begin(), tables_.end());
  }
  ToolResult Run(const std::vector<std::string>& args) {
    return RunTool(tool_, args, dir_.path());
  }

  TempDir dir_;
  std::string tool_;
  std::string db_;
  std::vector<std::string> tables_;
};

TEST_F(SstDumpTest, CommonForms) {
  ExpectCommonForms(tool_, "sst_dump", "--read_num",
                    {"--file=" + tables_[0], "--read_num=-1"}, dir_.path());
}

TEST_F(SstDumpTest, CheckIsTheSilentDefaultAndFailsOnDamage) {
  ToolResult r = Run({"--file=" + tables_[0]});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, IsEmpty());
  EXPECT_THAT(r.err, IsEmpty());
  r = Run({db_});  // a directory, given positionally
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, IsEmpty());
  // A flipped byte in the first data block.
  const std::string copy = dir_.Join("copy.sst");
  std::filesystem::copy_file(tables_[0], copy);
  {
    std::fstream f(copy, std::ios::in | std::ios::out | std::ios::binary);
    f.seekg(30);
    char c;
    f.get(c);
    f.seekp(30);
    f.put(static_cast<char>(c ^ 0x10));
  }
  r = Run({"--file=" + copy});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(copy));
  r = Run({"--file=" + dir_.path()});  // the directory holding the copy
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr(copy));
}

TEST_F(SstDumpTest, ScanHonoursReadNumAndPrefix) {
  ToolResult r =
      Run({"--file=" + tables_[0], "--command=scan", "--read_num=2"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(Lines(r.out).size(), 2u) << r.out;
  EXPECT_THAT(Lines(r.out)[0], HasSubstr("'key0000' @ "));
  r = Run({"--command=scan", "--prefix=key012", tables_[0]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Lines(r.out).size(), 10u) << r.out;
  r = Run({"--command=scan", "--input_key_hex", "--prefix=6b6579303132",
           "--read_num=1", "--noverify_checksum", tables_[0]});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ASSERT_EQ(Lines(r.out).size(), 1u);
  EXPECT_THAT(Lines(r.out)[0], HasSubstr("'key0120' @ "));
}

// A table with a zstd dictionary (fixture v2): recompress reads its blocks
// with the dictionary (it failed with "frame needs dictionary" before) and
// tries a dictionary of the same size.
TEST_F(SstDumpTest, RecompressReadsADictionaryTable) {
  const std::string table =
      SourceDir() + "/tests/testdata/compat/v2/zstd_dict/db/000049.sst";
  ToolResult r = Run({"--file=" + table, "--command=recompress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  zstd "));
  EXPECT_THAT(r.out, HasSubstr("  zstd+dictionary of 1024 bytes: "));
  // A table without one gets a dictionary tried too.
  r = Run({"--file=" + tables_[0], "--command=recompress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("  zstd+"));
}

TEST_F(SstDumpTest, VerifyIdentifyRawRecompressAndProperties) {
  ToolResult r = Run({"--file=" + tables_[0], "--command=verify"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr(": OK: verified "));
  r = Run({"--file=" + tables_[0], "--command=identify"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("siftdb table"));
  const std::string not_table = dir_.Join("x.sst");
  std::ofstream(not_table) << std::string(100, 'x');
  r = Run({"--file=" + not_table, "--command=identify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_THAT(r.err, HasSubstr("not a siftdb table"));
  r = Run({"--file=" + tables_[0], "--command=raw"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("footer at offset"));
  r = Run({"--file=" + tables_[0], "--command=recompress"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("data blocks"));
  EXPECT_THAT(r.out, HasSubstr("  none "));
  EXPECT_THAT(r.out, HasSubstr("  snappy "));
  EXPECT_THAT(r.out, HasSubstr("  lz4 "));
  EXPECT_THAT(r.out, HasSubstr("  zstd "));
  r = Run({"--file=" + tables_[0], "--show_properties"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Table properties of " + tables_[0]));
  EXPECT_THAT(r.out, HasSubstr("siftdb.compression"));
  EXPECT_THAT(r.out, HasSubstr("  data blocks stored: zstd "));
  EXPECT_THAT(r.out, HasSubstr("zstd"));
  EXPECT_THAT(r.out, HasSubstr("300"));  // entries
  r = Run({"--file=" + tables_[0], "--command=frob"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_THAT(r.err, HasSubstr("unknown --command=frob"));
}

}  // namespace sst_dump_test
}  // namespace siftdb::test
