// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// What a Table tells its file beside reading it. MultiGetPin hints every
// data block the batch will read from the file (RandomAccessFile::WillRead)
// before MultiGetFinish reads any, so the reads from storage overlap;
// blocks the cache holds are neither hinted nor read; and the hints stop
// once reads come back as fast as memory, and resume after a slow one
// that storage explains (not a lone one long after).
// A Get of a mapped table hints its block on the same terms. Open advises
// the file for random access when asked, and hints each meta block before
// reading it; the after-write check hints all data blocks.

#include <algorithm>
#include <chrono>
#include <cstring>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "siftdb/filter_policy.h"
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

  // mapped: answers with views of its bytes, as a mapping does.
  RecordingSource(std::string contents, bool mapped)
      : contents_(std::move(contents)), mapped_(mapped) {}
  bool IsMemoryMapped() const override { return mapped_; }

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
    if (mapped_) {
      *result = std::string_view(contents_).substr(offset, n);
      return absl::OkStatus();
    }
    std::memcpy(scratch, contents_.data() + offset, n);
    *result = std::string_view(scratch, n);
    return absl::OkStatus();
  }

  void WillRead(uint64_t offset, uint64_t n) const override {
    MutexLock lock(&mu_);
    events_.push_back(Event{true, offset, n});
  }
  void AdviseRandomAccess() const override { advised_random_++; }
  int advised_random() const { return advised_random_.load(); }

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
  const bool mapped_;
  mutable Mutex mu_;
  mutable std::vector<Event> events_ ABSL_GUARDED_BY(mu_);
  std::chrono::milliseconds delay_ ABSL_GUARDED_BY(mu_){0};
  mutable std::atomic<int> advised_random_{0};
};

constexpr size_t kEntries = 2000;

