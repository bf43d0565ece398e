// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The lean add path (redis/bloom/redis_bloom_lean_add.cc) against the add
// script it bypasses: the same replies, counts and bytes on the same inputs;
// exact counts and no lost item under 8 concurrent clients with duplicates
// and expansions; no lost item when connections are cut mid-batch.

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"
#include "tests/support/tcp_proxy.h"

namespace siftdb::test {
namespace lean_add_test {

class LeanAddTest : public RedisTest {
 protected:
  // Calls of `command` the server has counted (INFO commandstats).
  int64_t CommandCalls(const std::string& command) {
    auto c = Connect();
    auto r = c->Command({"INFO", "commandstats"});
    if (!r.ok()) return -1;
    const std::string key = absl::StrCat("cmdstat_", command, ":calls=");
    size_t at = r->str().find(key);
    if (at == std::string::npos) return 0;
    return std::atoll(r->str().c_str() + at + key.size());
  }

  // Every dump chunk of a filter, concatenated.
  std::string Dump(RedisBloom* bloom, const std::string& name) {
    std::string out;
    int64_t it = 0;
    do {
      auto chunk = bloom->ScanDump(name, it);
      EXPECT_TRUE(chunk.ok()) << chunk.status();
      if (!chunk.ok()) break;
      out += chunk->data;
      it = chunk->next_iterator;
    } while (it != 0);
    return out;
  }

