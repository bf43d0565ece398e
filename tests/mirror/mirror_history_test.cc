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

#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "tests/mirror/mirror_fault_util.h"
#include "tests/mirror/mirror_test_util.h"
#include "tests/support/tcp_proxy.h"

namespace siftdb::test {
namespace {

TEST(MirrorHistoryTest, NoAckFromTheNewMasterWhileTheOldLeaseLives) {
  SIFTDB_REQUIRE_REDIS();
  TempDir dir;
  auto servers = StartMasterAndReplica();
  ASSERT_TRUE(servers.ok()) << servers.status();
  RedisServer* old_master = servers->master.get();
  RedisServer* new_master = servers->replica.get();
  auto engine_path = TcpProxy::Start(old_master->port());
  ASSERT_TRUE(engine_path.ok()) << engine_path.status();

  Options o = MirrorOptions({(*engine_path)->endpoint()}, "moved",
                            RemoteFilterOptions::Mode::kSync);
  o.remote_filter.lease_ttl_ms = 2000;
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < 200; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), TestKey(i), "v").ok());
  }
  ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
  // The replica holds everything the master has (WAIT counts it).
  auto waited = old_master->Call({"WAIT", "1", "5000"});
  ASSERT_TRUE(waited.ok() && *waited == "1") << waited.status();

  auto reader = RemoteFilter::Open(old_master->endpoint(), "moved");
  ASSERT_TRUE(reader.ok()) << reader.status();
  // The old master is trusted now: an absent key is answered "no".
  ASSERT_TRUE(WaitUntil([&] { return !(*reader)->MayContain(AbsentKey(0)); }));

  // Failover: the replica is promoted and the engine's path leads there;
  // the old master stays up, a master, for its readers.
  ASSERT_TRUE(new_master->Call({"REPLICAOF", "NO", "ONE"}).ok());
  (*engine_path)->SetUpstream(new_master->port());
  (*engine_path)->CutAll();

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

}  // namespace
}  // namespace siftdb::test
