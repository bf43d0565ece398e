// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "siftdb/env.h"
#include "tests/support/temp_dir.h"
#include "util/posix_error.h"

namespace siftdb {
namespace env_posix_test {

using ::testing::HasSubstr;
using ::testing::UnorderedElementsAre;

class EnvPosixTest : public ::testing::Test {
 protected:
  Env* env_ = Env::Default();
  test::TempDir dir_;
};

// Bytes currently in the file, read behind the Env's back.
std::string ReadRaw(const std::string& path) {
  std::string data;
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return "<missing>";
  char buf[4096];
  ssize_t r;
  while ((r = ::read(fd, buf, sizeof(buf))) > 0) data.append(buf, r);
  ::close(fd);
  return data;
}

TEST_F(EnvPosixTest, DefaultIsASingleton) {
  EXPECT_EQ(Env::Default(), Env::Default());
}

TEST_F(EnvPosixTest, WriteThenReadSequentially) {
  const std::string f = dir_.Join("a");
  auto w = env_->NewWritableFile(f);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Append("hello ").ok());
  ASSERT_TRUE((*w)->Append("world").ok());
  ASSERT_TRUE((*w)->Close().ok());

  auto r = env_->NewSequentialFile(f);
  ASSERT_TRUE(r.ok()) << r.status();
  char scratch[100];
  std::string_view piece;
  ASSERT_TRUE((*r)->Read(5, &piece, scratch).ok());
  EXPECT_EQ("hello", piece);
  ASSERT_TRUE((*r)->Skip(1).ok());
  ASSERT_TRUE((*r)->Read(100, &piece, scratch).ok());
  EXPECT_EQ("world", piece);  // short read: end of file
  ASSERT_TRUE((*r)->Read(100, &piece, scratch).ok());
  EXPECT_EQ("", piece);
}

TEST_F(EnvPosixTest, SkipPastEndStopsAtEnd) {
  const std::string f = dir_.Join("a");
  ASSERT_TRUE(WriteStringToFile(env_, "0123456789", f, false).ok());
  auto r = env_->NewSequentialFile(f);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE((*r)->Skip(1000).ok());
  char scratch[10];
  std::string_view piece;
  ASSERT_TRUE((*r)->Read(10, &piece, scratch).ok());
  EXPECT_EQ("", piece);
}

TEST_F(EnvPosixTest, FlushPutsBytesInTheOs) {
  const std::string f = dir_.Join("buffered");
  auto w = env_->NewWritableFile(f);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("small").ok());
  // Small appends are buffered...
  EXPECT_EQ("", ReadRaw(f));
  // ...and Flush hands them to the OS.
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_EQ("small", ReadRaw(f));
  ASSERT_TRUE((*w)->Append("more").ok());
  ASSERT_TRUE((*w)->Sync().ok());
  EXPECT_EQ("smallmore", ReadRaw(f));
}

TEST_F(EnvPosixTest, LargeAppendsKeepOrder) {
  const std::string f = dir_.Join("large");
  auto w = env_->NewWritableFile(f);
  ASSERT_TRUE(w.ok());
  std::string expected;
  // Sizes around the 64 KiB buffer: below, at, above, far above.
  for (size_t size : {size_t{10}, size_t{65535}, size_t{65536}, size_t{3},
                      size_t{65537}, size_t{300000}, size_t{1}}) {
    std::string piece(size, static_cast<char>('a' + size % 26));
    expected += piece;
    ASSERT_TRUE((*w)->Append(piece).ok());
  }
  ASSERT_TRUE((*w)->Flush().ok());
  EXPECT_EQ(expected, ReadRaw(f));
  ASSERT_TRUE((*w)->Close().ok());
  auto size = env_->GetFileSize(f);
  ASSERT_TRUE(size.ok());
  EXPECT_EQ(expected.size(), *size);
}

TEST_F(EnvPosixTest, DestructorFlushes) {
  const std::string f = dir_.Join("d");
  {
    auto w = env_->NewWritableFile(f);
    ASSERT_TRUE(w.ok());
    ASSERT_TRUE((*w)->Append("kept").ok());
  }
  EXPECT_EQ("kept", ReadRaw(f));
}

