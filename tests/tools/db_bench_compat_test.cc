// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// db_bench's command line through the tools' front end (exit codes 0, 1, 2
// and their one-line messages), LevelDB 1.23's remaining flags and
// benchmarks, and RocksDB's flags and benchmarks: mapped, ignored with a
// note, or refused naming the missing feature (docs/db_bench.md). Tiny runs;
// formats and counts only, no timing.

#include <filesystem>
#include <regex>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/support/temp_dir.h"
#include "tests/tools/tool_runner.h"

namespace siftdb::test {
namespace db_bench_compat_test {

using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class DbBenchCompatTest : public ::testing::Test {
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

  // The report line of benchmark `name`, or "".
  static std::string LineOf(const std::string& out, const std::string& name) {
    for (const std::string& line : Lines(out)) {
      if (line.rfind(name + " ", 0) == 0) return line;
    }
    return "";
  }

  static int Count(const std::string& text, const std::string& what) {
    int n = 0;
    for (size_t pos = text.find(what); pos != std::string::npos;
         pos = text.find(what, pos + 1)) {
      n++;
    }
    return n;
  }

  // A usage error: exit code 2 and one line on stderr.
  void ExpectUsageError(const std::vector<std::string>& args,
                        const std::string& message) {
    ToolResult r = Bench(args);
    EXPECT_EQ(r.exit_code, 2) << args[0] << ": " << r.err;
    EXPECT_EQ(Lines(r.err).size(), 1u) << args[0] << ": " << r.err;
    EXPECT_THAT(r.err, HasSubstr(message)) << args[0];
    EXPECT_THAT(r.err, StartsWith("db_bench: ")) << args[0];
  }

  TempDir dir_;
  std::string db_bench_;
};

// A measured line: name, micros/op, RocksDB's ops/sec.
constexpr char kLine[] = R"( *: *[0-9]+\.[0-9]{3} micros/op [0-9]+ ops/sec;.*)";

TEST_F(DbBenchCompatTest, HelpListsTheFlagsAndExitsZero) {
  ToolResult r = Bench({"--help"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("--num (default: \"1000000\")"));
  EXPECT_THAT(r.out, HasSubstr("--key_prefix (default: \"0\")"));
  EXPECT_THAT(r.out, HasSubstr("--target_file_size_base (default:"));
  EXPECT_THAT(r.out, HasSubstr("Accepted and ignored"));
  EXPECT_THAT(r.out, HasSubstr(" --max_background_jobs"));
  // Only db_bench's own flags: not the library's or absl's.
  EXPECT_THAT(r.out, Not(HasSubstr("--flagfile")));
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(DbBenchCompatTest, VersionExitsZero) {
  ToolResult r = Bench({"--version"});
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, StartsWith("db_bench (siftdb) "));
}

TEST_F(DbBenchCompatTest, UnknownFlagsAndBadValuesExitTwo) {
  ExpectUsageError({"--no_such_flag=1"}, "unknown flag --no_such_flag");
  ExpectUsageError({"--num=12abc"}, "--num");
  ExpectUsageError({"--num=99999999999999999999999"}, "--num");
  ExpectUsageError({"--reads=-"}, "--reads");
  ExpectUsageError({"--compression_ratio=half"}, "--compression_ratio");
  ExpectUsageError({"--histogram=maybe"}, "--histogram");
  ExpectUsageError({"--reuse_logs=2x"}, "--reuse_logs");
  ExpectUsageError({"--batch_size=0"}, "--batch_size=0");
  ExpectUsageError({"--readwritepercent=101"}, "--readwritepercent");
  ExpectUsageError({"--level0_slowdown_writes_trigger=2"},
                   "need 1 <= compaction <= slowdown <= stop");
  ExpectUsageError({"stray"}, "unexpected argument 'stray'");
}

TEST_F(DbBenchCompatTest, RefusedFlagsNameTheMissingFeature) {
  ExpectUsageError({"--keys_per_prefix=4"}, "needs --prefix_size");
  ExpectUsageError({"--prefix_size=-1"}, "--prefix_size=-1: must be in");
  ExpectUsageError({"--compression_type=zlib"}, "none, snappy, lz4 or zstd");
  ExpectUsageError({"--compression_type=bzip2"}, "none, snappy, lz4 or zstd");
  ExpectUsageError({"--compression=xpress"}, "none, snappy, lz4 or zstd");
  ExpectUsageError({"--disable_wal=1", "--sync=1"},
                   "a synced write needs the log");
  ExpectUsageError({"--use_direct_reads=1"}, "no direct I/O");
  ExpectUsageError({"--num_levels=3"}, "fixed at 7");
  ExpectUsageError({"--compaction_style=1"}, "leveled compaction");
  ExpectUsageError({"--enable_blob_files=true"}, "no blob files");
  ExpectUsageError({"--benchmarks=mergerandom"}, "merge operator");
}

// Values that ask for what siftdb does anyway are accepted.
TEST_F(DbBenchCompatTest, TodaysBehaviourIsAccepted) {
  ToolResult r = Bench(
      {"--num=100", "--benchmarks=fillseq", "--prefix_size=0",
       "--keys_per_prefix=0", "--compression_type=snappy", "--disable_wal=0",
       "--use_direct_reads=false", "--num_levels=7", "--compaction_style=0",
       "--target_file_size_base=1048576", "--max_bytes_for_level_base=4194304",
       "--max_bytes_for_level_multiplier=8",
       "--level0_file_num_compaction_trigger=2",
       "--level0_slowdown_writes_trigger=20", "--level0_stop_writes_trigger=30",
       "--statistics"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Compression: snappy"));
  EXPECT_THAT(r.out, HasSubstr("max file 1.0 MiB"));
  EXPECT_THAT(r.out, HasSubstr("STATISTICS:\n"));
  r = Bench({"--num=100", "--benchmarks=fillseq", "--compression_type=none"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Compression: none"));
  // RocksDB's other types, a level and a bottommost type map to siftdb's.
  r = Bench({"--num=2000", "--benchmarks=fillrandom,compact,readrandom",
             "--compression_type=lz4", "--bottommost_compression=zstd",
             "--compression_level=5"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Compression: lz4 (level 5), bottommost zstd"));
  r = Bench({"--num=200", "--benchmarks=fillseq", "--compression_type=zstd"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Compression: zstd\n"));
}

// benchmark.sh passes flags that only tune RocksDB: each is named once.
TEST_F(DbBenchCompatTest, IgnoredFlagsAreNamedOnce) {
  ToolResult r = Bench({"--num=100", "--benchmarks=fillseq",
                        "--max_background_jobs=16", "--max_background_jobs=4",
                        "--memtablerep=skip_list", "--num_levels=8"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.err, "ignoring --max_background_jobs"), 1) << r.err;
  EXPECT_EQ(Count(r.err, "ignoring --memtablerep"), 1) << r.err;
  EXPECT_EQ(Count(r.err, "--num_levels=8: siftdb has 7 levels"), 1) << r.err;
  EXPECT_THAT(LineOf(r.out, "fillseq"), HasSubstr(" ops/sec;"));
}

// gflags' --undefok: its unknown names are ignored, the others stay refused.
TEST_F(DbBenchCompatTest, UndefokNamesAreIgnored) {
  ToolResult r = Bench({"--undefok=blob_cache_size,num", "--blob_cache_size=17",
                        "--num=100", "--benchmarks=fillseq"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.err, "ignoring --blob_cache_size"), 1) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Entries:    100\n"));
  ExpectUsageError({"--undefok=blob_cache_size", "--other_unknown=1"},
                   "unknown flag --other_unknown");
}

// benchmark.sh's bulkload passes --disable_wal=1: the writes skip the log,
// and the close at the end flushes them, so a later run finds every key.
TEST_F(DbBenchCompatTest, DisableWalSkipsTheLogAndLosesNothing) {
  ToolResult r =
      Bench({"--num=1000", "--benchmarks=fillrandom", "--disable_wal=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  uint64_t log_bytes = 0;
  int tables = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir_.Join("db"))) {
    if (e.path().extension() == ".log") log_bytes += e.file_size();
    if (e.path().extension() == ".sst") tables++;
  }
  EXPECT_EQ(0u, log_bytes);
  EXPECT_GE(tables, 1);
  r = Bench({"--num=1000", "--benchmarks=readrandom", "--use_existing_db=1"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(LineOf(r.out, "readrandom"), HasSubstr("(1000 of 1000 found)"));
  // --lenient, once needed beside --disable_wal=1, is still accepted; flags
  // whose stand-in would flatter siftdb stay refused.
  r = Bench({"--num=10", "--benchmarks=fillrandom", "--lenient"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  ExpectUsageError({"--lenient", "--use_direct_reads=1"}, "no direct I/O");
}

// benchmark.sh's bulkload: level 0 grows past every trigger without a
// stall, then the compact benchmark merges it (waitforcompaction returns
// although a compaction is due: none will start on its own).
TEST_F(DbBenchCompatTest, DisableAutoCompactionsLeavesLevel0ToCompact) {
  ToolResult r =
      Bench({"--num=20000", "--value_size=100", "--write_buffer_size=65536",
             "--level0_file_num_compaction_trigger=2",
             "--level0_slowdown_writes_trigger=3",
             "--level0_stop_writes_trigger=4", "--disable_auto_compactions=1",
             "--benchmarks=fillrandom,waitforcompaction,stats,"
             "compact,stats"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("automatic compactions off"));
  // The first stats: every table still at level 0, far past the stop
  // trigger; after compact: level 1 only.
  const size_t first = r.out.find("Level  Files");
  const size_t compact = r.out.find("compact      :");
  ASSERT_NE(first, std::string::npos) << r.out;
  ASSERT_NE(compact, std::string::npos) << r.out;
  const std::string before = r.out.substr(first, compact - first);
  const std::string after = r.out.substr(compact);
  EXPECT_THAT(before, HasSubstr("\n  0 ")) << before;
  EXPECT_THAT(before, Not(HasSubstr("\n  1 "))) << before;
  EXPECT_THAT(after, HasSubstr("\n  1 ")) << after;
  EXPECT_THAT(after, Not(HasSubstr("\n  0 "))) << after;
}

// --optimize_filters_for_hits (RocksDB's flag, mapped): after compact every
// table is on the bottommost level without a filter, so readmissing gets no
// help from filters; without the flag the filters save most block reads.
TEST_F(DbBenchCompatTest, OptimizeFiltersForHitsDropsBottomFilters) {
  ToolResult r =
      Bench({"--num=5000", "--reads=1000", "--optimize_filters_for_hits",
             "--benchmarks=fillrandom,compact,readmissing"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Bloom, none on the bottommost level\n"));
  EXPECT_THAT(LineOf(r.out, "readmissing"),
              HasSubstr("; filters saved 0 block reads"));
  r = Bench({"--num=5000", "--reads=1000",
             "--benchmarks=fillrandom,compact,readmissing"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("none on the bottommost level")));
  EXPECT_THAT(LineOf(r.out, "readmissing"),
              Not(HasSubstr("; filters saved 0 block reads")));
}

// --cache_index_and_filter_blocks (RocksDB's flag, mapped): the filters are
// in the block cache (memstats says how many bytes), a cache smaller than
// the filters makes probes read them again, and readmissing still finds
// nothing and readrandom everything.
TEST_F(DbBenchCompatTest, CacheIndexAndFilterBlocksPutsFiltersInTheCache) {
  ToolResult r = Bench({"--num=20000", "--reads=2000", "--statistics",
                        "--cache_index_and_filter_blocks", "--cache_size=16384",
                        "--benchmarks=fillseq,compact,readrandom,"
                        "readmissing,memstats"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Bloom, kept in the block cache\n"));
  EXPECT_THAT(LineOf(r.out, "readrandom"), HasSubstr("(2000 of 2000 found)"));
  EXPECT_THAT(LineOf(r.out, "readmissing"), HasSubstr("(0 of 2000 found)"));
  std::smatch m;
  ASSERT_TRUE(std::regex_search(
      r.out, m,
      std::regex(
          R"(table filters: ([0-9]+) bytes, ([0-9]+) of them in the block cache)")))
      << r.out;
  EXPECT_EQ(m[1], m[2]);
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(filter\.cache_misses: [1-9])")))
      << r.out;
}

// --prefix_size with --keys_per_prefix: seekrandom seeks to group
// prefixes, half of them absent; the absent ones are rejected by the
// prefix filters (no data block read for most).
TEST_F(DbBenchCompatTest, PrefixSeeksFindHalfTheGroups) {
  ToolResult r = Bench({"--num=20000", "--reads=2000", "--prefix_size=6",
                        "--keys_per_prefix=10", "--statistics",
                        "--benchmarks=fillrandom,compact,seekrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Prefixes:   6-byte prefix extractor"));
  EXPECT_THAT(r.out, HasSubstr("2000 groups written"));
  const std::string line = LineOf(r.out, "seekrandom");
  const size_t of = line.find(" of 2000 found");
  ASSERT_NE(of, std::string::npos) << line;
  const size_t open = line.rfind('(', of);
  const int found = std::stoi(line.substr(open + 1, of - open - 1));
  EXPECT_GT(found, 850) << line;  // about half: the present groups
  EXPECT_LT(found, 1150) << line;
  EXPECT_THAT(r.out, HasSubstr("prefix_filter.negatives: "));
  EXPECT_THAT(r.out, Not(HasSubstr("prefix_filter.negatives: 0\n")));

  // The baseline: total-order cursors find the same and probe no prefix.
  r = Bench({"--num=20000", "--reads=2000", "--prefix_size=6",
             "--keys_per_prefix=10", "--statistics", "--total_order_seek",
             "--benchmarks=fillrandom,compact,seekrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("total-order seeks"));
  EXPECT_THAT(LineOf(r.out, "seekrandom"),
              HasSubstr(absl::StrFormat("(%d of 2000 found)", found)));
  EXPECT_THAT(r.out, HasSubstr("prefix_filter.checks: 0\n"));
}

// --absent_prefix_percent splits seekrandom's prefix seeks: 0 finds every
// group sought, 100 none.
TEST_F(DbBenchCompatTest, AbsentPrefixPercentChoosesTheGroupsSought) {
  for (const auto& [percent, expect_all] :
       {std::pair{"0", true}, std::pair{"100", false}}) {
    ToolResult r = Bench({"--num=20000", "--reads=500", "--prefix_size=6",
                          "--keys_per_prefix=10",
                          absl::StrCat("--absent_prefix_percent=", percent),
                          "--benchmarks=fillrandom,seekrandom"});
    ASSERT_EQ(r.exit_code, 0) << r.err;
    EXPECT_THAT(
        LineOf(r.out, "seekrandom"),
        HasSubstr(expect_all ? "(500 of 500 found)" : "(0 of 500 found)"))
        << percent;
  }
  ExpectUsageError({"--absent_prefix_percent=101"},
                   "--absent_prefix_percent=101: must be in [0, 100]");
}

TEST_F(DbBenchCompatTest, NewBenchmarksPrintTheirLines) {
  const std::vector<std::string> measured = {"fillbatch",
                                             "filluniquerandom",
                                             "readrandomsmall",
                                             "seekordered",
                                             "readrandomwriterandom",
                                             "updaterandom",
                                             "multireadrandom",
                                             "newiterator",
                                             "flush",
                                             "open",
                                             "fillseqdeterministic"};
  std::string list;
  for (const std::string& name : measured) list += name + ",";
  ToolResult r =
      Bench({"--num=1000", "--benchmarks=" + list + "levelstats,memstats"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const std::string& name : measured) {
    const std::string line = LineOf(r.out, name);
    EXPECT_TRUE(std::regex_match(line, std::regex(name + kLine)))
        << name << ": " << line;
  }
  // filluniquerandom writes every key once, so all are found.
  EXPECT_THAT(LineOf(r.out, "readrandomsmall"), HasSubstr("(1 of 1 found)"));
  EXPECT_THAT(LineOf(r.out, "seekordered"), HasSubstr("(1000 of 1000 found)"));
  EXPECT_TRUE(std::regex_search(
      LineOf(r.out, "readrandomwriterandom"),
      std::regex(R"(\( reads:[0-9]+ writes:[0-9]+ total:1000 found:[0-9]+\))")))
      << LineOf(r.out, "readrandomwriterandom");
  EXPECT_THAT(LineOf(r.out, "updaterandom"),
              HasSubstr("( reads:1000 writes:1000 total:1000 found:1000)"));
  // filluniquerandom wrote every key: each key of each MultiGet is found.
  EXPECT_THAT(LineOf(r.out, "multireadrandom"),
              HasSubstr("(1000 of 1000 found)"));
  EXPECT_THAT(LineOf(r.out, "fillseqdeterministic"),
              HasSubstr("(fillseq, then one full compaction)"));
  EXPECT_THAT(r.out, HasSubstr("levelstats   : per level\n"));
  // siftdb.levelstats' table (one row per level).
  EXPECT_TRUE(
      std::regex_search(r.out, std::regex(R"(Level +Files +Size\(MB\))")))
      << r.out;
  EXPECT_TRUE(std::regex_search(
      r.out, std::regex(R"(memstats     : approximate memory usage: [0-9]+ )")))
      << r.out;
}

TEST_F(DbBenchCompatTest, CpuBenchmarksOfLevelDB) {
  ToolResult r = Bench({"--benchmarks=crc32c,snappycomp,snappyuncomp"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"crc32c", "snappycomp", "snappyuncomp"}) {
    const std::string line = LineOf(r.out, name);
    EXPECT_TRUE(std::regex_match(
        line, std::regex(std::string(name) + kLine + R"(MB/s.*)")))
        << line;
  }
  EXPECT_TRUE(std::regex_search(LineOf(r.out, "snappycomp"),
                                std::regex(R"(\(output: [0-9.]+%\))")));
}

// LevelDB's open reopens the database num / 10000 times; its data stays.
TEST_F(DbBenchCompatTest, OpenReopensTheDatabase) {
  ToolResult r = Bench({"--num=30000", "--benchmarks=fillseq,open,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::string open = LineOf(r.out, "open");
  EXPECT_TRUE(std::regex_match(open, std::regex(std::string("open") + kLine)))
      << open;
  EXPECT_THAT(LineOf(r.out, "readrandom"), HasSubstr("(30000 of 30000 found)"));
}

TEST_F(DbBenchCompatTest, ReuseLogsIsAcceptedWithANote) {
  ToolResult r = Bench(
      {"--num=100", "--reuse_logs=1", "--benchmarks=fillseq,open,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_EQ(Count(r.err, "note: --reuse_logs: siftdb starts a new log"), 1)
      << r.err;
  EXPECT_THAT(LineOf(r.out, "readrandom"), HasSubstr("(100 of 100 found)"));
  r = Bench({"--num=100", "--reuse_logs=0", "--benchmarks=fillseq"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
}

TEST_F(DbBenchCompatTest, KeyPrefixPrependsBytes) {
  const std::string ldb = FindTool("tools/ldb");
  if (ldb.empty()) GTEST_FAIL() << "ldb is not built under " << BinaryDir();
  ToolResult r =
      Bench({"--num=3", "--key_prefix=4", "--benchmarks=fillseq,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, HasSubstr("Keys:       20 bytes each (4-byte common "
                               "prefix)"));
  EXPECT_THAT(LineOf(r.out, "readrandom"), HasSubstr("(3 of 3 found)"));
  r = RunTool(ldb, {"--db=" + dir_.Join("db"), "scan", "--limit=3"},
              dir_.path());
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const std::vector<std::string> lines = Lines(r.out);
  ASSERT_EQ(lines.size(), 3u);
  EXPECT_EQ(lines[0].substr(0, 25), "aaaa0000000000000000 ==> ");
  EXPECT_EQ(lines[2].substr(0, 25), "aaaa0000000000000002 ==> ");
}

TEST_F(DbBenchCompatTest, ComparisonsAreCountedPerBenchmark) {
  ToolResult r =
      Bench({"--num=1000", "--comparisons", "--benchmarks=fillseq,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::vector<long long> counts;
  for (const std::string& line : Lines(r.out)) {
    std::smatch m;
    if (std::regex_match(line, m, std::regex(R"(Comparisons: ([0-9]+))"))) {
      counts.push_back(std::stoll(m[1]));
    }
  }
  ASSERT_EQ(counts.size(), 2u) << r.out;
  // 1000 inserts in key order: the skiplist's in-order path compares each
  // new key with its predecessor only (about one comparison each, the
  // first insert none). 1000 lookups: a search each, several comparisons.
  EXPECT_GE(counts[0], 999) << r.out;
  EXPECT_LT(counts[0], 3000) << r.out;
  EXPECT_GT(counts[1], 1000) << r.out;
  r = Bench({"--num=100", "--benchmarks=fillseq"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_THAT(r.out, Not(HasSubstr("Comparisons:")));
}

// benchmark.sh's parse: awk's $3 is micros/op, $5 ops/sec (RocksDB's "V1"
// line), and the progress lines never start with the benchmark's name.
TEST_F(DbBenchCompatTest, LinesParseLikeRocksDBBenchmarkSh) {
  ToolResult r = Bench({"--num=2000", "--benchmarks=fillrandom,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  for (const char* name : {"fillrandom", "readrandom"}) {
    std::istringstream fields(LineOf(r.out, name));
    std::vector<std::string> f;
    for (std::string w; fields >> w;) f.push_back(w);
    ASSERT_GE(f.size(), 6u) << name;
    EXPECT_EQ(f[1], ":");
    EXPECT_GT(std::stod(f[2]), 0) << name;
    EXPECT_EQ(f[3], "micros/op");
    EXPECT_GT(std::stoll(f[4]), 0) << name;
    EXPECT_EQ(f[5], "ops/sec;");
    EXPECT_NE(f.size() >= 10 ? f[7] : "", "seconds");  // not RocksDB's V2
  }
}

TEST_F(DbBenchCompatTest, DurationBoundsTheRunByTime) {
  ToolResult r =
      Bench({"--num=100", "--duration=1", "--benchmarks=fillseq,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::smatch m;
  const std::string read = LineOf(r.out, "readrandom");
  ASSERT_TRUE(std::regex_search(
      read, m, std::regex(R"(\(([0-9]+) of ([0-9]+) found\))")))
      << read;
  // A second of reads is far more than --num of them.
  EXPECT_GT(std::stoll(m[2]), 1000) << read;
  EXPECT_EQ(m[1], m[2]) << read;
}

TEST_F(DbBenchCompatTest, BatchesAndSyncWrite) {
  ToolResult r = Bench({"--num=1000", "--batch_size=10", "--sync",
                        "--benchmarks=fillrandom,deleteseq,readrandom"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::regex_match(LineOf(r.out, "fillrandom"),
                               std::regex(std::string("fillrandom") + kLine)))
      << LineOf(r.out, "fillrandom");
  EXPECT_THAT(LineOf(r.out, "readrandom"), HasSubstr("(0 of 1000 found)"));
}

}  // namespace db_bench_compat_test
}  // namespace siftdb::test
