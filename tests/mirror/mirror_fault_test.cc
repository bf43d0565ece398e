// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The mirror's promise under the Redis failures of issue #15, each injected
// between real processes (redis-server restarted from an older snapshot, a
// lagging replica promoted behind a TCP proxy that plays the service
// address, connections cut mid-pipeline, a second engine on the same name,
// a replica gone under wait_replicas, a reopen without the mirror) while a
// writer runs and a checker thread reads the mirror with a real
// RemoteFilter (tests/mirror/mirror_fault_util.h). Each scenario asserts:
// no "no" for any acknowledged key (async: any key acknowledged before the
// reported watermark), the engine keeps serving, and the mirror is trusted
// again with most absent keys answered "no". The untrusted window of each
// scenario is printed.

#include <atomic>
#include <cstdio>
#include <filesystem>
#include <functional>
#include <thread>

#include "gtest/gtest.h"
#include "siftdb/write_batch.h"
#include "tests/mirror/mirror_fault_util.h"
#include "tests/mirror/mirror_test_util.h"
#include "tests/support/tcp_proxy.h"

namespace siftdb::test {
namespace mirror_fault_test {

using Mode = RemoteFilterOptions::Mode;

RemoteFilterReaderOptions ReaderOptionsFor(const std::string& endpoint) {
  RemoteFilterReaderOptions ro;
  ro.endpoints = {endpoint};
  ro.connect_timeout_ms = 300;
  ro.command_timeout_ms = 500;
  return ro;
}

class MirrorFaultTest : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override { SIFTDB_REQUIRE_REDIS(); }

  bool async() const { return GetParam() == Mode::kAsync; }

  static RemoteFilterReaderOptions ReaderOptions(const std::string& endpoint) {
    return ReaderOptionsFor(endpoint);
  }

  // ExpectRecovered (mirror_fault_util.h), labelled with the mode.
  void ExpectRecovered(MirrorChecker* checker, DB* db, int64_t fault_ms,
                       int64_t max_window_ms, const char* scenario) {
    test::ExpectRecovered(
        checker, db, fault_ms, max_window_ms,
        absl::StrFormat("%s (%s)", scenario, async() ? "async" : "sync"));
  }

  // Redis restarts with older data than the engine published: `snapshot`
  // runs while the engine writes, 200 ms before Redis is SIGKILLed;
  // `damage` runs on the stopped server's files; then it starts again from
  // them. The engine reaches Redis through a proxy, so the test can keep it
  // away for a second after the restart (an engine stalled or partitioned):
  // the restarted server then serves its old state to readers alone.
  void RestartFromOlderData(
      std::vector<std::string> server_args,
      const std::function<absl::Status(RedisServer*)>& snapshot,
      const std::function<absl::Status(RedisServer*)>& damage,
      const char* scenario) {
    RedisServerOptions so;
    so.extra_args = std::move(server_args);
    auto server = RedisServer::Start(so);
    ASSERT_TRUE(server.ok()) << server.status();
    auto engine_path = TcpProxy::Start((*server)->port());
    ASSERT_TRUE(engine_path.ok()) << engine_path.status();
    Options o =
        MirrorOptions({(*engine_path)->endpoint()}, "older", GetParam());
    auto db = DB::Open(o, dir_.path());
    ASSERT_TRUE(db.ok()) << db.status();
    AckedKeys acked;
    BackgroundWriter writer(db->get(), &acked, 0);
    writer.Start();
    MirrorChecker checker(ReaderOptions((*server)->endpoint()), "older", &acked,
                          async());
    checker.Start();
    ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
    absl::SleepFor(absl::Milliseconds(400));
    ASSERT_TRUE(snapshot(server->get()).ok());
    absl::SleepFor(absl::Milliseconds(200));  // keys the older data lacks
    const int64_t fault = MirrorSteadyMs();
    (*engine_path)->SetBlackhole(true);
    ASSERT_TRUE((*server)->Kill().ok());
    absl::Status s = damage(server->get());
    ASSERT_TRUE(s.ok()) << s;
    ASSERT_TRUE((*server)->StartAgain().ok());  // loads the older data
    absl::SleepFor(absl::Milliseconds(1000));
    (*engine_path)->SetBlackhole(false);
    absl::SleepFor(absl::Milliseconds(1000));
    writer.Stop();
    EXPECT_EQ(writer.errors(), 0);
    ExpectRecovered(&checker, db->get(), fault,
                    o.remote_filter.lease_ttl_ms + 4000, scenario);
  }

