// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Partitioned filters (BloomReserveOptions::partitions) on a real local
// Redis Cluster of 3 masters shared by the suite: partitions land on
// distinct masters, counts sum exactly, a second client learns the
// partitions from the meta hash, no false negative while one partition's
// slot moves to another master (ASK / TRYAGAIN while it moves, MOVED
// after), Delete reads absent even when a partition's delete fails,
// Expire / Persist / Ttl over all partitions, the dump round trip, and
// bad options. One test on a standalone server.

#include <atomic>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redis/bloom/redis_bloom_command.h"
#include "redis/bloom/redis_bloom_partition_layout.h"
#include "redis/bloom/redis_bloom_partitioned.h"
#include "redis/client/redis_cluster_client.h"
#include "siftdb/redis_bloom.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"
#include "tests/support/redis_server.h"

namespace siftdb::test {
namespace partitioned_test {

using redis_bloom::PartitionedMeta;

// The node serving `key`'s slot (the others answer -MOVED).
RedisServer* OwnerOf(RedisCluster* cluster, const std::string& key) {
  for (const auto& node : cluster->nodes()) {
    auto r = node->Call({"EXISTS", key});
    if (r.ok() && r->rfind("MOVED", 0) != 0 && r->rfind("ASK", 0) != 0) {
      return node.get();
    }
  }
  return nullptr;
}

int CountTrue(const std::vector<bool>& v) {
  int n = 0;
  for (bool b : v) n += b ? 1 : 0;
  return n;
}

class BloomPartitionedClusterTest : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    if (RedisServer::FindBinary().empty() || RedisServer::FindCli().empty()) {
      return;
    }
    auto c = RedisCluster::Start(3);
    if (c.ok()) cluster_ = std::move(*c).release();
  }
  static void TearDownTestSuite() {
    delete cluster_;
    cluster_ = nullptr;
  }

  void SetUp() override {
    if (RedisServer::FindBinary().empty() || RedisServer::FindCli().empty()) {
      GTEST_SKIP() << "redis-server or redis-cli not installed";
    }
    ASSERT_NE(cluster_, nullptr) << "the cluster did not start";
  }

  // A RedisBloom through RedisBloom::Open seeded with node `seed`.
  std::unique_ptr<RedisBloom> Open(int seed, const std::string& user = "",
                                   const std::string& password = "") {
    RedisBloomOptions o;
    o.endpoint = cluster_->nodes()[seed]->endpoint();
    o.username = user;
    o.password = password;
    o.retry_deadline = absl::Seconds(10);
    auto b = RedisBloom::Open(o);
    EXPECT_TRUE(b.ok()) << b.status();
    return b.ok() ? std::move(*b) : nullptr;
  }

  static PartitionedMeta Meta(RedisBloom* bloom, const std::string& name) {
    auto m = static_cast<RedisBloomPartitioned*>(bloom)->ReadMeta(name);
    EXPECT_TRUE(m.ok()) << m.status();
    EXPECT_TRUE(m.ok() && m->has_value());
    return m.ok() && m->has_value() ? **m : PartitionedMeta();
  }

  static BloomReserveOptions Partitions(int64_t p, int64_t capacity) {
    BloomReserveOptions o;
    o.error_rate = 0.01;
    o.capacity = capacity;
    o.partitions = p;
    return o;
  }

  static RedisCluster* cluster_;
};

RedisCluster* BloomPartitionedClusterTest::cluster_ = nullptr;

