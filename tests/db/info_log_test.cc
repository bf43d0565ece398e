// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The DB's own LOG: what an operator reads there (options, recovery,
// flushes, compactions, deletions, stalls, close), and its rotation by size
// (max_log_file_size) with keep_log_file_num old LOGs kept.

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/filter_policy.h"
#include "tests/db/blocking_env.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace info_log_test {

namespace fs = std::filesystem;

std::string Slurp(const std::string& fname) {
  std::ifstream in(fname);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::vector<std::string> Lines(const std::string& text) {
  return absl::StrSplit(text, '\n', absl::SkipEmpty());
}

int CountLines(const std::string& text, std::string_view needle) {
  int n = 0;
  for (const std::string& line : Lines(text)) {
    n += line.find(needle) != std::string::npos;
  }
  return n;
}

// Rotated LOGs in dir, oldest first.
std::vector<std::string> OldLogs(const std::string& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    if (name.rfind("LOG.old", 0) == 0) out.push_back(name);
  }
  std::sort(out.begin(), out.end());
  return out;
}

std::string Value(int i) {
  return std::string(100, static_cast<char>('a' + i % 26));
}

Options SmallOptions() {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 64 << 10;
  o.level0_file_num_compaction_trigger = 2;
  o.max_file_size = 64 << 10;
  o.compression = kNoCompression;
  return o;
}

TEST(InfoLogTest, RecordsOptionsFlushCompactionDeletionsRecoveryAndClose) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = SmallOptions();
  int level1_files = 0;
  {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 4000; i++) {
      ASSERT_TRUE((*db)
                      ->Put(WriteOptions(), absl::StrFormat("k%06d", i % 1500),
                            Value(i))
                      .ok());
    }
    ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
    std::string v;
    ASSERT_TRUE((*db)->GetProperty("siftdb.num-files-at-level1", &v));
    level1_files = std::stoi(v);
    // Left in the log for the reopen to replay: 7 records, 7 entries.
    for (int i = 0; i < 7; i++) {
      ASSERT_TRUE(
          (*db)->Put(WriteOptions(), absl::StrFormat("z%d", i), "v").ok());
    }
    ASSERT_TRUE((*db)->Close().ok());
  }
  ASSERT_GT(level1_files, 0);
  {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
  }
  const std::vector<std::string> old = OldLogs(path);
  ASSERT_EQ(old.size(), 1u) << "the first session's LOG is kept as LOG.old.*";
  const std::string first = Slurp(path + "/" + old[0]);
  const std::string second = Slurp(InfoLogFileName(path));

  // Options, one per line, with the filter policy by name.
  EXPECT_EQ(CountLines(first, "Options.write_buffer_size: 65536"), 1) << first;
  EXPECT_EQ(CountLines(first, "Options.level0_file_num_compaction_trigger: 2"),
            1);
  EXPECT_EQ(CountLines(first, "Options.compression: none"), 1);
  EXPECT_EQ(CountLines(first, std::string("Options.filter_policy: ") +
                                  NewBloomFilterPolicy(10)->Name()),
            1);
  EXPECT_EQ(CountLines(first, "Options.remote_filter.mode: off"), 1);
  EXPECT_EQ(CountLines(first, "Options.remote_filter.password: (none)"), 1);

  // Flushes and compactions, with job ids, reasons, inputs and outputs.
  EXPECT_GE(CountLines(first, "flush (write-buffer-full): MemTable of"), 3);
  EXPECT_GE(CountLines(first, "flush installed; levels: L0"), 3);
  EXPECT_GE(
      CountLines(first, "compaction started (level0-files): level 0 -> 1"), 1);
  // (CompactRange's own step may find level 0 already compacted: not
  // asserted.)
  const int started = CountLines(first, "compaction started (");
  EXPECT_EQ(CountLines(first, "compaction finished: outputs level"), started);
  EXPECT_EQ(CountLines(first, "compaction finished") -
                CountLines(first, "sec: OK; levels:"),
            0)
      << "every compaction succeeded";

  // Every deleted file is gone; at least the compacted inputs were deleted.
  int deleted = 0;
  for (const std::string& line : Lines(first)) {
    const size_t at = line.find("deleted obsolete file ");
    if (at == std::string::npos) continue;
    deleted++;
    const std::string fname = line.substr(at + 22);
    EXPECT_FALSE(fs::exists(fname)) << fname;
  }
  EXPECT_GE(deleted, 2);
  EXPECT_EQ(CountLines(first, "failed to delete"), 0);

  // Close states the final levels: level 1 as the property said.
  EXPECT_EQ(CountLines(first, absl::StrFormat("close: OK; last sequence 4007; "
                                              "levels: L1 %d files",
                                              level1_files)),
            1)
      << first;

  // The reopen: the previous LOG named, the MANIFEST and the log replayed.
  EXPECT_EQ(CountLines(second, "previous LOG kept as " + path + "/" + old[0]),
            1)
      << second;
  EXPECT_EQ(CountLines(second, "recovery: MANIFEST MANIFEST-"), 1) << second;
  EXPECT_EQ(CountLines(second,
                       "recovery done: 1 log(s) replayed, last "
                       "sequence 4007"),
            1)
      << second;
  EXPECT_EQ(CountLines(second,
                       "in 7 records (7 entries), 0 bytes dropped, 0 "
                       "table(s) flushed on the way: OK"),
            1)
      << second;
  EXPECT_EQ(CountLines(second, "flush (recovery): MemTable of 7 entries"), 1);
  EXPECT_EQ(CountLines(second, "open done"), 1);
  EXPECT_EQ(CountLines(second, "close: OK"), 1);
}

