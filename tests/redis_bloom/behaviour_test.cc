// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Behaviour of the Redis-backed Bloom filter against a real redis-server:
// false-positive rates, growth, atomicity under concurrent clients, dumps
// between servers, the retry path across a server restart, and bad inputs.

#include <algorithm>
#include <atomic>
#include <thread>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/bloom/redis_counting_bloom_impl.h"
#include "siftdb/redis_bloom.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"

namespace siftdb::test {
namespace behaviour_test {

using ::testing::HasSubstr;

std::string Reply(const absl::Status& s) {
  return RedisBloomReplyText(s).value_or("(none)");
}

class RedisBloomTest : public RedisBloomClientTest {
 protected:
  double FalsePositiveRate(const std::string& name, int n) {
    absl::StatusOr<std::vector<bool>> r =
        bloom_->MExists(name, Range("absent-", 0, n));
    EXPECT_TRUE(r.ok()) << r.status();
    if (!r.ok()) return 1;
    return static_cast<double>(std::count(r->begin(), r->end(), true)) / n;
  }

  void ExpectAllPresent(const std::string& name,
                        const std::vector<std::string>& items) {
    absl::StatusOr<std::vector<bool>> r = bloom_->MExists(name, items);
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(std::count(r->begin(), r->end(), false), 0) << name;
  }
};

TEST_F(RedisBloomTest, FalsePositiveRateAtCapacityStaysUnderRequested) {
  struct Case {
    double error;
    int capacity;
    bool nonscaling;
  };
  for (const Case& c : {Case{0.01, 20000, false}, Case{0.001, 10000, false},
                        Case{0.05, 5000, true}, Case{0.01, 3000, true}}) {
    SCOPED_TRACE(absl::StrCat(c.error, " ", c.capacity, " ", c.nonscaling));
    std::string name = absl::StrCat("fp-", c.error, "-", c.capacity);
    ASSERT_TRUE(
        bloom_->Reserve(name, c.error, c.capacity, 2, c.nonscaling).ok());
    std::vector<std::string> items = Range("item-", 0, c.capacity);
    absl::StatusOr<BloomAddResults> r = bloom_->MAdd(name, items);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->stopped.ok()) << r->stopped;
    ExpectAllPresent(name, items);
    absl::StatusOr<BloomInfo> info = bloom_->Info(name);
    ASSERT_TRUE(info.ok());
    EXPECT_EQ(info->filters, 1u);
    // A scaling filter's first sub-filter gets half the error rate, so it
    // stays under the requested rate at capacity. A NONSCALING one uses the
    // rate itself with a hash count rounded up, which RedisBloom lets end a
    // hair above it at exactly full capacity (theory: 5.1% for 5%).
    EXPECT_LT(FalsePositiveRate(name, 50000),
              c.nonscaling ? c.error * 1.15 : c.error);
  }
}

TEST_F(RedisBloomTest,
       FalsePositiveRateAfterFourExpansionsStaysUnderRequested) {
  ASSERT_TRUE(bloom_->Reserve("grow", 0.01, 1000).ok());
  // 1000 + 2000 + 4000 + 8000 + 16000 slots: fill the fifth sub-filter.
  std::vector<std::string> items = Range("g-", 0, 30000);
  for (size_t i = 0; i < items.size(); i += 1000) {
    std::vector<std::string> batch(items.begin() + i, items.begin() + i + 1000);
    absl::StatusOr<BloomAddResults> r = bloom_->MAdd("grow", batch);
    ASSERT_TRUE(r.ok()) << r.status();
  }
  absl::StatusOr<BloomInfo> info = bloom_->Info("grow");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->filters, 5u);
  EXPECT_EQ(info->capacity, 31000u);
  ASSERT_EQ(info->sub_filters.size(), 5u);
  uint64_t sum = 0;
  for (size_t j = 0; j < 5; j++) {
    EXPECT_EQ(info->sub_filters[j].capacity, 1000u << j);
    EXPECT_DOUBLE_EQ(info->sub_filters[j].error_rate, 0.005 / (1 << j));
    sum += info->sub_filters[j].items;
  }
  EXPECT_EQ(sum, info->items);
  ExpectAllPresent("grow", items);
  EXPECT_LT(FalsePositiveRate("grow", 50000), 0.01);
}

