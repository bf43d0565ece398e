// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The BF.* server under concurrent clients: 100 connections adding and
// checking their own items lose none and get exact replies (and their
// adds are group-committed); clients authenticated as different ACL users
// are never batched together, so one user's NOPERM never leaks into, or
// is hidden by, another's batch.

#include <atomic>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/redis_server/serve_test_util.h"

namespace siftdb::test {
namespace serve_concurrency_test {

TEST_F(ServeTest, BloomServeHundredClientsLoseNoItem) {
  constexpr int kClients = 100;
  constexpr int kItems = 20;
  {
    std::unique_ptr<RedisClient> c = ConnectServe();
    ASSERT_NE(c, nullptr);
    absl::StatusOr<RedisReply> r =
        c->Command({"BF.RESERVE", "shared", "0.000000001", "10000"});
    ASSERT_TRUE(r.ok() && r->is_status()) << r.status();
  }
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kClients; t++) {
    threads.emplace_back([this, t, &wrong] {
      std::unique_ptr<RedisClient> c = ConnectServe();
      if (c == nullptr) {
        wrong += kItems * 3;
        return;
      }
      std::vector<std::string> mexists = {"BF.MEXISTS", "shared"};
      for (int i = 0; i < kItems; i++) {
        const std::string item = absl::StrCat("c", t, "-", i);
        mexists.push_back(item);
        absl::StatusOr<RedisReply> r = c->Command({"BF.ADD", "shared", item});
        if (!r.ok() || *r != RedisReply::Integer(1)) wrong++;
        r = c->Command({"BF.EXISTS", "shared", item});
        if (!r.ok() || *r != RedisReply::Integer(1)) wrong++;
      }
      absl::StatusOr<RedisReply> r = c->Command(mexists);
      if (!r.ok() || !r->is_array() ||
          r->elements().size() != static_cast<size_t>(kItems)) {
        wrong++;
        return;
      }
      for (const RedisReply& e : r->elements()) {
        if (e != RedisReply::Integer(1)) wrong++;
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  std::unique_ptr<RedisClient> c = ConnectServe();
  ASSERT_NE(c, nullptr);
  absl::StatusOr<RedisReply> card = c->Command({"BF.CARD", "shared"});
  ASSERT_TRUE(card.ok()) << card.status();
  EXPECT_EQ(*card, RedisReply::Integer(kClients * kItems));
  // Group commit happened: fewer batches than requests.
  EXPECT_LT(serve_->batches(), serve_->batched_requests());
}

TEST_F(ServeTest, BloomServeAclUsersNeverShareBatches) {
  // alice may touch filters named a*, bob filters named b*.
  ASSERT_TRUE(
      server_
          ->Call({"ACL", "SETUSER", "alice", "on", ">pa", "~bf:{a*", "+@all"})
          .ok());
  ASSERT_TRUE(
      server_->Call({"ACL", "SETUSER", "bob", "on", ">pb", "~bf:{b*", "+@all"})
          .ok());
  {
    std::unique_ptr<RedisClient> alice = ConnectServe("alice", "pa");
    ASSERT_NE(alice, nullptr);
    absl::StatusOr<RedisReply> r = alice->Command({"BF.ADD", "a1", "x"});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, RedisReply::Integer(1));
    r = alice->Command({"BF.ADD", "b1", "x"});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->is_error() && absl::StartsWith(r->str(), "NOPERM"))
        << r->DebugString();
    // A refused AUTH changes nothing: still alice.
    r = alice->Command({"AUTH", "bob", "wrong"});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->is_error()) << r->DebugString();
    r = alice->Command({"BF.ADD", "b1", "y"});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_TRUE(r->is_error()) << r->DebugString();
  }
  {
    std::unique_ptr<RedisClient> bob = ConnectServe("bob", "pb");
    ASSERT_NE(bob, nullptr);
    absl::StatusOr<RedisReply> r =
        bob->Command({"BF.RESERVE", "b1", "0.00001", "1000"});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, RedisReply::Status("OK"));
  }
  // Concurrent adds to b1 as alice (all refused) and as bob (all pass).
  constexpr int kEach = 10;
  constexpr int kItems = 30;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 2 * kEach; t++) {
    const bool is_bob = t % 2 == 0;
    threads.emplace_back([this, t, is_bob, &wrong] {
      std::unique_ptr<RedisClient> c =
          is_bob ? ConnectServe("bob", "pb") : ConnectServe("alice", "pa");
      if (c == nullptr) {
        wrong++;
        return;
      }
      for (int i = 0; i < kItems; i++) {
        absl::StatusOr<RedisReply> r =
            c->Command({"BF.ADD", "b1", absl::StrCat(t, "-", i)});
        if (!r.ok()) {
          wrong++;
        } else if (is_bob ? !r->is_integer()
                          : !(r->is_error() &&
                              absl::StartsWith(r->str(), "NOPERM"))) {
          wrong++;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  EXPECT_EQ(wrong.load(), 0);
  std::unique_ptr<RedisClient> bob = ConnectServe("bob", "pb");
  ASSERT_NE(bob, nullptr);
  std::vector<std::string> probe = {"BF.MEXISTS", "b1"};
  for (int t = 0; t < 2 * kEach; t++) probe.push_back(absl::StrCat(t, "-0"));
  absl::StatusOr<RedisReply> r = bob->Command(probe);
  ASSERT_TRUE(r.ok()) << r.status();
  ASSERT_EQ(r->elements().size(), static_cast<size_t>(2 * kEach));
  for (int t = 0; t < 2 * kEach; t++) {
    // bob's items are in (alice's are not: BF.CARD below counts only
    // bob's adds).
    if (t % 2 == 0) {
      EXPECT_EQ(r->elements()[t], RedisReply::Integer(1)) << t;
    }
  }
  absl::StatusOr<RedisReply> card = bob->Command({"BF.CARD", "b1"});
  ASSERT_TRUE(card.ok()) << card.status();
  EXPECT_LE(card->integer(), kEach * kItems);
  EXPECT_GE(card->integer(), kEach * kItems - 2);  // false positives
}

}  // namespace serve_concurrency_test
}  // namespace siftdb::test
