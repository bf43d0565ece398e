// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RemoteFilter with read_from = replica_preferred against a real engine, a
// master and a replica on loopback: the reader's pipelines land on the
// replica (INFO commandstats of each server), the trust rules are the
// existing ones (untrusted "maybe" without trust_replica; with it, no false
// negative), and a killed replica sends the reader to the master, still
// with no false negative.

#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "gtest/gtest.h"
#include "siftdb/remote_filter.h"
#include "siftdb/write_batch.h"
#include "tests/mirror/mirror_test_util.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace reader_read_from_test {

using Mode = RemoteFilterOptions::Mode;

// Calls of `command` since the last CONFIG RESETSTAT (INFO commandstats).
int64_t Calls(RedisServer* server, const std::string& command) {
  absl::StatusOr<std::string> info = server->Call({"INFO", "commandstats"});
  if (!info.ok()) return -1;
  const std::string tag = "cmdstat_" + command + ":calls=";
  const size_t at = info->find(tag);
  if (at == std::string::npos) return 0;
  const size_t begin = at + tag.size();
  int64_t n = 0;
  if (!absl::SimpleAtoi(info->substr(begin, info->find(',', begin) - begin),
                        &n)) {
    return -1;
  }
  return n;
}

// HMGETs on `server` since the last CONFIG RESETSTAT that a reader sent
// (one per pipeline). The engine's mirror writer sends HMGET too: one
// inside each commit script it runs (EVALSHA, or EVAL on a script-cache
// miss), lease renewals included, every third of the lease; those are
// subtracted. The scripts are counted after the HMGETs, so a script that
// runs between the two reads can only make the result smaller.
int64_t ReaderHmgets(RedisServer* server) {
  const int64_t hmgets = Calls(server, "hmget");
  return hmgets - Calls(server, "evalsha") - Calls(server, "eval");
}

std::vector<std::string> Present(int begin, int end) {
  std::vector<std::string> k;
  for (int i = begin; i < end; i++) k.push_back(TestKey(i));
  return k;
}

std::vector<std::string> Absent(int n) {
  std::vector<std::string> k;
  for (int i = 0; i < n; i++) k.push_back(AbsentKey(i));
  return k;
}

class ReaderReadFromTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SIFTDB_REQUIRE_REDIS();
    RedisServerOptions mo;
    mo.extra_args = {"--repl-diskless-sync-delay", "0"};
    auto master = RedisServer::Start(mo);
    ASSERT_TRUE(master.ok()) << master.status();
    master_ = std::move(*master);
    auto replica = master_->StartReplica();
    ASSERT_TRUE(replica.ok()) << replica.status();
    replica_ = std::move(*replica);
    Options o = MirrorOptions({master_->endpoint()}, "rf", Mode::kSync);
    o.remote_filter.wait_replicas = 1;
    o.remote_filter.wait_timeout_ms = 2000;
    auto db = DB::Open(o, dir_.path());
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    for (int i = 0; i < kKeys; i += 100) {
      WriteBatch b;
      for (int j = i; j < i + 100; j++) b.Put(TestKey(j), "v");
      ASSERT_TRUE(db_->Write(WriteOptions(), &b).ok());
      if (i == kKeys / 2) {
        ASSERT_TRUE(Impl(db_.get())->FlushMemTable().ok());
        ASSERT_TRUE(Impl(db_.get())->WaitForBackgroundWork().ok());
      }
    }
  }

  RemoteFilterReaderOptions ReaderOptions(bool trust_replica) const {
    RemoteFilterReaderOptions ro;
    ro.endpoints = {master_->endpoint(), replica_->endpoint()};
    ro.read_from = "replica_preferred";
    ro.trust_replica = trust_replica;
    ro.connect_timeout_ms = 300;
    ro.command_timeout_ms = 500;
    return ro;
  }

  // The mirror writer's republications so far (its DebugString).
  int64_t Republishes() {
    std::string state;
    if (!db_->GetProperty("siftdb.remote-filter", &state)) return -1;
    const size_t at = state.find("republishes=");
    if (at == std::string::npos) return -1;
    int64_t n = -1;
    const size_t begin = at + std::string("republishes=").size();
    if (!absl::SimpleAtoi(state.substr(begin, state.find(' ', begin) - begin),
                          &n)) {
      return -1;
    }
    return n;
  }

  void ResetStats() {
    ASSERT_TRUE(master_->Call({"CONFIG", "RESETSTAT"}).ok());
    if (replica_->running()) {
      ASSERT_TRUE(replica_->Call({"CONFIG", "RESETSTAT"}).ok());
    }
  }

  static constexpr int kKeys = 3000;
  TempDir dir_;
  std::unique_ptr<RedisServer> master_;
  std::unique_ptr<RedisServer> replica_;
  std::unique_ptr<DB> db_;
};

