// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/redis_url.h"

#include <charconv>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "redis/client/redis_client.h"
#include "util/absl_compat.h"

namespace siftdb {
namespace {

constexpr int kRedisPort = 6379;
constexpr int kSentinelPort = 26379;

// Messages name the scheme and the part, never the whole URL (it may hold
// a password).
absl::Status Bad(std::string_view scheme, std::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrFormat("redis URL (%s://...): %s", scheme, why));
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

std::string Escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (absl::ascii_isalnum(c) || c == '-' || c == '_' || c == '.' ||
        c == '~') {
      out.push_back(c);
    } else {
      out += absl::StrFormat("%%%02X", static_cast<unsigned char>(c));
    }
  }
  return out;
}

bool ParseInt(std::string_view s, int lo, int hi, int* out) {
  if (s.empty()) return false;
  int v = 0;
  auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
  if (ec != std::errc() || ptr != s.data() + s.size() || v < lo || v > hi) {
    return false;
  }
  *out = v;
  return true;
}

// Text safe to quote in a message: no '@' or ':' (which could be a part of
// a misplaced "user:password@"), short.
std::string Quote(std::string_view s) {
  if (s.find_first_of("@:") != std::string_view::npos || s.size() > 64) {
    return "(not shown)";
  }
  return absl::StrCat("'", AsAbsl(s), "'");
}

// One "host[:port]" or "[v6]:port" into a canonical endpoint.
absl::StatusOr<std::string> ParseHostPort(std::string_view scheme,
                                          std::string_view hp,
                                          int default_port) {
  std::string_view host = hp;
  std::string_view port;
  bool has_port = false;
  if (!hp.empty() && hp[0] == '[') {
    const size_t close = hp.find(']');
    if (close == std::string_view::npos) {
      return Bad(scheme, "host: unclosed '[' in an IPv6 address");
    }
    host = hp.substr(1, close - 1);
    std::string_view rest = hp.substr(close + 1);
    if (!rest.empty() && rest[0] != ':') {
      return Bad(scheme, "host: junk after ']'");
    }
    has_port = !rest.empty();
    if (has_port) port = rest.substr(1);
  } else {
    const size_t colon = hp.rfind(':');
    if (colon != std::string_view::npos) {
      host = hp.substr(0, colon);
      port = hp.substr(colon + 1);
      has_port = true;
      if (host.find(':') != std::string_view::npos) {
        return Bad(scheme, "host: an IPv6 address needs [brackets]");
      }
    }
  }
  if (host.empty()) return Bad(scheme, "host: empty");
  for (char c : host) {
    if (c == '@' || c == '/' || c == '?' || c == '%' || c == ',' ||
        absl::ascii_isspace(c) || c == '[' || c == ']') {
      return Bad(scheme, "host: a character that is not allowed in a host");
    }
  }
  int p = default_port;
  if (has_port && !ParseInt(port, 1, 65535, &p)) {
    // Not quoted: a forgotten '@' turns "user:password" into host:port.
    return Bad(scheme, "port: not a number in 1..65535");
  }
  RedisEndpoint ep;
  ep.host = std::string(host);
  ep.port = p;
  return ep.ToString();
}

// "user:password" (user may be empty) or "password" (redis-cli's form).
absl::Status ParseUserInfo(std::string_view scheme, std::string_view info,
                           std::optional<std::string>* user,
                           std::optional<std::string>* password) {
  std::string_view u, p = info;
  const size_t colon = info.find(':');
  if (colon != std::string_view::npos) {
    u = info.substr(0, colon);
    p = info.substr(colon + 1);
  }
  std::optional<std::string> du = Unescape(u);
  if (!du.has_value()) return Bad(scheme, "user: malformed %-escape");
  std::optional<std::string> dp = Unescape(p);
  if (!dp.has_value()) return Bad(scheme, "password: malformed %-escape");
  if (!du->empty()) *user = std::move(*du);
  if (!dp->empty()) *password = std::move(*dp);
  return absl::OkStatus();
}

absl::Status ParseDatabase(std::string_view scheme, std::string_view text,
                           std::optional<int>* db) {
  int v = 0;
  if (!ParseInt(text, 0, 1 << 30, &v)) {
    return Bad(scheme, "database: not a number >= 0");
  }
  *db = v;
  return absl::OkStatus();
}