TEST_F(RedisBloomTest, BatchesLargerThanOneScriptAreSplitCorrectly) {
  std::vector<std::string> items = Range("big-", 0, 40000);
  absl::StatusOr<BloomAddResults> r = bloom_->MAdd("big", items);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->added.size(), items.size());
  ExpectAllPresent("big", items);
  absl::StatusOr<int64_t> card = bloom_->Card("big");
  ASSERT_TRUE(card.ok());
  EXPECT_EQ(*card, std::count(r->added.begin(), r->added.end(), true));
}

TEST_F(RedisBloomTest, ConcurrentClientsKeepExactCountsAndLoseNothing) {
  // Small capacity so that the clients race through several expansions.
  ASSERT_TRUE(bloom_->Reserve("race", 0.01, 500).ok());
  constexpr int kThreads = 8;
  constexpr int kBatches = 20;
  constexpr int kBatch = 100;
  std::vector<std::vector<bool>> shared_replies(kThreads);
  std::vector<int64_t> ones(kThreads, 0);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      auto c = RedisClient::Connect(ClientOptions());
      if (!c.ok()) {
        failures++;
        return;
      }
      RedisBloomImpl bloom(c->get());
      for (int b = 0; b < kBatches; b++) {
        // Every thread adds the same shared batch and one of its own.
        for (const std::string& prefix :
             {std::string("shared-"), absl::StrCat("t", t, "-")}) {
          absl::StatusOr<BloomAddResults> r =
              bloom.MAdd("race", Range(prefix, b * kBatch, (b + 1) * kBatch));
          if (!r.ok() || !r->stopped.ok() || r->added.size() != kBatch) {
            failures++;
            return;
          }
          ones[t] += std::count(r->added.begin(), r->added.end(), true);
          if (prefix == "shared-") {
            shared_replies[t].insert(shared_replies[t].end(), r->added.begin(),
                                     r->added.end());
          }
        }
      }
    });
  }
  for (auto& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);

  // Every add that reported "new" was counted exactly once.
  int64_t total_ones = 0;
  for (int64_t o : ones) total_ones += o;
  absl::StatusOr<BloomInfo> info = bloom_->Info("race");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(static_cast<int64_t>(info->items), total_ones);
  uint64_t sum = 0;
  for (const auto& s : info->sub_filters) {
    sum += s.items;
    EXPECT_LE(s.items, s.capacity);
  }
  EXPECT_EQ(sum, info->items);
  // A shared item is new for at most one client.
  for (int i = 0; i < kBatches * kBatch; i++) {
    int news = 0;
    for (int t = 0; t < kThreads; t++) news += shared_replies[t][i] ? 1 : 0;
    EXPECT_LE(news, 1) << "shared-" << i;
  }
  // Nothing was lost.
  ExpectAllPresent("race", Range("shared-", 0, kBatches * kBatch));
  for (int t = 0; t < kThreads; t++) {
    ExpectAllPresent("race",
                     Range(absl::StrCat("t", t, "-"), 0, kBatches * kBatch));
  }
  // 9 * 2000 distinct items, minus the false positives at insert time: an
  // insert is falsely "present" with about the summed error of the full
  // links (0.005 + 0.0025 + ... < 1%) plus the filling one's. Over these
  // 18,000 inserts 20 local runs lost 125-177 (mean 146), so the old bound
  // of 1% (180) failed now and then (186 lost under ASan in CI); 2% (360)
  // is far out of reach of chance.
  EXPECT_LE(info->items, 9u * kBatches * kBatch);
  EXPECT_GE(info->items, 9u * kBatches * kBatch * 98 / 100);
}