  TempDir dir_;
};

// Redis restarts from a snapshot older than the lease and the newest keys
// (an RDB, or an AOF that lost its tail). The lease comes back with its
// old expiry; readers must see that the server's history changed.
TEST_P(MirrorFaultTest, RedisRestartedFromAnOlderSnapshot) {
  RestartFromOlderData(
      {}, [](RedisServer* server) { return server->Call({"SAVE"}).status(); },
      [](RedisServer*) { return absl::OkStatus(); }, "older snapshot");
}

// The same with an append-only file that lost its tail (appendfsync
// everysec and a power loss; here the file is cut by hand and Redis loads
// it with aof-load-truncated).
TEST_P(MirrorFaultTest, RedisRestartedFromAnAofMissingItsTail) {
  RestartFromOlderData(
      {"--appendonly", "yes", "--appendfsync", "everysec",
       "--aof-load-truncated", "yes"},
      [](RedisServer*) { return absl::OkStatus(); },
      [](RedisServer* server) -> absl::Status {
        const std::string dir = server->dir() + "/appendonlydir";
        std::error_code ec;
        for (const auto& f : std::filesystem::directory_iterator(dir, ec)) {
          const std::string path = f.path().string();
          if (path.size() < 9 || path.substr(path.size() - 9) != ".incr.aof") {
            continue;
          }
          const auto size = std::filesystem::file_size(path, ec);
          if (ec) break;
          // The writes of the last ~200 ms and more: a quarter of the file.
          std::filesystem::resize_file(path, size - size / 4, ec);
          if (ec) break;
          return absl::OkStatus();
        }
        return absl::InternalError("no incremental AOF in " + dir + ": " +
                                   ec.message());
      },
      "AOF missing its tail");
}

// The master dies and a replica that missed the newest writes is promoted
// (wait_replicas = 0). Engine and readers reach "the master" through one
// address (a TCP proxy here; a VIP or DNS name in production).
TEST_P(MirrorFaultTest, LaggingReplicaPromoted) {
  auto master = RedisServer::Start();
  ASSERT_TRUE(master.ok()) << master.status();
  auto repl_link = TcpProxy::Start((*master)->port());
  ASSERT_TRUE(repl_link.ok()) << repl_link.status();
  RedisServerOptions ro;
  ro.extra_args = {"--replicaof", "127.0.0.1",
                   std::to_string((*repl_link)->port())};
  auto replica = RedisServer::Start(ro);
  ASSERT_TRUE(replica.ok()) << replica.status();
  // Readers use the service address; the engine its own path to it, which
  // the test cuts off for a while after the failover (the engine's side of
  // a failover is not instantaneous either).
  auto service = TcpProxy::Start((*master)->port());
  ASSERT_TRUE(service.ok()) << service.status();
  auto engine_path = TcpProxy::Start((*master)->port());
  ASSERT_TRUE(engine_path.ok()) << engine_path.status();

  Options o =
      MirrorOptions({(*engine_path)->endpoint()}, "promote", GetParam());
  auto db = DB::Open(o, dir_.path());
  ASSERT_TRUE(db.ok()) << db.status();
  AckedKeys acked;
  BackgroundWriter writer(db->get(), &acked, 0);
  writer.Start();
  MirrorChecker checker(ReaderOptions((*service)->endpoint()), "promote",
                        &acked, async());
  checker.Start();
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
  ASSERT_TRUE(WaitUntil([&] {
    auto r = (*replica)->Call({"INFO", "replication"});
    return r.ok() && r->find("master_link_status:up") != std::string::npos;
  }));
  absl::SleepFor(absl::Milliseconds(300));
  (*repl_link)->SetBlackhole(true);  // the replica stops receiving
  absl::SleepFor(absl::Milliseconds(300));
  // Failover: promote the lagging replica, point the address at it, and
  // kill the old master.
  const int64_t fault = MirrorSteadyMs();
  (*engine_path)->SetBlackhole(true);
  ASSERT_TRUE((*replica)->Call({"REPLICAOF", "NO", "ONE"}).ok());
  (*service)->SetUpstream((*replica)->port());
  (*engine_path)->SetUpstream((*replica)->port());
  (*service)->CutAll();
  ASSERT_TRUE((*master)->Kill().ok());
  absl::SleepFor(absl::Milliseconds(1000));
  (*engine_path)->SetBlackhole(false);
  absl::SleepFor(absl::Milliseconds(1000));
  writer.Stop();
  EXPECT_EQ(writer.errors(), 0);
  ExpectRecovered(&checker, db->get(), fault,
                  o.remote_filter.lease_ttl_ms + 4000, "lagging replica");
}

// Connections cut at arbitrary points of the engine's pipelines (a commit
// delivered or not, its reply lost) and delayed commits: the watermark and
// the sync acknowledgements must only cover what a checked commit listed.
TEST_P(MirrorFaultTest, PipelinesCutAndDelayedAtRandomPoints) {
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  auto proxy = TcpProxy::Start((*server)->port());
  ASSERT_TRUE(proxy.ok()) << proxy.status();
  Options o = MirrorOptions({(*proxy)->endpoint()}, "cuts", GetParam());
  auto db = DB::Open(o, dir_.path());
  ASSERT_TRUE(db.ok()) << db.status();
  AckedKeys acked;
  BackgroundWriter writer(db->get(), &acked, 0);
  writer.Start();
  MirrorChecker checker(ReaderOptions((*server)->endpoint()), "cuts", &acked,
                        async());
  checker.Start();
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
  uint64_t seed = 0x5eed;
  for (int round = 0; round < 12; round++) {
    seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
    switch ((seed >> 33) % 3) {
      case 0:
        (*proxy)->CutAfterClientBytes(1 + (seed >> 40) % 4000);
        break;
      case 1:
        (*proxy)->SetDelay(absl::Milliseconds(200 + (seed >> 40) % 400),
                           absl::ZeroDuration());
        break;
      default:
        (*proxy)->CutAll();
        break;
    }
    absl::SleepFor(absl::Milliseconds(250));
    (*proxy)->SetDelay(absl::ZeroDuration(), absl::ZeroDuration());
    (*proxy)->CutAfterClientBytes(0);
  }
  const int64_t fault = MirrorSteadyMs();
  absl::SleepFor(absl::Milliseconds(500));
  writer.Stop();
  EXPECT_EQ(writer.errors(), 0);
  ExpectRecovered(&checker, db->get(), fault,
                  o.remote_filter.lease_ttl_ms + 4000, "cuts and delays");
}

// Two engines publish under one mirror name (a misconfiguration, a copy of
// the DB, or an old process still running): the later open wins, the
// earlier one is fenced and says so, and readers trust only what the
// winner published -- no ping-pong of republications.
TEST_P(MirrorFaultTest, SecondEngineOnTheSameNameFencesTheFirst) {
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  Options o = MirrorOptions({(*server)->endpoint()}, "twice", GetParam());
  TempDir dir_b;
  auto first = DB::Open(o, dir_.path());
  ASSERT_TRUE(first.ok()) << first.status();
  AckedKeys acked_first;
  BackgroundWriter writer_first(first->get(), &acked_first, 0);
  writer_first.Start();
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(first->get()); }));
  absl::SleepFor(absl::Milliseconds(200));

  auto second = DB::Open(o, dir_b.path());
  ASSERT_TRUE(second.ok()) << second.status();
  AckedKeys acked_second;
  BackgroundWriter writer_second(second->get(), &acked_second, 1000000);
  writer_second.Start();
  ASSERT_TRUE(WaitUntil([&] {
    return MirrorState(first->get()).find("state=fenced") != std::string::npos;
  })) << MirrorState(first->get());
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(second->get()); }));
  // From here on readers must see exactly the second engine's mirror:
  // every key it acknowledged (before the takeover too: its full
  // publication carried them), and nothing the fenced one writes disturbs
  // it. (Before the takeover they read the first engine's mirror, which is
  // what a misconfiguration gives and why the first one is fenced.)
  MirrorChecker checker(ReaderOptions((*server)->endpoint()), "twice",
                        &acked_second, async());
  checker.Start();
  const int64_t fault = MirrorSteadyMs();
  absl::SleepFor(absl::Milliseconds(1500));
  writer_first.Stop();
  writer_second.Stop();
  EXPECT_EQ(writer_first.errors(), 0);
  EXPECT_EQ(writer_second.errors(), 0);
  const std::string first_state = MirrorState(first->get());
  EXPECT_NE(first_state.find("fenced"), std::string::npos) << first_state;
  const std::string second_state = MirrorState(second->get());
  // One publication, perhaps one more if the first engine's last commit
  // raced it; never the old ping-pong.
  EXPECT_TRUE(second_state.find("republishes=1 ") != std::string::npos ||
              second_state.find("republishes=2 ") != std::string::npos)
      << second_state;
  ExpectRecovered(&checker, second->get(), fault, 500, "second engine");
}

