// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// sst_dump end to end: runs the built binary
// ($SIFTDB_BINARY_DIR/tools/sst_dump) on good, damaged and foreign files and
// checks its output, stderr and exit status. Skipped when the binary is not
// built.

#include <sys/wait.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "table/table_builder.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"
#include "tests/table/table_test_util.h"

namespace siftdb {
namespace sst_dump_test {

using test::IKey;
using test::KVList;

struct RunResult {
  int exit_code = -1;
  std::string out, err;
};

std::string ReadAll(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void WriteAll(const std::string& path, const std::string& data) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << data;
}

std::string ShellQuote(const std::string& s) {
  std::string q = "'";
  for (char c : s) {
    if (c == '\'') {
      q += "'\\''";
    } else {
      q += c;
    }
  }
  return q + "'";
}

class SstDumpTest : public testing::Test {
 protected:
  void SetUp() override {
    binary_ = test::BinaryDir() + "/tools/sst_dump";
    if (!std::ifstream(binary_).good()) {
      GTEST_FAIL() << binary_ << " not built";
    }
  }

  RunResult Run(const std::vector<std::string>& args) {
    std::string cmd = ShellQuote(binary_);
    for (const std::string& a : args) cmd += " " + ShellQuote(a);
    const std::string out = tmp_.Join("stdout"), err = tmp_.Join("stderr");
    cmd += " >" + ShellQuote(out) + " 2>" + ShellQuote(err);
    const int status = std::system(cmd.c_str());
    RunResult r;
    r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 1000;
    r.out = ReadAll(out);
    r.err = ReadAll(err);
    return r;
  }

  // Writes a table of n entries (user keys key0000.., every fifth a
  // deletion) with a blocked Bloom filter; returns its bytes.
  std::string WriteTable(const std::string& name, int n, KVList* entries) {
    TableOptions options;
    options.block_size = 512;
    options.filter_policy = NewBloomFilterPolicy(10);
    test::StringSink sink;
    TableBuilder builder(options, &sink);
    for (int i = 0; i < n; i++) {
      const std::string user = absl::StrFormat("key%04d", i);
      const bool del = i % 5 == 4;
      std::string k = IKey(user, 100 + i, del ? kTypeDeletion : kTypeValue);
      std::string v = del ? "" : absl::StrFormat("value%d", i);
      builder.Add(k, v);
      if (entries != nullptr) entries->emplace_back(k, v);
    }
    EXPECT_TRUE(builder.Finish().ok());
    WriteAll(tmp_.Join(name), sink.contents());
    return sink.contents();
  }

