// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ParseRedisUrl: every form of the grammar in docs/redis_client.md, good and
// bad, and the promise that no error message carries the password.

#include <string>
#include <vector>

#include "absl/status/status.h"
#include "gtest/gtest.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_url.h"

namespace siftdb {
namespace url_test {

RedisUrl MustParse(const std::string& text) {
  absl::StatusOr<RedisUrl> url = ParseRedisUrl(text);
  EXPECT_TRUE(url.ok()) << text << ": " << url.status();
  return url.ok() ? *url : RedisUrl();
}

TEST(RedisUrlTest, PlainForms) {
  struct Case {
    std::string text, endpoint;
  } cases[] = {
      {"127.0.0.1:6390", "127.0.0.1:6390"},
      {"localhost", "localhost:6379"},
      {"[::1]:7000", "[::1]:7000"},
      {"unix:/tmp/r.sock", "unix:/tmp/r.sock"},
      {"/tmp/r.sock", "unix:/tmp/r.sock"},
  };
  for (const Case& c : cases) {
    RedisUrl url = MustParse(c.text);
    EXPECT_EQ(url.scheme, RedisUrlScheme::kPlain) << c.text;
    ASSERT_EQ(url.endpoints.size(), 1u) << c.text;
    EXPECT_EQ(url.endpoints[0], c.endpoint) << c.text;
    EXPECT_FALSE(url.password.has_value());
    EXPECT_FALSE(IsRedisUrl(c.text));
  }
}

TEST(RedisUrlTest, RedisScheme) {
  RedisUrl url = MustParse("redis://alice:s3cret@db.example:6390/4");
  EXPECT_EQ(url.scheme, RedisUrlScheme::kRedis);
  EXPECT_EQ(url.endpoints, std::vector<std::string>{"db.example:6390"});
  EXPECT_EQ(url.username, "alice");
  EXPECT_EQ(url.password, "s3cret");
  EXPECT_EQ(url.database, 4);

  url = MustParse("redis://localhost");
  EXPECT_EQ(url.endpoints, std::vector<std::string>{"localhost:6379"});
  EXPECT_FALSE(url.username.has_value());
  EXPECT_FALSE(url.password.has_value());
  EXPECT_FALSE(url.database.has_value());

  url = MustParse("REDIS://h:1/");  // scheme case-insensitive, empty path
  EXPECT_EQ(url.scheme, RedisUrlScheme::kRedis);
  EXPECT_FALSE(url.database.has_value());

  // redis-cli's forms: ":password@" and "password@" carry no user.
  url = MustParse("redis://:pw@h:1");
  EXPECT_FALSE(url.username.has_value());
  EXPECT_EQ(url.password, "pw");
  url = MustParse("redis://pw@h:1");
  EXPECT_FALSE(url.username.has_value());
  EXPECT_EQ(url.password, "pw");
  url = MustParse("redis://bob:@h:1");
  EXPECT_EQ(url.username, "bob");
  EXPECT_FALSE(url.password.has_value());

  url = MustParse("redis://[::1]:7001/2");
  EXPECT_EQ(url.endpoints, std::vector<std::string>{"[::1]:7001"});
  url = MustParse("redis://[fe80::1]");
  EXPECT_EQ(url.endpoints, std::vector<std::string>{"[fe80::1]:6379"});
}

TEST(RedisUrlTest, PercentDecoding) {
  RedisUrl url = MustParse("redis://us%65r:p%40ss%3Aw%2Fo%3frd%25@h:1");
  EXPECT_EQ(url.username, "user");
  EXPECT_EQ(url.password, "p@ss:w/o?rd%");
  // An unescaped '@' or '/' in the password still ends up in the password:
  // userinfo runs to the last '@'.
  url = MustParse("redis://u:a@b/c@h:1/3");
  EXPECT_EQ(url.password, "a@b/c");
  EXPECT_EQ(url.endpoints, std::vector<std::string>{"h:1"});
  EXPECT_EQ(url.database, 3);
}

TEST(RedisUrlTest, Sentinel) {
  RedisUrl url = MustParse(
      "redis+sentinel://u:p@s1:26380,[::1],s3/my%20master/2"
      "?sentinel_user=su&sentinel_password=s%26p");
  EXPECT_EQ(url.scheme, RedisUrlScheme::kSentinel);
  EXPECT_EQ(url.endpoints,
            (std::vector<std::string>{"s1:26380", "[::1]:26379", "s3:26379"}));
  EXPECT_EQ(url.master_name, "my master");
  EXPECT_EQ(url.database, 2);
  EXPECT_EQ(url.username, "u");
  EXPECT_EQ(url.password, "p");
  EXPECT_EQ(url.sentinel_username, "su");
  EXPECT_EQ(url.sentinel_password, "s&p");

  url = MustParse("redis+sentinel://127.0.0.1:26379/mymaster");
  EXPECT_EQ(url.master_name, "mymaster");
  EXPECT_FALSE(url.database.has_value());
  EXPECT_FALSE(url.sentinel_password.has_value());
}

TEST(RedisUrlTest, TlsAndUnix) {
  RedisUrl url = MustParse(
      "rediss://u:p@h:6380/1?ca_cert=/etc/ca.pem&cert=/c.pem&key=/k.pem"
      "&sni=redis.example&verify=no");
  EXPECT_EQ(url.scheme, RedisUrlScheme::kRediss);
  EXPECT_EQ(url.tls.ca_cert, "/etc/ca.pem");
  EXPECT_EQ(url.tls.cert, "/c.pem");
  EXPECT_EQ(url.tls.key, "/k.pem");
  EXPECT_EQ(url.tls.sni, "redis.example");
  EXPECT_FALSE(url.tls.verify_peer);

  url = MustParse("unix:///var/run/redis.sock?db=3");
  EXPECT_EQ(url.scheme, RedisUrlScheme::kUnix);
  EXPECT_EQ(url.endpoints,
            std::vector<std::string>{"unix:/var/run/redis.sock"});
  EXPECT_EQ(url.database, 3);
}

TEST(RedisUrlTest, BadFormsNameThePart) {
  struct Case {
    std::string text, part;
  } cases[] = {
      {"http://h:1", "scheme"},
      {"redis://", "host"},
      {"redis://:6379", "host"},
      {"redis://h:0", "port"},
      {"redis://h:65536", "port"},
      {"redis://h:12x", "port"},
      {"redis://h:", "port"},
      {"redis://[::1:7000", "unclosed"},
      {"redis://[::1]x", "junk"},
      {"redis://::1:7000", "brackets"},
      {"redis://h:1/x", "database"},
      {"redis://h:12x", "port: not a number"},
      {"redis://h:1/-1", "database"},
      {"redis://h:1,h:2", "only redis+sentinel"},
      {"redis://u:p%4@h:1", "password"},
      {"redis://u%zz:p@h:1", "user"},
      {"redis://h:1?foo=bar", "query parameter 'foo'"},
      {"redis://h:1?sentinel_password=x", "sentinel_password"},
      {"redis+sentinel://s:1", "master name"},
      {"redis+sentinel://s:1/", "master name"},
      {"redis+sentinel://s:1/m/x", "database"},
      {"redis+sentinel://s:1,,s:2/m", "host"},
      {"redis+sentinel://s:1/m?sentinel_password", "no '='"},
      {"redis+sentinel://s:1/m?Hunter2Secret", "no '='"},
      {"rediss://h:1?verify=maybe", "verify"},
      {"rediss+sentinel://s:1", "master name"},
      {"rediss+sentinel://s:1/m?tls=1", "query parameter 'tls'"},
      {"unix://relative/path", "socket path"},
      {"unix:///p?user=x", "query parameter 'user'"},
      {"h:notaport", "bad port"},
      {"", "empty host"},
  };
  for (const Case& c : cases) {
    absl::StatusOr<RedisUrl> url = ParseRedisUrl(c.text);
    ASSERT_FALSE(url.ok()) << c.text;
    EXPECT_EQ(url.status().code(), absl::StatusCode::kInvalidArgument)
        << c.text;
    EXPECT_NE(url.status().message().find(c.part), std::string::npos)
        << c.text << " -> " << url.status();
  }
}

// Whatever is wrong with a URL, the message never quotes the password, nor
// text that might be a misplaced one.
TEST(RedisUrlTest, ErrorsNeverShowThePassword) {
  const std::string secret = "Hunter2Secret";
  const std::vector<std::string> urls = {
      "redis://u:" + secret + "@h:99999",
      "redis://u:" + secret + "@h:1/notadb",
      "redis://u:" + secret + "%zz@h:1",
      "redis://u:" + secret + "@h:1?bad=1",
      "redis://u:" + secret + "@[::1",
      "redis+sentinel://u:" + secret + "@s:1",
      "redis+sentinel://s:1/m?sentinel_password=" + secret + "&x=1",
      "redis+sentinel://s:1/m?sentinel_password=" + secret + "%g1",
      "rediss://:" + secret + "@h:1?verify=" + secret,
      "ftp://u:" + secret + "@h",
      "u:" + secret + "@h:1",         // credentials outside a URL
      "redis://u:" + secret + "h:1",  // the '@' forgotten
      "redis://" + secret + ":" + secret,
      "redis://h:1/" + secret,
      "redis+sentinel://s:1/m?" + secret,
  };
  for (const std::string& text : urls) {
    absl::StatusOr<RedisUrl> url = ParseRedisUrl(text);
    ASSERT_FALSE(url.ok()) << text;
    EXPECT_EQ(url.status().message().find(secret), std::string::npos)
        << url.status();
  }
}

TEST(RedisUrlTest, RedactedHidesPasswords) {
  RedisUrl url = MustParse(
      "redis+sentinel://u:topsecret@s1:1,s2:2/m/"
      "1?sentinel_password=alsosecret");
  const std::string r = url.Redacted();
  EXPECT_EQ(r.find("topsecret"), std::string::npos) << r;
  EXPECT_EQ(r.find("alsosecret"), std::string::npos) << r;
  EXPECT_EQ(r, "redis+sentinel://u:***@s1:1,s2:2/m/1?sentinel_password=***");
  // Redacted output parses back to the same parts (passwords aside).
  RedisUrl again = MustParse(r);
  EXPECT_EQ(again.endpoints, url.endpoints);
  EXPECT_EQ(again.master_name, url.master_name);
  EXPECT_EQ(again.database, url.database);
  EXPECT_EQ(MustParse("redis://h:1").Redacted(), "redis://h:1");
  EXPECT_EQ(MustParse("unix:///s?db=2").Redacted(), "unix:///s?db=2");
}

TEST(RedisUrlTest, ApplyToClientOptions) {
  RedisClientOptions o;
  o.password = "from-env";
  ApplyRedisUrl(MustParse("redis://h:5/3"), &o);
  EXPECT_EQ(o.endpoint, "h:5");
  EXPECT_EQ(o.password, "from-env");  // the URL names none: kept
  EXPECT_EQ(o.database, 3);
  ApplyRedisUrl(MustParse("redis+sentinel://u:p@a:1,b:2/m?sentinel_password=q"),
                &o);
  EXPECT_EQ(o.master_name, "m");
  EXPECT_EQ(o.sentinels, (std::vector<std::string>{"a:1", "b:2"}));
  EXPECT_EQ(o.username, "u");
  EXPECT_EQ(o.password, "p");
  EXPECT_EQ(o.sentinel_password, "q");
  RedisClientOptions t;
  ApplyRedisUrl(MustParse("rediss://h:6380"), &t);
  EXPECT_TRUE(t.tls);
}

// The TLS query parameters reach RedisClientOptions::tls_options, and
// rediss+sentinel:// is Sentinel with TLS.
TEST(RedisUrlTest, TlsOptionsReachTheClient) {
  RedisClientOptions o;
  ApplyRedisUrl(MustParse("rediss://h:6380?ca_cert=/ca.pem&cert=/c.pem"
                          "&key=/k.pem&sni=name.example&verify=0"),
                &o);
  EXPECT_TRUE(o.tls);
  EXPECT_EQ(o.tls_options.ca_file, "/ca.pem");
  EXPECT_EQ(o.tls_options.cert_file, "/c.pem");
  EXPECT_EQ(o.tls_options.key_file, "/k.pem");
  EXPECT_EQ(o.tls_options.server_name, "name.example");
  EXPECT_FALSE(o.tls_options.verify_peer);
  EXPECT_TRUE(MustParse("rediss://h:1?verify=1").tls.verify_peer);

  RedisUrl url = MustParse(
      "rediss+sentinel://:pw@s1:5000,s2/m/2?sentinel_password=q&ca_cert=/ca");
  EXPECT_EQ(url.scheme, RedisUrlScheme::kSentinelTls);
  EXPECT_TRUE(url.is_sentinel());
  EXPECT_TRUE(url.is_tls());
  EXPECT_EQ(url.endpoints, (std::vector<std::string>{"s1:5000", "s2:26379"}));
  EXPECT_EQ(url.Redacted(),
            "rediss+sentinel://:***@s1:5000,s2:26379/m/2?"
            "sentinel_password=***&ca_cert=%2Fca");
  RedisClientOptions s;
  ApplyRedisUrl(url, &s);
  EXPECT_TRUE(s.tls);
  EXPECT_EQ(s.master_name, "m");
  EXPECT_EQ(s.tls_options.ca_file, "/ca");
  // TLS parameters belong to the TLS schemes only.
  EXPECT_FALSE(ParseRedisUrl("redis+sentinel://s:1/m?ca_cert=/ca").ok());
  EXPECT_FALSE(ParseRedisUrl("redis://h:1?verify=no").ok());
}

}  // namespace url_test
}  // namespace siftdb