// wait_replicas = 1 and the replica disappears: no write may block longer
// than lease_ttl_ms plus one command timeout (docs/redis_mirror.md §5.3);
// the mirror stays revoked until the replica is back, then recovers.
// (wait_replicas applies to sync mirrors only.)
TEST(MirrorWaitTest, MissingReplicaBlocksWritesAtMostOneLease) {
  SIFTDB_REQUIRE_REDIS();
  TempDir dir;
  auto servers = StartMasterAndReplica();
  ASSERT_TRUE(servers.ok()) << servers.status();
  RedisServer* master = servers->master.get();
  RedisServer* replica = servers->replica.get();
  Options o = WaitingMirrorOptions(master->endpoint(), "waits");
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < 100; i++) {
    ASSERT_TRUE(db->get()->Put(WriteOptions(), TestKey(i), "v").ok());
  }
  ASSERT_TRUE(MirrorTrusted(db->get())) << MirrorState(db->get());
  ASSERT_TRUE(replica->Kill().ok());
  int64_t worst_ms = 0;
  const int64_t end = MirrorSteadyMs() + 4000;
  for (int i = 100; MirrorSteadyMs() < end; i++) {
    const int64_t start = MirrorSteadyMs();
    ASSERT_TRUE(db->get()->Put(WriteOptions(), TestKey(i), "v").ok());
    worst_ms = std::max(worst_ms, MirrorSteadyMs() - start);
    absl::SleepFor(absl::Milliseconds(20));
  }
  std::printf("replica gone: slowest write %lld ms (lease_ttl_ms %d)\n",
              static_cast<long long>(worst_ms), o.remote_filter.lease_ttl_ms);
  EXPECT_LE(worst_ms, o.remote_filter.lease_ttl_ms +
                          o.remote_filter.command_timeout_ms + 300);
  const std::string state = MirrorState(db->get());
  EXPECT_NE(state.find("state=untrusted"), std::string::npos) << state;
  EXPECT_NE(state.find("WAIT"), std::string::npos) << state;
  ASSERT_TRUE(replica->StartAgain().ok());
  EXPECT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }))
      << MirrorState(db->get());
}

