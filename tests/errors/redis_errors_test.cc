// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// docs/errors.md, "Redis": the Redis-backed Bloom filters
// (siftdb/redis_bloom.h), the DB's filter mirror (Options.remote_filter)
// and the mirror's reader (siftdb/remote_filter.h) pointed at a Redis that
// is unreachable, wants another password, or holds the wrong type at a
// key. Real redis-server processes on free ports; no mocks.

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/time/clock.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/redis_bloom.h"
#include "siftdb/remote_filter.h"
#include "tests/errors/errors_util.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace redis_errors_test {

constexpr int kEntries = 20;

// A port nothing listens on (was free a moment ago).
std::string DeadEndpoint() {
  return "127.0.0.1:" + std::to_string(RedisServer::PickFreePort());
}

RedisBloomOptions BloomOptions(const std::string& endpoint) {
  RedisBloomOptions o;
  o.endpoint = endpoint;
  o.connect_timeout = absl::Milliseconds(300);
  o.command_timeout = absl::Seconds(2);
  o.retry_deadline = absl::Milliseconds(500);
  return o;
}

Options MirrorDbOptions(const std::string& endpoint, const std::string& name) {
  Options o = CatalogueOptions(true);
  o.remote_filter.mode = RemoteFilterOptions::Mode::kAsync;
  o.remote_filter.endpoints = {endpoint};
  o.remote_filter.name = name;
  o.remote_filter.connect_timeout_ms = 300;
  o.remote_filter.command_timeout_ms = 500;
  o.remote_filter.lease_ttl_ms = 1000;
  return o;
}

std::string MirrorState(DB* db) {
  std::string v;
  db->GetProperty("siftdb.remote-filter", &v);
  return v;
}

// Polls the mirror state (bounded) until it mentions `what`.
bool StateMentions(DB* db, std::string_view what) {
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    if (MirrorState(db).find(what) != std::string::npos) return true;
    absl::SleepFor(absl::Milliseconds(20));
  }
  return false;
}

// Writes kEntries entries through a DB with a mirror that cannot work,
// checks that every write succeeds, the state says why, and the data is
// all there after a reopen without the mirror.
void ExpectDbUnaffected(const Options& options, const std::string& path,
                        std::initializer_list<std::string_view> state_parts) {
  {
    auto db = DB::Open(options, path);
    ASSERT_TRUE(db.ok()) << db.status();
    WriteOptions sync;
    sync.sync = true;
    for (int i = 0; i < kEntries; i++) {
      ASSERT_TRUE((*db)->Put(sync, CatalogueKey(i), CatalogueValue(i)).ok());
    }
    for (std::string_view part : state_parts) {
      EXPECT_TRUE(StateMentions(db->get(), part))
          << "state does not mention " << part << ": "
          << MirrorState(db->get());
    }
    std::printf("[catalogue] siftdb.remote-filter: %s\n",
                MirrorState(db->get()).c_str());
  }
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path, kEntries));
}

class ErrorsRedis : public ::testing::Test {
 protected:
  // REQUIRES: the test began with SIFTDB_REQUIRE_REDIS().
  void StartServer(std::vector<std::string> args = {}) {
    RedisServerOptions so;
    so.extra_args = std::move(args);
    auto server = RedisServer::Start(so);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
  }

  TempDir dir_;
  const std::string path_ = dir_.Join("db");
  std::unique_ptr<RedisServer> server_;
};

// --- Redis Bloom filters (siftdb/redis_bloom.h) ---

TEST_F(ErrorsRedis, BloomBadEndpoint) {
  auto bloom = RedisBloom::Open(BloomOptions("localhost:99999"));
  EXPECT_TRUE(HasError(bloom.status(), absl::StatusCode::kInvalidArgument,
                       {"localhost:99999", "bad port"}));
}

TEST_F(ErrorsRedis, BloomUnknownHost) {
  // A host without a port means port 6379; a name that does not resolve is
  // Unavailable (after retrying until retry_deadline).
  auto bloom = RedisBloom::Open(BloomOptions("no-such-host.invalid"));
  EXPECT_TRUE(HasError(bloom.status(), absl::StatusCode::kUnavailable,
                       {"no-such-host.invalid:6379"}));
}