TEST_F(BloomPartitionedClusterTest, PartitionsSpreadAndCountsSumExactly) {
  auto bloom = Open(0);
  ASSERT_NE(bloom, nullptr);
  const std::string name = "spread";
  ASSERT_TRUE(bloom->Reserve(name, Partitions(3, 30000)).ok());
  EXPECT_TRUE(absl::IsAlreadyExists(bloom->Reserve(name, 0.01, 100)));
  PartitionedMeta meta = Meta(bloom.get(), name);
  ASSERT_EQ(meta.partitions, 3);
  std::set<RedisServer*> owners;
  for (int64_t i = 0; i < 3; i++) {
    owners.insert(OwnerOf(
        cluster_, RedisBloom::MetaKey(
                      RedisBloomPartitioned::PartitionOf(name, meta, i))));
  }
  EXPECT_EQ(owners.size(), 3u) << "partitions share a master";

  // Batches with duplicates inside and across them.
  int added = 0;
  for (int b = 0; b < 12; b++) {
    auto r = bloom->MAdd(name, Range("it-", b * 1500, b * 1500 + 2000));
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_EQ(r->added.size(), 2000u);
    added += CountTrue(r->added);
  }
  auto card = bloom->Card(name);
  ASSERT_TRUE(card.ok()) << card.status();
  EXPECT_EQ(*card, added);
  auto info = bloom->Info(name);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->items, static_cast<uint64_t>(added));
  EXPECT_EQ(info->capacity, 30000u);
  EXPECT_EQ(info->filters, 3u);
  EXPECT_EQ(*info->expansion, 2u);

  // A second client, seeded elsewhere, learns the partitions.
  auto other = Open(2);
  ASSERT_NE(other, nullptr);
  auto all = Range("it-", 0, 11 * 1500 + 2000);
  auto seen = other->MExists(name, all);
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(CountTrue(*seen), static_cast<int>(all.size()));
  EXPECT_EQ(*other->Card(name), added);
  auto one = other->Add(name, "late-item");
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_TRUE(*one);
  EXPECT_TRUE(*bloom->Exists(name, "late-item"));
  EXPECT_EQ(*bloom->Card(name), added + 1);

  // A client that has never seen the filter: its first call of each kind
  // finds the partitioned meta hash.
  for (int call = 0; call < 4; call++) {
    auto fresh = Open(1);
    ASSERT_NE(fresh, nullptr);
    switch (call) {
      case 0:
        EXPECT_TRUE(*fresh->Exists(name, "it-7"));
        break;
      case 1: {
        BloomInsertOptions io;
        io.nocreate = true;
        auto r = fresh->Insert(name, {"ins-1", "it-8"}, io);
        ASSERT_TRUE(r.ok()) << r.status();
        EXPECT_EQ(r->added, (std::vector<bool>{true, false}));
        break;
      }
      case 2:
        EXPECT_EQ(fresh->Info(name)->items, static_cast<uint64_t>(added + 2));
        break;
      case 3:
        EXPECT_EQ(*fresh->Card(name), added + 2);
        break;
    }
  }

  // An unpartitioned filter on the cluster, whatever node it lands on.
  auto plain = other->Add("plain-on-cluster", "x");
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_TRUE(*bloom->Exists("plain-on-cluster", "x"));
  EXPECT_EQ(bloom->Info("plain-on-cluster")->capacity, 100u);
  EXPECT_EQ(*bloom->Card("plain-on-cluster"), 1);
}

