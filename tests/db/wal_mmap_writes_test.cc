// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Options::wal_mmap_writes: the log appended through a mapping keeps the
// log's promise. A process killed right after unsynced writes loses none
// of them (its log ends in preallocated zeros, and recovery reads them as
// the end); a clean Close leaves no zeros behind; and with the option off
// the log is the buffered file it always was.

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/db_files.h"
#include "tests/support/temp_dir.h"
#include "util/posix_mmap_log_file.h"

namespace siftdb {
namespace wal_mmap_writes_test {

namespace fs = std::filesystem;

std::string Key(int i) { return absl::StrFormat("key%08d", i); }
std::string Value(int i) {
  return absl::StrFormat("value-%d-", i) + std::string(i % 300, 'v');
}

std::string ReadAll(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), {});
}

class WalMmapWritesTest : public ::testing::TestWithParam<bool> {
 protected:
  WalMmapWritesTest() {
    options_.create_if_missing = true;
    options_.wal_mmap_writes = GetParam();
    // Several MemTable switches, so several logs, within the run.
    options_.write_buffer_size = 256 << 10;
    path_ = dir_.Join("db");
  }

  // Opens the DB in a child process, writes keys [0, n) without sync, and
  // kills the child with SIGKILL: no Close, no destructor, no flush.
  void WriteAndDieInAChild(int n) {
    const pid_t pid = ::fork();
    if (pid == 0) {
      auto db = DB::Open(options_, path_);
      if (!db.ok()) ::_exit(2);
      for (int i = 0; i < n; i++) {
        if (!(*db)->Put(WriteOptions(), Key(i), Value(i)).ok()) ::_exit(3);
      }
      ::raise(SIGKILL);
      ::_exit(4);
    }
    int status = 0;
    ASSERT_EQ(pid, ::waitpid(pid, &status, 0));
    ASSERT_TRUE(WIFSIGNALED(status))
        << "child exit code " << WEXITSTATUS(status);
  }

  fs::path NewestLog() const {
    const uint64_t number = test::NewestFileNumber(path_, FileType::kLogFile);
    return fs::path(LogFileName(path_, number));
  }

  Options options_;
  test::TempDir dir_;
  std::string path_;
};

TEST_P(WalMmapWritesTest, ProcessKillLosesNoAcknowledgedWrite) {
  constexpr int kKeys = 6000;
  WriteAndDieInAChild(kKeys);

  // What the kill left: with mapped appends the live log is still at its
  // preallocated size and ends in zeros; a buffered log ends in a record.
  const std::string log = ReadAll(NewestLog());
  ASSERT_FALSE(log.empty());
  if (GetParam()) {
    EXPECT_EQ(0u, log.size() % kMmapLogWindowBytes) << log.size();
    EXPECT_EQ('\0', log.back());
  } else {
    EXPECT_NE('\0', log.back());
  }

  // paranoid_checks: any damage recovery met in the zero tail would fail
  // the open.
  options_.paranoid_checks = true;
  auto db = DB::Open(options_, path_);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < kKeys; i++) {
    std::string value;
    ASSERT_TRUE((*db)->Get(ReadOptions(), Key(i), &value).ok()) << Key(i);
    ASSERT_EQ(Value(i), value);
  }
  EXPECT_EQ(std::string::npos,
            ReadAll(fs::path(path_) / "LOG").find("bytes dropped)"));
}

// Close trims the live log to its records: no log left behind ends in
// preallocated zeros, and the next open reads every write.
TEST_P(WalMmapWritesTest, CloseLeavesNoZeroTail) {
  {
    auto db = DB::Open(options_, path_);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 3000; i++) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), Value(i)).ok());
    }
    ASSERT_TRUE((*db)->Close().ok());
  }
  int logs = 0;
  for (const auto& entry : fs::directory_iterator(path_)) {
    if (entry.path().extension() != ".log") continue;
    logs++;
    const std::string log = ReadAll(entry.path());
    if (!log.empty()) EXPECT_NE('\0', log.back()) << entry.path();
  }
  EXPECT_GE(logs, 1);
  auto db = DB::Open(options_, path_);
  ASSERT_TRUE(db.ok()) << db.status();
  std::string value;
  ASSERT_TRUE((*db)->Get(ReadOptions(), Key(2999), &value).ok());
  EXPECT_EQ(Value(2999), value);
}

INSTANTIATE_TEST_SUITE_P(MappedAndBuffered, WalMmapWritesTest,
                         ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Mapped" : "Buffered";
                         });

}  // namespace wal_mmap_writes_test
}  // namespace siftdb
