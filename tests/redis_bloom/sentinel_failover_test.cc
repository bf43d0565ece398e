// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloom through a redis+sentinel:// URL while Sentinel fails the master
// over: every MAdd call succeeds (the client follows the new master within
// its retry deadline), adds made before the failover (once replicated) and
// after the client is on the new master are all found. RedisBloom has no
// WAIT option yet, so adds acknowledged by the old master inside the
// failover window may be lost, as with any asynchronously replicated Redis;
// this test does not claim otherwise.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gtest/gtest.h"
#include "siftdb/redis_bloom.h"
#include "tests/support/redis_sentinel.h"
#include "tests/support/redis_server.h"

namespace siftdb {
namespace {

int64_t Offset(test::RedisServer* node, const char* field) {
  auto info = node->Call({"INFO", "replication"});
  if (!info.ok()) return -1;
  for (absl::string_view line : absl::StrSplit(*info, '\n')) {
    line = absl::StripSuffix(line, "\r");
    if (absl::ConsumePrefix(&line, field) && absl::ConsumePrefix(&line, ":")) {
      int64_t v = 0;
      if (absl::SimpleAtoi(line, &v)) return v;
    }
  }
  return -1;
}

// Polls until every replica has everything the master wrote.
void WaitForReplication(const test::RedisSentinelGroup& g) {
  const absl::Time deadline = absl::Now() + absl::Seconds(30);
  while (true) {
    const int64_t master = Offset(g.nodes()[0].get(), "master_repl_offset");
    bool caught_up = master > 0;
    for (size_t i = 1; i < g.nodes().size(); i++) {
      caught_up &= Offset(g.nodes()[i].get(), "slave_repl_offset") >= master;
    }
    if (caught_up) return;
    ASSERT_LT(absl::Now(), deadline) << "replicas did not catch up";
    absl::SleepFor(absl::Milliseconds(20));
  }
}

std::vector<std::string> Items(const std::string& prefix, int n) {
  std::vector<std::string> out;
  for (int i = 0; i < n; i++) out.push_back(absl::StrCat(prefix, i));
  return out;
}

TEST(RedisBloomSentinelTest, AddsThroughAFailover) {
  SIFTDB_REQUIRE_REDIS();
  auto g = test::RedisSentinelGroup::Start();
  ASSERT_TRUE(g.ok()) << g.status();
  RedisBloomOptions o;
  o.endpoint = (*g)->Url();
  o.connect_timeout = absl::Milliseconds(500);
  o.command_timeout = absl::Seconds(5);
  o.retry_deadline = absl::Seconds(30);
  auto bloom = RedisBloom::Open(o);
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  ASSERT_TRUE((*bloom)->Reserve("bf", 0.001, 100000).ok());
  const std::vector<std::string> before = Items("before", 500);
  auto added = (*bloom)->MAdd("bf", before);
  ASSERT_TRUE(added.ok()) << added.status();
  WaitForReplication(**g);

  auto old_master = (*g)->MasterEndpoint();
  ASSERT_TRUE(old_master.ok()) << old_master.status();
  ASSERT_TRUE((*g)->Failover().ok());
  // Add batches until the Sentinels name a new master, then 1.5 s more
  // (past the client's 1 s Sentinel check), then a final batch that must
  // land on the new master.
  absl::Time stop = absl::InfiniteFuture();
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  for (int batch = 0; absl::Now() < stop; batch++) {
    ASSERT_LT(absl::Now(), deadline) << "no failover seen";
    auto r =
        (*bloom)->MAdd("bf", Items(absl::StrCat("during", batch, "-"), 50));
    ASSERT_TRUE(r.ok()) << "batch " << batch << ": " << r.status();
    if (stop == absl::InfiniteFuture()) {
      auto now = (*g)->MasterEndpoint();
      if (now.ok() && *now != *old_master) {
        stop = absl::Now() + absl::Milliseconds(1500);
      }
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  const std::vector<std::string> after = Items("after", 500);
  ASSERT_TRUE((*bloom)->MAdd("bf", after).ok());

  auto new_master = (*g)->WaitForNewMaster(*old_master, absl::Seconds(30));
  ASSERT_TRUE(new_master.ok()) << new_master.status();
  auto reader = RedisBloom::Open(o);  // a fresh client: the new master
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (const auto* items : {&before, &after}) {
    auto found = (*reader)->MExists("bf", *items);
    ASSERT_TRUE(found.ok()) << found.status();
    int missing = 0;
    for (bool f : *found) missing += f ? 0 : 1;
    EXPECT_EQ(missing, 0) << (items == &before ? "before" : "after");
  }
}

}  // namespace
}  // namespace siftdb
