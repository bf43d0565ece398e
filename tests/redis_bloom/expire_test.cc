// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A filter is one object: Expire / ExpireAt / Persist / Ttl over every key
// of a filter (meta hash and sub-filters), sub-filters grown later
// inheriting the expiry, and the key-space commands (DEL, EXPIRE, TTL,
// TYPE, ...) of the command interpreter on a filter's name. Against a real
// redis-server.

#include <string>
#include <vector>

#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redis/bloom/redis_bloom_command.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "siftdb/redis_bloom.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"

namespace siftdb::test {
namespace expire_test {

class BloomExpireTest : public RedisBloomClientTest {
 protected:
  // The Redis keys of filter `name`: its meta hash and every sub-filter the
  // meta hash lists.
  std::vector<std::string> FilterKeys(const std::string& name) {
    std::vector<std::string> keys = {RedisBloom::MetaKey(name)};
    absl::StatusOr<BloomInfo> info = bloom_->Info(name);
    EXPECT_TRUE(info.ok()) << info.status();
    if (!info.ok()) return keys;
    for (size_t i = 0; i < info->sub_filters.size(); i++) {
      keys.push_back(RedisBloom::BitmapKey(name, i));
    }
    return keys;
  }

  int64_t Pttl(const std::string& key) {
    absl::StatusOr<RedisReply> r = client_->Command({"PTTL", key});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? r->integer() : -3;
  }

  int64_t KeysMatching(const std::string& pattern) {
    absl::StatusOr<RedisReply> r = client_->Command({"KEYS", pattern});
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? static_cast<int64_t>(r->elements().size()) : -1;
  }

