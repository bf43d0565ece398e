// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// PosixEnv's memory-mapped RandomAccessFile (util/env_posix.cc): which
// files are mapped (non-empty ones, up to 1000 at once, then pread), that
// a mapped reader returns the right bytes without a copy, reads at and
// past the end are short and not errors, the length is fixed at open, and
// mapped files hold no file descriptor.

#include <dirent.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/env.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"

namespace siftdb {
namespace env_mmap_test {

// The limit util/env_posix.cc documents (LevelDB's default as well).
constexpr int kMaxMappedFiles = 1000;

// Open file descriptors of this process.
int CountOpenFds() {
  DIR* dir = ::opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  int n = 0;
  while (::readdir(dir) != nullptr) n++;
  ::closedir(dir);
  return n;  // includes ".", ".." and the directory's own descriptor
}

std::string RandomBytes(Random* rnd, size_t n) {
  std::string s(n, '\0');
  for (char& c : s) c = static_cast<char>(rnd->Next());
  return s;
}

class EnvMmapTest : public ::testing::Test {
 protected:
  void WriteFile(const std::string& path, std::string_view data) {
    auto w = env_->NewWritableFile(path);
    ASSERT_TRUE(w.ok()) << w.status();
    ASSERT_TRUE((*w)->Append(data).ok());
    ASSERT_TRUE((*w)->Close().ok());
  }

  std::unique_ptr<RandomAccessFile> Open(const std::string& path) {
    auto f = env_->NewRandomAccessFile(path);
    EXPECT_TRUE(f.ok()) << f.status();
    return f.ok() ? std::move(*f) : nullptr;
  }

  // Reads [offset, offset + n) through `file`; checks the status.
  std::string Read(const RandomAccessFile& file, uint64_t offset, size_t n) {
    std::string scratch(n, '\0');
    std::string_view result;
    absl::Status s = file.Read(offset, n, &result, scratch.data());
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_LE(result.size(), n);
    return std::string(result);
  }

  Env* env_ = Env::Default();
  test::TempDir dir_;
};

TEST_F(EnvMmapTest, NonEmptyFileIsMapped) {
  for (size_t size : {size_t{1}, size_t{100}, size_t{4095}, size_t{4096},
                      size_t{4097}, size_t{3 * 4096 + 123}}) {
    SCOPED_TRACE(absl::StrFormat("size %d", size));
    Random rnd(size);
    const std::string data = RandomBytes(&rnd, size);
    const std::string path = dir_.Join(absl::StrFormat("f%d", size));
    WriteFile(path, data);
    auto file = Open(path);
    ASSERT_NE(file, nullptr);
    EXPECT_TRUE(file->IsMemoryMapped());
    EXPECT_EQ(Read(*file, 0, size), data);
    EXPECT_EQ(Read(*file, 0, size + 100), data);  // short at the end
  }
}

TEST_F(EnvMmapTest, EmptyFileIsNotMappedAndReadsEmpty) {
  const std::string path = dir_.Join("empty");
  WriteFile(path, "");
  auto file = Open(path);
  ASSERT_NE(file, nullptr);
  EXPECT_FALSE(file->IsMemoryMapped());
  EXPECT_EQ(Read(*file, 0, 10), "");
  EXPECT_EQ(Read(*file, 5, 10), "");
  EXPECT_EQ(Read(*file, 0, 0), "");
}

TEST_F(EnvMmapTest, MissingFileIsNotFound) {
  auto f = env_->NewRandomAccessFile(dir_.Join("missing"));
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.status().code(), absl::StatusCode::kNotFound) << f.status();
}

TEST_F(EnvMmapTest, ReadsAtAndPastEndAreShortNotErrors) {
  const std::string path = dir_.Join("f");
  Random rnd(7);
  const std::string data = RandomBytes(&rnd, 5000);
  WriteFile(path, data);
  auto file = Open(path);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->IsMemoryMapped());
  EXPECT_EQ(Read(*file, 4990, 10), data.substr(4990));
  EXPECT_EQ(Read(*file, 4990, 11), data.substr(4990));
  EXPECT_EQ(Read(*file, 4990, 1000), data.substr(4990));
  EXPECT_EQ(Read(*file, 4999, 1), data.substr(4999));
  EXPECT_EQ(Read(*file, 5000, 1), "");
  EXPECT_EQ(Read(*file, 5000, 0), "");
  EXPECT_EQ(Read(*file, 5001, 10), "");
  EXPECT_EQ(Read(*file, 1 << 20, 10), "");
  EXPECT_EQ(Read(*file, uint64_t{1} << 62, 10), "");
  EXPECT_EQ(Read(*file, ~uint64_t{0}, 10), "");
  EXPECT_EQ(Read(*file, 100, 0), "");
}