TEST_F(BloomPartitionedClusterTest, NoFalseNegativeWhileAPartitionSlotMoves) {
  auto bloom = Open(0);
  ASSERT_NE(bloom, nullptr);
  const std::string name = "moving";
  ASSERT_TRUE(bloom->Reserve(name, Partitions(3, 3000)).ok());
  PartitionedMeta meta = Meta(bloom.get(), name);
  const std::string part0 =
      RedisBloom::MetaKey(RedisBloomPartitioned::PartitionOf(name, meta, 0));
  RedisServer* from = OwnerOf(cluster_, part0);
  ASSERT_NE(from, nullptr);
  RedisServer* to = nullptr;
  for (const auto& n : cluster_->nodes()) {
    if (n.get() != from) to = n.get();
  }
  // Grow partition 0 to a few sub-filters, so the slot has several keys.
  ASSERT_TRUE(bloom->MAdd(name, Range("pre-", 0, 6000)).ok());

  std::atomic<bool> stop{false};
  std::atomic<int> rounds{0};
  std::atomic<int64_t> retries{0};
  std::string failure;
  std::thread writer([&] {
    auto b = Open(1);
    if (b == nullptr) return;
    int next = 0;
    while (!stop.load() && failure.empty()) {
      auto items = Range("mv-", next, next + 200);
      auto r = b->MAdd(name, items);
      if (!r.ok()) {
        failure = "MAdd: " + r.status().ToString();
        break;
      }
      next += 200;
      auto seen = b->MExists(name, Range("mv-", 0, next));
      if (!seen.ok()) {
        failure = "MExists: " + seen.status().ToString();
        break;
      }
      if (CountTrue(*seen) != next) failure = "a false negative";
      rounds++;
    }
    retries = static_cast<RedisBloomPartitioned*>(b.get())->redirect_retries();
  });
  absl::SleepFor(absl::Milliseconds(100));
  // One key per step, 30 ms apart: the writer meets the half-moved slot.
  absl::Status moved =
      cluster_->MoveSlot(RedisKeySlot(part0), from, to,
                         /*keys_per_step=*/1, absl::Milliseconds(30));
  absl::SleepFor(absl::Milliseconds(100));
  stop = true;
  writer.join();
  ASSERT_TRUE(moved.ok()) << moved;
  EXPECT_EQ(failure, "");
  EXPECT_GT(rounds.load(), 2);
  // The writer met the moving slot (ASK / TRYAGAIN, then MOVED).
  EXPECT_GT(retries.load(), 0);
  EXPECT_EQ(OwnerOf(cluster_, part0), to);
  // A fresh client agrees on everything written before and during.
  auto fresh = Open(2);
  auto seen = fresh->MExists(name, Range("pre-", 0, 6000));
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(CountTrue(*seen), 6000);
}

TEST_F(BloomPartitionedClusterTest,
       DeleteReadsAbsentEvenIfAPartitionDeleteFails) {
  auto admin = Open(0);
  ASSERT_NE(admin, nullptr);
  const std::string name = "half-deleted";
  ASSERT_TRUE(admin->Reserve(name, Partitions(3, 3000)).ok());
  ASSERT_TRUE(admin->MAdd(name, Range("d-", 0, 500)).ok());
  PartitionedMeta meta = Meta(admin.get(), name);
  RedisServer* meta_node = OwnerOf(cluster_, RedisBloom::MetaKey(name));
  RedisServer* victim = nullptr;
  for (int64_t i = 0; i < 3 && victim == nullptr; i++) {
    RedisServer* n = OwnerOf(
        cluster_,
        RedisBloom::MetaKey(RedisBloomPartitioned::PartitionOf(name, meta, i)));
    if (n != meta_node) victim = n;
  }
  ASSERT_NE(victim, nullptr);
  // A user who may not DEL on the victim node only.
  for (const auto& n : cluster_->nodes()) {
    ASSERT_TRUE(
        n->Call({"ACL", "SETUSER", "nodel", "on", ">pw", "~*", "&*", "+@all"})
            .ok());
  }
  ASSERT_TRUE(
      victim->Call({"ACL", "SETUSER", "nodel", "-del", "-unlink"}).ok());
  auto limited = Open(1, "nodel", "pw");
  ASSERT_NE(limited, nullptr);
  auto deleted = limited->Delete(name);
  ASSERT_FALSE(deleted.ok());
  EXPECT_NE(deleted.status().message().find("reads as absent"),
            absl::string_view::npos)
      << deleted.status();
  for (RedisBloom* b : {limited.get(), admin.get()}) {
    auto seen = b->MExists(name, Range("d-", 0, 500));
    ASSERT_TRUE(seen.ok()) << seen.status();
    EXPECT_EQ(CountTrue(*seen), 0);
    EXPECT_EQ(*b->Card(name), 0);
    EXPECT_TRUE(absl::IsNotFound(b->Info(name).status()));
    EXPECT_TRUE(absl::IsNotFound(b->Ttl(name).status()));
  }
  // An add now makes an unpartitioned filter with RedisBloom's defaults.
  ASSERT_TRUE(admin->Add(name, "again").ok());
  auto info = admin->Info(name);
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->capacity, 100u);
  EXPECT_EQ(info->filters, 1u);
  for (const auto& n : cluster_->nodes()) {
    n->Call({"ACL", "DELUSER", "nodel"}).IgnoreError();
  }
}

