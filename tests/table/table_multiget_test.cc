// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Table's batched lookups and the file: MultiGetPin tells the file about
// every data block the batch will read from it (RandomAccessFile::WillRead)
// before MultiGetFinish reads any, so the reads from storage overlap;
// blocks the cache holds are neither hinted nor read; and the hints stop
// once reads come back as fast as memory, and resume after a slow one.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "table/format.h"
#include "tests/table/table_test_util.h"
#include "util/cache.h"
#include "util/mutex.h"

namespace siftdb::test {
namespace {

// A file over a copy of some bytes that logs every Read and WillRead, and
// can make reads slow. Thread-safe.
class RecordingSource final : public RandomAccessFile {
 public:
  struct Event {
    bool hint;  // WillRead; else Read
    uint64_t offset;
    uint64_t n;
  };

  explicit RecordingSource(std::string contents)
      : contents_(std::move(contents)) {}

  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    std::chrono::milliseconds delay;
    {
      MutexLock lock(&mu_);
      events_.push_back(Event{false, offset, n});
      delay = delay_;
    }
    if (delay.count() > 0) std::this_thread::sleep_for(delay);
    if (offset > contents_.size()) {
      *result = {};
      return absl::OkStatus();
    }
    n = std::min<uint64_t>(n, contents_.size() - offset);
    std::memcpy(scratch, contents_.data() + offset, n);
    *result = std::string_view(scratch, n);
    return absl::OkStatus();
  }

  void WillRead(uint64_t offset, uint64_t n) const override {
    MutexLock lock(&mu_);
    events_.push_back(Event{true, offset, n});
  }

  std::vector<Event> TakeEvents() {
    MutexLock lock(&mu_);
    return std::exchange(events_, {});
  }
  void SetReadDelay(std::chrono::milliseconds delay) {
    MutexLock lock(&mu_);
    delay_ = delay;
  }

 private:
  const std::string contents_;
  mutable Mutex mu_;
  mutable std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
  std::chrono::milliseconds delay_ ABSL_GUARDED_BY(mu_){0};
};

constexpr size_t kEntries = 2000;

class TableMultiGetTest : public testing::Test {
 protected:
  void Open(ShardedCache* cache, int64_t slow_read_nanos) {
    TableOptions options;
    options.block_size = 1024;  // many blocks
    options.compression = kNoCompression;
    options.block_cache = cache;
    options.multiget_slow_read_nanos = slow_read_nanos;
    entries_ = MakeEntries(kEntries, false, 7);
    auto contents = BuildTable(options, entries_);
    ASSERT_TRUE(contents.ok()) << contents.status();
    auto source = std::make_unique<RecordingSource>(*contents);
    source_ = source.get();
    auto table =
        Table::Open(options, "000007.sst", std::move(source), contents->size());
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = std::move(*table);
    source_->TakeEvents();  // the footer, index and filter reads
  }

  // One batch over every `step`-th entry from `first`; checks every answer
  // against the entries; returns the file events of Pin (hints) and of
  // Finish (reads) separately.
  void Batch(size_t first, size_t step,
             std::vector<RecordingSource::Event>* pin,
             std::vector<RecordingSource::Event>* finish) {
    std::vector<size_t> picked;
    for (size_t i = first; i < kEntries; i += step) picked.push_back(i);
    std::vector<Table::GetRequest> requests(picked.size());
    for (size_t r = 0; r < picked.size(); r++) {
      requests[r].internal_key = entries_[picked[r]].first;
    }
    Table::MultiGetBlocks blocks;
    table_->MultiGetLocate(std::span(requests), &blocks);
    table_->MultiGetPin(std::span(requests), &blocks);
    *pin = source_->TakeEvents();
    std::vector<bool> found(picked.size(), false);
    table_->MultiGetFinish(
        ReadOptions(), std::span(requests), &blocks,
        [&](size_t r, std::string_view key, std::string_view value) {
          EXPECT_EQ(key, entries_[picked[r]].first);
          EXPECT_EQ(value, entries_[picked[r]].second);
          found[r] = true;
        });
    *finish = source_->TakeEvents();
    for (size_t r = 0; r < picked.size(); r++) {
      EXPECT_TRUE(requests[r].status.ok()) << requests[r].status;
      EXPECT_TRUE(found[r]) << "entry " << picked[r];
    }
  }

  KVList entries_;
  RecordingSource* source_ = nullptr;
  std::unique_ptr<Table> table_;
};

size_t Count(const std::vector<RecordingSource::Event>& events, bool hint) {
  return static_cast<size_t>(
      std::count_if(events.begin(), events.end(),
                    [&](const auto& e) { return e.hint == hint; }));
}

TEST_F(TableMultiGetTest, HintsEveryBlockItWillReadBeforeReadingAny) {
  Open(nullptr, 1'000'000'000);
  std::vector<RecordingSource::Event> pin, finish;
  Batch(3, 97, &pin, &finish);
  // Pin reads nothing; it hints each block once, whole with its trailer.
  ASSERT_EQ(Count(pin, false), 0u);
  ASSERT_GE(pin.size(), 10u);
  // Finish hints nothing and reads exactly the hinted blocks.
  ASSERT_EQ(Count(finish, true), 0u);
  std::set<std::pair<uint64_t, uint64_t>> hinted, read;
  for (const auto& e : pin) hinted.insert({e.offset, e.n});
  for (const auto& e : finish) read.insert({e.offset, e.n});
  EXPECT_EQ(hinted.size(), pin.size()) << "a block hinted twice";
  EXPECT_EQ(finish.size(), read.size()) << "a block read twice";
  EXPECT_EQ(hinted, read);
}

TEST_F(TableMultiGetTest, CachedBlocksAreNeitherHintedNorRead) {
  auto cache = NewShardedLRUCache(size_t{64} << 20);
  Open(cache.get(), 1'000'000'000);
  std::vector<RecordingSource::Event> pin, finish;
  Batch(5, 89, &pin, &finish);
  EXPECT_GT(Count(pin, true), 0u);
  EXPECT_GT(Count(finish, false), 0u);
  // The same batch again: every block comes from the cache.
  Batch(5, 89, &pin, &finish);
  EXPECT_TRUE(pin.empty());
  EXPECT_TRUE(finish.empty());
}

TEST_F(TableMultiGetTest, HintsStopAfterFastReadsAndResumeAfterASlowOne) {
  // Reads count as slow from 50 ms on: only the delayed ones below are.
  Open(nullptr, 50'000'000);
  std::vector<RecordingSource::Event> pin, finish;
  for (int b = 0; b < Table::kMultiGetHintBatches; b++) {
    Batch(b % 50, 61, &pin, &finish);
    ASSERT_GT(Count(pin, true), 0u) << "batch " << b;
  }
  // Every batch so far read fast, so the hints stop.
  Batch(1, 61, &pin, &finish);
  EXPECT_EQ(Count(pin, true), 0u);
  EXPECT_GT(Count(finish, false), 0u);
  // A batch whose reads come from slow storage turns them back on.
  source_->SetReadDelay(std::chrono::milliseconds(60));
  Batch(2, 401, &pin, &finish);
  source_->SetReadDelay(std::chrono::milliseconds(0));
  Batch(3, 61, &pin, &finish);
  EXPECT_GT(Count(pin, true), 0u);
  EXPECT_EQ(Count(pin, true), Count(finish, false));
}

}  // namespace
}  // namespace siftdb::test