// key=value&... for the query part.
absl::Status ParseQuery(std::string_view scheme, std::string_view query,
                        RedisUrl* url) {
  while (!query.empty()) {
    const size_t amp = query.find('&');
    std::string_view pair = query.substr(0, amp);
    query = amp == std::string_view::npos ? "" : query.substr(amp + 1);
    if (pair.empty()) continue;
    const size_t eq = pair.find('=');
    std::string_view key = pair.substr(0, eq);
    if (eq == std::string_view::npos) {
      // Not quoted: it might be a value that lost its key.
      return Bad(scheme, "query: a parameter has no '='");
    }
    std::optional<std::string> value = Unescape(pair.substr(eq + 1));
    if (!value.has_value()) {
      return Bad(scheme,
                 absl::StrFormat("query parameter %s: malformed %%-escape",
                                 Quote(key)));
    }
    const bool sentinel = url->is_sentinel();
    const bool tls = url->is_tls();
    const bool networked = url->scheme != RedisUrlScheme::kUnix;
    if (sentinel && (key == "sentinel_user" || key == "sentinel_username")) {
      url->sentinel_username = std::move(*value);
    } else if (sentinel && key == "sentinel_password") {
      url->sentinel_password = std::move(*value);
    } else if (url->scheme == RedisUrlScheme::kUnix && key == "db") {
      absl::Status s = ParseDatabase(scheme, *value, &url->database);
      if (!s.ok()) return s;
    } else if (networked && key == "read_from") {
      absl::StatusOr<RedisReadFrom> read_from = ParseRedisReadFrom(*value);
      if (!read_from.ok()) {
        return Bad(scheme,
                   "query parameter 'read_from': expected master or "
                   "replica_preferred");
      }
      url->read_from = *read_from;
    } else if (tls && key == "ca_cert") {
      url->tls.ca_cert = std::move(*value);
    } else if (tls && key == "cert") {
      url->tls.cert = std::move(*value);
    } else if (tls && key == "key") {
      url->tls.key = std::move(*value);
    } else if (tls && key == "sni") {
      url->tls.sni = std::move(*value);
    } else if (tls && key == "verify") {
      if (*value != "yes" && *value != "no" && *value != "1" && *value != "0") {
        return Bad(scheme, "query parameter 'verify': expected yes or no");
      }
      url->tls.verify_peer = *value == "yes" || *value == "1";
    } else {
      return Bad(scheme, absl::StrFormat("query parameter %s is not known "
                                         "for this scheme",
                                         Quote(key)));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<RedisUrl> ParsePlain(std::string_view text) {
  RedisUrl url;
  if (text.find('@') != std::string_view::npos) {
    // Perhaps "user:password@host:port" without the scheme: never quote it.
    return absl::InvalidArgumentError(
        "redis endpoint: '@' outside a URL (credentials belong in "
        "redis://user:password@host:port)");
  }
  absl::StatusOr<RedisEndpoint> ep = RedisEndpoint::Parse(text);
  if (!ep.ok()) return ep.status();
  url.endpoints.push_back(ep->ToString());
  return url;
}

absl::StatusOr<RedisUrl> ParseUnix(std::string_view scheme,
                                   std::string_view rest, RedisUrl url) {
  const size_t q = rest.find('?');
  std::string_view path = rest.substr(0, q);
  if (path.empty() || path[0] != '/') {
    return Bad(scheme, "socket path: expected unix:///absolute/path");
  }
  std::optional<std::string> decoded = Unescape(path);
  if (!decoded.has_value()) return Bad(scheme, "socket path: bad %-escape");
  url.endpoints.push_back("unix:" + *decoded);
  if (q != std::string_view::npos) {
    absl::Status s = ParseQuery(scheme, rest.substr(q + 1), &url);
    if (!s.ok()) return s;
  }
  return url;
}

}  // namespace

absl::StatusOr<RedisReadFrom> ParseRedisReadFrom(std::string_view text) {
  if (text == "master") return RedisReadFrom::kMaster;
  if (text == "replica_preferred") return RedisReadFrom::kReplicaPreferred;
  return absl::InvalidArgumentError(
      "redis read_from: expected master or replica_preferred");
}

const char* RedisReadFromName(RedisReadFrom read_from) {
  return read_from == RedisReadFrom::kMaster ? "master" : "replica_preferred";
}

bool IsRedisUrl(std::string_view text) {
  const size_t sep = text.find("://");
  if (sep == std::string_view::npos || sep == 0) return false;
  for (char c : text.substr(0, sep)) {
    if (!absl::ascii_isalnum(c) && c != '+' && c != '-' && c != '.') {
      return false;
    }
  }
  return true;
}

absl::StatusOr<RedisUrl> ParseRedisUrl(std::string_view text) {
  if (!IsRedisUrl(text)) return ParsePlain(text);
  const size_t sep = text.find("://");
  const std::string scheme = absl::AsciiStrToLower(AsAbsl(text.substr(0, sep)));
  std::string_view rest = text.substr(sep + 3);
  RedisUrl url;
  if (scheme == "redis") {
    url.scheme = RedisUrlScheme::kRedis;
  } else if (scheme == "rediss") {
    url.scheme = RedisUrlScheme::kRediss;
  } else if (scheme == "redis+sentinel") {
    url.scheme = RedisUrlScheme::kSentinel;
  } else if (scheme == "rediss+sentinel") {
    url.scheme = RedisUrlScheme::kSentinelTls;
  } else if (scheme == "unix") {
    url.scheme = RedisUrlScheme::kUnix;
    return ParseUnix(scheme, rest, std::move(url));
  } else {
    return absl::InvalidArgumentError(absl::StrFormat(
        "redis URL: scheme %s is not one of redis, rediss, redis+sentinel, "
        "rediss+sentinel, unix",
        Quote(scheme)));
  }
  const bool sentinel = url.is_sentinel();

  // Userinfo ends at the last '@' (a password may hold '/', '?' or '#'
  // when its writer forgot to escape them; this keeps it out of the
  // other parts, and so out of messages).
  const size_t at = rest.rfind('@');
  if (at != std::string_view::npos) {
    absl::Status s =
        ParseUserInfo(scheme, rest.substr(0, at), &url.username, &url.password);
    if (!s.ok()) return s;
    rest = rest.substr(at + 1);
  }
  const size_t q = rest.find('?');
  std::string_view query =
      q == std::string_view::npos ? std::string_view() : rest.substr(q + 1);
  rest = rest.substr(0, q);
  const size_t slash = rest.find('/');
  std::string_view hosts = rest.substr(0, slash);
  std::string_view path =
      slash == std::string_view::npos ? "" : rest.substr(slash + 1);

  if (hosts.empty()) return Bad(scheme, "host: empty");
  if (!sentinel && hosts.find(',') != std::string_view::npos) {
    return Bad(scheme, "host: only redis+sentinel:// takes a list of hosts");
  }
  while (true) {
    const size_t comma = hosts.find(',');
    absl::StatusOr<std::string> ep = ParseHostPort(
        scheme, hosts.substr(0, comma), sentinel ? kSentinelPort : kRedisPort);
    if (!ep.ok()) return ep.status();
    url.endpoints.push_back(std::move(*ep));
    if (comma == std::string_view::npos) break;
    hosts = hosts.substr(comma + 1);
  }

  if (sentinel) {
    const size_t s2 = path.find('/');
    std::optional<std::string> name = Unescape(path.substr(0, s2));
    if (!name.has_value()) return Bad(scheme, "master name: bad %-escape");
    if (name->empty()) {
      return Bad(scheme,
                 "master name: missing (redis+sentinel://hosts/master-name)");
    }
    url.master_name = std::move(*name);
    path = s2 == std::string_view::npos ? "" : path.substr(s2 + 1);
  }
  if (!path.empty()) {
    absl::Status s = ParseDatabase(scheme, path, &url.database);
    if (!s.ok()) return s;
  }
  absl::Status s = ParseQuery(scheme, query, &url);
  if (!s.ok()) return s;
  return url;
}

std::string RedactRedisEndpoint(std::string_view text) {
  absl::StatusOr<RedisUrl> url = ParseRedisUrl(text);
  return url.ok() ? url->Redacted() : "(malformed redis endpoint)";
}

std::string RedisUrl::Redacted() const {
  std::string out;
  switch (scheme) {
    case RedisUrlScheme::kPlain:
      return absl::StrJoin(endpoints, ",");
    case RedisUrlScheme::kUnix:
      out = absl::StrCat("unix://",
                         endpoints.empty() ? "" : endpoints[0].substr(5));
      if (database.has_value()) absl::StrAppend(&out, "?db=", *database);
      return out;
    case RedisUrlScheme::kRedis:
      out = "redis://";
      break;
    case RedisUrlScheme::kRediss:
      out = "rediss://";
      break;
    case RedisUrlScheme::kSentinel:
      out = "redis+sentinel://";
      break;
    case RedisUrlScheme::kSentinelTls:
      out = "rediss+sentinel://";
      break;
  }
  if (username.has_value() || password.has_value()) {
    absl::StrAppend(&out, Escape(username.value_or("")),
                    password.has_value() ? ":***" : "", "@");
  }
  absl::StrAppend(&out, absl::StrJoin(endpoints, ","));
  if (!master_name.empty()) absl::StrAppend(&out, "/", Escape(master_name));
  if (database.has_value()) absl::StrAppend(&out, "/", *database);
  std::vector<std::string> q;
  if (sentinel_username.has_value()) {
    q.push_back("sentinel_user=" + Escape(*sentinel_username));
  }
  if (sentinel_password.has_value()) q.push_back("sentinel_password=***");
  if (!tls.ca_cert.empty()) q.push_back("ca_cert=" + Escape(tls.ca_cert));
  if (!tls.cert.empty()) q.push_back("cert=" + Escape(tls.cert));
  if (!tls.key.empty()) q.push_back("key=" + Escape(tls.key));
  if (!tls.sni.empty()) q.push_back("sni=" + Escape(tls.sni));
  if (!tls.verify_peer) q.push_back("verify=no");
  if (read_from.has_value()) {
    q.push_back(absl::StrCat("read_from=", RedisReadFromName(*read_from)));
  }
  if (!q.empty()) absl::StrAppend(&out, "?", absl::StrJoin(q, "&"));
  return out;
}

}  // namespace siftdb