// A replica restarted from its own RDB gets its master's replication id
// back and resynchronizes from its old offset, replaying states that each
// had a valid lease but lack keys acknowledged later (WAIT counted the
// replica's previous life). A reader that trusts replicas (trust_replica,
// wait_replicas counting this replica) must not get "no" for an
// acknowledged key: a replica is trusted only once it has been up for a
// lease. (Without that rule this test found ~400 false negatives in 2 of 3
// runs, in the milliseconds of the replay.)
TEST(MirrorReplicaFaultTest, ReplicaRestartedFromItsOwnSnapshot) {
  SIFTDB_REQUIRE_REDIS();
  TempDir dir;
  auto servers = StartMasterAndReplica();
  ASSERT_TRUE(servers.ok()) << servers.status();
  RedisServer* master = servers->master.get();
  RedisServer* replica = servers->replica.get();
  Options o = WaitingMirrorOptions(master->endpoint(), "rdb");
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  AckedKeys acked;
  BackgroundWriter writer(db->get(), &acked, 0);
  writer.Start();
  RemoteFilterReaderOptions ro;
  ro.endpoints = {replica->endpoint()};
  ro.trust_replica = true;
  ro.connect_timeout_ms = 300;
  ro.command_timeout_ms = 500;
  MirrorChecker checker(ro, "rdb", &acked, /*async=*/false);
  checker.Start();
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
  // The reader trusts the replica (up for more than a lease) before the
  // fault, so there is something to lose.
  ASSERT_TRUE(checker.WaitTrustedAfter(0)) << checker.Summary();
  absl::SleepFor(absl::Milliseconds(300));
  ASSERT_TRUE(replica->Call({"SAVE"}).ok());
  absl::SleepFor(absl::Milliseconds(o.remote_filter.lease_ttl_ms));
  const int64_t fault = MirrorSteadyMs();
  ASSERT_TRUE(replica->Kill().ok());
  ASSERT_TRUE(replica->StartAgain().ok());  // its own, older dump.rdb
  absl::SleepFor(absl::Milliseconds(1500));
  writer.Stop();
  EXPECT_EQ(writer.errors(), 0);
  ASSERT_TRUE(checker.WaitTrustedAfter(MirrorSteadyMs()))
      << checker.Summary() << "; " << MirrorState(db->get());
  checker.Stop();
  const int64_t last = checker.LastUntrustedSince(fault);
  std::printf(
      "replica restarted from its own RDB: untrusted window %lld ms; "
      "%s\n",
      static_cast<long long>(last < 0 ? 0 : last - fault),
      checker.Summary().c_str());
  EXPECT_EQ(checker.false_negatives(), 0) << checker.Summary();
}

