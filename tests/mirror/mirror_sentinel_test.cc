// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The mirror and its readers through redis+sentinel:// while Sentinel fails
// the master over (SENTINEL FAILOVER, or a SIGKILLed master): the engine
// keeps serving (no write errors), readers see no false negative for any
// acknowledged key (the promoted replica's mirror is not trusted before the
// engine republishes there), and it is trusted again afterwards. Real
// processes on loopback: a master, two replicas, three Sentinels.

#include <cstdlib>
#include <functional>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "tests/mirror/mirror_fault_util.h"
#include "tests/mirror/mirror_test_util.h"
#include "tests/support/redis_sentinel.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace {

using Mode = RemoteFilterOptions::Mode;

class MirrorSentinelTest : public ::testing::TestWithParam<Mode> {
 protected:
  void SetUp() override { SIFTDB_REQUIRE_REDIS(); }

  // Runs the engine and a checker through `fault`, then expects recovery.
  void RunThrough(
      const std::function<void(RedisSentinelGroup*, const std::string&)>& fault,
      const char* scenario) {
    auto g = RedisSentinelGroup::Start();
    ASSERT_TRUE(g.ok()) << g.status();
    const std::string url = (*g)->Url();
    Options o = MirrorOptions({url}, "sentinel", GetParam());
    auto db = DB::Open(o, dir_.path());
    ASSERT_TRUE(db.ok()) << db.status();
    AckedKeys acked;
    BackgroundWriter writer(db->get(), &acked, 0);
    writer.Start();
    RemoteFilterReaderOptions ro;
    ro.endpoints = {url};
    ro.connect_timeout_ms = 300;
    ro.command_timeout_ms = 500;
    MirrorChecker checker(ro, "sentinel", &acked, GetParam() == Mode::kAsync);
    checker.Start();
    ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
    absl::SleepFor(absl::Milliseconds(300));
    auto old_master = (*g)->MasterEndpoint();
    ASSERT_TRUE(old_master.ok()) << old_master.status();
    const int64_t fault_ms = MirrorSteadyMs();
    fault(g->get(), *old_master);
    auto now = (*g)->WaitForNewMaster(*old_master, absl::Seconds(30));
    ASSERT_TRUE(now.ok()) << now.status();
    absl::SleepFor(absl::Milliseconds(1500));  // the engine moves within 1 s
    writer.Stop();
    EXPECT_EQ(writer.errors(), 0);
    // The failover itself (down-after, election, promotion) comes on top
    // of the usual lease bound.
    ExpectRecovered(
        &checker, db->get(), fault_ms, o.remote_filter.lease_ttl_ms + 15000,
        absl::StrFormat("%s (%s)", scenario,
                        GetParam() == Mode::kSync ? "sync" : "async"));
    // Whether readers saw an untrusted window depends on who reached the
    // new master first: a reader that arrives after the engine republished
    // there trusts at once (its new replication history is in the lease),
    // one that arrives before reads "maybe" (mirror_fault_test.cc covers
    // the promoted-replica rule itself). Either way: no false negative.
  }

  TempDir dir_;
};

// KNOWN GAP (sync mode): after SENTINEL FAILOVER the replaced master stays
// up, still says "master", and keeps the engine's last lease until it
// expires. The engine moves to the new master (within its 1 s Sentinel
// check) and acknowledges writes there, while a reader still on the old
// master trusts that live lease and can answer "no" for those keys: one run
// saw 2 false negatives in 1.8 M checks. Async mode is safe (readers
// check only up to the old master's watermark). The fix belongs in the
// mirror writer: after it finds a new replication history, a sync write
// must not be acknowledged before the previous lease's bound has passed
// (or the old lease is revoked). Until then the sync case runs only with
// SIFTDB_SENTINEL_SYNC_FAILOVER=1.
TEST_P(MirrorSentinelTest, SentinelFailover) {
  if (GetParam() == Mode::kSync &&
      std::getenv("SIFTDB_SENTINEL_SYNC_FAILOVER") == nullptr) {
    GTEST_SKIP() << "known gap, see the comment above; run with "
                    "SIFTDB_SENTINEL_SYNC_FAILOVER=1";
  }
  RunThrough([](RedisSentinelGroup* g,
                const std::string&) { ASSERT_TRUE(g->Failover().ok()); },
             "SENTINEL FAILOVER");
}

TEST_P(MirrorSentinelTest, KilledMaster) {
  RunThrough(
      [](RedisSentinelGroup* g, const std::string& master) {
        ASSERT_TRUE(g->Node(master)->Kill().ok());
      },
      "killed master");
}

INSTANTIATE_TEST_SUITE_P(Modes, MirrorSentinelTest,
                         ::testing::Values(Mode::kSync, Mode::kAsync),
                         [](const auto& info) {
                           return info.param == Mode::kSync ? "Sync" : "Async";
                         });

}  // namespace
}  // namespace siftdb::test