TEST_F(ReaderReadFromTest, UntrustedReplicaAnswersMaybe) {
  auto reader = RemoteFilter::Open(ReaderOptions(false), "rf");
  ASSERT_TRUE(reader.ok()) << reader.status();
  ResetStats();
  const int64_t republishes = Republishes();
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), Absent(100), &s), 0u);
  EXPECT_NE(s.message().find("trust_replica"), absl::string_view::npos) << s;
  EXPECT_GT(Calls(replica_.get(), "hmget"), 0);
  // A writer that republished (a lease renewal failed) also read its
  // filters' metadata back with HMGET: the count then says nothing.
  if (Republishes() == republishes) {
    EXPECT_LE(ReaderHmgets(master_.get()), 0);
  }
}

TEST_F(ReaderReadFromTest, TrustedReplicaServesThenMasterTakesOver) {
  auto reader = RemoteFilter::Open(ReaderOptions(true), "rf");
  ASSERT_TRUE(reader.ok()) << reader.status();
  // Trusted once the replica has been up longer than the lease.
  ASSERT_TRUE(WaitUntil([&] {
    absl::Status why;
    (*reader)->MayContain(AbsentKey(0), &why);
    return why.ok();
  }));
  ResetStats();
  const int64_t republishes = Republishes();
  absl::Status s;
  EXPECT_EQ(CountNo(reader->get(), Present(0, kKeys), &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_GT(CountNo(reader->get(), Absent(1000), &s), 900u);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_GT(Calls(replica_.get(), "hmget"), 0);
  // A writer that republished (a lease renewal failed) also read its
  // filters' metadata back with HMGET: the count then says nothing.
  if (Republishes() == republishes) {
    EXPECT_LE(ReaderHmgets(master_.get()), 0);
  }

  // The replica dies: the reader moves to the master (trusted: the lease
  // names its replication id), with no false negative on the way.
  ASSERT_TRUE(replica_->Kill().ok());
  size_t false_negatives = 0;
  ASSERT_TRUE(WaitUntil([&] {
    absl::Status why;
    false_negatives += CountNo(reader->get(), Present(0, kKeys), &why);
    return why.ok() && CountNo(reader->get(), Absent(100), &why) > 90;
  }));
  EXPECT_EQ(false_negatives, 0u);
  EXPECT_GT(Calls(master_.get(), "hmget"), 0);
}

TEST_F(ReaderReadFromTest, BadReadFromIsInvalidArgument) {
  RemoteFilterReaderOptions ro = ReaderOptions(false);
  ro.read_from = "replicas";
  auto reader = RemoteFilter::Open(ro, "rf");
  ASSERT_FALSE(reader.ok());
  EXPECT_TRUE(absl::IsInvalidArgument(reader.status())) << reader.status();
  EXPECT_NE(reader.status().message().find("read_from"), std::string::npos)
      << reader.status();
}

}  // namespace reader_read_from_test
}  // namespace siftdb::test