TEST_F(EnvPosixTest, UseAfterCloseFails) {
  auto w = env_->NewWritableFile(dir_.Join("c"));
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Close().ok());
  EXPECT_TRUE((*w)->Close().ok());  // idempotent
  EXPECT_EQ(absl::StatusCode::kFailedPrecondition, (*w)->Append("x").code());
}

TEST_F(EnvPosixTest, AppendableFileAppends) {
  const std::string f = dir_.Join("app");
  ASSERT_TRUE(WriteStringToFile(env_, "abc", f, true).ok());
  auto w = env_->NewAppendableFile(f);
  ASSERT_TRUE(w.ok());
  ASSERT_TRUE((*w)->Append("def").ok());
  ASSERT_TRUE((*w)->Close().ok());
  auto data = ReadFileToString(env_, f);
  ASSERT_TRUE(data.ok());
  EXPECT_EQ("abcdef", *data);
  // NewWritableFile truncates.
  ASSERT_TRUE(WriteStringToFile(env_, "x", f, false).ok());
  EXPECT_EQ("x", *ReadFileToString(env_, f));
}

TEST_F(EnvPosixTest, RandomAccessReads) {
  const std::string f = dir_.Join("ra");
  std::string content;
  for (int i = 0; i < 10000; i++) content.push_back(static_cast<char>(i * 7));
  ASSERT_TRUE(WriteStringToFile(env_, content, f, false).ok());
  auto r = env_->NewRandomAccessFile(f);
  ASSERT_TRUE(r.ok());
  char scratch[100];
  std::string_view piece;
  ASSERT_TRUE((*r)->Read(5000, 100, &piece, scratch).ok());
  EXPECT_EQ(content.substr(5000, 100), piece);
  ASSERT_TRUE((*r)->Read(9950, 100, &piece, scratch).ok());
  EXPECT_EQ(content.substr(9950), piece);
  ASSERT_TRUE((*r)->Read(20000, 100, &piece, scratch).ok());
  EXPECT_EQ("", piece);

  // Concurrent readers see consistent data.
  std::vector<std::thread> threads;
  std::atomic<int> bad{0};
  for (int t = 0; t < 4; t++) {
    threads.emplace_back([&, t] {
      char buf[64];
      for (int i = 0; i < 1000; i++) {
        const uint64_t off = (i * 37 + t * 1000) % 9900;
        std::string_view p;
        if (!(*r)->Read(off, 64, &p, buf).ok() ||
            p != std::string_view(content).substr(off, 64)) {
          bad++;
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(0, bad.load());
}

// Resident pages of this process (/proc/self/statm, second field).
int64_t ResidentPages() {
  std::FILE* f = std::fopen("/proc/self/statm", "r");
  if (f == nullptr) return -1;
  long long size = 0, resident = -1;
  if (std::fscanf(f, "%lld %lld", &size, &resident) != 2) resident = -1;
  std::fclose(f);
  return resident;
}

// A mapped file's pages, once read, count in the process's resident set;
// ReleaseResidentBytes drops them from it, and later reads still return
// the file's bytes.
TEST_F(EnvPosixTest, MappedFileReleasesResidentBytes) {
  const std::string f = dir_.Join("mapped");
  constexpr size_t kBytes = size_t{32} << 20;
  std::string content(kBytes, '\0');
  for (size_t i = 0; i < kBytes; i += 512)
    content[i] = static_cast<char>(i / 512);
  ASSERT_TRUE(WriteStringToFile(env_, content, f, false).ok());
  auto r = env_->NewRandomAccessFile(f);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE((*r)->IsMemoryMapped());
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  const int64_t pages = static_cast<int64_t>(kBytes) / page;

  auto read_all = [&] {
    uint64_t sum = 0;
    for (size_t off = 0; off < kBytes; off += static_cast<size_t>(page)) {
      std::string_view p;
      EXPECT_TRUE((*r)->Read(off, 1, &p, nullptr).ok());
      sum += static_cast<uint8_t>(p[0]);
    }
    return sum;
  };
  const uint64_t expected = read_all();
  const int64_t touched = ResidentPages();
  (*r)->ReleaseResidentBytes(0, kBytes);
  const int64_t released = ResidentPages();
  EXPECT_GT(touched - released, pages * 9 / 10)
      << "touched " << touched << " released " << released;
  EXPECT_EQ(expected, read_all());

  // Out-of-range and partial-page ranges are harmless.
  (*r)->ReleaseResidentBytes(kBytes, 100);
  (*r)->ReleaseResidentBytes(10, 100);
  std::string_view p;
  ASSERT_TRUE((*r)->Read(kBytes - 512, 1, &p, nullptr).ok());
  EXPECT_EQ(content[kBytes - 512], p[0]);
}

// How many of the pages in [offset, offset + n) of `path` are in the page
// cache (mincore on a mapping of our own); -1 when it cannot tell.
int64_t CachedPages(const std::string& path, size_t offset, size_t n) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return -1;
  void* base = ::mmap(nullptr, offset + n, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  if (base == MAP_FAILED) return -1;
  const size_t page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> vec((offset + n + page - 1) / page);
  int64_t cached = -1;
  if (::mincore(base, offset + n, vec.data()) == 0) {
    cached = 0;
    for (size_t i = offset / page; i < vec.size(); i++) cached += vec[i] & 1;
  }
  ::munmap(base, offset + n);
  return cached;
}

// Drops the (clean, synced) pages of `path` from the page cache; false
// when the file system keeps them anyway (tmpfs).
bool DropCachedPages(const std::string& path, size_t bytes) {
  const int fd = ::open(path.c_str(), O_RDONLY);
  if (fd < 0) return false;
  ::posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
  ::close(fd);
  return CachedPages(path, 0, bytes) == 0;
}

// WillRead on a mapped file starts reading the range into the page cache
// (and only that range), without changing what reads return.
TEST_F(EnvPosixTest, MappedFileWillReadLoadsTheRange) {
  const std::string f = dir_.Join("hinted");
  constexpr size_t kMiB = size_t{1} << 20;
  std::string content(8 * kMiB, '\0');
  for (size_t i = 0; i < content.size(); i += 512)
    content[i] = static_cast<char>(i / 512);
  ASSERT_TRUE(WriteStringToFile(env_, content, f, /*sync=*/true).ok());
  const int64_t page = ::sysconf(_SC_PAGESIZE);
  const int64_t range_pages = static_cast<int64_t>(2 * kMiB) / page;
  if (!DropCachedPages(f, 8 * kMiB)) {
    GTEST_SKIP() << "this file system keeps the file in memory";
  }
  auto r = env_->NewRandomAccessFile(f);
  ASSERT_TRUE(r.ok());
  ASSERT_TRUE((*r)->IsMemoryMapped());
  (*r)->WillRead(3 * kMiB, 2 * kMiB);
  int64_t cached = 0;
  for (int i = 0; i < 500; i++) {  // the reads run in the background
    cached = CachedPages(f, 3 * kMiB, 2 * kMiB);
    if (cached == range_pages) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(cached, range_pages);
  EXPECT_LE(CachedPages(f, 0, 2 * kMiB), range_pages / 4);
  std::string_view p;
  ASSERT_TRUE((*r)->Read(3 * kMiB + 512, 1, &p, nullptr).ok());
  EXPECT_EQ(content[3 * kMiB + 512], p[0]);
  // Out-of-range and empty hints are harmless.
  (*r)->WillRead(8 * kMiB, 100);
  (*r)->WillRead(8 * kMiB - 10, 1000);
  (*r)->WillRead(10, 0);
  ASSERT_TRUE((*r)->Read(8 * kMiB - 512, 1, &p, nullptr).ok());
  EXPECT_EQ(content[8 * kMiB - 512], p[0]);
}

// A fault on a mapped file advised for random access reads only its own
// page; without the advice the kernel reads the pages around it too.
TEST_F(EnvPosixTest, MappedFileAdvisedRandomReadsOnlyTheFaultingPage) {
  const std::string f = dir_.Join("random");
  constexpr size_t kBytes = size_t{8} << 20;
  std::string content(kBytes, 'r');
  ASSERT_TRUE(WriteStringToFile(env_, content, f, /*sync=*/true).ok());
  auto fault_at_middle = [&](bool advise) -> int64_t {
    if (!DropCachedPages(f, kBytes)) return -1;
    auto r = env_->NewRandomAccessFile(f);
    EXPECT_TRUE(r.ok());
    if (!r.ok()) return -1;
    if (advise) (*r)->AdviseRandomAccess();
    std::string_view p;
    EXPECT_TRUE((*r)->Read(kBytes / 2 + 100, 1, &p, nullptr).ok());
    EXPECT_EQ(p, "r");
    return CachedPages(f, 0, kBytes);
  };
  // Advised first: the read-around of the unadvised fault goes on in the
  // background after the fault returns.
  const int64_t advised = fault_at_middle(true);
  const int64_t unadvised = fault_at_middle(false);
  if (advised < 0 || unadvised < 0) {
    GTEST_SKIP() << "this file system keeps files in memory";
  }
  if (unadvised <= 4) GTEST_SKIP() << "no read-around on this device";
  EXPECT_LE(advised, 2) << "without the advice: " << unadvised;
}

TEST_F(EnvPosixTest, MissingFilesAreNotFound) {
  const std::string f = dir_.Join("missing");
  EXPECT_FALSE(env_->FileExists(f));
  auto r = env_->NewSequentialFile(f);
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(absl::StatusCode::kNotFound, r.status().code());
  EXPECT_THAT(std::string(r.status().message()),
              HasSubstr("open " + f + ": No such file or directory"));
  EXPECT_EQ(absl::StatusCode::kNotFound,
            env_->NewRandomAccessFile(f).status().code());
  EXPECT_EQ(absl::StatusCode::kNotFound, env_->GetFileSize(f).status().code());
  EXPECT_EQ(absl::StatusCode::kNotFound, env_->RemoveFile(f).code());
  EXPECT_EQ(absl::StatusCode::kNotFound,
            env_->RenameFile(f, dir_.Join("x")).code());
  EXPECT_EQ(absl::StatusCode::kNotFound,
            ReadFileToString(env_, f).status().code());
}

TEST_F(EnvPosixTest, ErrnoMapping) {
  EXPECT_EQ(absl::StatusCode::kNotFound, ErrnoToCode(ENOENT));
  EXPECT_EQ(absl::StatusCode::kResourceExhausted, ErrnoToCode(ENOSPC));
  EXPECT_EQ(absl::StatusCode::kInternal, ErrnoToCode(EIO));
  EXPECT_EQ(absl::StatusCode::kInternal, ErrnoToCode(EACCES));
  absl::Status s = PosixError("write", "/db/000005.log", ENOSPC);
  EXPECT_EQ(absl::StatusCode::kResourceExhausted, s.code());
  EXPECT_EQ("write /db/000005.log: No space left on device", s.message());
}

TEST_F(EnvPosixTest, DirectoriesAndChildren) {
  const std::string sub = dir_.Join("sub");
  EXPECT_FALSE(env_->IsDirectory(sub));
  ASSERT_TRUE(env_->CreateDir(sub).ok());
  ASSERT_TRUE(env_->CreateDir(sub).ok());  // already there: OK
  EXPECT_TRUE(env_->IsDirectory(sub));
  ASSERT_TRUE(WriteStringToFile(env_, "1", sub + "/one", false).ok());
  ASSERT_TRUE(WriteStringToFile(env_, "2", sub + "/two", false).ok());
  EXPECT_FALSE(env_->IsDirectory(sub + "/one"));
  // A file in the way of CreateDir is an error.
  EXPECT_FALSE(env_->CreateDir(sub + "/one").ok());

  auto children = env_->GetChildren(sub);
  ASSERT_TRUE(children.ok());
  EXPECT_THAT(*children, UnorderedElementsAre("one", "two"));
  ASSERT_TRUE(env_->SyncDir(sub).ok());

  EXPECT_FALSE(env_->RemoveDir(sub).ok());  // not empty
  ASSERT_TRUE(env_->RemoveFile(sub + "/one").ok());
  ASSERT_TRUE(env_->RemoveFile(sub + "/two").ok());
  ASSERT_TRUE(env_->RemoveDir(sub).ok());
  EXPECT_FALSE(env_->IsDirectory(sub));
  EXPECT_EQ(absl::StatusCode::kNotFound,
            env_->GetChildren(sub).status().code());
  EXPECT_FALSE(env_->SyncDir(sub).ok());
}

TEST_F(EnvPosixTest, RenameReplacesTarget) {
  const std::string a = dir_.Join("a"), b = dir_.Join("b");
  ASSERT_TRUE(WriteStringToFile(env_, "new", a, true).ok());
  ASSERT_TRUE(WriteStringToFile(env_, "old", b, true).ok());
  ASSERT_TRUE(env_->RenameFile(a, b).ok());
  EXPECT_FALSE(env_->FileExists(a));
  EXPECT_EQ("new", *ReadFileToString(env_, b));
}

TEST_F(EnvPosixTest, FileSizes) {
  const std::string f = dir_.Join("s");
  ASSERT_TRUE(WriteStringToFile(env_, "", f, false).ok());
  EXPECT_EQ(0u, *env_->GetFileSize(f));
  ASSERT_TRUE(WriteStringToFile(env_, std::string(12345, 'x'), f, false).ok());
  EXPECT_EQ(12345u, *env_->GetFileSize(f));
}

TEST_F(EnvPosixTest, DescriptorsAreCloseOnExec) {
  const std::string f = dir_.Join("cloexec");
  ASSERT_TRUE(WriteStringToFile(env_, "x", f, false).ok());
  // Find the descriptor the Env opened: it is the lowest free one, which a
  // probe open/close reveals.
  const int probe = ::open(f.c_str(), O_RDONLY);
  ASSERT_GE(probe, 0);
  ::close(probe);
  auto r = env_->NewSequentialFile(f);
  ASSERT_TRUE(r.ok());
  const int flags = ::fcntl(probe, F_GETFD);
  ASSERT_GE(flags, 0);
  EXPECT_TRUE(flags & FD_CLOEXEC);
}

TEST_F(EnvPosixTest, LockTwiceInProcessFails) {
  const std::string f = dir_.Join("LOCK");
  auto first = env_->LockFile(f);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = env_->LockFile(f);
  ASSERT_FALSE(second.ok());
  EXPECT_THAT(
      std::string(second.status().message()),
      HasSubstr("lock " + f + ": already held by this or another process"));
  // Releasing lets the next one in.
  first->reset();
  auto third = env_->LockFile(f);
  EXPECT_TRUE(third.ok()) << third.status();
}

TEST_F(EnvPosixTest, LockHeldIsSeenByAnotherProcess) {
  const std::string f = dir_.Join("LOCK");
  auto held = env_->LockFile(f);
  ASSERT_TRUE(held.ok());

  // Exit code 0: child failed to lock (expected); 1: it got the lock.
  auto child_locks = [&]() -> int {
    const pid_t pid = ::fork();
    if (pid == 0) {
      auto lock = Env::Default()->LockFile(f);
      ::_exit(lock.ok() ? 1 : 0);
    }
    int status = 0;
    ::waitpid(pid, &status, 0);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  };
  EXPECT_EQ(0, child_locks());
  held->reset();
  EXPECT_EQ(1, child_locks());
}

TEST_F(EnvPosixTest, LoggerWritesTimestampedLines) {
  const std::string f = dir_.Join("LOG");
  {
    auto logger = env_->NewLogger(f);
    ASSERT_TRUE(logger.ok());
    (*logger)->Log("first line");
    (*logger)->Log("second line\n");
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; t++) {
      threads.emplace_back([&, t] {
        for (int i = 0; i < 100; i++) {
          (*logger)->Log("thread " + std::to_string(t) + " line " +
                         std::to_string(i));
        }
      });
    }
    for (auto& th : threads) th.join();
  }
  const std::string text = ReadRaw(f);
  std::vector<std::string> lines;
  size_t start = 0;
  while (start < text.size()) {
    const size_t nl = text.find('\n', start);
    ASSERT_NE(std::string::npos, nl);
    lines.push_back(text.substr(start, nl - start));
    start = nl + 1;
  }
  ASSERT_EQ(402u, lines.size());
  EXPECT_THAT(lines[0], HasSubstr(" first line"));
  EXPECT_THAT(lines[1], HasSubstr(" second line"));
  for (const auto& line : lines) {
    // "YYYY/MM/DD-HH:MM:SS.uuuuuu "
    ASSERT_GE(line.size(), 27u);
    EXPECT_EQ('/', line[4]) << line;
    EXPECT_EQ('-', line[10]) << line;
    EXPECT_EQ('.', line[19]) << line;
    EXPECT_EQ(' ', line[26]) << line;
  }
}

TEST_F(EnvPosixTest, NowMicrosAdvances) {
  const uint64_t a = env_->NowMicros();
  env_->SleepForMicroseconds(1000);
  const uint64_t b = env_->NowMicros();
  EXPECT_GE(b, a + 1000);
}

}  // namespace env_posix_test
}  // namespace siftdb