TEST_F(RedisBloomTest,
       ScanDumpThenLoadChunkIntoSecondRedisReproducesEveryAnswer) {
  ASSERT_TRUE(bloom_->Reserve("src", 0.001, 100, 3).ok());
  std::vector<std::string> items = Range("d-", 0, 5000);
  ASSERT_TRUE(bloom_->MAdd("src", items).ok());
  absl::StatusOr<std::unique_ptr<RedisServer>> second = RedisServer::Start();
  ASSERT_TRUE(second.ok()) << second.status();
  RedisBloomOptions opts;
  opts.endpoint = (*second)->endpoint();
  absl::StatusOr<std::unique_ptr<RedisBloom>> dst = RedisBloom::Open(opts);
  ASSERT_TRUE(dst.ok()) << dst.status();
  int64_t it = 0;
  int chunks = 0;
  while (true) {
    absl::StatusOr<BloomDumpChunk> c = bloom_->ScanDump("src", it);
    ASSERT_TRUE(c.ok()) << c.status();
    if (c->next_iterator == 0) break;
    ASSERT_TRUE((*dst)->LoadChunk("dst", c->next_iterator, c->data).ok());
    it = c->next_iterator;
    chunks++;
  }
  absl::StatusOr<BloomInfo> a = bloom_->Info("src");
  absl::StatusOr<BloomInfo> b = (*dst)->Info("dst");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(chunks, 1 + static_cast<int>(a->filters));
  EXPECT_EQ(a->capacity, b->capacity);
  EXPECT_EQ(a->size, b->size);
  EXPECT_EQ(a->items, b->items);
  EXPECT_EQ(a->expansion, b->expansion);
  std::vector<std::string> probe = items;
  std::vector<std::string> absent = Range("never-", 0, 20000);
  probe.insert(probe.end(), absent.begin(), absent.end());
  EXPECT_EQ(*bloom_->MExists("src", probe), *(*dst)->MExists("dst", probe));
  // The copy keeps growing like the original.
  std::vector<std::string> more = Range("more-", 0, 3000);
  EXPECT_EQ(bloom_->MAdd("src", more)->added, (*dst)->MAdd("dst", more)->added);
  EXPECT_EQ(bloom_->Info("src")->filters, (*dst)->Info("dst")->filters);
}

// A dump may be continued by another client (sift_bf --serve runs each
// call on whichever worker is free). One whose cached layout predates a
// growth must not take an iterator past its cached sub-filters for the end
// of the dump: it ended early, silently dropping the newer sub-filters.
TEST_F(RedisBloomTest, ADumpContinuedByAClientWithAnOlderLayoutIsWhole) {
  RedisBloomImpl stale(client_.get());
  ASSERT_TRUE(bloom_->Reserve("g", 0.01, 100, 2).ok());
  ASSERT_TRUE(stale.Add("g", "first").ok());  // caches one sub-filter
  const std::vector<std::string> items = Range("g-", 0, 1000);
  ASSERT_TRUE(bloom_->MAdd("g", items).ok());
  const uint64_t filters = bloom_->Info("g")->filters;
  ASSERT_GE(filters, 3u);
  // The header and the first sub-filter through bloom_, the rest through
  // `stale`, loaded into a copy on the same server.
  absl::StatusOr<BloomDumpChunk> c = bloom_->ScanDump("g", 0);
  ASSERT_TRUE(c.ok()) << c.status();
  ASSERT_TRUE(bloom_->LoadChunk("copy", c->next_iterator, c->data).ok());
  c = bloom_->ScanDump("g", c->next_iterator);
  ASSERT_TRUE(c.ok()) << c.status();
  uint64_t chunks = 0;  // data chunks loaded: one per (small) sub-filter
  while (c->next_iterator != 0) {
    ASSERT_TRUE(bloom_->LoadChunk("copy", c->next_iterator, c->data).ok());
    chunks++;
    c = stale.ScanDump("g", c->next_iterator);
    ASSERT_TRUE(c.ok()) << c.status();
  }
  EXPECT_EQ(chunks, filters);
  absl::StatusOr<std::vector<bool>> found = bloom_->MExists("copy", items);
  ASSERT_TRUE(found.ok()) << found.status();
  EXPECT_EQ(std::count(found->begin(), found->end(), true),
            static_cast<std::ptrdiff_t>(items.size()));
}

