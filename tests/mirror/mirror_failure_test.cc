// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Redis failing under a mirrored DB: killed mid-workload (the DB keeps
// serving, a sync write blocks at most about one lease TTL, readers fail
// open), restarted empty or flushed (noticed and republished, including the
// writes made while it was down), unreachable at open, a wrong password,
// WRONGTYPE at mirror keys and garbage in mirror values (clear errors,
// readers fail open, the engine repairs what it owns).

#include <thread>

#include "gtest/gtest.h"
#include "siftdb/write_batch.h"
#include "tests/mirror/mirror_test_util.h"

namespace siftdb::test {
namespace mirror_failure_test {

using Mode = RemoteFilterOptions::Mode;

class MirrorFailureTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::FindBinary().empty()) GTEST_SKIP() << "no redis-server";
  }

  void StartServer(RedisServerOptions o = {}) {
    auto s = RedisServer::Start(o);
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }

  std::unique_ptr<DB> OpenDb(const Options& o) {
    auto db = DB::Open(o, dir_.path());
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? std::move(*db) : nullptr;
  }

  static std::vector<std::string> Keys(int begin, int end) {
    std::vector<std::string> k;
    for (int i = begin; i < end; i++) k.push_back(TestKey(i));
    return k;
  }

  static absl::Status Put(DB* db, int i) {
    return db->Put(WriteOptions(), TestKey(i), std::string(40, 'v'));
  }

  // Waits until `reader` answers from a trusted mirror.
  static bool WaitTrusted(RemoteFilter* reader) {
    return WaitUntil([&] {
      absl::Status s;
      CountNo(reader, {TestKey(0)}, &s);
      return s.ok();
    });
  }

  std::unique_ptr<RedisServer> server_;
  TempDir dir_;
};

