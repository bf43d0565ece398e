// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers for the redis_bloom suite: one real redis-server per test process
// (started lazily, killed at exit), the recorded RedisBloom vectors, and
// conversion of their typed JSON replies into RedisReply.

#ifndef SIFTDB_TESTS_REDIS_BLOOM_REDIS_BLOOM_TEST_UTIL_H_
#define SIFTDB_TESTS_REDIS_BLOOM_REDIS_BLOOM_TEST_UTIL_H_

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_reply.h"
#include "tests/support/json_reader.h"
#include "tests/support/redis_server.h"

namespace siftdb::test {

// Items prefix<from> .. prefix<to - 1>.
inline std::vector<std::string> Range(const std::string& prefix, int from,
                                      int to) {
  std::vector<std::string> out;
  for (int i = from; i < to; i++) out.push_back(absl::StrCat(prefix, i));
  return out;
}

inline std::string RedisBloomTestDataDir() {
  // ctest sets SIFTDB_SOURCE_DIR; when the binary runs by hand, fall back
  // to the source tree this header was compiled from.
  const char* src = std::getenv("SIFTDB_SOURCE_DIR");
  std::string base;
  if (src != nullptr) {
    base = src;
  } else {
    base = __FILE__;
    base = base.substr(0, base.rfind("/tests/redis_bloom/"));
  }
  return base + "/tests/testdata/redisbloom";
}

inline JsonValue LoadVector(const std::string& file) {
  absl::StatusOr<JsonValue> v =
      ReadJsonFile(RedisBloomTestDataDir() + "/" + file);
  EXPECT_TRUE(v.ok()) << v.status();
  return v.ok() ? *v : JsonValue();
}

inline std::string HexDecode(const std::string& hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(std::stoi(hex.substr(i, 2), nullptr, 16)));
  }
  return out;
}

// {"type": simple|error|integer|bulk|nil|array, "value" or "hex"}.
inline RedisReply JsonToReply(const JsonValue& v) {
  const std::string& type = v["type"].str();
  if (type == "nil") return RedisReply::Nil();
  if (type == "integer") return RedisReply::Integer(v["value"].integer());
  if (type == "array") {
    std::vector<RedisReply> elements;
    for (const JsonValue& e : v["value"].array())
      elements.push_back(JsonToReply(e));
    return RedisReply::Array(std::move(elements));
  }
  std::string text =
      v.Has("hex") ? HexDecode(v["hex"].str()) : v["value"].str();
  if (type == "simple") return RedisReply::Status(text);
  if (type == "error") return RedisReply::Error(text);
  return RedisReply::String(text);
}

inline std::vector<std::string> JsonStrings(const JsonValue& v) {
  std::vector<std::string> out;
  for (const JsonValue& e : v.array()) out.push_back(e.str());
  return out;
}

// A redis-server shared by all tests of this process.
class SharedRedis {
 public:
  // The server lives until static destruction at exit, which stops it and
  // removes its directory (a process killed outright still takes the server
  // down through PDEATHSIG, but leaves the directory).
  static RedisServer* Get() {
    static std::unique_ptr<RedisServer> server = [] {
      absl::StatusOr<std::unique_ptr<RedisServer>> s = RedisServer::Start();
      if (!s.ok()) {
        ADD_FAILURE() << s.status();
        return std::unique_ptr<RedisServer>();
      }
      return std::move(*s);
    }();
    return server.get();
  }
};

// Base fixture: skips without redis-server, flushes before each test and
// hands out connections.
class RedisTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::FindBinary().empty()) {
      GTEST_SKIP() << "redis-server not found in PATH, /usr/bin or "
                      "/usr/local/bin; install redis-server to run this test";
    }
    server_ = SharedRedis::Get();
    ASSERT_NE(server_, nullptr);
    ASSERT_TRUE(server_->FlushAll().ok());
  }

  RedisClientOptions ClientOptions() const {
    RedisClientOptions o;
    o.endpoint = server_->endpoint();
    return o;
  }

  std::unique_ptr<RedisClient> Connect() const {
    absl::StatusOr<std::unique_ptr<RedisClient>> c =
        RedisClient::Connect(ClientOptions());
    EXPECT_TRUE(c.ok()) << c.status();
    return c.ok() ? std::move(*c) : nullptr;
  }

  RedisServer* server_ = nullptr;
};

// A RedisTest with one connected client.
class RedisConnectedTest : public RedisTest {
 protected:
  void SetUp() override {
    RedisTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    client_ = Connect();
    ASSERT_NE(client_, nullptr);
  }

  std::unique_ptr<RedisClient> client_;
};

// The same with a RedisBloom on the client.
class RedisBloomClientTest : public RedisConnectedTest {
 protected:
  void SetUp() override {
    RedisConnectedTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    bloom_ = std::make_unique<RedisBloomImpl>(client_.get());
  }

  std::unique_ptr<RedisBloom> bloom_;
};

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_REDIS_BLOOM_REDIS_BLOOM_TEST_UTIL_H_
