// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ReadaheadFile: every read returns exactly the bytes of the underlying
// file (sequential forward, backward, random, mixed, at the limit), and
// block-sized scans in either direction turn into a few large reads.

#include "table/readahead_file.h"

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "gtest/gtest.h"

namespace siftdb {
namespace readahead_file_test {

// A file in memory that counts reads and copies into scratch, like pread.
class StringFile final : public RandomAccessFile {
 public:
  explicit StringFile(std::string data) : data_(std::move(data)) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    reads_++;
    if (offset > data_.size()) offset = data_.size();
    const size_t got = std::min(n, data_.size() - static_cast<size_t>(offset));
    data_.copy(scratch, got, offset);
    *result = std::string_view(scratch, got);
    return absl::OkStatus();
  }
  int reads() const { return reads_; }

 private:
  const std::string data_;
  mutable int reads_ = 0;
};

// A "mapped" file in memory: answers with views of its bytes and records
// each WillRead.
class MappedStringFile final : public RandomAccessFile {
 public:
  explicit MappedStringFile(std::string data) : data_(std::move(data)) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* /*scratch*/) const override {
    reads_++;
    if (offset > data_.size()) offset = data_.size();
    *result = std::string_view(data_).substr(offset, n);
    return absl::OkStatus();
  }
  bool IsMemoryMapped() const override { return true; }
  void WillRead(uint64_t offset, uint64_t n) const override {
    hints_.push_back({offset, offset + n});
  }
  // Whether every byte of [begin, end) was hinted.
  bool Hinted(uint64_t begin, uint64_t end) const {
    std::vector<std::pair<uint64_t, uint64_t>> h = hints_;
    std::sort(h.begin(), h.end());
    for (const auto& [b, e] : h) {
      if (b <= begin && e > begin) begin = e;
      if (begin >= end) return true;
    }
    return begin >= end;
  }
  int reads() const { return reads_; }
  const std::vector<std::pair<uint64_t, uint64_t>>& hints() const {
    return hints_;
  }
  const std::string& data() const { return data_; }

 private:
  const std::string data_;
  mutable int reads_ = 0;
  mutable std::vector<std::pair<uint64_t, uint64_t>> hints_;
};

std::string Pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; i++) s[i] = static_cast<char>((i * 131) >> 3);
  return s;
}

void ExpectRead(const ReadaheadFile& f, const std::string& data,
                uint64_t offset, size_t n) {
  std::string scratch(n, '\0');
  std::string_view got;
  ASSERT_TRUE(f.Read(offset, n, &got, scratch.data()).ok());
  const size_t want =
      offset >= data.size() ? 0 : std::min<size_t>(n, data.size() - offset);
  ASSERT_EQ(got, std::string_view(data).substr(offset, want))
      << "offset " << offset << " n " << n;
}

TEST(ReadaheadFileTest, ForwardScanUsesFewReads) {
  const std::string data = Pattern(2 << 20);
  StringFile base(data);
  ReadaheadFile f(&base, data.size());
  const size_t block = 4000;
  uint64_t off = 0;
  int blocks = 0;
  for (; off + block <= data.size(); off += block, blocks++) {
    ExpectRead(f, data, off, block);
  }
  EXPECT_GT(blocks, 500);
  EXPECT_LT(base.reads(), 30);
  EXPECT_EQ(static_cast<uint64_t>(base.reads()), f.base_reads());
}

TEST(ReadaheadFileTest, BackwardScanUsesFewReads) {
  const std::string data = Pattern(1 << 20);
  StringFile base(data);
  ReadaheadFile f(&base, data.size());
  const size_t block = 3000;
  int blocks = 0;
  for (uint64_t end = data.size(); end >= block; end -= block, blocks++) {
    ExpectRead(f, data, end - block, block);
  }
  EXPECT_GT(blocks, 300);
  EXPECT_LT(base.reads(), 30);
}

// Over a mapping nothing is copied: each read is the mapping's answer,
// and a scan keeps what it reads next hinted, a window ahead, with few
// hints, inside the limit.
TEST(ReadaheadFileTest, MappedForwardScanHintsAheadWithoutCopying) {
  MappedStringFile base(Pattern(2 << 20));
  const uint64_t limit = base.data().size() - 1000;
  ReadaheadFile f(&base, limit);
  EXPECT_TRUE(f.IsMemoryMapped());
  const size_t block = 4000;
  int blocks = 0;
  for (uint64_t off = 0; off + block <= limit; off += block, blocks++) {
    std::string_view got;
    ASSERT_TRUE(f.Read(off, block, &got, nullptr).ok());
    ASSERT_EQ(got.data(), base.data().data() + off) << "copied at " << off;
    ASSERT_EQ(got.size(), block);
    // From the second block on, what follows it is hinted: at least half
    // the first window (8 KiB), and 64 KiB once 256 KiB have been read.
    const uint64_t ahead = off < (256 << 10) ? 8192 : 65536;
    if (blocks >= 1) {
      ASSERT_TRUE(base.Hinted(off + block,
                              std::min<uint64_t>(limit, off + block + ahead)))
          << "at " << off;
    }
  }
  EXPECT_GT(blocks, 500);
  EXPECT_EQ(base.reads(), blocks);
  EXPECT_LT(base.hints().size(), 30u);
  EXPECT_EQ(f.hints(), base.hints().size());
  for (const auto& [b, e] : base.hints()) EXPECT_LE(e, limit);
}

