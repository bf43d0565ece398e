// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Every recorded RedisBloom 2.8.20 reply (tests/testdata/redisbloom/
// replies.json, and the f*.json filters' adds, probes, INFO and dumps)
// through the BF.* server over RESP: the server must answer exactly as
// RedisBloom did.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "tests/redis_server/serve_test_util.h"

namespace siftdb::test {
namespace serve_vectors_test {

// As vectors_test.cc: "SET s v" makes the filter's meta key a string.
std::vector<std::string> TranslateSetup(std::vector<std::string> args) {
  if (args.size() == 3 && args[0] == "SET") {
    args[1] = RedisBloom::MetaKey(args[1]);
  }
  return args;
}

RedisReply Call(RedisClient* c, const std::vector<std::string>& argv) {
  absl::StatusOr<RedisReply> r = c->Command(argv);
  EXPECT_TRUE(r.ok()) << r.status();
  return r.ok() ? *r : RedisReply::Error("client failure");
}

TEST_F(ServeTest, BloomServeGivesEveryRecordedReply) {
  std::unique_ptr<RedisClient> c = ConnectServe();
  ASSERT_NE(c, nullptr);
  JsonValue all = LoadVector("replies.json");
  for (const JsonValue& cs : all["cases"].array()) {
    SCOPED_TRACE(cs["name"].str() + ": " + cs["command"].str());
    EXPECT_EQ(Call(c.get(), {"FLUSHALL"}), RedisReply::Status("OK"));
    for (const JsonValue& step : cs["setup"].array()) {
      EXPECT_EQ(Call(c.get(), TranslateSetup(JsonStrings(step["args"]))),
                JsonToReply(step["reply"]));
    }
    EXPECT_EQ(Call(c.get(), JsonStrings(cs["args"])), JsonToReply(cs["reply"]));
  }
}

std::string Flags(const RedisReply& reply) {
  std::string out;
  for (const RedisReply& e : reply.elements()) {
    out += e.is_integer() ? static_cast<char>('0' + e.integer()) : '?';
  }
  return out;
}

TEST_F(ServeTest, BloomServeRecordedFiltersSameRepliesAndDumps) {
  std::unique_ptr<RedisClient> c = ConnectServe();
  ASSERT_NE(c, nullptr);
  for (const char* file : {"f1.json", "f2.json", "f3.json", "f4.json"}) {
    SCOPED_TRACE(file);
    JsonValue v = LoadVector(file);
    const std::string key = v["key"].str();
    const std::vector<std::string> items = JsonStrings(v["items"]);
    for (const JsonValue& step : v["setup"].array()) {
      std::vector<std::string> args = JsonStrings(step["args"]);
      if (args.size() == 3 && args[2] == "<items>") {
        args.pop_back();
        args.insert(args.end(), items.begin(), items.end());
        EXPECT_EQ(Flags(Call(c.get(), args)), v["add_replies"].str());
      } else {
        EXPECT_EQ(Call(c.get(), args), JsonToReply(step["reply"]));
      }
    }
    for (const JsonValue& chunk : v["scandump"].array()) {
      RedisReply want = RedisReply::Array(
          {RedisReply::Integer(chunk["reply_iterator"].integer()),
           RedisReply::String(HexDecode(chunk["data_hex"].str()))});
      RedisReply got =
          Call(c.get(),
               {"BF.SCANDUMP", key, absl::StrCat(chunk["iterator"].integer())});
      EXPECT_EQ(got, want) << "iterator " << chunk["iterator"].integer() << ": "
                           << got.DebugString().substr(0, 120);
    }
    EXPECT_EQ(Call(c.get(), {"BF.INFO", key}), JsonToReply(v["info"]));
    EXPECT_EQ(Call(c.get(), {"BF.CARD", key}), JsonToReply(v["card"]));
    std::vector<std::string> probe = {"BF.MEXISTS", key};
    const std::vector<std::string> absent = JsonStrings(v["absent_items"]);
    probe.insert(probe.end(), absent.begin(), absent.end());
    EXPECT_EQ(Flags(Call(c.get(), probe)), v["mexists_absent"].str());
  }
}

}  // namespace serve_vectors_test
}  // namespace siftdb::test
