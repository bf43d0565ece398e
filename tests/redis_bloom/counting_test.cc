// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The counting Bloom filter (RedisCountingBloom) against a real
// redis-server: removals never hide other present items, counts, counter
// saturation, and the CBF.* commands.

#include <map>
#include <random>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "redis/bloom/redis_bloom_command.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_counting_bloom_impl.h"
#include "siftdb/redis_bloom.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"

namespace siftdb::test {
namespace counting_test {

class CountingBloomTest : public RedisConnectedTest {
 protected:
  void SetUp() override {
    RedisConnectedTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    cbf_ = std::make_unique<RedisCountingBloomImpl>(client_.get());
  }
  static std::vector<std::string_view> Views(
      const std::vector<std::string>& v) {
    return std::vector<std::string_view>(v.begin(), v.end());
  }
  std::unique_ptr<RedisCountingBloom> cbf_;
};

TEST_F(CountingBloomTest, RemovalsNeverHideOtherPresentItems) {
  ASSERT_TRUE(cbf_->Reserve("c", 0.01, 2000).ok());
  std::mt19937 rng(7);
  std::map<std::string, int> model;
  std::vector<std::string> universe = Range("u-", 0, 600);
  for (int round = 0; round < 30; round++) {
    std::vector<std::string> add, remove;
    for (int i = 0; i < 60; i++)
      add.push_back(universe[rng() % universe.size()]);
    for (const auto& [item, count] : model) {
      if (count > 0 && rng() % 3 == 0) remove.push_back(item);
    }
    ASSERT_TRUE(cbf_->Add("c", Views(add)).ok());
    for (const std::string& a : add) model[a]++;
    absl::StatusOr<std::vector<bool>> removed =
        cbf_->Remove("c", Views(remove));
    ASSERT_TRUE(removed.ok()) << removed.status();
    for (size_t i = 0; i < remove.size(); i++) {
      EXPECT_TRUE((*removed)[i]) << remove[i];  // it was present
      model[remove[i]]--;
    }
    std::vector<std::string> present;
    for (const auto& [item, count] : model) {
      if (count > 0) present.push_back(item);
    }
    absl::StatusOr<std::vector<uint32_t>> counts =
        cbf_->Count("c", Views(present));
    ASSERT_TRUE(counts.ok());
    for (size_t i = 0; i < present.size(); i++) {
      EXPECT_GE((*counts)[i],
                static_cast<uint32_t>(std::min(model[present[i]], 15)))
          << present[i];
    }
  }
}

TEST_F(CountingBloomTest, AddRemoveCountAndSaturation) {
  std::vector<std::string> a = {"x"};
  EXPECT_EQ(*cbf_->Add("s", Views(a)),
            std::vector<bool>{true});  // auto-created
  EXPECT_EQ(*cbf_->Add("s", Views(a)), std::vector<bool>{false});
  EXPECT_EQ(*cbf_->Add("s", Views(a)), std::vector<bool>{false});
  EXPECT_EQ(cbf_->Count("s", Views(a))->at(0), 3u);
  for (int i = 0; i < 3; i++)
    EXPECT_EQ(*cbf_->Remove("s", Views(a)), std::vector<bool>{true});
  EXPECT_EQ(*cbf_->Exists("s", Views(a)), std::vector<bool>{false});
  EXPECT_EQ(*cbf_->Remove("s", Views(a)), std::vector<bool>{false});
  // 20 adds saturate the cells at 15; saturated cells are never decremented.
  std::vector<std::string> y = {"y"};
  for (int i = 0; i < 20; i++) ASSERT_TRUE(cbf_->Add("s", Views(y)).ok());
  EXPECT_EQ(cbf_->Count("s", Views(y))->at(0), 15u);
  for (int i = 0; i < 20; i++)
    EXPECT_EQ(*cbf_->Remove("s", Views(y)), std::vector<bool>{true});
  EXPECT_EQ(cbf_->Count("s", Views(y))->at(0), 15u);
  // Several items at once, duplicates in order.
  std::vector<std::string> batch = {"p", "q", "p"};
  EXPECT_EQ(*cbf_->Add("s", Views(batch)),
            (std::vector<bool>{true, true, false}));
  EXPECT_EQ(cbf_->Count("s", Views(batch))->at(0), 2u);
  EXPECT_EQ(*cbf_->Remove("s", Views(batch)),
            (std::vector<bool>{true, true, true}));
  EXPECT_EQ(*cbf_->Exists("s", Views(batch)),
            (std::vector<bool>{false, false, false}));
  absl::StatusOr<CountingBloomInfo> info = cbf_->Info("s");
  ASSERT_TRUE(info.ok());
  EXPECT_EQ(info->capacity, 100u);
  EXPECT_EQ(info->counters % 16, 0u);
  EXPECT_EQ(info->bytes * 2, info->counters);
  EXPECT_TRUE(absl::IsAlreadyExists(cbf_->Reserve("s", 0.01, 10)));
  EXPECT_TRUE(absl::IsNotFound(cbf_->Remove("none", Views(a)).status()));
  EXPECT_EQ(*cbf_->Exists("none", Views(a)), std::vector<bool>{false});
  EXPECT_TRUE(*cbf_->Delete("s"));
  EXPECT_EQ(*cbf_->Exists("s", Views(y)), std::vector<bool>{false});
}

TEST_F(CountingBloomTest, CommandsThroughInterpreter) {
  RedisBloomCommands cmd(client_.get());
  EXPECT_EQ(cmd.Execute({"CBF.RESERVE", "k", "0.01", "1000"}),
            RedisReply::Status("OK"));
  EXPECT_EQ(cmd.Execute({"CBF.ADD", "k", "a"}), RedisReply::Integer(1));
  EXPECT_EQ(
      cmd.Execute({"CBF.ADD", "k", "a", "b"}),
      RedisReply::Array({RedisReply::Integer(0), RedisReply::Integer(1)}));
  EXPECT_EQ(cmd.Execute({"CBF.COUNT", "k", "a"}), RedisReply::Integer(2));
  EXPECT_EQ(cmd.Execute({"CBF.DEL", "k", "a"}), RedisReply::Integer(1));
  EXPECT_EQ(cmd.Execute({"CBF.EXISTS", "k", "a", "b", "c"}),
            RedisReply::Array({RedisReply::Integer(1), RedisReply::Integer(1),
                               RedisReply::Integer(0)}));
  EXPECT_EQ(cmd.Execute({"CBF.DEL", "nokey", "a"}),
            RedisReply::Error("ERR not found"));
  EXPECT_EQ(
      cmd.Execute({"CBF.ADD", "k"}),
      RedisReply::Error("ERR wrong number of arguments for 'cbf.add' command"));
  EXPECT_EQ(cmd.Execute({"CBF.DROP", "k"}), RedisReply::Integer(1));
}

}  // namespace counting_test
}  // namespace siftdb::test