TEST_F(RedisBloomTest, NonScalingFilterStopsWhenFull) {
  ASSERT_TRUE(bloom_->Reserve("ns", 0.01, 10, 2, true).ok());
  absl::StatusOr<BloomAddResults> r = bloom_->MAdd("ns", Range("n-", 0, 30));
  ASSERT_TRUE(r.ok());
  EXPECT_TRUE(absl::IsResourceExhausted(r->stopped)) << r->stopped;
  EXPECT_EQ(Reply(r->stopped), "ERR non scaling filter is full");
  EXPECT_GE(r->added.size(), 10u);
  EXPECT_LT(r->added.size(), 30u);
  EXPECT_EQ(*bloom_->Card("ns"), 10);
  absl::StatusOr<bool> again = bloom_->Add("ns", "n-0");
  ASSERT_TRUE(again.ok());
  EXPECT_FALSE(*again);
  EXPECT_EQ(Reply(bloom_->Add("ns", "other").status()),
            "ERR non scaling filter is full");
}

TEST_F(RedisBloomTest, GrowthBeyondRedisStringLimitIsRefused) {
  ASSERT_TRUE(bloom_->Reserve("huge", 0.01, 100000, 32768).ok());
  std::vector<std::string> items = Range("h-", 0, 100000);
  absl::StatusOr<BloomAddResults> r = bloom_->MAdd("huge", items);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_TRUE(r->stopped.ok());
  int64_t card = *bloom_->Card("huge");
  // Top up to exactly the capacity (false positives did not count).
  int next = 100000;
  while (card < 100000) {
    absl::StatusOr<bool> a = bloom_->Add("huge", absl::StrCat("h-", next++));
    ASSERT_TRUE(a.ok()) << a.status();
    card += *a ? 1 : 0;
  }
  absl::StatusOr<bool> over = bloom_->Add("huge", "one-too-many");
  EXPECT_TRUE(absl::IsResourceExhausted(over.status())) << over.status();
  EXPECT_EQ(Reply(over.status()), "ERR problem inserting into filter");
  EXPECT_EQ(bloom_->Info("huge")->filters, 1u);
}

