// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloom over TLS: BF.* through rediss:// to a real redis-server
// listening with --tls-port (a CA made by the test), with a client
// certificate the server requires.

#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "siftdb/redis_bloom.h"
#include "tests/support/redis_tls.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace tls_test {

TEST(RedisBloomTlsTest, AddAndExistsOverTls) {
  SIFTDB_REQUIRE_REDIS_TLS();
  TempDir certs;
  auto files = MakeTestTlsFiles(certs.path());
  ASSERT_TRUE(files.ok()) << files.status();
  auto tls = StartTlsRedisServer(*files, "yes");
  ASSERT_TRUE(tls.ok()) << tls.status();
  RedisBloomOptions o;
  o.endpoint = absl::StrCat(
      "rediss://", tls->tls_endpoint(), "?ca_cert=", files->ca_cert,
      "&cert=", files->client_cert, "&key=", files->client_key);
  o.retry_deadline = absl::Seconds(2);
  auto bloom = RedisBloom::Open(o);
  ASSERT_TRUE(bloom.ok()) << bloom.status();
  ASSERT_TRUE((*bloom)->Reserve("tls", 0.01, 1000).ok());
  std::vector<std::string> items;
  for (int i = 0; i < 500; i++) items.push_back(absl::StrCat("item", i));
  for (const std::string& item : items) {
    auto added = (*bloom)->Add("tls", item);
    ASSERT_TRUE(added.ok()) << added.status();
  }
  for (const std::string& item : items) {
    auto e = (*bloom)->Exists("tls", item);
    ASSERT_TRUE(e.ok()) << e.status();
    EXPECT_TRUE(*e) << item;  // no false negative
  }
  auto info = (*bloom)->Info("tls");
  ASSERT_TRUE(info.ok()) << info.status();
  // The filter lives in the server behind the TLS port.
  EXPECT_NE(*tls->server->Call({"DBSIZE"}), "0");

  // Without the client certificate the server refuses, and it says so.
  o.endpoint = absl::StrCat("rediss://", tls->tls_endpoint(),
                            "?ca_cert=", files->ca_cert);
  auto refused = RedisBloom::Open(o);
  absl::Status s = refused.status();
  if (refused.ok()) s = (*refused)->Exists("tls", "item1").status();
  ASSERT_FALSE(s.ok());
  EXPECT_TRUE(absl::IsUnauthenticated(s)) << s;
}

}  // namespace tls_test
}  // namespace siftdb::test