  // inserted_count equals the sum of the sub-filters' items, none above
  // its capacity, and every sub-filter but the newest is full.
  void ExpectConsistent(RedisBloom* bloom, const std::string& name) {
    auto info = bloom->Info(name);
    ASSERT_TRUE(info.ok()) << info.status();
    uint64_t sum = 0;
    for (size_t j = 0; j < info->sub_filters.size(); j++) {
      const BloomSubFilterInfo& s = info->sub_filters[j];
      sum += s.items;
      EXPECT_LE(s.items, s.capacity) << "sub-filter " << j;
    }
    EXPECT_EQ(sum, info->items);
  }
};

// Replies, stop statuses, counts and the dumped bytes equal the add
// script's for batches with duplicates, items of older sub-filters,
// expansions and a NONSCALING filter that fills.
TEST_F(LeanAddTest, MatchesScriptPath) {
  auto lean_client = Connect();
  auto script_client = Connect();
  RedisBloomImpl lean(lean_client.get());
  RedisBloomImpl script(script_client.get());
  script.set_lean_adds(false);
  const int64_t exec_before = CommandCalls("exec");
  for (bool nonscaling : {false, true}) {
    const std::string a = nonscaling ? "lean-ns" : "lean";
    const std::string b = nonscaling ? "script-ns" : "script";
    ASSERT_TRUE(lean.Reserve(a, 0.01, 300, 2, nonscaling).ok());
    ASSERT_TRUE(script.Reserve(b, 0.01, 300, 2, nonscaling).ok());
    for (int round = 0; round < 40; round++) {
      // Fresh items, repeats of earlier rounds (now in older sub-filters)
      // and duplicates within the batch.
      std::vector<std::string> items = Range("i", round * 37, round * 37 + 60);
      items.push_back(absl::StrCat("i", round * 37));
      items.push_back(absl::StrCat("i", round));
      auto ra = lean.MAdd(a, items);
      auto rb = script.MAdd(b, items);
      ASSERT_TRUE(ra.ok()) << ra.status();
      ASSERT_TRUE(rb.ok()) << rb.status();
      ASSERT_EQ(ra->added, rb->added) << "round " << round;
      ASSERT_EQ(ra->stopped.code(), rb->stopped.code()) << "round " << round;
      EXPECT_EQ(ra->ambiguous_retries, 0);
    }
    auto ia = lean.Info(a);
    auto ib = script.Info(b);
    ASSERT_TRUE(ia.ok() && ib.ok());
    EXPECT_EQ(ia->items, ib->items);
    ASSERT_EQ(ia->sub_filters.size(), ib->sub_filters.size());
    for (size_t j = 0; j < ia->sub_filters.size(); j++) {
      EXPECT_EQ(ia->sub_filters[j].items, ib->sub_filters[j].items) << j;
    }
    EXPECT_EQ(Dump(&lean, a), Dump(&script, b));
    ExpectConsistent(&lean, a);
  }
  // The lean path did run (its transactions), so this test can fail.
  EXPECT_GT(CommandCalls("exec"), exec_before + 20);
}

// A std::set model: without false positives in play (a roomy filter), an
// item answers 1 exactly on its first add, and every added item exists.
TEST_F(LeanAddTest, MatchesSetModel) {
  auto c = Connect();
  RedisBloomImpl bloom(c.get());
  ASSERT_TRUE(bloom.Reserve("m", 0.0001, 1000, 2).ok());
  std::set<std::string> model;
  uint64_t ones = 0;
  for (int round = 0; round < 30; round++) {
    std::vector<std::string> items;
    for (int i = 0; i < 100; i++) {
      items.push_back(absl::StrCat("k", (round * 7919 + i * 104729) % 3000));
    }
    auto r = bloom.MAdd("m", items);
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->added.size(), items.size());
    for (size_t i = 0; i < items.size(); i++) {
      const bool fresh = model.insert(items[i]).second;
      EXPECT_EQ(r->added[i], fresh) << items[i] << " round " << round;
      ones += r->added[i];
    }
  }
  std::vector<std::string> all(model.begin(), model.end());
  auto e = bloom.MExists("m", all);
  ASSERT_TRUE(e.ok());
  for (size_t i = 0; i < all.size(); i++) EXPECT_TRUE((*e)[i]) << all[i];
  auto card = bloom.Card("m");
  ASSERT_TRUE(card.ok());
  EXPECT_EQ(static_cast<uint64_t>(*card), ones);
  ExpectConsistent(&bloom, "m");
}

// A Redis user refused MULTI (or EVAL, WATCH) would let the lean path's
// BITFIELD run outside its transaction, and the add script rerun after it
// would answer 0 for new items: such a connection keeps to the script.
TEST_F(LeanAddTest, UserWithoutMultiKeepsToTheScript) {
  auto admin = Connect();
  auto acl = admin->Command({"ACL", "SETUSER", "nomulti", "on", ">pw", "~*",
                             "&*", "+@all", "-multi"});
  ASSERT_TRUE(acl.ok() && !acl->is_error()) << (acl.ok() ? acl->str() : "");
  RedisClientOptions o = ClientOptions();
  o.username = "nomulti";
  o.password = "pw";
  auto c = RedisClient::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status();
  RedisBloomImpl bloom(c->get());
  ASSERT_TRUE(bloom.Reserve("u", 0.0001, 10000, 2).ok());
  uint64_t ones = 0;
  for (int round = 0; round < 5; round++) {
    auto r = bloom.MAdd("u", Range("u", round * 100, round * 100 + 100));
    ASSERT_TRUE(r.ok()) << r.status();
    for (bool b : r->added) {
      EXPECT_TRUE(b);
      ones += b;
    }
  }
  auto card = bloom.Card("u");
  ASSERT_TRUE(card.ok());
  EXPECT_EQ(static_cast<uint64_t>(*card), ones);
  (void)admin->Command({"ACL", "DELUSER", "nomulti"});
}

// 8 clients add overlapping items (every item by several clients, and
// repeated) while the filter expands: the counts equal the number of 1
// replies, no item gets two 1 replies, and every item exists afterwards.
TEST_F(LeanAddTest, ConcurrentClientsExactCounts) {
  constexpr int kClients = 8;
  constexpr int kItems = 6000;
  {
    auto c = Connect();
    RedisBloomImpl bloom(c.get());
    ASSERT_TRUE(bloom.Reserve("c", 0.01, 500, 2).ok());
  }
  std::mutex mu;
  std::vector<int> ones(kItems, 0);
  std::vector<char> sent(kItems, 0);
  std::atomic<int64_t> ambiguous{0};
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; t++) {
    threads.emplace_back([&, t] {
      auto c = Connect();
      if (c == nullptr) {
        failures++;
        return;
      }
      RedisBloomImpl bloom(c.get());
      for (int round = 0; round < 60; round++) {
        // Overlapping windows that cover the items in a client-dependent
        // order, with a duplicate in each batch.
        std::vector<std::string> items;
        std::vector<int> index;
        for (int i = 0; i < 120; i++) {
          int k = (round * 100 + i + t * 751) % kItems;
          index.push_back(k);
          items.push_back(absl::StrCat("c", k));
        }
        index.push_back(index[0]);
        items.push_back(items[0]);
        auto r = bloom.MAdd("c", items);
        if (!r.ok() || r->added.size() != items.size()) {
          failures++;
          return;
        }
        ambiguous += r->ambiguous_retries;
        std::lock_guard<std::mutex> l(mu);
        for (size_t i = 0; i < items.size(); i++) {
          ones[index[i]] += r->added[i];
          sent[index[i]] = 1;
        }
      }
    });
  }
  for (std::thread& th : threads) th.join();
  ASSERT_EQ(failures.load(), 0);
  EXPECT_EQ(ambiguous.load(), 0);
  auto c = Connect();
  RedisBloomImpl bloom(c.get());
  uint64_t total = 0;
  std::vector<std::string> touched;
  for (int k = 0; k < kItems; k++) {
    EXPECT_LE(ones[k], 1) << "item c" << k << " counted twice";
    total += ones[k];
    touched.push_back(absl::StrCat("c", k));
  }
  auto card = bloom.Card("c");
  ASSERT_TRUE(card.ok());
  EXPECT_EQ(static_cast<uint64_t>(*card), total);
  auto info = bloom.Info("c");
  ASSERT_TRUE(info.ok());
  EXPECT_GE(info->filters, 3u);  // the run did expand
  ExpectConsistent(&bloom, "c");
  auto e = bloom.MExists("c", touched);
  ASSERT_TRUE(e.ok());
  for (int k = 0; k < kItems; k++) {
    if (sent[k]) {
      EXPECT_TRUE((*e)[k]) << "lost c" << k;
    }
  }
}