TEST_F(RedisBloomTest, BadInputsGetClearStatusesBeforeRedisIsTouched) {
  EXPECT_TRUE(absl::IsInvalidArgument(bloom_->Reserve("b", 0, 100)));
  EXPECT_TRUE(absl::IsInvalidArgument(bloom_->Reserve("b", 1, 100)));
  EXPECT_TRUE(absl::IsInvalidArgument(bloom_->Reserve("b", std::nan(""), 100)));
  EXPECT_TRUE(absl::IsInvalidArgument(bloom_->Reserve("b", 0.01, 0)));
  EXPECT_TRUE(
      absl::IsInvalidArgument(bloom_->Reserve("b", 0.01, (1 << 30) + 1)));
  EXPECT_TRUE(absl::IsInvalidArgument(bloom_->Reserve("b", 0.01, 100, 0)));
  EXPECT_TRUE(absl::IsInvalidArgument(bloom_->Reserve("b", 0.01, 100, 40000)));
  absl::Status big = bloom_->Reserve("b", 1e-9, 1 << 30);
  EXPECT_TRUE(absl::IsResourceExhausted(big)) << big;
  EXPECT_THAT(std::string(big.message()), HasSubstr("512"));
  EXPECT_EQ(*server_->Call({"DBSIZE"}), "0");

  ASSERT_TRUE(bloom_->Reserve("b", 0.01, 100).ok());
  absl::Status again = bloom_->Reserve("b", 0.01, 100);
  EXPECT_TRUE(absl::IsAlreadyExists(again)) << again;
  EXPECT_EQ(Reply(again), "ERR item exists");

  ASSERT_EQ(*server_->Call({"SET", RedisBloom::MetaKey("str"), "x"}), "OK");
  absl::StatusOr<bool> wrong = bloom_->Add("str", "a");
  EXPECT_TRUE(absl::IsFailedPrecondition(wrong.status())) << wrong.status();
  EXPECT_THAT(std::string(wrong.status().message()), HasSubstr("wrong kind"));
  EXPECT_FALSE(*bloom_->Exists("str", "a"));
  EXPECT_FALSE(*bloom_->Exists("missing", "a"));
  EXPECT_EQ(*bloom_->Card("missing"), 0);
  EXPECT_TRUE(absl::IsNotFound(bloom_->Info("missing").status()));
  EXPECT_TRUE(absl::IsNotFound(bloom_->ScanDump("missing", 0).status()));
  EXPECT_TRUE(absl::IsNotFound(bloom_->LoadChunk("missing", 9, "12345678")));
  BloomInsertOptions nocreate;
  nocreate.nocreate = true;
  absl::StatusOr<BloomAddResults> ins =
      bloom_->Insert("missing", {"a"}, nocreate);
  EXPECT_TRUE(absl::IsNotFound(ins.status()));
  EXPECT_EQ(Reply(ins.status()), "ERR not found");
  EXPECT_TRUE(absl::IsInvalidArgument(
      bloom_->MAdd("b", std::vector<std::string>{}).status()));

  absl::Status garbage = bloom_->LoadChunk("g", 1, "garbage");
  EXPECT_TRUE(absl::IsInvalidArgument(garbage)) << garbage;
  EXPECT_EQ(Reply(garbage), "ERR received bad data");
  absl::StatusOr<BloomDumpChunk> header = bloom_->ScanDump("b", 0);
  ASSERT_TRUE(header.ok());
  EXPECT_EQ(Reply(bloom_->LoadChunk("b", 1, header->data)),
            "ERR received bad data");  // the key exists
  ASSERT_TRUE(bloom_->LoadChunk("copy", 1, header->data).ok());
  EXPECT_EQ(Reply(bloom_->LoadChunk("copy", 100000, "x")),
            "ERR invalid offset - no link found");
  EXPECT_EQ(Reply(bloom_->LoadChunk("copy", 1 + 140 + 8, std::string(8, 'x'))),
            "ERR invalid chunk - Too big for current filter");

  // Binary items and names with braces work.
  const std::string binary("\0\xff\r\n", 4);
  EXPECT_TRUE(*bloom_->Add("we{ird}", binary));
  EXPECT_TRUE(*bloom_->Exists("we{ird}", binary));
  EXPECT_FALSE(*bloom_->Exists("we{ird}", std::string("\0\xff\r", 3)));
  EXPECT_TRUE(*bloom_->Delete("we{ird}"));
  EXPECT_FALSE(*bloom_->Delete("we{ird}"));
  EXPECT_FALSE(*bloom_->Exists("we{ird}", binary));
}

TEST_F(RedisBloomTest, UnknownMetaFormatIsRefusedNotReadAsEmpty) {
  ASSERT_TRUE(*bloom_->Add("future", "a"));
  ASSERT_EQ(
      *server_->Call({"HSET", RedisBloom::MetaKey("future"), "format", "2"}),
      "0");
  RedisBloomImpl fresh(client_.get());
  absl::StatusOr<bool> r = fresh.Exists("future", "a");
  EXPECT_TRUE(absl::IsUnimplemented(r.status())) << r.status();
  EXPECT_TRUE(absl::IsUnimplemented(fresh.Add("future", "b").status()));
  // A damaged meta hash is reported, not read as an empty filter.
  ASSERT_EQ(*server_->Call({"HDEL", RedisBloom::MetaKey("future"), "format"}),
            "1");
  EXPECT_TRUE(absl::IsDataLoss(fresh.Exists("future", "a").status()));
}