TEST_F(ErrorsRedis, BloomUnreachable) {
  const std::string endpoint = DeadEndpoint();
  auto bloom = RedisBloom::Open(BloomOptions(endpoint));
  EXPECT_TRUE(
      HasError(bloom.status(), absl::StatusCode::kUnavailable, {endpoint}));
}

TEST_F(ErrorsRedis, BloomWrongPassword) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer({"--requirepass", "secret"}));
  RedisBloomOptions o = BloomOptions(server_->endpoint());
  o.password = "wrong";
  auto bloom = RedisBloom::Open(o);
  EXPECT_TRUE(HasError(bloom.status(), absl::StatusCode::kUnauthenticated,
                       {"WRONGPASS"}));
}

TEST_F(ErrorsRedis, BloomPasswordMissing) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer({"--requirepass", "secret"}));
  auto bloom = RedisBloom::Open(BloomOptions(server_->endpoint()));
  if (bloom.ok()) {
    // Connecting needs no password; the first command is refused.
    EXPECT_TRUE(HasError((*bloom)->Add("f", "item").status(),
                         absl::StatusCode::kUnauthenticated, {"NOAUTH"}));
  } else {
    EXPECT_TRUE(HasError(bloom.status(), absl::StatusCode::kUnauthenticated,
                         {"NOAUTH"}));
  }
}

TEST_F(ErrorsRedis, BloomWrongKeyType) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_TRUE(server_->Call({"SET", "bf:{f}:meta", "a string"}).ok());
  auto bloom = RedisBloom::Open(BloomOptions(server_->endpoint()));
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  const absl::Status s = (*bloom)->Add("f", "item").status();
  EXPECT_TRUE(HasError(s, absl::StatusCode::kFailedPrecondition,
                       {"bf:{f}:meta", "wrong kind of value"}));
  // RedisBloom's reply text rides along as a payload.
  EXPECT_EQ(
      RedisBloomReplyText(s).value_or(""),
      "WRONGTYPE Operation against a key holding the wrong kind of value");
  // The string is left as it was.
  EXPECT_EQ(*server_->Call({"GET", "bf:{f}:meta"}), "a string");
}

// --- The DB's mirror (Options.remote_filter) ---

TEST_F(ErrorsRedis, MirrorUnreachable) {
  ExpectDbUnaffected(MirrorDbOptions(DeadEndpoint(), "dead"), path_,
                     {"UNAVAILABLE"});
}

TEST_F(ErrorsRedis, MirrorWrongPassword) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer({"--requirepass", "secret"}));
  Options o = MirrorDbOptions(server_->endpoint(), "auth");
  o.remote_filter.password = "wrong";
  ExpectDbUnaffected(o, path_, {"UNAUTHENTICATED"});
}

TEST_F(ErrorsRedis, MirrorWrongKeyType) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_TRUE(
      server_->Call({"SET", "siftdb:{types}:manifest", "not a hash"}).ok());
  // The engine publishes over it: the mirror becomes trusted.
  ExpectDbUnaffected(MirrorDbOptions(server_->endpoint(), "types"), path_,
                     {"state=trusted"});
  EXPECT_EQ(*server_->Call({"TYPE", "siftdb:{types}:manifest"}), "hash");
}

TEST_F(ErrorsRedis, MirrorFencedBySecondEngine) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  // A later engine open takes the mirror over (a manifest written by a
  // writer token of the far future stands in for it): this one stops
  // publishing, writes go on.
  ASSERT_TRUE(server_
                  ->Call({"HSET", "siftdb:{twice}:manifest", "writer",
                          "9999999999999-00000000000000ff"})
                  .ok());
  ExpectDbUnaffected(MirrorDbOptions(server_->endpoint(), "twice"), path_,
                     {"state=fenced", "fenced: engine open",
                      "9999999999999-00000000000000ff"});
}

// --- The mirror's reader (siftdb/remote_filter.h) ---

