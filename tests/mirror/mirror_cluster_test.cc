// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The mirror on a real local Redis Cluster of 3 masters (cluster-enabled
// redis-server instances joined with `redis-cli --cluster create`): the
// engine and the reader find the node of the mirror's slot, the reader
// test of the standalone suite holds, and both follow the slot when it
// migrates to another master (ASK while it moves, MOVED after). And a
// reader on a replica, with the engine waiting for replication (WAIT).

#include <atomic>
#include <thread>

#include "gtest/gtest.h"
#include "siftdb/write_batch.h"
#include "tests/mirror/mirror_fault_util.h"
#include "tests/mirror/mirror_test_util.h"

namespace siftdb::test {
namespace mirror_cluster_test {

using Mode = RemoteFilterOptions::Mode;

// The node serving `key`'s slot (the others answer -MOVED).
RedisServer* OwnerOf(RedisCluster* cluster, const std::string& key) {
  for (const auto& node : cluster->nodes()) {
    auto r = node->Call({"EXISTS", key});
    if (r.ok() && r->rfind("MOVED", 0) != 0) return node.get();
  }
  return nullptr;
}

void WriteKeys(DB* db, int begin, int end) {
  for (int i = begin; i < end; i += 100) {
    WriteBatch b;
    for (int j = i; j < std::min(end, i + 100); j++) {
      b.Put(TestKey(j), std::string(40, 'v'));
    }
    ASSERT_TRUE(db->Write(WriteOptions(), &b).ok());
  }
}

std::vector<std::string> Keys(int begin, int end) {
  std::vector<std::string> k;
  for (int i = begin; i < end; i++) k.push_back(TestKey(i));
  return k;
}

class MirrorClusterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::FindBinary().empty() || RedisServer::FindCli().empty()) {
      GTEST_SKIP() << "redis-server or redis-cli not installed";
    }
    auto c = RedisCluster::Start(3);
    ASSERT_TRUE(c.ok()) << c.status();
    cluster_ = std::move(*c);
  }

  std::unique_ptr<RedisCluster> cluster_;
  TempDir dir_;
};