TEST_F(EnvMmapTest, ContentAtRandomOffsets) {
  const std::string path = dir_.Join("f");
  Random rnd(11);
  const std::string data = RandomBytes(&rnd, 5 * 4096 + 77);
  WriteFile(path, data);
  auto file = Open(path);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->IsMemoryMapped());
  std::vector<char> scratch(10000);
  for (int i = 0; i < 2000; i++) {
    const uint64_t offset = rnd.Uniform(data.size() + 10);
    const size_t n = rnd.Uniform(9000);
    // The scratch is filled with a marker, to see that the answer does not
    // come from it.
    std::fill(scratch.begin(), scratch.end(), '#');
    std::string_view result;
    ASSERT_TRUE(file->Read(offset, n, &result, scratch.data()).ok());
    const std::string expected =
        offset >= data.size() ? "" : data.substr(offset, n);
    ASSERT_EQ(result, expected) << "offset " << offset << " n " << n;
    if (!result.empty()) {
      // A view of the mapping: no copy into scratch.
      EXPECT_FALSE(result.data() >= scratch.data() &&
                   result.data() < scratch.data() + scratch.size());
    }
  }
}

TEST_F(EnvMmapTest, MappedReadNeedsNoScratch) {
  // Table block reads pass a null scratch to a mapped file.
  const std::string path = dir_.Join("f");
  WriteFile(path, "0123456789");
  auto file = Open(path);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->IsMemoryMapped());
  std::string_view result;
  ASSERT_TRUE(file->Read(3, 4, &result, nullptr).ok());
  EXPECT_EQ(result, "3456");
  ASSERT_TRUE(file->Read(8, 4, &result, nullptr).ok());
  EXPECT_EQ(result, "89");
  ASSERT_TRUE(file->Read(10, 4, &result, nullptr).ok());
  EXPECT_EQ(result, "");
}

TEST_F(EnvMmapTest, AppendAfterOpenIsNotVisibleToTheMappedReader) {
  const std::string path = dir_.Join("f");
  auto w = env_->NewWritableFile(path);
  ASSERT_TRUE(w.ok()) << w.status();
  ASSERT_TRUE((*w)->Append(std::string(1000, 'a')).ok());
  ASSERT_TRUE((*w)->Flush().ok());

  auto early = Open(path);
  ASSERT_NE(early, nullptr);
  ASSERT_TRUE(early->IsMemoryMapped());
  // Grows past the first page and within it.
  ASSERT_TRUE((*w)->Append(std::string(500, 'b')).ok());
  ASSERT_TRUE((*w)->Append(std::string(9000, 'c')).ok());
  ASSERT_TRUE((*w)->Close().ok());

  EXPECT_EQ(Read(*early, 0, 2000), std::string(1000, 'a'));
  EXPECT_EQ(Read(*early, 900, 200), std::string(100, 'a'));
  EXPECT_EQ(Read(*early, 1000, 100), "");
  EXPECT_EQ(Read(*early, 5000, 100), "");

  auto late = Open(path);
  ASSERT_NE(late, nullptr);
  EXPECT_TRUE(late->IsMemoryMapped());
  const std::string all =
      std::string(1000, 'a') + std::string(500, 'b') + std::string(9000, 'c');
  EXPECT_EQ(Read(*late, 0, 20000), all);
  EXPECT_EQ(Read(*late, 900, 200), all.substr(900, 200));
  // The early reader still answers as before.
  EXPECT_EQ(Read(*early, 0, 20000), std::string(1000, 'a'));
}

TEST_F(EnvMmapTest, MappingOutlivesTheDirectoryEntry) {
  const std::string path = dir_.Join("f");
  Random rnd(3);
  const std::string data = RandomBytes(&rnd, 10000);
  WriteFile(path, data);
  auto file = Open(path);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->IsMemoryMapped());
  ASSERT_TRUE(env_->RemoveFile(path).ok());
  EXPECT_EQ(Read(*file, 0, 10000), data);
}

TEST_F(EnvMmapTest, ConcurrentReadsOfOneMapping) {
  const std::string path = dir_.Join("f");
  Random rnd(5);
  const std::string data = RandomBytes(&rnd, 64 << 10);
  WriteFile(path, data);
  auto file = Open(path);
  ASSERT_NE(file, nullptr);
  ASSERT_TRUE(file->IsMemoryMapped());
  int errors[2] = {0, 0};
  auto reader = [&](int id) {
    Random r(100 + id);
    std::vector<char> scratch(4096);
    for (int i = 0; i < 20000; i++) {
      const uint64_t offset = r.Uniform(data.size());
      const size_t n = r.Uniform(4096);
      std::string_view result;
      if (!file->Read(offset, n, &result, scratch.data()).ok() ||
          result != std::string_view(data).substr(offset, n)) {
        errors[id]++;
      }
    }
  };
  std::thread t0(reader, 0), t1(reader, 1);
  t0.join();
  t1.join();
  EXPECT_EQ(errors[0], 0);
  EXPECT_EQ(errors[1], 0);
}

