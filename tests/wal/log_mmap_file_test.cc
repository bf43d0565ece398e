// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Env::Default()'s write-ahead log file (util/posix_mmap_log_file.h):
// appends through a mapping are in the OS at once, the file ends in
// preallocated zeros until Close trims them, a process that dies without
// closing leaves a log that reads back every record with no damage, and a
// failed preallocation is an error naming the file.

#include <fcntl.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "siftdb/env.h"
#include "tests/support/temp_dir.h"
#include "tests/wal/log_test_util.h"
#include "util/posix_mmap_log_file.h"
#include "util/random.h"
#include "wal/log_reader.h"
#include "wal/log_writer.h"

namespace siftdb {
namespace log_mmap_file_test {

using ::testing::HasSubstr;

// Bytes currently in the file, read behind the Env's back.
std::string ReadRaw(const std::string& path) {
  std::string data;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return "<missing>";
  char buf[1 << 16];
  ssize_t r;
  while ((r = ::read(fd, buf, sizeof(buf))) > 0) data.append(buf, r);
  ::close(fd);
  return data;
}

bool AllZero(std::string_view bytes) {
  return bytes.find_first_not_of('\0') == std::string_view::npos;
}

// Runs body in a child process and returns its exit code (-1 when it did
// not exit normally). The child never returns into the test.
template <typename Body>
int InChild(Body body) {
  const pid_t pid = ::fork();
  if (pid == 0) ::_exit(body());
  int status = 0;
  ::waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

class LogMmapFileTest : public ::testing::Test {
 protected:
  Env* env_ = Env::Default();
  test::TempDir dir_;
  const std::string fname_ = dir_.Join("000007.log");
};

// Pieces of every size from 0 to 200 KiB, across several window
// boundaries, are in the file as soon as Append returns; the rest of the
// mapped window reads as zeros; Close leaves exactly the bytes appended.
TEST_F(LogMmapFileTest, AppendsAreVisibleAtOnceAndCloseTrimsTheZeros) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    auto file = env_->NewWalFile(fname_);
    ASSERT_TRUE(file.ok()) << file.status();
    Random rnd(seed);
    std::string expected;
    while (expected.size() < 3 * kMmapLogWindowBytes + 12345) {
      const size_t n = rnd.OneIn(8) ? rnd.Uniform(200 << 10) : rnd.Uniform(300);
      std::string piece(n, static_cast<char>('a' + rnd.Uniform(26)));
      ASSERT_TRUE((*file)->Append(piece).ok());
      expected += piece;
      if (rnd.OneIn(50)) {
        const std::string raw = ReadRaw(fname_);
        ASSERT_GE(raw.size(), expected.size());
        ASSERT_EQ(0u, raw.size() % kMmapLogWindowBytes) << raw.size();
        ASSERT_EQ(expected, raw.substr(0, expected.size()));
        ASSERT_TRUE(AllZero(std::string_view(raw).substr(expected.size())));
      }
    }
    ASSERT_TRUE((*file)->Flush().ok());
    ASSERT_TRUE((*file)->Sync().ok());
    ASSERT_TRUE((*file)->Close().ok());
    EXPECT_EQ(expected, ReadRaw(fname_)) << "seed " << seed;
    EXPECT_FALSE((*file)->Append("x").ok());
  }
}

TEST_F(LogMmapFileTest, EmptyLogClosesEmpty) {
  auto file = env_->NewWalFile(fname_);
  ASSERT_TRUE(file.ok()) << file.status();
  EXPECT_EQ(kMmapLogWindowBytes, ReadRaw(fname_).size());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ("", ReadRaw(fname_));
}

// Opening truncates an existing file, as NewWritableFile does.
TEST_F(LogMmapFileTest, OpeningTruncates) {
  {
    auto file = env_->NewWritableFile(fname_);
    ASSERT_TRUE(file.ok());
    ASSERT_TRUE((*file)->Append("old contents").ok());
    ASSERT_TRUE((*file)->Close().ok());
  }
  auto file = env_->NewWalFile(fname_);
  ASSERT_TRUE(file.ok()) << file.status();
  ASSERT_TRUE((*file)->Append("new").ok());
  ASSERT_TRUE((*file)->Close().ok());
  EXPECT_EQ("new", ReadRaw(fname_));
}

// A process that dies without closing (what a crash does) leaves its log
// at full window size, ending in zeros. The log reader gives back every
// record the child wrote and reports no damage.
TEST_F(LogMmapFileTest, LogOfAProcessThatDiedReadsBackWholeWithoutDamage) {
  for (int records : {0, 1, 97, 3000}) {
    SCOPED_TRACE(records);
    // Mostly small records, every 100th one spanning blocks; 3000 of them
    // fill several windows.
    auto record = [](int i) {
      const size_t n =
          i % 100 == 99 ? 70000 : static_cast<size_t>(i * 7919 % 5000);
      return std::string(n, static_cast<char>('a' + i % 26));
    };
    const int rc = InChild([&] {
      auto file = Env::Default()->NewWalFile(fname_);
      if (!file.ok()) return 2;
      log::Writer writer(file->get());
      for (int i = 0; i < records; i++) {
        if (!writer.AddRecord(record(i)).ok()) return 3;
      }
      ::raise(SIGKILL);  // no Close, no destructor
      return 4;
    });
    ASSERT_EQ(-1, rc);
    const std::string raw = ReadRaw(fname_);
    ASSERT_EQ(0u, raw.size() % kMmapLogWindowBytes) << raw.size();

    auto source = env_->NewSequentialFile(fname_);
    ASSERT_TRUE(source.ok());
    test::ReportCollector report;
    log::Reader reader(source->get(), &report, /*checksum=*/true,
                       /*initial_offset=*/0);
    std::string scratch;
    std::string_view got;
    int n = 0;
    while (reader.ReadRecord(&got, &scratch)) {
      ASSERT_LT(n, records);
      ASSERT_EQ(record(n), got) << "record " << n;
      n++;
    }
    EXPECT_EQ(records, n);
    EXPECT_EQ(0u, report.statuses.size()) << report.Messages();
  }
}

// A preallocation the OS refuses (here the file-size limit; ENOSPC is the
// same path) fails the Append with a status naming the file. Bytes
// appended before it stay, and Close trims the file to them.
TEST_F(LogMmapFileTest, RefusedPreallocationIsAnErrorNamingTheFile) {
  const int rc = InChild([&] {
    ::signal(SIGXFSZ, SIG_IGN);
    struct rlimit limit = {kMmapLogWindowBytes + kMmapLogWindowBytes / 2,
                           kMmapLogWindowBytes + kMmapLogWindowBytes / 2};
    if (::setrlimit(RLIMIT_FSIZE, &limit) != 0) return 2;
    auto file = Env::Default()->NewWalFile(fname_);
    if (!file.ok()) return 3;
    const std::string piece(kMmapLogWindowBytes - 10, 'p');
    if (!(*file)->Append(piece).ok()) return 4;
    absl::Status s = (*file)->Append(std::string(100, 'q'));
    if (s.ok()) return 5;
    if (s.message().find("fallocate " + fname_) == std::string::npos) return 6;
    if (!(*file)->Close().ok()) return 7;
    return 0;
  });
  ASSERT_EQ(0, rc);
  const std::string raw = ReadRaw(fname_);
  EXPECT_EQ(kMmapLogWindowBytes, raw.size());
  EXPECT_EQ(std::string(kMmapLogWindowBytes - 10, 'p') + std::string(10, 'q'),
            raw);
}

TEST_F(LogMmapFileTest, MissingDirectoryIsNotFound) {
  auto file = env_->NewWalFile(dir_.Join("no/such/dir/000001.log"));
  ASSERT_FALSE(file.ok());
  EXPECT_TRUE(absl::IsNotFound(file.status())) << file.status();
  EXPECT_THAT(file.status().message(), HasSubstr("no/such/dir/000001.log"));
}

}  // namespace log_mmap_file_test
}  // namespace siftdb