// A replica that WAIT does not count (wait_replicas = 1 is met by another
// one) lags behind; a reader on it with default options trusts nothing
// there, so it never says "no".
TEST(MirrorReplicaFaultTest, UncountedReplicaIsNotTrustedByDefault) {
  SIFTDB_REQUIRE_REDIS();
  TempDir dir;
  auto servers = StartMasterAndReplica();  // the replica WAIT counts
  ASSERT_TRUE(servers.ok()) << servers.status();
  RedisServer* master = servers->master.get();
  auto link = TcpProxy::Start(master->port());
  ASSERT_TRUE(link.ok()) << link.status();
  RedisServerOptions lo;
  lo.extra_args = {"--replicaof", "127.0.0.1", std::to_string((*link)->port())};
  auto lagging = RedisServer::Start(lo);
  ASSERT_TRUE(lagging.ok()) << lagging.status();
  ASSERT_TRUE(WaitUntil([&] {
    auto r = (*lagging)->Call({"INFO", "replication"});
    return r.ok() && r->find("master_link_status:up") != std::string::npos;
  }));
  Options o = WaitingMirrorOptions(master->endpoint(), "uncounted");
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  AckedKeys acked;
  BackgroundWriter writer(db->get(), &acked, 0);
  writer.Start();
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
  absl::SleepFor(absl::Milliseconds(200));
  (*link)->SetBlackhole(true);  // the lagging replica stops receiving
  MirrorChecker checker(ReaderOptionsFor((*lagging)->endpoint()), "uncounted",
                        &acked, /*async=*/false);
  checker.Start();
  absl::SleepFor(absl::Milliseconds(1000));
  writer.Stop();
  checker.Stop();
  EXPECT_EQ(writer.errors(), 0);
  EXPECT_EQ(checker.false_negatives(), 0) << checker.Summary();
  for (const MirrorChecker::Batch& b : checker.timeline()) {
    EXPECT_FALSE(b.trusted) << checker.Summary();
  }
  EXPECT_GT(checker.timeline().size(), 10u);
  EXPECT_TRUE(MirrorTrusted(db->get())) << MirrorState(db->get());
}

// A clean close revokes the lease: a reopen without the mirror writes keys
// the mirror lacks, and readers must not trust it meanwhile.
TEST_P(MirrorFaultTest, CloseRevokesTheLease) {
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  Options o = MirrorOptions({(*server)->endpoint()}, "closed", GetParam());
  o.remote_filter.lease_ttl_ms = 10000;
  {
    auto db = DB::Open(o, dir_.path());
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 100; i++) {
      ASSERT_TRUE(db->get()->Put(WriteOptions(), TestKey(i), "v").ok());
    }
    ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
  }
  EXPECT_EQ(*(*server)->Call({"EXISTS", MirrorKeys("closed").lease()}), "0");
  Options off = o;
  off.remote_filter = RemoteFilterOptions();
  auto db = DB::Open(off, dir_.path());
  ASSERT_TRUE(db.ok()) << db.status();
  std::vector<std::string> fresh;
  for (int i = 0; i < 200; i++) {
    fresh.push_back(AbsentKey(i));
    ASSERT_TRUE(db->get()->Put(WriteOptions(), fresh.back(), "v").ok());
  }
  auto reader = RemoteFilter::Open((*server)->endpoint(), "closed");
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), fresh, &s), 0u) << s;
  EXPECT_FALSE(s.ok());
}

INSTANTIATE_TEST_SUITE_P(Modes, MirrorFaultTest,
                         ::testing::Values(Mode::kSync, Mode::kAsync),
                         [](const auto& info) {
                           return info.param == Mode::kSync ? "Sync" : "Async";
                         });

}  // namespace mirror_fault_test
}  // namespace siftdb::test