  std::string binary_;
  test::TempDir tmp_;
};

int CountLines(const std::string& s) {
  return static_cast<int>(std::count(s.begin(), s.end(), '\n'));
}

TEST_F(SstDumpTest, ScanPrintsEveryEntry) {
  KVList entries;
  WriteTable("000012.sst", 100, &entries);
  RunResult r = Run({"--file=" + tmp_.Join("000012.sst"), "--command=scan"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.err, "");
  EXPECT_EQ(CountLines(r.out), 100);
  EXPECT_NE(r.out.find("'key0000' @ 100 : put => 'value0'\n"),
            std::string::npos)
      << r.out.substr(0, 300);
  EXPECT_NE(r.out.find("'key0004' @ 104 : del => ''\n"), std::string::npos);
  // check is the default command (RocksDB's): silent on a sound table.
  RunResult d = Run({"--file=" + tmp_.Join("000012.sst")});
  EXPECT_EQ(d.exit_code, 0) << d.err;
  EXPECT_EQ(d.out, "");
}

TEST_F(SstDumpTest, ScanRangeLimitAndHex) {
  WriteTable("000012.sst", 100, nullptr);
  const std::string file = "--file=" + tmp_.Join("000012.sst");
  RunResult r = Run({file, "--command=scan", "--from=key0010", "--to=key0013"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "'key0010' @ 110 : put => 'value10'\n"
            "'key0011' @ 111 : put => 'value11'\n"
            "'key0012' @ 112 : put => 'value12'\n");
  r = Run(
      {file, "--command=scan", "--from=key0010", "--limit=2", "--output_hex"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out,
            "'6b657930303130' @ 110 : put => '76616c75653130'\n"
            "'6b657930303131' @ 111 : put => '76616c75653131'\n");
  r = Run({file, "--command=scan", "--input_hex",
           "--from=6b657930303938"});  // key0098
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(CountLines(r.out), 2);
}

TEST_F(SstDumpTest, CheckVerifyIdentifyRaw) {
  WriteTable("000012.sst", 300, nullptr);
  const std::string file = "--file=" + tmp_.Join("000012.sst");
  RunResult r = Run({file, "--command=check"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out, "");  // silent when sound

  r = Run({file, "--command=verify"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find(": OK: verified"), std::string::npos) << r.out;

  r = Run({file, "--command=identify"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("siftdb table, format version 1, 300 entries"),
            std::string::npos)
      << r.out;

  r = Run({file, "--command=raw"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* want :
       {"footer at offset", "magic 0x3154535374666953",
        "data block 0 at offset 0, size", "stored ", "crc ok",
        "filter.siftdb.BlockedBloom at offset", "filter trailer: kind 'B'",
        "index at offset", "properties at offset", "metaindex at offset",
        "siftdb.num.entries: 300", "'key0000' @ 100 : put => 'value0'"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want;
  }
  EXPECT_EQ(r.out.find("MISMATCH"), std::string::npos);
}

TEST_F(SstDumpTest, ShowPropertiesAndFilter) {
  WriteTable("000012.sst", 1000, nullptr);
  RunResult r = Run({"--file=" + tmp_.Join("000012.sst"), "--command=identify",
                     "--show_properties", "--show_filter"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* want :
       {"siftdb.num.entries: 1000", "siftdb.num.deletions: 200",
        "siftdb.filter.policy: siftdb.BlockedBloom",
        "siftdb.key.smallest: 'key0000' @ 100 : put",
        "policy: siftdb.BlockedBloom", "keys: 1000",
        "bits per key (configured): 10", "k: ", "fill ratio: 0.",
        "estimated FP rate: 0.0"}) {
    EXPECT_NE(r.out.find(want), std::string::npos) << want << "\n" << r.out;
  }
}

TEST_F(SstDumpTest, DirectoryDumpsEveryTable) {
  WriteTable("000012.sst", 10, nullptr);
  WriteTable("000013.sst", 20, nullptr);
  WriteAll(tmp_.Join("LOG"), "not a table");
  RunResult r = Run({"--file=" + tmp_.path(), "--command=scan"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("==> " + tmp_.Join("000012.sst") + " <=="),
            std::string::npos)
      << r.out;
  EXPECT_EQ(CountLines(r.out), 10 + 20 + 2) << r.out;  // entries, headers
  EXPECT_EQ(r.out.find("LOG"), std::string::npos);
  r = Run({"--file=" + tmp_.path(), "--command=verify"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("000013.sst: OK: verified"), std::string::npos);

  // One damaged table in the directory: the others still checked, exit 1.
  WriteAll(tmp_.Join("000014.sst"),
           "garbage that is not a table at all, "
           "long enough to have a footer's room....");
  r = Run({"--file=" + tmp_.path(), "--command=verify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("000013.sst: OK"), std::string::npos);
  EXPECT_NE(r.err.find("000014.sst: footer at offset"), std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("not a siftdb table"), std::string::npos) << r.err;
}

TEST_F(SstDumpTest, DamagedFilesFailWithTheOffset) {
  const std::string good = WriteTable("000012.sst", 300, nullptr);
  const std::string path = tmp_.Join("000012.sst");
  // Flip a byte inside data block 0 (its first bytes are at offset 0..).
  std::string bad = good;
  bad[20] ^= 0x40;
  WriteAll(path, bad);
  for (const char* cmd : {"check", "verify", "scan"}) {
    RunResult r = Run({"--file=" + path, std::string("--command=") + cmd});
    EXPECT_EQ(r.exit_code, 1) << cmd;
    EXPECT_NE(r.err.find(path + ": block at offset 0: checksum mismatch"),
              std::string::npos)
        << cmd << ": " << r.err;
  }
  RunResult r = Run({"--file=" + path, "--command=raw"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.out.find("crc MISMATCH"), std::string::npos);

  // Truncated.
  WriteAll(path, good.substr(0, good.size() - 10));
  r = Run({"--file=" + path, "--command=identify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a siftdb table"), std::string::npos) << r.err;
  r = Run({"--file=" + path, "--command=check"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_FALSE(r.err.empty());

  // Foreign and empty files.
  WriteAll(path, std::string(4000, 'x'));
  r = Run({"--file=" + path, "--command=identify"});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a siftdb table"), std::string::npos) << r.err;
  WriteAll(path, "");
  r = Run({"--file=" + path});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not a siftdb table"), std::string::npos) << r.err;
}

TEST_F(SstDumpTest, BitFlipsAnywhereNeverCrash) {
  const std::string good = WriteTable("000012.sst", 60, nullptr);
  const std::string path = tmp_.Join("000012.sst");
  int detected = 0, runs = 0;
  for (size_t i = 0; i < good.size(); i += good.size() / 37 + 1) {
    std::string bad = good;
    bad[i] ^= 0x01;
    WriteAll(path, bad);
    for (const char* cmd : {"check", "raw", "scan"}) {
      RunResult r = Run({"--file=" + path, std::string("--command=") + cmd});
      runs++;
      ASSERT_TRUE(r.exit_code == 0 || r.exit_code == 1)
          << cmd << " exit " << r.exit_code << " flipping byte " << i << "\n"
          << r.err;
      if (r.exit_code == 1) {
        EXPECT_FALSE(r.err.empty());
        detected++;
      }
    }
  }
  EXPECT_GT(detected, runs / 2);
}

TEST_F(SstDumpTest, UsageErrors) {
  RunResult r = Run({"--command=scan"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("give a table or directory (--file)"), std::string::npos)
      << r.err;
  r = Run({"--file=x", "--bogus"});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("unknown flag --bogus"), std::string::npos);
  r = Run({"--file=x", "--command=explode"});
  EXPECT_EQ(r.exit_code, 2);
  r = Run({"--file=" + tmp_.Join("nope.sst")});
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("no such file"), std::string::npos);
  r = Run({"--help"});
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("--show_filter"), std::string::npos);
}

}  // namespace sst_dump_test
}  // namespace siftdb