// Connections cut again and again in the middle of batches: every item
// that an MAdd returned for exists, and the counts are off by at most the
// batch size times the reported ambiguous retries.
TEST_F(LeanAddTest, CutConnectionsNeverLoseItems) {
  auto proxy = TcpProxy::Start(server_->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  RedisClientOptions o = ClientOptions();
  o.endpoint = (*proxy)->endpoint();
  o.retry_deadline = absl::Seconds(20);
  auto c = RedisClient::Connect(o);
  ASSERT_TRUE(c.ok()) << c.status();
  RedisBloomImpl bloom(c->get());
  ASSERT_TRUE(bloom.Reserve("cut", 0.01, 4000, 2).ok());
  // Slow the replies so that cuts land inside round trips.
  (*proxy)->SetDelay(absl::Milliseconds(2), absl::Milliseconds(2));
  std::atomic<bool> stop{false};
  std::thread cutter([&] {
    for (int i = 0; !stop.load(); i++) {
      std::this_thread::sleep_for(std::chrono::milliseconds(15 + 7 * (i % 5)));
      (*proxy)->CutAll();
    }
  });
  struct Join {
    std::atomic<bool>* stop;
    std::thread* t;
    ~Join() {
      *stop = true;
      if (t->joinable()) t->join();
    }
  } join{&stop, &cutter};
  constexpr int kBatch = 200;
  int64_t ambiguous = 0;
  uint64_t ones = 0;
  std::vector<std::string> sent;
  for (int round = 0; round < 40; round++) {
    std::vector<std::string> items =
        Range("x", round * 150, round * 150 + kBatch);
    auto r = bloom.MAdd("cut", items);
    ASSERT_TRUE(r.ok()) << r.status();
    ambiguous += r->ambiguous_retries;
    for (bool b : r->added) ones += b;
    sent.insert(sent.end(), items.begin(), items.end());
  }
  stop = true;
  cutter.join();
  EXPECT_GT(ambiguous, 0) << "no cut landed inside a batch";
  auto direct = Connect();
  RedisBloomImpl check(direct.get());
  auto e = check.MExists("cut", sent);
  ASSERT_TRUE(e.ok());
  for (size_t i = 0; i < sent.size(); i++) EXPECT_TRUE((*e)[i]) << sent[i];
  auto card = check.Card("cut");
  ASSERT_TRUE(card.ok());
  const int64_t diff = *card - static_cast<int64_t>(ones);
  EXPECT_LE(std::abs(diff), ambiguous * kBatch);
  auto info = check.Info("cut");
  ASSERT_TRUE(info.ok());
  for (const BloomSubFilterInfo& s : info->sub_filters) {
    EXPECT_LE(s.items, s.capacity);
  }
}

}  // namespace lean_add_test
}  // namespace siftdb::test