TEST_F(BloomPartitionedClusterTest, ExpirePersistTtlCoverEveryPartition) {
  auto bloom = Open(0);
  ASSERT_NE(bloom, nullptr);
  const std::string name = "expiring";
  ASSERT_TRUE(bloom->Reserve(name, Partitions(3, 3000)).ok());
  ASSERT_TRUE(bloom->MAdd(name, Range("e-", 0, 3000)).ok());
  PartitionedMeta meta = Meta(bloom.get(), name);
  auto partition_pttls = [&] {
    std::vector<int64_t> out;
    for (int64_t i = 0; i < 3; i++) {
      std::string key = RedisBloom::MetaKey(
          RedisBloomPartitioned::PartitionOf(name, meta, i));
      auto r = OwnerOf(cluster_, key)->Call({"PTTL", key});
      out.push_back(r.ok() ? std::stoll(*r) : -3);
    }
    return out;
  };
  EXPECT_EQ(*bloom->Ttl(name), absl::InfiniteDuration());
  EXPECT_FALSE(
      *bloom->Expire(name, absl::Seconds(100), BloomExpireIf::kHasExpiry));
  EXPECT_TRUE(*bloom->Expire(name, absl::Seconds(100)));
  absl::Duration ttl = *bloom->Ttl(name);
  EXPECT_GT(ttl, absl::Seconds(90));
  EXPECT_LE(ttl, absl::Seconds(100));
  for (int64_t p : partition_pttls()) {
    EXPECT_GT(p, 90000);
    EXPECT_LE(p, 100000);
  }
  EXPECT_FALSE(*bloom->Expire(name, absl::Seconds(50), BloomExpireIf::kLater));
  EXPECT_TRUE(*bloom->Expire(name, absl::Seconds(50), BloomExpireIf::kSooner));
  EXPECT_LE(*bloom->Ttl(name), absl::Seconds(50));
  EXPECT_TRUE(*bloom->Persist(name));
  EXPECT_FALSE(*bloom->Persist(name));
  EXPECT_EQ(*bloom->Ttl(name), absl::InfiniteDuration());
  for (int64_t p : partition_pttls()) EXPECT_EQ(p, -1);
  auto seen = bloom->MExists(name, Range("e-", 0, 3000));
  EXPECT_EQ(CountTrue(*seen), 3000);
  // An expiry in the past deletes the whole filter.
  EXPECT_TRUE(*bloom->ExpireAt(name, absl::Now() - absl::Seconds(5)));
  EXPECT_TRUE(absl::IsNotFound(bloom->Ttl(name).status()));
  for (int64_t p : partition_pttls()) EXPECT_EQ(p, -2);
  EXPECT_FALSE(*bloom->Exists(name, "e-1"));
}

TEST_F(BloomPartitionedClusterTest, ScanDumpLoadChunkRoundTrip) {
  auto bloom = Open(0);
  ASSERT_NE(bloom, nullptr);
  const std::string name = "dumped";
  BloomReserveOptions o = Partitions(3, 1500);
  o.expansion = 4;
  ASSERT_TRUE(bloom->Reserve(name, o).ok());
  ASSERT_TRUE(bloom->MAdd(name, Range("s-", 0, 4000)).ok());
  std::vector<std::pair<int64_t, std::string>> chunks;
  std::set<int64_t> partitions_seen;
  int64_t it = 0;
  while (true) {
    auto c = bloom->ScanDump(name, it);
    ASSERT_TRUE(c.ok()) << c.status();
    if (c->next_iterator == 0) break;
    chunks.emplace_back(c->next_iterator, c->data);
    int64_t p = 0, inner = 0;
    if (redis_bloom::SplitDumpIterator(c->next_iterator, &p, &inner)) {
      partitions_seen.insert(p);
    }
    it = c->next_iterator;
    ASSERT_LT(chunks.size(), 1000u);
  }
  EXPECT_EQ(chunks[0].first, redis_bloom::kDumpHeaderIterator);
  EXPECT_EQ(partitions_seen, (std::set<int64_t>{0, 1, 2}));
  auto loader = Open(1);
  for (const auto& [iter, data] : chunks) {
    ASSERT_TRUE(loader->LoadChunk("loaded", iter, data).ok()) << iter;
  }
  EXPECT_TRUE(absl::IsAlreadyExists(
      loader->LoadChunk("loaded", chunks[0].first, chunks[0].second)));
  auto seen = bloom->MExists("loaded", Range("s-", 0, 4000));
  ASSERT_TRUE(seen.ok()) << seen.status();
  EXPECT_EQ(CountTrue(*seen), 4000);
  EXPECT_EQ(*bloom->Card("loaded"), *bloom->Card(name));
  auto a = bloom->Info(name);
  auto b = bloom->Info("loaded");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_EQ(a->capacity, b->capacity);
  EXPECT_EQ(a->filters, b->filters);
  EXPECT_EQ(*b->expansion, 4u);
  // The copy is its own filter: adds to it do not touch the original.
  ASSERT_TRUE(loader->Add("loaded", "only-in-copy").ok());
  EXPECT_EQ(*bloom->Card("loaded"), *bloom->Card(name) + 1);
}

