// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloom through a redis+sentinel:// URL while Sentinel fails the master
// over: every MAdd call succeeds (the client follows the new master within
// its retry deadline), adds made before the failover (once replicated) and
// after the client is seen on the new master are all found. RedisBloom has no
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
  // Add batches until the Sentinels name a new master.
  const absl::Time deadline = absl::Now() + absl::Seconds(60);
  absl::StatusOr<std::string> now = absl::UnavailableError("not yet");
  for (int batch = 0; !now.ok() || *now == *old_master; batch++) {
    ASSERT_LT(absl::Now(), deadline) << "no failover seen";
    auto r =
        (*bloom)->MAdd("bf", Items(absl::StrCat("during", batch, "-"), 50));
    ASSERT_TRUE(r.ok()) << "batch " << batch << ": " << r.status();
    now = (*g)->MasterEndpoint();
    absl::SleepFor(absl::Milliseconds(10));
  }
  auto new_master = (*g)->WaitForNewMaster(*old_master, absl::Seconds(30));
  ASSERT_TRUE(new_master.ok()) << new_master.status();
  // A fresh client reaches the new master. Keep adding markers until one
  // shows there: from then on the adding client is on the new master too
  // (the old one does not replicate to it).
  auto reader = RedisBloom::Open(o);
  ASSERT_TRUE(reader.ok()) << reader.status();
  for (int i = 0;; i++) {
    ASSERT_LT(absl::Now(), deadline) << "the client never moved";
    // 20 markers, all present: not a Bloom false positive by chance.
    const std::vector<std::string> markers =
        Items(absl::StrCat("marker", i, "-"), 20);
    ASSERT_TRUE((*bloom)->MAdd("bf", markers).ok());
    auto seen = (*reader)->MExists("bf", markers);
    ASSERT_TRUE(seen.ok()) << seen.status();
    bool all = true;
    for (bool f : *seen) all &= f;
    if (all) break;
    absl::SleepFor(absl::Milliseconds(50));
  }
  const std::vector<std::string> after = Items("after", 500);
  ASSERT_TRUE((*bloom)->MAdd("bf", after).ok());
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