TEST_F(MirrorClusterTest, ReaderAgreesWithLocalFiltersAndFollowsMigration) {
  const std::string name = "clustered";
  Options o = MirrorOptions(cluster_->endpoints(), name, Mode::kSync);
  o.write_buffer_size = 256 << 10;
  o.max_file_size = 256 << 10;
  auto db_or = DB::Open(o, dir_.path());
  ASSERT_TRUE(db_or.ok()) << db_or.status();
  std::unique_ptr<DB> db = std::move(*db_or);
  constexpr int kKeys = 30000;
  WriteKeys(db.get(), 0, kKeys);
  ASSERT_TRUE(Impl(db.get())->FlushMemTable().ok());
  ASSERT_TRUE(Impl(db.get())->WaitForBackgroundWork().ok());

  MirrorKeys keys(name);
  RedisServer* owner = OwnerOf(cluster_.get(), keys.manifest());
  ASSERT_NE(owner, nullptr);
  ASSERT_TRUE(WaitMirrorSettled(db.get(), owner, name, dir_.path()))
      << MirrorState(db.get());
  // Every key of the mirror is on the owner, in one slot.
  const int slot = RedisKeySlot(keys.manifest());
  auto all = RedisKeys(owner, keys.prefix() + "*");
  EXPECT_GT(all.size(), 4u);
  for (const std::string& k : all) EXPECT_EQ(RedisKeySlot(k), slot) << k;

  // The reader is given a node that does not own the slot.
  RedisServer* seed = nullptr;
  for (const auto& n : cluster_->nodes()) {
    if (n.get() != owner) seed = n.get();
  }
  RemoteFilterReaderOptions ro;
  ro.endpoints = {seed->endpoint()};
  auto reader = RemoteFilter::Open(ro, name);
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), Keys(0, kKeys), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<LocalTable> tables = OpenLocalTables(dir_.path());
  std::vector<std::string> absent;
  for (int i = 0; i < kKeys; i++) absent.push_back(TestKey(i) + "x");
  std::vector<std::string_view> views(absent.begin(), absent.end());
  std::vector<bool> answers;
  s = (*reader)->MayContainMany(views, &answers);
  ASSERT_TRUE(s.ok()) << s;
  size_t no = 0;
  for (size_t i = 0; i < absent.size(); i++) {
    EXPECT_EQ(answers[i], LocalMayContain(tables, absent[i])) << absent[i];
    no += answers[i] ? 0 : 1;
  }
  EXPECT_GT(no, absent.size() * 95 / 100);

  // Move the slot to another master while the engine writes and the reader
  // reads.
  RedisServer* target = seed;
  std::atomic<bool> stop{false};
  std::atomic<int> written{kKeys};
  std::thread writer([&] {
    for (int i = kKeys; !stop.load() && i < kKeys + 20000; i += 100) {
      WriteKeys(db.get(), i, i + 100);
      written.store(i + 100);
    }
  });
  std::thread prober([&] {
    while (!stop.load()) {
      CountNo(reader->get(), Keys(0, 2000));
      absl::SleepFor(absl::Milliseconds(5));
    }
  });
  absl::Status moved = cluster_->MoveSlot(slot, owner, target);
  absl::SleepFor(absl::Milliseconds(300));
  stop.store(true);
  writer.join();
  prober.join();
  ASSERT_TRUE(moved.ok()) << moved;
  ASSERT_EQ(OwnerOf(cluster_.get(), keys.manifest()), target);
  // Both sides follow: the mirror is trusted again and complete.
  ASSERT_TRUE(WaitUntil([&] {
    absl::Status st;
    CountNo(reader->get(), {TestKey(0)}, &st);
    return st.ok() && MirrorTrusted(db.get());
  })) << MirrorState(db.get());
  EXPECT_EQ(CountNo(reader->get(), Keys(0, written.load()), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_GT((*reader)->stats().redirects, 0u);
  EXPECT_GT(RedisKeys(target, keys.prefix() + "*").size(), 4u);
  EXPECT_TRUE(RedisKeys(owner, keys.prefix() + "*").empty());
}

// The mirror's slot migrates to another master while the engine writes
// (sync and async) and a reader checks every acknowledged key: the lease
// that moves with the slot names the old master's replication id, so the
// new owner is untrusted until the engine republishes there; no "no" for
// an acknowledged key at any point, and trusted again after.
class MirrorClusterMigrationTest
    : public ::testing::TestWithParam<RemoteFilterOptions::Mode> {};

TEST_P(MirrorClusterMigrationTest, NoFalseNegativeWhileTheSlotMoves) {
  if (RedisServer::FindBinary().empty() || RedisServer::FindCli().empty()) {
    GTEST_SKIP() << "redis-server or redis-cli not installed";
  }
  auto cluster = RedisCluster::Start(3);
  ASSERT_TRUE(cluster.ok()) << cluster.status();
  TempDir dir;
  const std::string name = "moving";
  Options o = MirrorOptions((*cluster)->endpoints(), name, GetParam());
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  AckedKeys acked;
  BackgroundWriter writer(db->get(), &acked, 0);
  writer.Start();
  RemoteFilterReaderOptions ro;
  ro.endpoints = (*cluster)->endpoints();
  MirrorChecker checker(ro, name, &acked,
                        GetParam() == RemoteFilterOptions::Mode::kAsync);
  checker.Start();
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
  absl::SleepFor(absl::Milliseconds(300));
  MirrorKeys keys(name);
  RedisServer* owner = OwnerOf(cluster->get(), keys.manifest());
  ASSERT_NE(owner, nullptr);
  RedisServer* target = nullptr;
  for (const auto& n : (*cluster)->nodes()) {
    if (n.get() != owner) target = n.get();
  }
  const int64_t fault = MirrorSteadyMs();
  ASSERT_TRUE(
      (*cluster)->MoveSlot(RedisKeySlot(keys.manifest()), owner, target).ok());
  absl::SleepFor(absl::Milliseconds(1000));
  writer.Stop();
  EXPECT_EQ(writer.errors(), 0);
  ExpectRecovered(
      &checker, db->get(), fault, o.remote_filter.lease_ttl_ms + 4000,
      absl::StrFormat(
          "slot migration (%s)",
          GetParam() == RemoteFilterOptions::Mode::kAsync ? "async" : "sync"));
}

INSTANTIATE_TEST_SUITE_P(Modes, MirrorClusterMigrationTest,
                         ::testing::Values(RemoteFilterOptions::Mode::kSync,
                                           RemoteFilterOptions::Mode::kAsync),
                         [](const auto& info) {
                           return info.param == RemoteFilterOptions::Mode::kSync
                                      ? "Sync"
                                      : "Async";
                         });

TEST(MirrorReplicaTest, ReaderOnReplicaWithWait) {
  SIFTDB_REQUIRE_REDIS();
  RedisServerOptions mo;
  mo.extra_args = {"--repl-diskless-sync-delay", "0"};
  auto master = RedisServer::Start(mo);
  ASSERT_TRUE(master.ok()) << master.status();
  auto replica = (*master)->StartReplica();
  ASSERT_TRUE(replica.ok()) << replica.status();
  TempDir dir;
  Options o = MirrorOptions({(*master)->endpoint()}, "replicated", Mode::kSync);
  o.remote_filter.wait_replicas = 1;
  o.remote_filter.wait_timeout_ms = 2000;
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  WriteKeys(db->get(), 0, 5000);
  ASSERT_TRUE(Impl(db->get())->FlushMemTable().ok());
  ASSERT_TRUE(Impl(db->get())->WaitForBackgroundWork().ok());
  WriteKeys(db->get(), 5000, 6000);
  // By default a replica is not trusted: every answer is "maybe", and the
  // status says why.
  {
    auto untrusting = RemoteFilter::Open((*replica)->endpoint(), "replicated");
    ASSERT_TRUE(untrusting.ok()) << untrusting.status();
    absl::Status s;
    EXPECT_EQ(CountNo(untrusting->get(), {AbsentKey(1), AbsentKey(2)}, &s), 0u);
    EXPECT_NE(s.message().find("trust_replica"), absl::string_view::npos) << s;
  }
  // Acknowledged sync writes are on the replica already (WAIT): a reader
  // there that opts in, sending only read-only commands, sees all of them.
  RemoteFilterReaderOptions ro;
  ro.endpoints = {(*replica)->endpoint()};
  ro.trust_replica = true;
  auto reader = RemoteFilter::Open(ro, "replicated");
  ASSERT_TRUE(reader.ok()) << reader.status();
  // A replica is trusted only once it has been up for a lease (it might
  // have restarted from its own RDB and be replaying older states).
  ASSERT_TRUE(WaitUntil([&] {
    absl::Status why;
    (*reader)->MayContain(AbsentKey(0), &why);
    return why.ok();
  }));
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), Keys(0, 6000), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<std::string> absent;
  for (int i = 0; i < 2000; i++) absent.push_back(AbsentKey(i));
  EXPECT_GT(CountNo(reader->get(), absent, &s), 1900u);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_TRUE(MirrorTrusted(db->get())) << MirrorState(db->get());
}

}  // namespace mirror_cluster_test
}  // namespace siftdb::test