TEST(ReadaheadFileTest, MappedBackwardScanHintsAhead) {
  MappedStringFile base(Pattern(1 << 20));
  ReadaheadFile f(&base, base.data().size());
  const size_t block = 3000;
  int blocks = 0;
  for (uint64_t end = base.data().size(); end >= block;
       end -= block, blocks++) {
    std::string_view got;
    ASSERT_TRUE(f.Read(end - block, block, &got, nullptr).ok());
    ASSERT_EQ(got, std::string_view(base.data()).substr(end - block, block));
    const uint64_t begin = end - block;
    const uint64_t ahead =
        base.data().size() - end < (256 << 10) ? 8192 : 65536;
    if (blocks >= 1) {
      ASSERT_TRUE(base.Hinted(begin > ahead ? begin - ahead : 0, begin))
          << "at " << end;
    }
  }
  EXPECT_GT(blocks, 300);
  EXPECT_LT(base.hints().size(), 30u);
}

// A block's own hint (Table::PinDataBlock hints each block it reads from a
// mapping while reads are slow) inside the range the scan already hinted
// is not passed on again; one outside it is.
TEST(ReadaheadFileTest, MappedBlockHintInsideTheScansWindowIsDropped) {
  MappedStringFile base(Pattern(1 << 20));
  ReadaheadFile f(&base, base.data().size());
  const size_t block = 4000;
  for (uint64_t off = 0; off < 40 * block; off += block) {
    const size_t before = base.hints().size();
    f.WillRead(off, block);
    // The first two blocks come before the scan hints anything.
    if (off >= 2 * block) {
      EXPECT_EQ(base.hints().size(), before) << "re-hinted at " << off;
    }
    std::string_view got;
    ASSERT_TRUE(f.Read(off, block, &got, nullptr).ok());
  }
  const size_t before = base.hints().size();
  f.WillRead(900000, block);  // far outside the scan's window
  EXPECT_EQ(base.hints().size(), before + 1);
  EXPECT_EQ(base.hints().back(),
            (std::pair<uint64_t, uint64_t>{900000, 900000 + block}));
}

// Random reads over a mapping hint nothing.
TEST(ReadaheadFileTest, MappedRandomReadsHintNothing) {
  MappedStringFile base(Pattern(1 << 20));
  ReadaheadFile f(&base, base.data().size());
  std::mt19937 rng(17);
  for (int i = 0; i < 1000; i++) {
    const uint64_t off = rng() % (base.data().size() - 4096);
    std::string_view got;
    ASSERT_TRUE(f.Read(off, 4096, &got, nullptr).ok());
    ASSERT_EQ(got, std::string_view(base.data()).substr(off, 4096));
  }
  EXPECT_LE(base.hints().size(), 2u);
}

TEST(ReadaheadFileTest, NeverReadsPastLimit) {
  const std::string data = Pattern(100000);
  StringFile base(data);
  const uint64_t limit = 50000;
  ReadaheadFile f(&base, limit);
  for (uint64_t off = 0; off + 1000 <= limit; off += 1000) {
    ExpectRead(f, data, off, 1000);
  }
  // A read beyond the limit still answers from the file, unbuffered.
  ExpectRead(f, data, 60000, 1000);
  ExpectRead(f, data, 99500, 1000);  // short read at the end of the file
}

TEST(ReadaheadFileTest, MatchesFileForAnyReadSequence) {
  std::mt19937 rng(301);
  for (size_t size : {0, 1, 100, 5000, 70000, 600000}) {
    const std::string data = Pattern(size);
    StringFile base(data);
    ReadaheadFile f(&base, size);
    uint64_t off = 0;
    size_t n = 1;
    for (int op = 0; op < 3000; op++) {
      switch (rng() % 4) {
        case 0:  // continue forward
          off += n;
          break;
        case 1:  // continue backward
          n = 1 + rng() % 5000;
          off = off >= n ? off - n : 0;
          break;
        case 2:  // jump
          off = size == 0 ? 0 : rng() % size;
          break;
        default:  // same place again
          break;
      }
      if (rng() % 3 == 0) n = 1 + rng() % 5000;
      if (off > size) off = size;
      ExpectRead(f, data, off, n);
    }
  }
}

}  // namespace readahead_file_test
}  // namespace siftdb