class TableFileHintsTest : public testing::Test {
 protected:
  void Open(ShardedCache* cache, int64_t slow_read_nanos,
            bool advise_random = false, bool mapped = false) {
    TableOptions options;
    options.advise_random = advise_random;
    options.filter_policy = NewBloomFilterPolicy(10);
    options.block_size = 1024;  // many blocks
    options.compression = kNoCompression;
    options.block_cache = cache;
    options.slow_block_read_nanos = slow_read_nanos;
    entries_ = MakeEntries(kEntries, false, 7);
    auto contents = BuildTable(options, entries_);
    ASSERT_TRUE(contents.ok()) << contents.status();
    auto source = std::make_unique<RecordingSource>(*contents, mapped);
    source_ = source.get();
    auto table =
        Table::Open(options, "000007.sst", std::move(source), contents->size());
    ASSERT_TRUE(table.ok()) << table.status();
    table_ = std::move(*table);
    open_events_ = source_->TakeEvents();  // footer, index and filter
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
  std::vector<RecordingSource::Event> open_events_;
  RecordingSource* source_ = nullptr;
  std::unique_ptr<Table> table_;
};

size_t Count(const std::vector<RecordingSource::Event>& events, bool hint) {
  return static_cast<size_t>(
      std::count_if(events.begin(), events.end(),
                    [&](const auto& e) { return e.hint == hint; }));
}

TEST_F(TableFileHintsTest, HintsEveryBlockItWillReadBeforeReadingAny) {
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

TEST_F(TableFileHintsTest, CachedBlocksAreNeitherHintedNorRead) {
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

TEST_F(TableFileHintsTest, HintsStopAfterFastReadsAndResumeAfterASlowOne) {
  // Reads count as slow from 50 ms on: only the delayed ones below are.
  Open(nullptr, 50'000'000);
  std::vector<RecordingSource::Event> pin, finish;
  for (int b = 0; b < Table::kHintedReads; b++) {
    Batch(b % 50, 61, &pin, &finish);
    ASSERT_GT(Count(pin, true), 0u) << "batch " << b;
  }
  // The last kHintedReads batches read fast, so the hints stop.
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

// A Get of a mapped table hints its block whole just before reading it
// (one read from storage for a block spanning two pages), on the same
// terms as MultiGet; a table read with pread is not hinted (its read is
// one request already).
TEST_F(TableFileHintsTest, GetOfAMappedTableHintsItsBlockWhileReadsAreSlow) {
  Open(nullptr, 50'000'000, false, /*mapped=*/true);
  auto get = [&](size_t i) {
    GetResult r = test::Get(*table_, entries_[i].first);
    EXPECT_TRUE(r.called);
    EXPECT_EQ(r.value, entries_[i].second);
    return source_->TakeEvents();
  };
  for (int i = 0; i < Table::kHintedReads; i++) {
    const std::vector<RecordingSource::Event> events = get(i * 29 % kEntries);
    ASSERT_EQ(events.size(), 2u) << "get " << i;
    EXPECT_TRUE(events[0].hint);
    EXPECT_FALSE(events[1].hint);
    EXPECT_EQ(events[0].offset, events[1].offset);
    EXPECT_EQ(events[0].n, events[1].n);
  }
  EXPECT_EQ(Count(get(7), true), 0u) << "after fast reads";
  source_->SetReadDelay(std::chrono::milliseconds(60));
  get(11);
  source_->SetReadDelay(std::chrono::milliseconds(0));
  EXPECT_EQ(Count(get(13), true), 1u) << "after a slow read";

  Open(nullptr, 0, false, /*mapped=*/false);  // every read slow, pread
  EXPECT_EQ(Count(get(5), true), 0u);
}

// On a busy machine a thread descheduled mid-read makes a lone slow read
// of a block in memory. Long after the hints stopped, such a read alone
// does not turn them back on; a second slow read within
// kSlowReadsToConfirm reads does (storage: its reads are slow one after
// another). Right after the hints stopped, one slow read is enough (a
// table read from storage whose hints made its reads fast).
TEST_F(TableFileHintsTest, ALoneSlowReadLongAfterTheHintsStoppedIsNotStorage) {
  Open(nullptr, 50'000'000, false, /*mapped=*/true);
  size_t next = 0;
  auto get = [&](bool slow) {
    if (slow) source_->SetReadDelay(std::chrono::milliseconds(60));
    const size_t i = (next++ * 31) % kEntries;
    GetResult r = test::Get(*table_, entries_[i].first);
    if (slow) source_->SetReadDelay(std::chrono::milliseconds(0));
    EXPECT_TRUE(r.called);
    EXPECT_EQ(r.value, entries_[i].second);
    return Count(source_->TakeEvents(), true);
  };
  // The first kHintedReads are hinted; then kHintedReads fast reads more
  // leave the table cool.
  for (int i = 0; i < 2 * Table::kHintedReads; i++) get(false);
  ASSERT_EQ(get(false), 0u);

  get(/*slow=*/true);
  EXPECT_EQ(get(false), 0u) << "one slow read re-armed the hints";
  // A second slow read too late to confirm the first.
  for (int i = 0; i < Table::kSlowReadsToConfirm; i++) get(false);
  get(/*slow=*/true);
  EXPECT_EQ(get(false), 0u) << "a slow read confirmed one too far back";
  // Within kSlowReadsToConfirm reads of the last: storage.
  for (int i = 0; i < Table::kSlowReadsToConfirm - 2; i++) get(false);
  get(/*slow=*/true);
  EXPECT_EQ(get(false), 1u) << "two slow reads close together did not";

  // Hinting on until kHintedReads reads after that; a slow read within
  // kHintedReads reads of its end re-arms at once.
  for (int i = 0; i < Table::kHintedReads; i++) get(false);
  ASSERT_EQ(get(false), 0u);
  get(/*slow=*/true);
  EXPECT_EQ(get(false), 1u) << "a slow read just after the hints stopped";
}

TEST_F(TableFileHintsTest, OpenAdvisesRandomAccessWhenAskedAndHintsMetaBlocks) {
  Open(nullptr, 1'000'000'000, /*advise_random=*/false);
  EXPECT_EQ(source_->advised_random(), 0);
  Open(nullptr, 1'000'000'000, /*advise_random=*/true);
  EXPECT_EQ(source_->advised_random(), 1);
  // Every read of more than the footer was hinted just before it, whole
  // (the index and the filter, each spanning many pages).
  int hinted_reads = 0;
  for (size_t i = 0; i < open_events_.size(); i++) {
    const auto& e = open_events_[i];
    if (e.hint || e.n <= kFooterSize) continue;
    ASSERT_GT(i, 0u);
    EXPECT_TRUE(open_events_[i - 1].hint);
    EXPECT_EQ(open_events_[i - 1].offset, e.offset);
    EXPECT_EQ(open_events_[i - 1].n, e.n);
    hinted_reads++;
  }
  EXPECT_GE(hinted_reads, 2);  // index and filter
}

TEST_F(TableFileHintsTest, TheAfterWriteCheckHintsEveryDataBlockAtOnce) {
  Open(nullptr, 1'000'000'000);
  ASSERT_TRUE(table_->VerifyDataBlockChecksums().ok());
  std::vector<RecordingSource::Event> events = source_->TakeEvents();
  ASSERT_GT(events.size(), 10u);
  EXPECT_TRUE(events[0].hint);
  EXPECT_EQ(events[0].offset, 0u);
  EXPECT_EQ(Count(events, true), 1u);
  uint64_t data_end = 0;
  for (const auto& e : events) {
    if (!e.hint) data_end = std::max(data_end, e.offset + e.n);
  }
  EXPECT_EQ(events[0].n, data_end);
}

}  // namespace
}  // namespace siftdb::test