TEST_F(MirrorFailureTest, RedisKilledThenRestartedEmpty) {
  StartServer();
  Options o = MirrorOptions({server_->endpoint()}, "kill", Mode::kSync);
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 2000; i++) ASSERT_TRUE(Put(db.get(), i).ok());
  auto reader = RemoteFilter::Open(server_->endpoint(), "kill");
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::Status s;
  ASSERT_EQ(CountNo(reader->get(), Keys(0, 2000), &s), 0u);
  ASSERT_TRUE(s.ok()) << s;

  ASSERT_TRUE(server_->Kill().ok());
  // The DB keeps serving. The first sync write may wait until the lease has
  // certainly lapsed (about lease_ttl_ms); later ones do not wait.
  const absl::Time start = absl::Now();
  for (int i = 2000; i < 2500; i++) {
    ASSERT_TRUE(Put(db.get(), i).ok());
    if (i % 100 == 0) {
      ASSERT_TRUE(Impl(db.get())->FlushMemTable().ok());
    }
  }
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took,
            absl::Milliseconds(o.remote_filter.lease_ttl_ms) + absl::Seconds(5))
      << "writes blocked past the lease";
  std::string value;
  EXPECT_TRUE(db->Get(ReadOptions(), TestKey(10), &value).ok());
  EXPECT_TRUE(db->Get(ReadOptions(), TestKey(2400), &value).ok());
  EXPECT_NE(MirrorState(db.get()).find("state=untrusted"), std::string::npos)
      << MirrorState(db.get());
  // Readers fail open, with the reason.
  std::vector<std::string> absent;
  for (int i = 0; i < 100; i++) absent.push_back(AbsentKey(i));
  EXPECT_EQ(CountNo(reader->get(), absent, &s), 0u);
  EXPECT_TRUE(absl::IsUnavailable(s)) << s;

  // Restarted empty: the engine notices and republishes everything, the
  // writes made while Redis was down included.
  ASSERT_TRUE(server_->Restart(/*keep_data=*/false).ok());
  ASSERT_TRUE(WaitTrusted(reader->get())) << MirrorState(db.get());
  EXPECT_EQ(CountNo(reader->get(), Keys(0, 2500), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_GT(CountNo(reader->get(), absent, &s), 80u);
  EXPECT_NE(MirrorState(db.get()).find("state=trusted"), std::string::npos);
}

// The engine loses Redis while readers still reach it (its ACL user loses
// every permission): a sync write returns only once the lease has lapsed,
// so a reader right after sees either the key or no lease - never a
// trusted "no". With the permissions back, everything is republished.
TEST_F(MirrorFailureTest, SyncWriteReturnsOnlyAfterTheLeaseLapsed) {
  StartServer();
  ASSERT_TRUE(
      server_
          ->Call({"ACL", "SETUSER", "engine", "on", ">pw", "~*", "&*", "+@all"})
          .ok());
  Options o = MirrorOptions({server_->endpoint()}, "partition", Mode::kSync);
  o.remote_filter.username = "engine";
  o.remote_filter.password = "pw";
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 200; i++) ASSERT_TRUE(Put(db.get(), i).ok());
  auto reader = RemoteFilter::Open(server_->endpoint(), "partition");
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(WaitTrusted(reader->get()));

  ASSERT_TRUE(server_->Call({"ACL", "SETUSER", "engine", "-@all"}).ok());
  for (int i = 0; i < 5; i++) {
    const std::string key = absl::StrFormat("during-outage-%d", i);
    ASSERT_TRUE(db->Put(WriteOptions(), key, "v").ok());
    absl::Status s;
    EXPECT_TRUE((*reader)->MayContain(key, &s)) << key;
    EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
    EXPECT_NE(s.message().find("not held"), absl::string_view::npos) << s;
  }
  EXPECT_NE(MirrorState(db.get()).find("NOPERM"), std::string::npos)
      << MirrorState(db.get());

  ASSERT_TRUE(server_->Call({"ACL", "SETUSER", "engine", "+@all"}).ok());
  ASSERT_TRUE(WaitTrusted(reader->get())) << MirrorState(db.get());
  for (int i = 0; i < 5; i++) {
    absl::Status s;
    EXPECT_TRUE(
        (*reader)->MayContain(absl::StrFormat("during-outage-%d", i), &s));
    EXPECT_TRUE(s.ok()) << s;
  }
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), Keys(0, 200), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(MirrorFailureTest, FlushAllIsNoticedAndRepublished) {
  StartServer();
  Options o = MirrorOptions({server_->endpoint()}, "flushed", Mode::kSync);
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 1500; i++) ASSERT_TRUE(Put(db.get(), i).ok());
  auto reader = RemoteFilter::Open(server_->endpoint(), "flushed");
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(WaitTrusted(reader->get()));
  const std::string generation =
      ReadManifest(server_.get(), "flushed")->generation;
  ASSERT_TRUE(server_->FlushAll().ok());
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), {AbsentKey(1)}, &s), 0u);
  // Noticed without any write (the lease renewal), republished.
  ASSERT_TRUE(WaitTrusted(reader->get())) << MirrorState(db.get());
  EXPECT_NE(ReadManifest(server_.get(), "flushed")->generation, generation);
  EXPECT_EQ(CountNo(reader->get(), Keys(0, 1500), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(MirrorFailureTest, RedisDownAtOpen) {
  const int port = RedisServer::PickFreePort();
  Options o = MirrorOptions({absl::StrFormat("127.0.0.1:%d", port)}, "late",
                            Mode::kSync);
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  // A previous process's lease may live for lease_ttl_ms: writes wait at
  // most that long, then go on locally.
  const absl::Time start = absl::Now();
  for (int i = 0; i < 300; i++) ASSERT_TRUE(Put(db.get(), i).ok());
  EXPECT_LT(
      absl::Now() - start,
      absl::Milliseconds(o.remote_filter.lease_ttl_ms) + absl::Seconds(5));
  EXPECT_EQ(MirrorState(db.get()).find("sync_waits_cut_by_lease=0 "),
            std::string::npos)
      << MirrorState(db.get());
  // Redis appears: everything is published.
  RedisServerOptions so;
  so.port = port;
  StartServer(so);
  auto reader = RemoteFilter::Open(server_->endpoint(), "late");
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(WaitTrusted(reader->get())) << MirrorState(db.get());
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), Keys(0, 300), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(MirrorFailureTest, WrongPassword) {
  RedisServerOptions so;
  so.extra_args = {"--requirepass", "secret"};
  StartServer(so);
  Options o = MirrorOptions({server_->endpoint()}, "auth", Mode::kSync);
  o.remote_filter.password = "wrong";
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 50; i++) ASSERT_TRUE(Put(db.get(), i).ok());
  // The engine says why in its state (and LOG).
  EXPECT_TRUE(WaitUntil([&] {
    const std::string st = MirrorState(db.get());
    return st.find("WRONGPASS") != std::string::npos ||
           st.find("invalid password") != std::string::npos;
  })) << MirrorState(db.get());
  EXPECT_NE(MirrorState(db.get()).find("UNAUTHENTICATED"), std::string::npos)
      << MirrorState(db.get());
  // A reader with the wrong password is refused clearly.
  RemoteFilterReaderOptions ro;
  ro.endpoints = {server_->endpoint()};
  ro.password = "wrong";
  auto bad = RemoteFilter::Open(ro, "auth");
  ASSERT_FALSE(bad.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(bad.status())) << bad.status();
  // With the right one: no mirror was published, so everything is maybe.
  ro.password = "secret";
  auto reader = RemoteFilter::Open(ro, "auth");
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), {AbsentKey(1), AbsentKey(2)}, &s), 0u);
  EXPECT_TRUE(absl::IsNotFound(s)) << s;
  // The right password for the engine: published.
  db.reset();
  o.remote_filter.password = "secret";
  db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  ASSERT_TRUE(WaitTrusted(reader->get())) << MirrorState(db.get());
  EXPECT_EQ(CountNo(reader->get(), Keys(0, 50), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(MirrorFailureTest, WrongTypeAtMirrorKeys) {
  StartServer();
  Options o = MirrorOptions({server_->endpoint()}, "types", Mode::kSync);
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 500; i++) ASSERT_TRUE(Put(db.get(), i).ok());
  auto reader = RemoteFilter::Open(server_->endpoint(), "types");
  ASSERT_TRUE(reader.ok());
  ASSERT_TRUE(WaitTrusted(reader->get()));
  auto m = ReadManifest(server_.get(), "types");
  ASSERT_TRUE(m.ok());
  ASSERT_FALSE(m->lives.empty());
  MirrorKeys keys("types");
  const std::string live = keys.live(m->writer, m->lives.back().id, 0);
  // A list where the live filter should be.
  ASSERT_TRUE(server_->Call({"DEL", live}).ok());
  ASSERT_TRUE(server_->Call({"RPUSH", live, "x"}).ok());
  std::vector<std::string> absent;
  for (int i = 0; i < 200; i++) absent.push_back(AbsentKey(i));
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), absent, &s), 0u);
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("WRONGTYPE"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find(live), absl::string_view::npos) << s;
  // The engine's next writes meet it, and it republishes over it.
  for (int i = 500; i < 520; i++) ASSERT_TRUE(Put(db.get(), i).ok());
  ASSERT_TRUE(WaitTrusted(reader->get())) << MirrorState(db.get());
  EXPECT_EQ(CountNo(reader->get(), Keys(0, 520), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_GT(CountNo(reader->get(), absent, &s), 150u);

  // A string where the manifest hash should be: readers and the engine's
  // renewal both notice; the engine republishes.
  ASSERT_TRUE(server_->Call({"SET", keys.manifest(), "not a hash"}).ok());
  auto fresh = RemoteFilter::Open(server_->endpoint(), "types");
  ASSERT_TRUE(fresh.ok());
  ASSERT_TRUE(WaitTrusted(fresh->get())) << MirrorState(db.get());
  EXPECT_EQ(CountNo(fresh->get(), Keys(0, 520), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  // The lease key: same.
  ASSERT_TRUE(server_->Call({"DEL", keys.lease()}).ok());
  ASSERT_TRUE(server_->Call({"SADD", keys.lease(), "x"}).ok());
  EXPECT_EQ(CountNo(fresh->get(), absent, &s), 0u);
  EXPECT_FALSE(s.ok());
  ASSERT_TRUE(WaitTrusted(fresh->get())) << MirrorState(db.get());
}

TEST_F(MirrorFailureTest, GarbageInMirrorValues) {
  StartServer();
  Options o = MirrorOptions({server_->endpoint()}, "garbage", Mode::kSync);
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  for (int i = 0; i < 3000; i++) ASSERT_TRUE(Put(db.get(), i).ok());
  ASSERT_TRUE(Impl(db.get())->FlushMemTable().ok());
  ASSERT_TRUE(Impl(db.get())->WaitForBackgroundWork().ok());
  ASSERT_TRUE(
      WaitMirrorSettled(db.get(), server_.get(), "garbage", dir_.path()));
  auto m = ReadManifest(server_.get(), "garbage");
  ASSERT_TRUE(m.ok());
  ASSERT_GE(m->immutables.size(), 2u);
  MirrorKeys keys("garbage");
  // Garbage in one table filter.
  const MirrorImmutableEntry victim = m->immutables.front();
  const std::string key = keys.immutable(victim.id);
  ASSERT_TRUE(server_->Call({"SET", key, "garbage bytes"}).ok());
  auto reader = RemoteFilter::Open(server_->endpoint(), "garbage");
  ASSERT_TRUE(reader.ok());
  // Keys inside the victim's range but absent: "maybe", with the reason.
  std::vector<std::string> inside, outside;
  for (int i = 0; i < 3000; i++) {
    const std::string k = TestKey(i) + "x";
    if (k >= victim.smallest && k <= victim.largest) {
      inside.push_back(k);
    } else {
      outside.push_back(k);
    }
  }
  ASSERT_FALSE(inside.empty());
  ASSERT_FALSE(outside.empty());
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), inside, &s), 0u);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find(key), absl::string_view::npos) << s;
  // Other tables still answer.
  EXPECT_GT(CountNo(reader->get(), outside, &s), outside.size() * 9 / 10);
  EXPECT_EQ(CountNo(reader->get(), Keys(0, 3000), &s), 0u);

  // Garbage in a live filter (right type, wrong bytes).
  ASSERT_FALSE(m->lives.empty());
  const std::string live = keys.live(m->writer, m->lives.back().id, 0);
  ASSERT_TRUE(server_->Call({"SET", live, "xyz"}).ok());
  EXPECT_EQ(CountNo(reader->get(), outside, &s), 0u);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find(live), absl::string_view::npos) << s;

  // Garbage in the manifest: a fresh reader cannot decode it.
  ASSERT_TRUE(
      server_->Call({"HSET", keys.manifest(), "sst:99", "no such thing"}).ok());
  auto fresh = RemoteFilter::Open(server_->endpoint(), "garbage");
  ASSERT_TRUE(fresh.ok());
  EXPECT_EQ(CountNo(fresh->get(), outside, &s), 0u);
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("sst:99"), absl::string_view::npos) << s;
}

}  // namespace mirror_failure_test
}  // namespace siftdb::test