TEST(InfoLogTest, RotatesBySizeAndKeepsKeepLogFileNumOldLogs) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = SmallOptions();
  o.max_log_file_size = 4096;
  o.keep_log_file_num = 3;
  for (int session = 0; session < 3; session++) {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 3000; i++) {
      ASSERT_TRUE(
          (*db)
              ->Put(WriteOptions(), absl::StrFormat("k%06d", i), Value(i))
              .ok());
    }
  }
  EXPECT_EQ(OldLogs(path).size(), 3u);
  ASSERT_TRUE(fs::exists(InfoLogFileName(path)));
  // Each rotated LOG stopped near the limit: the limit plus one line.
  for (const std::string& name : OldLogs(path)) {
    EXPECT_LT(fs::file_size(path + "/" + name), 4096u + 1024u) << name;
  }
  EXPECT_LT(fs::file_size(InfoLogFileName(path)), 4096u + 1024u);
  // A rotated LOG's successor begins by naming it.
  const std::string log = Slurp(InfoLogFileName(path));
  EXPECT_EQ(CountLines(log, "LOG rotated: previous LOG") +
                CountLines(log, "previous LOG kept as"),
            1)
      << log;
  int rotations = CountLines(log, "LOG rotated: previous LOG");
  for (const std::string& name : OldLogs(path)) {
    rotations += CountLines(Slurp(path + "/" + name), "LOG rotated");
  }
  EXPECT_GE(rotations, 1) << "no LOG ended by size";
}

TEST(InfoLogTest, OpenKeepsOldLogsUpToKeepLogFileNum) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o = SmallOptions();
  o.keep_log_file_num = 2;
  for (int i = 0; i < 5; i++) {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
  }
  EXPECT_EQ(OldLogs(path).size(), 2u);
  const std::string log = Slurp(InfoLogFileName(path));
  EXPECT_EQ(CountLines(log, "deleted old info log"), 1) << log;
}

TEST(InfoLogTest, BadLogOptionsAreRefusedByName) {
  test::TempDir dir;
  Options o = SmallOptions();
  o.max_log_file_size = 100;
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_FALSE(db.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(db.status()));
  EXPECT_TRUE(absl::StrContains(db.status().message(), "max_log_file_size"));
  o = SmallOptions();
  o.keep_log_file_num = 0;
  db = DB::Open(o, dir.Join("db"));
  ASSERT_FALSE(db.ok());
  EXPECT_TRUE(absl::StrContains(db.status().message(), "keep_log_file_num"));
}

TEST(InfoLogTest, WriteStallIsLoggedWhenItStartsAndEnds) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  test::BlockingTableEnv env;
  Options o = SmallOptions();
  o.env = &env;
  o.write_buffer_size = 16 << 10;
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  env.BlockTablesAfter(0);  // the first flush cannot write its table
  std::thread writer([&] {
    // Two MemTables' worth: the second finds the first still flushing.
    for (int i = 0; i < 400; i++) {
      ASSERT_TRUE(
          (*db)
              ->Put(WriteOptions(), absl::StrFormat("k%04d", i), Value(i))
              .ok());
    }
  });
  bool started = false;
  for (int i = 0; i < 500 && !started; i++) {
    started = absl::StrContains(Slurp(InfoLogFileName(path)),
                                "write stall started: memtable-full");
    if (!started) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(started);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  env.Release();
  writer.join();
  ASSERT_TRUE((*db)->Put(WriteOptions(), "after", "v").ok());  // no wait
  const std::string log = Slurp(InfoLogFileName(path));
  // Each stall has its end; the one the held flush caused lasted at least
  // the 50 ms it was held (later ones, as flushes lag the writer, may be
  // short).
  const int started_lines =
      CountLines(log, "write stall started: memtable-full");
  EXPECT_GE(started_lines, 1) << log;
  int ended = 0;
  double longest = 0;
  for (const std::string& line : Lines(log)) {
    const std::string tag = "write stall ended: memtable-full, ";
    const size_t at = line.find(tag);
    if (at == std::string::npos) continue;
    ended++;
    longest = std::max(longest, std::stod(line.substr(at + tag.size())));
  }
  EXPECT_EQ(ended, started_lines) << log;
  EXPECT_GE(longest, 0.04) << log;
  std::string stats;
  ASSERT_TRUE((*db)->GetProperty("siftdb.stats", &stats));
  EXPECT_FALSE(absl::StrContains(stats, "write stall: 0.000 sec")) << stats;
}

}  // namespace info_log_test
}  // namespace siftdb
