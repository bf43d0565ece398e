// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Smoke tests of the db_bench program with tiny runs: the LevelDB output
// format that scripts parse, the found counts, the filter savings line,
// --histogram, --use_existing_db, --threads and bad flags. No timing is
// asserted, only formats and counts.

#include <regex>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::test {
namespace db_bench_test {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::Not;

class DbBenchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    db_bench_ = FindTool("bench/db_bench");
    if (db_bench_.empty()) {
      GTEST_FAIL() << "db_bench is not built under " << BinaryDir();
    }
  }

  ToolResult Bench(std::vector<std::string> args) {
    args.push_back("--db=" + dir_.Join("db"));
    return RunTool(db_bench_, args, dir_.path());
  }

  // The report line of benchmark `name` (the n-th one, from 0), or "".
  static std::string LineOf(const std::string& out, const std::string& name,
                            int n = 0) {
    for (const std::string& line : Lines(out)) {
      if (line.rfind(name + " ", 0) == 0 && n-- == 0) return line;
    }
    return "";
  }

  static bool Matches(const std::string& line, const std::string& re) {
    return std::regex_match(line, std::regex(re));
  }

  TempDir dir_;
  std::string db_bench_;
};

// A number with three decimals, as LevelDB prints micros/op, then
// RocksDB's ops/sec (which its tools/benchmark.sh reads).
constexpr char kMicros[] = R"( *[0-9]+\.[0-9]{3} micros/op [0-9]+ ops/sec;)";
// Last on every line: the process CPU per op (all threads), the steadier
// figure on a shared machine.
constexpr char kCpu[] = R"( ?; cpu [0-9]+\.[0-9]{3} micros/op)";

TEST_F(DbBenchTest, SmokeRunPrintsLevelDBFormat) {
  ToolResult r =
      Bench({"--num=1000",
             "--benchmarks=fillseq,readrandom,readmissing,readseq,stats"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  EXPECT_THAT(lines, Contains("Keys:       16 bytes each"));
  EXPECT_THAT(
      lines,
      Contains("Values:     100 bytes each (50 bytes after compression)"));
  EXPECT_THAT(lines, Contains("Entries:    1000"));
  EXPECT_THAT(lines, Contains("Filter:     10 bits/key Bloom"));
  EXPECT_THAT(r.out, HasSubstr("siftdb:     version "));
  EXPECT_THAT(r.out, HasSubstr("CPU:        "));
  EXPECT_THAT(r.out, HasSubstr("RawSize:    0.1 MB (estimated)"));

  const std::string fill = LineOf(r.out, "fillseq");
  EXPECT_TRUE(Matches(fill, std::string("fillseq      :") + kMicros +
                                R"( +[0-9]+\.[0-9] MB/s)" + kCpu))
      << fill;
  const std::string read = LineOf(r.out, "readrandom");
  EXPECT_TRUE(Matches(read, std::string("readrandom   :") + kMicros +
                                R"( +[0-9]+\.[0-9] MB/s)"
                                R"( \(1000 of 1000 found\); filters saved )"
                                R"([0-9]+ block reads)" +
                                kCpu))
      << read;
  const std::string missing = LineOf(r.out, "readmissing");
  EXPECT_TRUE(Matches(missing, std::string("readmissing  :") + kMicros +
                                   R"( \(0 of 1000 found\); filters saved )"
                                   R"([0-9]+ block reads)" +
                                   kCpu))
      << missing;
  const std::string seq = LineOf(r.out, "readseq");
  EXPECT_TRUE(Matches(seq, std::string("readseq      :") + kMicros +
                               R"( +[0-9]+\.[0-9] MB/s)" + kCpu))
      << seq;
}

// With a small write buffer the keys reach tables, and the absent keys
// (which sort between stored ones) are rejected by the filters.
TEST_F(DbBenchTest, FiltersSaveBlockReadsForMissingKeys) {
  ToolResult r = Bench({"--num=20000", "--write_buffer_size=65536",
                        "--benchmarks=fillrandom,compact,readmissing"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string missing = LineOf(r.out, "readmissing");
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      missing, m,
      std::regex(R"(\(0 of 20000 found\); filters saved ([0-9]+))")))
      << missing;
  // 10 bits/key: about 1% false positives.
  EXPECT_GT(std::stoll(m[1]), 18000) << missing;

  r = Bench({"--num=20000", "--write_buffer_size=65536", "--bloom_bits=0",
             "--benchmarks=fillrandom,compact,readmissing"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Filter:     none"));
  EXPECT_THAT(LineOf(r.out, "readmissing"), HasSubstr("filters saved 0 "));
}

TEST_F(DbBenchTest, ReadRandomAfterFillRandomFindsAboutTwoThirds) {
  ToolResult r = Bench({"--num=10000", "--benchmarks=fillrandom,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  const std::string read = LineOf(r.out, "readrandom");
  ASSERT_TRUE(
      std::regex_search(read, m, std::regex(R"(\(([0-9]+) of 10000 found\))")))
      << read;
  // Uniform keys with repeats: 1 - 1/e of them exist (0.632).
  EXPECT_GT(std::stoi(m[1]), 5800);
  EXPECT_LT(std::stoi(m[1]), 6800);
}

TEST_F(DbBenchTest, HistogramPrintsPercentiles) {
  ToolResult r =
      Bench({"--num=500", "--histogram", "--benchmarks=fillseq,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Microseconds per op:"));
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(\nPercentiles: P50: [0-9.]+ P75: [0-9.]+ )"
                        R"(P99: [0-9.]+ P99\.9: [0-9.]+ P99\.99: [0-9.]+\n)")))
      << r.out;
  // Slow operations (write stalls, on fills) are counted with the
  // histogram, and the engine's peak RSS is reported after its run.
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(\nOperations of 1 ms or more: [0-9]+, [0-9.]+ s )"
                        R"(in all\n)")))
      << r.out;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex(R"(\npeak RSS     : ([0-9.]+) MiB \(siftdb's run\))")))
      << r.out;
  EXPECT_GT(std::stod(m[1]), 1.0);
}