// File i's bytes: its number, then 0..600 deterministic random bytes.
std::string ManyFileContent(int i) {
  Random rnd(1000 + i);
  return absl::StrFormat("file %d:", i) + RandomBytes(&rnd, rnd.Uniform(601));
}

TEST_F(EnvMmapTest, MappingLimitFallsBackToPread) {
  constexpr int kFiles = 1100;
  std::vector<std::string> paths;
  for (int i = 0; i < kFiles; i++) {
    paths.push_back(dir_.Join(absl::StrFormat("%06d.sst", i)));
    WriteFile(paths.back(), ManyFileContent(i));
    ASSERT_FALSE(HasFatalFailure());
  }

  const int fds_before = CountOpenFds();
  ASSERT_GT(fds_before, 0);
  std::vector<std::unique_ptr<RandomAccessFile>> files;
  for (int i = 0; i < kFiles; i++) {
    files.push_back(Open(paths[i]));
    ASSERT_NE(files.back(), nullptr) << "file " << i;
  }
  // The first kMaxMappedFiles are mapped, the rest read with pread.
  int mapped = 0;
  for (int i = 0; i < kFiles; i++) {
    EXPECT_EQ(files[i]->IsMemoryMapped(), i < kMaxMappedFiles) << "file " << i;
    if (files[i]->IsMemoryMapped()) mapped++;
  }
  EXPECT_EQ(mapped, kMaxMappedFiles);
  // Only the pread files hold a descriptor.
  EXPECT_EQ(CountOpenFds() - fds_before, kFiles - kMaxMappedFiles);

  // Every file, of either kind, reads correctly, including at its end.
  for (int i = 0; i < kFiles; i++) {
    const std::string expected = ManyFileContent(i);
    ASSERT_EQ(Read(*files[i], 0, expected.size() + 10), expected)
        << "file " << i;
    ASSERT_EQ(Read(*files[i], 5, 3), expected.substr(5, 3)) << "file " << i;
    ASSERT_EQ(Read(*files[i], expected.size(), 10), "") << "file " << i;
    ASSERT_EQ(Read(*files[i], expected.size() + 1000, 10), "") << "file " << i;
  }

  // Closing one mapped file frees its slot for the next open.
  files[0].reset();
  auto reopened = Open(paths[0]);
  ASSERT_NE(reopened, nullptr);
  EXPECT_TRUE(reopened->IsMemoryMapped());
  auto over = Open(paths[1]);
  ASSERT_NE(over, nullptr);
  EXPECT_FALSE(over->IsMemoryMapped());
  reopened.reset();
  over.reset();

  // After closing them all, files are mapped again and no descriptor is
  // left behind.
  files.clear();
  EXPECT_EQ(CountOpenFds(), fds_before);
  for (int i = 0; i < 10; i++) {
    files.push_back(Open(paths[kFiles - 1 - i]));
    ASSERT_NE(files.back(), nullptr);
    EXPECT_TRUE(files.back()->IsMemoryMapped()) << "file " << i;
    const std::string expected = ManyFileContent(kFiles - 1 - i);
    EXPECT_EQ(Read(*files.back(), 0, 1000), expected);
  }
  EXPECT_EQ(CountOpenFds(), fds_before);
}

TEST_F(EnvMmapTest, EmptyFilesDoNotUseMappingSlots) {
  // With some empty files open (never mapped), still exactly
  // kMaxMappedFiles opens of a non-empty file are mapped.
  const std::string empty = dir_.Join("empty");
  WriteFile(empty, "");
  const std::string full = dir_.Join("full");
  WriteFile(full, "data");
  std::vector<std::unique_ptr<RandomAccessFile>> empties;
  for (int i = 0; i < 50; i++) {
    empties.push_back(Open(empty));
    ASSERT_NE(empties.back(), nullptr);
    ASSERT_FALSE(empties.back()->IsMemoryMapped());
  }
  std::vector<std::unique_ptr<RandomAccessFile>> files;
  for (int i = 0; i < kMaxMappedFiles; i++) {
    files.push_back(Open(full));
    ASSERT_NE(files.back(), nullptr);
    ASSERT_TRUE(files.back()->IsMemoryMapped()) << "open " << i;
  }
  auto over = Open(full);
  ASSERT_NE(over, nullptr);
  EXPECT_FALSE(over->IsMemoryMapped());
  EXPECT_EQ(Read(*over, 0, 10), "data");
  EXPECT_EQ(Read(*files.back(), 0, 10), "data");
}

}  // namespace env_mmap_test
}  // namespace siftdb
