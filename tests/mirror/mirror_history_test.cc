// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A failover that leaves the old master up: the engine moves to the new
// master (here a TCP proxy re-pointed at the promoted replica; in
// production Sentinel, a VIP or DNS), while readers still reach the old
// one, which still says "master" and still holds the engine's last lease
// until it expires. A sync write the engine acknowledges from the new
// master is missing on the old one, so until that old lease has certainly
// lapsed the engine must not acknowledge it (RedisMirrorWriter::
// ack_hold_ms()). Before that rule a reader of the old master answered
// "no" for such keys at once.

#include "db/mirror/mirror_history.h"

#include <memory>
#include <string>

#include "db/filename.h"
#include "gtest/gtest.h"
#include "tests/mirror/mirror_fault_util.h"
#include "tests/mirror/mirror_test_util.h"
#include "tests/support/tcp_proxy.h"

namespace siftdb::test {
namespace mirror_history_test {

// A master, its replica, and the engine's path to the master through a TCP
// proxy (re-pointed at the replica for a failover).
struct MovablePath {
  MasterAndReplica servers;
  std::unique_ptr<TcpProxy> proxy;
  RedisServer* old_master() { return servers.master.get(); }
  RedisServer* new_master() { return servers.replica.get(); }
};

absl::StatusOr<MovablePath> StartMovablePath() {
  auto servers = StartMasterAndReplica();
  if (!servers.ok()) return servers.status();
  auto proxy = TcpProxy::Start(servers->master->port());
  if (!proxy.ok()) return proxy.status();
  return MovablePath{std::move(*servers), std::move(*proxy)};
}

// 200 keys, the mirror trusted, and the replica holding all of it.
void FillAndReplicate(DB* db, RedisServer* master) {
  for (int i = 0; i < 200; i++) {
    ASSERT_TRUE(db->Put(WriteOptions(), TestKey(i), "v").ok());
  }
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db); }));
  absl::Status waited = master->ReplicateAll(1, absl::Seconds(5));
  ASSERT_TRUE(waited.ok()) << waited;
}

TEST(MirrorHistoryTest, NoAckFromTheNewMasterWhileTheOldLeaseLives) {
  SIFTDB_REQUIRE_REDIS();
  TempDir dir;
  auto path = StartMovablePath();
  ASSERT_TRUE(path.ok()) << path.status();
  RedisServer* old_master = path->old_master();
  RedisServer* new_master = path->new_master();
  TcpProxy* engine_path = path->proxy.get();

  Options o = MirrorOptions({engine_path->endpoint()}, "moved",
                            RemoteFilterOptions::Mode::kSync);
  o.remote_filter.lease_ttl_ms = 2000;
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  FillAndReplicate(db->get(), old_master);
  if (HasFatalFailure()) return;

  auto reader = RemoteFilter::Open(old_master->endpoint(), "moved");
  ASSERT_TRUE(reader.ok()) << reader.status();
  // The old master is trusted now: an absent key is answered "no".
  ASSERT_TRUE(WaitUntil([&] { return !(*reader)->MayContain(AbsentKey(0)); }));

  // Failover: the replica is promoted and the engine's path leads there;
  // the old master stays up, a master, for its readers.
  ASSERT_TRUE(new_master->Call({"REPLICAOF", "NO", "ONE"}).ok());
  engine_path->SetUpstream(new_master->port());
  engine_path->CutAll();

  // Every key acknowledged from now on is only on the new master: a reader
  // of the old one must answer "maybe" for it (its lease must be gone by
  // the time the write returns).
  int false_negatives = 0;
  std::string first_missed;
  for (int i = 1000; i < 1100; i++) {
    const std::string key = TestKey(i);
    ASSERT_TRUE((*db)->Put(WriteOptions(), key, "v").ok());
    absl::Status why;
    if (!(*reader)->MayContain(key, &why)) {
      if (false_negatives++ == 0) first_missed = key;
    }
  }
  EXPECT_EQ(false_negatives, 0)
      << "first: " << first_missed << "; " << MirrorState(db->get());
  // And the engine is trusted on the new master, where a reader trusts it.
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
  auto new_reader = RemoteFilter::Open(new_master->endpoint(), "moved");
  ASSERT_TRUE(new_reader.ok()) << new_reader.status();
  EXPECT_TRUE(
      WaitUntil([&] { return !(*new_reader)->MayContain(AbsentKey(0)); }));
  EXPECT_TRUE((*new_reader)->MayContain(TestKey(1099)));
  EXPECT_NE(MirrorState(db->get()).find("ack_hold_in_ms="), std::string::npos);
}