TEST_F(DbBenchTest, ThreadsEachRunTheWorkload) {
  ToolResult r =
      Bench({"--num=1000", "--threads=2", "--benchmarks=fillseq,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Threads:    2"));
  EXPECT_THAT(LineOf(r.out, "readrandom"), HasSubstr("(2000 of 2000 found)"));
}

TEST_F(DbBenchTest, EveryBenchmarkRuns) {
  ToolResult r = Bench(
      {"--num=2000", "--reads=500",
       "--benchmarks=fillseq,fillsync,fillrandom,overwrite,readrandom,"
       "readmissing,readhot,readseq,readreverse,seekrandom,readwhilewriting,"
       "deleteseq,deleterandom,compact,fill100K,stats,sstables,heapprofile"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name :
       {"fillseq", "fillsync", "fillrandom", "overwrite", "readrandom",
        "readmissing", "readhot", "readseq", "readreverse", "seekrandom",
        "readwhilewriting", "deleteseq", "deleterandom", "compact",
        "fill100K"}) {
    EXPECT_TRUE(Matches(LineOf(r.out, name),
                        std::string(name) + " *:" + kMicros + ".*"))
        << name << ": " << LineOf(r.out, name);
  }
  EXPECT_THAT(LineOf(r.out, "seekrandom"), HasSubstr(" of 500 found)"));
  EXPECT_THAT(LineOf(r.out, "heapprofile"), HasSubstr(": skipped ("));
}

// waitforcompaction returns once siftdb says no compaction is pending or
// running (its properties) and reports the directory size then; a fill's
// compaction debt has been paid, so a second wait finds nothing to do.
TEST_F(DbBenchTest, WaitForCompactionReportsTheSettledSize) {
  ToolResult r =
      Bench({"--num=20000", "--write_buffer_size=65536",
             "--benchmarks=fillrandom,waitforcompaction,waitforcompaction"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string re =
      R"(waitforcompaction : settled after [0-9]+\.[0-9] s at [0-9]+\.[0-9] MiB )"
      R"(\(no compaction pending or running\))";
  EXPECT_TRUE(Matches(LineOf(r.out, "waitforcompaction", 0), re))
      << LineOf(r.out, "waitforcompaction", 0);
  // Nothing changed after the first wait: the second settles at once.
  EXPECT_THAT(LineOf(r.out, "waitforcompaction", 1),
              HasSubstr(": settled after 0.2 s at "));
}

// --subcompactions reaches Options::max_subcompactions: the header says so
// and the stats show compactions merged in parts (with one thread, none).
// Without the flag each engine keeps its default: siftdb's splits.
TEST_F(DbBenchTest, SubcompactionsSplitCompactions) {
  const std::vector<std::string> common = {
      "--num=60000", "--write_buffer_size=65536", "--max_file_size=16384",
      "--benchmarks=fillrandom,compact,stats"};
  std::vector<std::string> args = common;
  args.push_back("--subcompactions=3");
  ToolResult r = Bench(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Compaction: up to 3 threads per compaction"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m, std::regex(R"(compactions split into parts: ([0-9]+) )")))
      << r.out;
  EXPECT_GT(std::stoi(m[1]), 0) << r.out;

  r = Bench(common);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out,
              HasSubstr("Compaction: up to 2 threads per compaction in "
                        "siftdb, 1 in RocksDB and LevelDB (their defaults)"));
  ASSERT_TRUE(std::regex_search(
      r.out, m, std::regex(R"(compactions split into parts: ([0-9]+) )")))
      << r.out;
  EXPECT_GT(std::stoi(m[1]), 0) << r.out;

  args = common;
  args.push_back("--subcompactions=1");
  r = Bench(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Compaction: one thread per compaction"));
  EXPECT_THAT(r.out, HasSubstr("compactions split into parts: 0 (0 parts)"));
}

// --benchmark_write_rate_limit paces the writers: the header names the
// rate, and a fill of 20,000 entries of 116 bytes at 2,000,000 bytes/s
// cannot take less than 1.16 s minus the limiter's 0.5 ms of slack
// (write_rate_limiter.h), so no write may average under 57.97 µs. (A lower
// bound only: sleeping guarantees it, however loaded the machine.)
TEST_F(DbBenchTest, WriteRateLimitPacesTheWriters) {
  ToolResult r = Bench({"--num=20000", "--benchmark_write_rate_limit=2000000",
                        "--benchmarks=fillseq,deleteseq,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("WriteRate:  limited to 1.91 MB/s of keys and "
                               "values (all threads)"));
  std::smatch m;
  const std::string fill = LineOf(r.out, "fillseq");
  ASSERT_TRUE(std::regex_search(fill, m, std::regex(R"(([0-9.]+) micros/op)")))
      << fill;
  EXPECT_GE(std::stod(m[1]), 57.9) << fill;
  // Deletes write 16-byte keys: at least 8 µs each, less the slack.
  const std::string del = LineOf(r.out, "deleteseq");
  ASSERT_TRUE(std::regex_search(del, m, std::regex(R"(([0-9.]+) micros/op)")))
      << del;
  EXPECT_GE(std::stod(m[1]), 7.9) << del;
  // Reads are not paced (and find nothing: every key was deleted).
  EXPECT_THAT(LineOf(r.out, "readrandom"), HasSubstr("(0 of 20000 found)"));
}

// --free_compaction_inputs_early reaches siftdb's option: by default the
// stats count inputs freed during compactions; with --no..., none, and the
// header says so. One thread per compaction: a split compaction holds its
// inputs to its end either way.
TEST_F(DbBenchTest, FreeCompactionInputsEarlyFlag) {
  const std::vector<std::string> common = {
      "--num=60000", "--write_buffer_size=65536", "--max_file_size=16384",
      "--subcompactions=1", "--benchmarks=fillrandom,compact,stats"};
  ToolResult r = Bench(common);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m, std::regex(R"(inputs freed early: ([0-9]+) tables)")))
      << r.out;
  EXPECT_GT(std::stoi(m[1]), 0) << r.out;
  EXPECT_THAT(r.out, Not(HasSubstr("holds inputs until")));

  std::vector<std::string> args = common;
  args.push_back("--nofree_compaction_inputs_early");
  r = Bench(args);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("inputs freed early: 0 tables"));
  EXPECT_THAT(r.out, HasSubstr("Compaction: siftdb holds inputs until each "
                               "compaction ends"));
}

TEST_F(DbBenchTest, UseExistingDbSkipsFillsAndReadsOldData) {
  ToolResult r = Bench({"--num=1000", "--benchmarks=fillseq"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = Bench(
      {"--num=1000", "--use_existing_db", "--benchmarks=fillseq,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(LineOf(r.out, "fillseq"),
            "fillseq      : skipped (--use_existing_db is true)");
  EXPECT_THAT(LineOf(r.out, "readrandom"), HasSubstr("(1000 of 1000 found)"));
}

TEST_F(DbBenchTest, KeysAreZeroPaddedDecimal) {
  const std::string ldb = FindTool("tools/ldb");
  if (ldb.empty()) GTEST_FAIL() << "ldb is not built under " << BinaryDir();
  ToolResult r = Bench({"--num=3", "--benchmarks=fillseq"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  r = RunTool(ldb, {"--db=" + dir_.Join("db"), "scan", "--limit=3"},
              dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].substr(0, 21), "0000000000000000 ==> ");
  EXPECT_EQ(lines[2].substr(0, 21), "0000000000000002 ==> ");
  // 100-byte values: in hex, "0x" and 200 digits.
  r = RunTool(ldb,
              {"--db=" + dir_.Join("db"), "--hex", "get",
               "30303030303030303030303030303031"},
              dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(r.out.size(), 2u + 200u + 1u) << r.out;
}

TEST_F(DbBenchTest, BadFlagsFail) {
  for (const std::vector<std::string>& args :
       std::vector<std::vector<std::string>>{
           {"--benchmarks=fillseq,nosuchbench"},
           {"--threads=0"},
           {"--subcompactions=-1"},
           {"--compression=zlib"},
           {"--bottommost_compression=zlib"},
           {"--compression_ratio=0"},
           {"--engines=nosuchengine"},
           {"--no_such_flag=1"}}) {
    ToolResult r = Bench(args);
    EXPECT_EQ(r.exit_code, 2) << args[0];
    EXPECT_EQ(Lines(r.err).size(), 1u) << args[0] << ": " << r.err;
  }
  ToolResult r = Bench({"--benchmarks=fillseq,nosuchbench"});
  EXPECT_THAT(r.err, HasSubstr("unknown benchmark 'nosuchbench'"));
}

}  // namespace db_bench_test
}  // namespace siftdb::test