TEST_F(ErrorsRedis, ReaderUnreachable) {
  const std::string endpoint = DeadEndpoint();
  RemoteFilterReaderOptions ro;
  ro.endpoints = {endpoint};
  ro.connect_timeout_ms = 300;
  auto reader = RemoteFilter::Open(ro, "dead");
  EXPECT_TRUE(
      HasError(reader.status(), absl::StatusCode::kUnavailable, {endpoint}));
}

TEST_F(ErrorsRedis, ReaderWrongPassword) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer({"--requirepass", "secret"}));
  RemoteFilterReaderOptions ro;
  ro.endpoints = {server_->endpoint()};
  ro.password = "wrong";
  auto reader = RemoteFilter::Open(ro, "auth");
  EXPECT_TRUE(HasError(reader.status(), absl::StatusCode::kUnauthenticated,
                       {"WRONGPASS"}));
}

TEST_F(ErrorsRedis, ReaderWrongKeyType) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  ASSERT_TRUE(
      server_->Call({"SET", "siftdb:{types}:manifest", "not a hash"}).ok());
  auto reader = RemoteFilter::Open(server_->endpoint(), "types");
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::Status why;
  // Fails open: "maybe", with the reason.
  EXPECT_TRUE((*reader)->MayContain("any key", &why));
  EXPECT_TRUE(HasError(why, absl::StatusCode::kFailedPrecondition,
                       {"WRONGTYPE", "siftdb:{types}:manifest"}));
}

TEST_F(ErrorsRedis, ReaderOnReplica) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto replica = server_->StartReplica();
  ASSERT_TRUE(replica.ok()) << replica.status();
  auto reader = RemoteFilter::Open((*replica)->endpoint(), "replicated");
  ASSERT_TRUE(reader.ok()) << reader.status();
  // A well-formed mirror, replicated.
  ASSERT_TRUE(server_
                  ->Call({"HSET", "siftdb:{replicated}:manifest", "format", "2",
                          "writer", "1764000000000-00000000000000aa",
                          "generation", "g", "version", "1"})
                  .ok());
  ASSERT_TRUE(server_
                  ->Call({"SET", "siftdb:{replicated}:lease",
                          "t/1 0000000000000000000000000000000000000000"})
                  .ok());
  for (int i = 0; i < 500; i++) {
    auto r = (*replica)->Call({"EXISTS", "siftdb:{replicated}:lease"});
    if (r.ok() && *r == "1") break;
    absl::SleepFor(absl::Milliseconds(10));
  }
  absl::Status why;
  EXPECT_TRUE((*reader)->MayContain("any key", &why));
  EXPECT_TRUE(HasError(why, absl::StatusCode::kFailedPrecondition,
                       {"not trusted", "slave", "trust_replica"}))
      << why;
}

TEST_F(ErrorsRedis, ReaderCapReached) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  for (int i = 0; i < 20; i++) {
    ASSERT_TRUE(server_
                    ->Call({"HSET", "siftdb:{big}:manifest",
                            "f" + std::to_string(i), "x"})
                    .ok());
  }
  RemoteFilterReaderOptions ro;
  ro.endpoints = {server_->endpoint()};
  ro.max_manifest_fields = 10;
  auto reader = RemoteFilter::Open(ro, "big");
  ASSERT_TRUE(reader.ok()) << reader.status();
  absl::Status why;
  EXPECT_TRUE((*reader)->MayContain("any key", &why));
  EXPECT_TRUE(HasError(
      why, absl::StatusCode::kResourceExhausted,
      {"siftdb:{big}:manifest", "20 fields", "max_manifest_fields = 10"}))
      << why;
}

TEST_F(ErrorsRedis, ReaderBadName) {
  SIFTDB_REQUIRE_REDIS();
  ASSERT_NO_FATAL_FAILURE(StartServer());
  auto reader = RemoteFilter::Open(server_->endpoint(), "bad{name}");
  EXPECT_TRUE(HasError(reader.status(), absl::StatusCode::kInvalidArgument,
                       {"bad{name}"}));
}

}  // namespace redis_errors_test
}  // namespace siftdb::test