// The same failover, but the engine dies (its last lease left alive on the
// old master: the path is cut, so Close cannot revoke it) and is reopened
// at once behind the moved path. The new process never held that lease; it
// learns from MIRROR-HISTORY that its first lease lands on another history
// and holds, at open and for every sync write, until the old lease has
// certainly lapsed. Before that record a reopened engine acknowledged at
// once and the old master's readers answered "no" for its keys.
TEST(MirrorHistoryTest, ReopenAfterFailoverHoldsUntilTheOldLeaseLapses) {
  SIFTDB_REQUIRE_REDIS();
  TempDir dir;
  auto path = StartMovablePath();
  ASSERT_TRUE(path.ok()) << path.status();
  RedisServer* old_master = path->old_master();
  RedisServer* new_master = path->new_master();
  TcpProxy* engine_path = path->proxy.get();

  Options o = MirrorOptions({engine_path->endpoint()}, "reopened",
                            RemoteFilterOptions::Mode::kSync);
  o.remote_filter.lease_ttl_ms = 3000;
  o.remote_filter.command_timeout_ms = 200;
  {
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    FillAndReplicate(db->get(), old_master);
    if (HasFatalFailure()) return;
    // The engine "dies": nothing it sends reaches Redis any more.
    engine_path->SetBlackhole(true);
    engine_path->CutAll();
  }
  auto reader = RemoteFilter::Open(old_master->endpoint(), "reopened");
  ASSERT_TRUE(reader.ok()) << reader.status();
  ASSERT_FALSE((*reader)->MayContain(AbsentKey(0)))
      << "the old master should still trust the dead engine's lease";

  ASSERT_TRUE(new_master->Call({"REPLICAOF", "NO", "ONE"}).ok());
  engine_path->SetUpstream(new_master->port());
  engine_path->SetBlackhole(false);
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  int false_negatives = 0;
  std::string first_missed;
  for (int i = 1000; i < 1100; i++) {
    const std::string key = TestKey(i);
    ASSERT_TRUE((*db)->Put(WriteOptions(), key, "v").ok());
    if (!(*reader)->MayContain(key)) {
      if (false_negatives++ == 0) first_missed = key;
    }
  }
  EXPECT_EQ(false_negatives, 0)
      << "first: " << first_missed << "; " << MirrorState(db->get());
  EXPECT_NE(MirrorState(db->get()).find("ack_holds=1"), std::string::npos)
      << MirrorState(db->get());
}

// The record costs nothing on the usual paths: a reopen on the same server
// sets no hold, and neither does the first open of a new DB. A DB with no
// record (first open with the mirror, or written by an older siftdb) holds
// once, then records a settled history.
TEST(MirrorHistoryTest, OnlyAnUnknownOrMovedHistoryHolds) {
  SIFTDB_REQUIRE_REDIS();
  auto server = RedisServer::Start();
  ASSERT_TRUE(server.ok()) << server.status();
  TempDir dir;
  Options o = MirrorOptions({(*server)->endpoint()}, "steady",
                            RemoteFilterOptions::Mode::kSync);
  auto holds = [](DB* db) {
    std::string state = MirrorState(db);
    size_t at = state.find("ack_holds=");
    return at == std::string::npos ? std::string("?")
                                   : state.substr(at + 10, 1);
  };
  auto settled_on_disk = [&](const std::string& name) {
    return [&dir, name] {
      auto h = ReadMirrorHistory(Env::Default(), dir.path());
      return h.ok() && h->settled && h->mirror_name == name;
    };
  };
  for (int open = 0; open < 2; open++) {
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Put(WriteOptions(), TestKey(open), "v").ok());
    ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
    EXPECT_EQ(holds(db->get()), "0") << "open " << open;
    EXPECT_TRUE(WaitUntil(settled_on_disk("steady"))) << "open " << open;
  }
  // No record: the next open cannot know where the last lease lived.
  ASSERT_TRUE(
      Env::Default()->RemoveFile(MirrorHistoryFileName(dir.path())).ok());
  {
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ(holds(db->get()), "1");
    EXPECT_TRUE(WaitUntil(settled_on_disk("steady")));
  }
  // A damaged record reads the same way, and is replaced, not trusted.
  ASSERT_TRUE(WriteStringToFile(Env::Default(), "siftdb-mirror-history 1\n",
                                MirrorHistoryFileName(dir.path()), true)
                  .ok());
  {
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ(holds(db->get()), "1");
    EXPECT_TRUE(WaitUntil(settled_on_disk("steady")));
  }
  // Another mirror name's record says nothing about this name's leases.
  Options renamed = o;
  renamed.remote_filter.name = "renamed";
  {
    auto db = DB::Open(renamed, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ(holds(db->get()), "1");
    EXPECT_TRUE(WaitUntil(settled_on_disk("renamed")));
  }
  {
    auto db = DB::Open(renamed, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_EQ(holds(db->get()), "0");
  }
}

}  // namespace mirror_history_test
}  // namespace siftdb::test