// A client that has only met unpartitioned filters learns the cluster
// from its first -MOVED, whichever call meets it.
TEST_F(BloomPartitionedClusterTest, UnpartitionedFiltersFollowTheSlotMap) {
  for (int seed = 0; seed < 3; seed++) {
    const std::string name = "plain-" + std::to_string(seed);
    auto bloom = Open(seed);
    ASSERT_NE(bloom, nullptr);
    ASSERT_TRUE(bloom->Reserve(name, 0.01, 1000).ok());
    auto fresh = Open((seed + 1) % 3);
    auto added = fresh->MAdd(name, Range("p-", 0, 300));
    ASSERT_TRUE(added.ok()) << added.status();
    auto again = Open((seed + 2) % 3);
    auto seen = again->MExists(name, Range("p-", 0, 300));
    ASSERT_TRUE(seen.ok()) << seen.status();
    EXPECT_EQ(CountTrue(*seen), 300);
    EXPECT_EQ(*Open(seed)->Card(name), CountTrue(added->added));
    EXPECT_TRUE(*Open((seed + 1) % 3)->Delete(name));
  }
}

// siftdb's BF.RESERVE ... PARTITIONS p, through the interpreter sift_bf
// and the server use, on a client of one cluster node.
TEST_F(BloomPartitionedClusterTest, ReserveCommandTakesPartitions) {
  RedisClientOptions co;
  co.endpoint = cluster_->nodes()[1]->endpoint();
  auto client = RedisClient::Connect(co);
  ASSERT_TRUE(client.ok()) << client.status();
  RedisBloomCommands cmd(client->get());
  auto run = [&](const std::vector<std::string>& argv) {
    return cmd.Execute(argv);
  };
  EXPECT_EQ(run({"BF.RESERVE", "cmdp", "0.01", "900", "EXPANSION", "4",
                 "PARTITIONS", "3"})
                .str(),
            "OK");
  RedisReply added = run({"BF.MADD", "cmdp", "a", "b", "c", "a"});
  ASSERT_TRUE(added.is_array()) << added.DebugString();
  EXPECT_EQ(added.elements().size(), 4u);
  EXPECT_EQ(run({"BF.CARD", "cmdp"}).integer(), 3);
  EXPECT_EQ(run({"BF.EXISTS", "cmdp", "b"}).integer(), 1);
  RedisReply cap = run({"BF.INFO", "cmdp", "CAPACITY"});
  ASSERT_TRUE(cap.is_array()) << cap.DebugString();
  EXPECT_EQ(cap.elements()[0].integer(), 900);
  EXPECT_EQ(run({"TYPE", "cmdp"}).str(), "MBbloom--");
  EXPECT_EQ(run({"BF.RESERVE", "cmdq", "0.01", "100", "PARTITIONS", "x"}).str(),
            "ERR bad partitions");
  RedisReply zero =
      run({"BF.RESERVE", "cmdq", "0.01", "100", "PARTITIONS", "0"});
  EXPECT_TRUE(zero.is_error());
  EXPECT_NE(zero.str().find("partitions"), std::string::npos) << zero.str();
  // Without PARTITIONS the arity rule stays RedisBloom's.
  EXPECT_TRUE(run({"BF.RESERVE", "cmdq", "0.01", "100", "a", "b", "c", "d"})
                  .is_error());
  EXPECT_EQ(run({"DEL", "cmdp"}).integer(), 1);
  EXPECT_EQ(run({"BF.EXISTS", "cmdp", "b"}).integer(), 0);
}