TEST_F(RedisBloomTest, ScriptCacheFlushIsRecoveredByReloading) {
  ASSERT_TRUE(*bloom_->Add("s", "a"));
  ASSERT_EQ(*server_->Call({"SCRIPT", "FLUSH"}), "OK");
  EXPECT_TRUE(*bloom_->Add("s", "b"));
  EXPECT_TRUE(*bloom_->Exists("s", "a"));
}

TEST_F(RedisBloomTest, StaleCacheFromAnotherClientIsRefreshed) {
  RedisBloomImpl other(client_.get());
  ASSERT_TRUE(*bloom_->Add("c", "a"));
  // Another client deletes and recreates the filter with other parameters.
  ASSERT_TRUE(*other.Delete("c"));
  ASSERT_TRUE(other.Reserve("c", 0.001, 5000).ok());
  ASSERT_TRUE(*other.Add("c", "b"));
  EXPECT_FALSE(*bloom_->Exists("c", "a"));
  EXPECT_TRUE(*bloom_->Exists("c", "b"));
  EXPECT_TRUE(*bloom_->Add("c", "a"));
  EXPECT_EQ(bloom_->Info("c")->capacity, 5000u);
  // Deleted behind our back: absent, whatever the cache says.
  ASSERT_TRUE(*bloom_->Exists("c", "b"));
  ASSERT_TRUE(*other.Delete("c"));
  EXPECT_FALSE(*bloom_->Exists("c", "b"));
  EXPECT_EQ(*bloom_->MExists("c", std::vector<std::string>{"a", "b"}),
            (std::vector<bool>{false, false}));
}

// The writer keeps adding until the restart is over (at least 60 batches,
// at most 2000): on a loaded machine it could otherwise finish all its
// batches before the server went down, and see no reconnect at all.
TEST_F(RedisBloomTest, RedisRestartedMidBatchIsRetriedWithoutLosingItems) {
  constexpr int kBatch = 500;
  std::atomic<bool> failed{false};
  std::atomic<bool> restarted{false};
  std::atomic<int> batches{0};
  int64_t reconnects = 0;
  int64_t ambiguous = 0;  // steps resent after a lost reply
  std::thread writer([&] {
    RedisClientOptions o = ClientOptions();
    o.retry_deadline = absl::Seconds(30);
    auto c = RedisClient::Connect(o);
    if (!c.ok()) {
      failed = true;
      return;
    }
    RedisBloomImpl bloom(c->get());
    int after_restart = 0;
    for (int b = 0; b < 2000 && (b < 60 || after_restart < 5); b++) {
      if (restarted.load()) after_restart++;
      absl::StatusOr<BloomAddResults> r =
          bloom.MAdd("restart", Range("r-", b * kBatch, (b + 1) * kBatch));
      if (!r.ok()) {
        ADD_FAILURE() << r.status();
        failed = true;
        return;
      }
      ambiguous += r->ambiguous_retries;
      batches++;
    }
    reconnects = (*c)->reconnects();
  });
  while (batches.load() < 10 && !failed.load()) {
    absl::SleepFor(absl::Milliseconds(5));
  }
  ASSERT_TRUE(server_->Restart(/*keep_data=*/true).ok());
  restarted = true;
  writer.join();
  ASSERT_FALSE(failed.load());
  EXPECT_GE(reconnects, 1);
  const uint64_t total = static_cast<uint64_t>(batches.load()) * kBatch;
  // Reconnect our own client too (its connection died with the server).
  ExpectAllPresent("restart", Range("r-", 0, static_cast<int>(total)));
  absl::StatusOr<BloomInfo> info = bloom_->Info("restart");
  ASSERT_TRUE(info.ok());
  // A step resent after its reply was lost may have run twice: its claim
  // then counted up to its batch twice (BloomAddResults::ambiguous_retries,
  // the documented bound); new items it reports as present count less.
  EXPECT_LE(info->items, total + static_cast<uint64_t>(ambiguous) * kBatch)
      << ambiguous << " ambiguous retries";
  EXPECT_GE(info->items, total - 1000);
}

}  // namespace behaviour_test
}  // namespace siftdb::test
