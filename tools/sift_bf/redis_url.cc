// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/sift_bf/redis_url.h"

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "util/absl_compat.h"

namespace siftdb::sift_bf {
namespace {

absl::Status Bad(std::string_view url, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("bad URL '%s': %s", url, why));
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  c = absl::ascii_tolower(c);
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return -1;
}

// %XX decoding; nullopt on a malformed escape.
std::optional<std::string> Unescape(std::string_view s) {
  std::string out;
  for (size_t i = 0; i < s.size(); i++) {
    if (s[i] != '%') {
      out.push_back(s[i]);
      continue;
    }
    if (i + 2 >= s.size()) return std::nullopt;
    const int hi = HexValue(s[i + 1]);
    const int lo = HexValue(s[i + 2]);
    if (hi < 0 || lo < 0) return std::nullopt;
    out.push_back(static_cast<char>(hi << 4 | lo));
    i += 2;
  }
  return out;
}

// Fills url->user / url->password from "user:password" or "password".
absl::Status ParseUserInfo(std::string_view whole, std::string_view info,
                           RedisUrl* url) {
  std::string_view user, password = info;
  const size_t colon = info.find(':');
  if (colon != std::string_view::npos) {
    user = info.substr(0, colon);
    password = info.substr(colon + 1);
  }
  std::optional<std::string> u = Unescape(user);
  std::optional<std::string> p = Unescape(password);
  if (!u.has_value() || !p.has_value()) {
    return Bad(whole, "malformed %-escape in the user or password");
  }
  if (!u->empty()) url->user = *u;
  url->password = *p;
  return absl::OkStatus();
}

// Fills url->host and url->port from "host", "host:port", "[v6]:port".
absl::Status ParseHostPort(std::string_view whole, std::string_view hp,
                           RedisUrl* url) {
  std::string_view port;
  bool has_port = false;
  if (!hp.empty() && hp[0] == '[') {
    const size_t close = hp.find(']');
    if (close == std::string_view::npos) return Bad(whole, "unclosed '['");
    url->host = std::string(hp.substr(1, close - 1));
    std::string_view rest = hp.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') return Bad(whole, "junk after ']'");
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
  } else {
    const size_t colon = hp.rfind(':');
    url->host = std::string(hp.substr(0, colon));
    has_port = colon != std::string_view::npos;
    if (has_port) port = hp.substr(colon + 1);
  }
  if (url->host.empty()) return Bad(whole, "no host");
  if (has_port) {
    if (!absl::SimpleAtoi(AsAbsl(port), &url->port) || url->port < 1 ||
        url->port > 65535) {
      return Bad(whole, absl::StrFormat("bad port '%s'", port));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<RedisUrl> ParseRedisUrl(std::string_view url) {
  constexpr std::string_view kScheme = "redis://";
  const size_t sep = url.find("://");
  if (sep == std::string_view::npos) {
    return Bad(url, "expected redis://[[user]:password@]host[:port][/db]");
  }
  const std::string scheme = absl::AsciiStrToLower(AsAbsl(url.substr(0, sep)));
  if (scheme == "rediss") {
    return Bad(url, "TLS (rediss://) is not supported by sift_bf");
  }
  if (scheme + "://" != kScheme) {
    return Bad(url, absl::StrFormat("scheme '%s' is not supported (only "
                                    "redis://)",
                                    scheme));
  }
  std::string_view rest = url.substr(sep + 3);
  RedisUrl out;
  const size_t slash = rest.find('/');
  std::string_view authority = rest.substr(0, slash);
  if (slash != std::string_view::npos) {
    std::string_view path = rest.substr(slash + 1);
    if (!path.empty()) {
      int db = 0;
      if (!absl::SimpleAtoi(AsAbsl(path), &db) || db < 0) {
        return Bad(url, absl::StrFormat("bad database number '%s'", path));
      }
      out.db = db;
    }
  }
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    absl::Status s = ParseUserInfo(url, authority.substr(0, at), &out);
    if (!s.ok()) return s;
    authority = authority.substr(at + 1);
  }
  absl::Status s = ParseHostPort(url, authority, &out);
  if (!s.ok()) return s;
  return out;
}

}  // namespace siftdb::sift_bf