// Partitions on a standalone Redis: all on the one server, same rules.
TEST(BloomPartitionedStandaloneTest, WorksOnOneServer) {
  SIFTDB_REQUIRE_REDIS();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  RedisBloomOptions o;
  o.endpoint = (*server)->endpoint();
  auto bloom = RedisBloom::Open(o);
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  BloomReserveOptions r;
  r.capacity = 1000;
  r.partitions = 4;
  r.nonscaling = true;
  ASSERT_TRUE((*bloom)->Reserve("solo", r).ok());
  auto added = (*bloom)->MAdd("solo", Range("i-", 0, 900));
  ASSERT_TRUE(added.ok()) << added.status();
  EXPECT_EQ(*(*bloom)->Card("solo"), CountTrue(added->added));
  auto info = (*bloom)->Info("solo");
  ASSERT_TRUE(info.ok()) << info.status();
  EXPECT_EQ(info->capacity, 1000u);  // 4 x ceil(1000 / 4)
  EXPECT_FALSE(info->expansion.has_value());
  auto seen = (*bloom)->MExists("solo", Range("i-", 0, 900));
  EXPECT_EQ(CountTrue(*seen), 900);
  // A NONSCALING partition that fills stops the batch, as RedisBloom does.
  auto more = (*bloom)->MAdd("solo", Range("j-", 0, 2000));
  ASSERT_TRUE(more.ok()) << more.status();
  EXPECT_LT(more->added.size(), 2000u);
  EXPECT_FALSE(more->stopped.ok());
  EXPECT_TRUE(*(*bloom)->Delete("solo"));
  EXPECT_FALSE(*(*bloom)->Delete("solo"));
  EXPECT_FALSE(*(*bloom)->Exists("solo", "i-1"));
}

// Checked before Redis is touched, so a standalone server will do (a
// cluster per test case costs CI seconds).
TEST(BloomPartitionedStandaloneTest, BadOptionsNameTheOption) {
  SIFTDB_REQUIRE_REDIS();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  RedisBloomOptions ro;
  ro.endpoint = (*server)->endpoint();
  auto opened = RedisBloom::Open(ro);
  ASSERT_TRUE(opened.ok()) << opened.status();
  RedisBloom* bloom = opened->get();
  auto Partitions = [](int64_t p, int64_t capacity) {
    BloomReserveOptions o;
    o.capacity = capacity;
    o.partitions = p;
    return o;
  };
  auto check = [&](BloomReserveOptions o, const std::string& word,
                   const std::string& name = "bad") {
    absl::Status s = bloom->Reserve(name, o);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    EXPECT_NE(std::string(s.message()).find(word), std::string::npos) << s;
  };
  check(Partitions(0, 100), "partitions");
  check(Partitions(-3, 100), "partitions");
  check(Partitions(kMaxBloomPartitions + 1, 100000), "partitions");
  check(Partitions(int64_t{1} << 40, 100), "partitions");
  BloomReserveOptions o = Partitions(4, 100);
  o.error_rate = 1.5;
  check(o, "error rate");
  o = Partitions(4, 0);
  check(o, "capacity");
  o = Partitions(4, 100);
  o.expansion = 0;
  check(o, "expansion");
  check(Partitions(2, 100), "'{'", "a{b}");
  EXPECT_FALSE(*bloom->Exists("bad", "x"));
}

}  // namespace partitioned_test
}  // namespace siftdb::test