  // Grows filter `name` (capacity 100, expansion 2) to at least `links`
  // sub-filters.
  void AddUntilLinks(const std::string& name, size_t links, int* next) {
    for (int round = 0; round < 20; round++) {
      absl::StatusOr<BloomInfo> info = bloom_->Info(name);
      ASSERT_TRUE(info.ok()) << info.status();
      if (info->sub_filters.size() >= links) return;
      ASSERT_TRUE(bloom_->MAdd(name, Range("item-", *next, *next + 150)).ok());
      *next += 150;
    }
    FAIL() << "filter " << name << " did not grow to " << links << " links";
  }
};

TEST_F(BloomExpireTest, ExpireCoversEveryKeyAndGrowthInheritsIt) {
  ASSERT_TRUE(bloom_->Reserve("f", 0.01, 100, 2).ok());
  int next = 0;
  AddUntilLinks("f", 3, &next);
  absl::StatusOr<bool> set = bloom_->Expire("f", absl::Seconds(60));
  ASSERT_TRUE(set.ok()) << set.status();
  EXPECT_TRUE(*set);
  for (const std::string& key : FilterKeys("f")) {
    EXPECT_GT(Pttl(key), 55'000) << key;
    EXPECT_LE(Pttl(key), 60'000) << key;
  }
  // Sub-filters created after the Expire expire with the rest.
  AddUntilLinks("f", 5, &next);
  const std::vector<std::string> keys = FilterKeys("f");
  ASSERT_GE(keys.size(), 6u);
  const int64_t meta_ttl = Pttl(keys[0]);
  for (const std::string& key : keys) {
    EXPECT_GT(Pttl(key), 0) << key << " has no expiry";
    EXPECT_LE(Pttl(key), meta_ttl + 5) << key;
  }
  absl::StatusOr<absl::Duration> ttl = bloom_->Ttl("f");
  ASSERT_TRUE(ttl.ok()) << ttl.status();
  EXPECT_GT(*ttl, absl::Seconds(55));
  EXPECT_LE(*ttl, absl::Seconds(60));
  // Every item added is still there, through the lean path too.
  ASSERT_TRUE(bloom_->MAdd("f", Range("lean-", 0, 10)).ok());
  absl::StatusOr<std::vector<bool>> present =
      bloom_->MExists("f", Range("item-", 0, next));
  ASSERT_TRUE(present.ok()) << present.status();
  EXPECT_EQ(std::count(present->begin(), present->end(), false), 0);
  for (const std::string& key : FilterKeys("f")) {
    EXPECT_GT(Pttl(key), 0) << key << " lost its expiry to an add";
  }
}

TEST_F(BloomExpireTest, AnExpiredFilterVanishesWholeAndAddStartsAfresh) {
  ASSERT_TRUE(bloom_->Reserve("gone", 0.01, 100, 2).ok());
  int next = 0;
  AddUntilLinks("gone", 3, &next);
  ASSERT_TRUE(*bloom_->Expire("gone", absl::Milliseconds(200)));
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (KeysMatching("bf:{gone}:*") > 0 && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(50));
  }
  EXPECT_EQ(KeysMatching("bf:{gone}:*"), 0);
  EXPECT_EQ(*bloom_->Card("gone"), 0);
  EXPECT_TRUE(absl::IsNotFound(bloom_->Info("gone").status()));
  EXPECT_TRUE(absl::IsNotFound(bloom_->Ttl("gone").status()));
  absl::StatusOr<std::vector<bool>> present =
      bloom_->MExists("gone", Range("item-", 0, 50));
  ASSERT_TRUE(present.ok()) << present.status();
  EXPECT_EQ(std::count(present->begin(), present->end(), true), 0);
  // BF.ADD after the expiry creates a new filter, which has no expiry.
  ASSERT_TRUE(bloom_->Add("gone", "x").ok());
  EXPECT_EQ(*bloom_->Ttl("gone"), absl::InfiniteDuration());
  EXPECT_EQ(*bloom_->Card("gone"), 1);
}

TEST_F(BloomExpireTest, PersistRemovesEveryExpiry) {
  ASSERT_TRUE(bloom_->Reserve("p", 0.01, 100, 2).ok());
  int next = 0;
  AddUntilLinks("p", 2, &next);
  EXPECT_FALSE(*bloom_->Persist("p"));  // none to remove
  ASSERT_TRUE(*bloom_->Expire("p", absl::Seconds(30)));
  EXPECT_TRUE(*bloom_->Persist("p"));
  for (const std::string& key : FilterKeys("p")) EXPECT_EQ(Pttl(key), -1);
  EXPECT_EQ(*bloom_->Ttl("p"), absl::InfiniteDuration());
  EXPECT_FALSE(*bloom_->Persist("missing"));
}

TEST_F(BloomExpireTest, ZeroTtlOrAPastInstantDeletes) {
  ASSERT_TRUE(bloom_->MAdd("z", Range("a", 0, 10)).ok());
  EXPECT_TRUE(*bloom_->Expire("z", absl::ZeroDuration()));
  EXPECT_EQ(KeysMatching("bf:{z}:*"), 0);
  ASSERT_TRUE(bloom_->MAdd("z", Range("a", 0, 10)).ok());
  EXPECT_TRUE(*bloom_->ExpireAt("z", absl::Now() - absl::Hours(1)));
  EXPECT_EQ(KeysMatching("bf:{z}:*"), 0);
  // An instant in the future sets the same deadline on every key.
  ASSERT_TRUE(bloom_->MAdd("z", Range("a", 0, 10)).ok());
  EXPECT_TRUE(*bloom_->ExpireAt("z", absl::Now() + absl::Minutes(10)));
  absl::StatusOr<absl::Duration> ttl = bloom_->Ttl("z");
  ASSERT_TRUE(ttl.ok()) << ttl.status();
  EXPECT_GT(*ttl, absl::Minutes(9));
  EXPECT_LE(*ttl, absl::Minutes(10) + absl::Seconds(1));
}

TEST_F(BloomExpireTest, ConditionsFollowExpireOptions) {
  ASSERT_TRUE(bloom_->Add("c", "x").ok());
  const absl::Duration m1 = absl::Minutes(1), m5 = absl::Minutes(5);
  // No expiry yet: GT never applies, XX neither; LT and NX do.
  EXPECT_FALSE(*bloom_->Expire("c", m5, BloomExpireIf::kLater));
  EXPECT_FALSE(*bloom_->Expire("c", m5, BloomExpireIf::kHasExpiry));
  EXPECT_TRUE(*bloom_->Expire("c", m5, BloomExpireIf::kSooner));
  EXPECT_TRUE(*bloom_->Persist("c"));
  EXPECT_TRUE(*bloom_->Expire("c", m1, BloomExpireIf::kNoExpiry));
  EXPECT_FALSE(*bloom_->Expire("c", m5, BloomExpireIf::kNoExpiry));
  EXPECT_TRUE(*bloom_->Expire("c", m5, BloomExpireIf::kLater));
  EXPECT_FALSE(*bloom_->Expire("c", m1, BloomExpireIf::kLater));
  EXPECT_FALSE(*bloom_->Expire("c", absl::Minutes(6), BloomExpireIf::kSooner));
  EXPECT_TRUE(*bloom_->Expire("c", m1, BloomExpireIf::kSooner));
  EXPECT_TRUE(*bloom_->Expire("c", m5, BloomExpireIf::kHasExpiry));
  EXPECT_GT(*bloom_->Ttl("c"), absl::Minutes(4));
}

TEST_F(BloomExpireTest, MissingWrongTypeAndBadTtlsAreClearErrors) {
  EXPECT_FALSE(*bloom_->Expire("none", absl::Seconds(5)));
  EXPECT_TRUE(absl::IsNotFound(bloom_->Ttl("none").status()));
  ASSERT_TRUE(client_->Command({"SET", RedisBloom::MetaKey("str"), "v"}).ok());
  EXPECT_TRUE(absl::IsFailedPrecondition(
      bloom_->Expire("str", absl::Seconds(5)).status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(bloom_->Ttl("str").status()));
  EXPECT_TRUE(absl::IsFailedPrecondition(bloom_->Persist("str").status()));
  ASSERT_TRUE(bloom_->Add("ok", "x").ok());
  absl::Status infinite =
      bloom_->Expire("ok", absl::InfiniteDuration()).status();
  EXPECT_TRUE(absl::IsInvalidArgument(infinite)) << infinite;
  EXPECT_NE(infinite.message().find("Persist"), std::string::npos);
  EXPECT_TRUE(absl::IsInvalidArgument(
      bloom_->Expire("ok", kMaxBloomTtl + absl::Seconds(1)).status()));
  EXPECT_TRUE(absl::IsInvalidArgument(
      bloom_->ExpireAt("ok", absl::InfiniteFuture()).status()));
  // The refused calls changed nothing.
  EXPECT_EQ(*bloom_->Ttl("ok"), absl::InfiniteDuration());
  // Sub-millisecond time to live rounds up instead of deleting.
  EXPECT_TRUE(*bloom_->Expire("ok", absl::Microseconds(10)));
}

TEST_F(BloomExpireTest, KeySpaceCommandsActOnTheWholeFilter) {
  RedisBloomCommands cmd(client_.get());
  using R = RedisReply;
  ASSERT_EQ(cmd.Execute({"BF.RESERVE", "f", "0.01", "100"}), R::Status("OK"));
  for (int i = 0; i < 4; i++) {
    std::vector<std::string> madd = {"BF.MADD", "f"};
    for (const std::string& s : Range(absl::StrCat("k", i, "-"), 0, 100)) {
      madd.push_back(s);
    }
    ASSERT_TRUE(cmd.Execute(madd).is_array());
  }
  ASSERT_TRUE(client_->Command({"SET", "plain", "v"}).ok());

  EXPECT_EQ(cmd.Execute({"TYPE", "f"}), R::Status("MBbloom--"));
  EXPECT_EQ(cmd.Execute({"TYPE", "plain"}), R::Status("string"));
  EXPECT_EQ(cmd.Execute({"TYPE", "nothing"}), R::Status("none"));
  EXPECT_EQ(cmd.Execute({"TTL", "f"}), R::Integer(-1));
  EXPECT_EQ(cmd.Execute({"TTL", "nothing"}), R::Integer(-2));
  EXPECT_EQ(cmd.Execute({"EXISTS", "f", "plain", "nothing", "f"}),
            R::Integer(3));

  EXPECT_EQ(cmd.Execute({"EXPIRE", "f", "100"}), R::Integer(1));
  EXPECT_EQ(cmd.Execute({"TTL", "f"}), R::Integer(100));
  const RedisReply pttl = cmd.Execute({"PTTL", "f"});
  ASSERT_TRUE(pttl.is_integer());
  EXPECT_GT(pttl.integer(), 95'000);
  for (const std::string& key : FilterKeys("f")) EXPECT_GT(Pttl(key), 0);
  EXPECT_EQ(cmd.Execute({"EXPIRE", "f", "50", "GT"}), R::Integer(0));
  EXPECT_EQ(cmd.Execute({"PEXPIRE", "f", "50000", "lt"}), R::Integer(1));
  EXPECT_EQ(cmd.Execute({"EXPIRE", "f", "50", "NX"}), R::Integer(0));
  EXPECT_EQ(cmd.Execute({"EXPIRE", "f", "50", "NX", "GT"}),
            R::Error("ERR NX and XX, GT or LT options at the same time are "
                     "not compatible"));
  EXPECT_EQ(cmd.Execute({"EXPIRE", "f", "50", "GT", "LT"}),
            R::Error("ERR GT and LT options at the same time are not "
                     "compatible"));
  EXPECT_EQ(cmd.Execute({"EXPIRE", "f", "50", "SOON"}),
            R::Error("ERR Unsupported option SOON"));
  EXPECT_EQ(cmd.Execute({"EXPIRE", "f", "x"}),
            R::Error("ERR value is not an integer or out of range"));
  EXPECT_EQ(cmd.Execute({"EXPIRE", "f", "9223372036854775"}),
            R::Error("ERR invalid expire time in 'expire' command"));
  EXPECT_EQ(cmd.Execute({"EXPIRE", "f"}),
            R::Error("ERR wrong number of arguments for 'expire' command"));
  EXPECT_EQ(cmd.Execute({"PERSIST", "f"}), R::Integer(1));
  EXPECT_EQ(cmd.Execute({"TTL", "f"}), R::Integer(-1));
  EXPECT_EQ(cmd.Execute({"EXPIREAT", "f",
                         absl::StrCat(absl::ToUnixSeconds(absl::Now()) + 600)}),
            R::Integer(1));
  const RedisReply ttl = cmd.Execute({"TTL", "f"});
  ASSERT_TRUE(ttl.is_integer());
  EXPECT_GT(ttl.integer(), 590);
  // Commands on other names are Redis's own.
  EXPECT_EQ(cmd.Execute({"EXPIRE", "plain", "100"}), R::Integer(1));
  EXPECT_EQ(cmd.Execute({"TTL", "plain"}), R::Integer(100));

  // DEL counts the filter once (all of its keys) beside plain keys.
  EXPECT_EQ(cmd.Execute({"DEL", "f", "plain", "nothing"}), R::Integer(2));
  EXPECT_EQ(KeysMatching("bf:{f}:*"), 0);
  EXPECT_EQ(cmd.Execute({"EXISTS", "f", "plain"}), R::Integer(0));
  EXPECT_EQ(cmd.Execute({"BF.EXISTS", "f", "k0-1"}), R::Integer(0));
  ASSERT_EQ(cmd.Execute({"BF.ADD", "g", "x"}), R::Integer(1));
  EXPECT_EQ(cmd.Execute({"UNLINK", "g"}), R::Integer(1));
  EXPECT_EQ(KeysMatching("bf:{g}:*"), 0);
}

}  // namespace expire_test
}  // namespace siftdb::test
