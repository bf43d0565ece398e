// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisUrl: the one parser of "where is Redis and how do I log in" shared by
// every siftdb Redis user (the filter mirror, RemoteFilter, RedisBloom,
// sift_probe, sift_bf). The grammar is specified in docs/redis_client.md:
//
//   host:port | [v6addr]:port | host | unix:/path | /path     (plain forms)
//   redis://[[user]:password@]host[:port][/db]
//   rediss://[[user]:password@]host[:port][/db][?tls options]   (TLS)
//   redis+sentinel://[[user]:password@]host[:port][,host[:port]...]
//       /master-name[/db][?sentinel_user=U&sentinel_password=P]
//   rediss+sentinel://...    (as redis+sentinel://, every connection TLS;
//                             takes the sentinel and the TLS parameters)
//   unix:///path[?db=N]
//
// redis://, rediss:// and the Sentinel schemes also take
// ?read_from=master|replica_preferred (where reads go; redis/client/
// redis_replica_read.h).
//
// User, password, master name and query values are %XX-decoded. The plain
// forms carry no credentials (they come from the options' own fields).
//
// Errors are InvalidArgument naming the part that is wrong ("port", "host",
// "database", "master name", "query parameter 'x'"). No error message ever
// contains the URL's password, nor any text the parser could not place
// (which might be a mistyped password); Redacted() renders a parsed URL with
// its passwords replaced by "***", for LOG lines.
//
// Thread safety: pure functions and a plain value type.

#ifndef SIFTDB_REDIS_CLIENT_REDIS_URL_H_
#define SIFTDB_REDIS_CLIENT_REDIS_URL_H_

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

namespace siftdb {

enum class RedisUrlScheme {
  kPlain,        // "host:port", "unix:/path", ...: no URL at all
  kRedis,        // redis://
  kRediss,       // rediss:// (TLS)
  kSentinel,     // redis+sentinel://
  kSentinelTls,  // rediss+sentinel:// (Sentinels and master over TLS)
  kUnix,         // unix://
};

// Where a reader's commands go. Writes always go to the master.
enum class RedisReadFrom {
  kMaster,            // "master" (the default)
  kReplicaPreferred,  // "replica_preferred": a healthy replica, else master
};

// "master" or "replica_preferred"; InvalidArgument naming read_from
// otherwise (the bad value is not quoted).
absl::StatusOr<RedisReadFrom> ParseRedisReadFrom(std::string_view text);
const char* RedisReadFromName(RedisReadFrom read_from);

// rediss:// and rediss+sentinel:// query options (RedisTlsOptions in
// redis/client/redis_tls.h says what each does).
struct RedisTlsUrlOptions {
  std::string ca_cert;      // ?ca_cert=/path (PEM bundle)
  std::string cert;         // ?cert=/path (client certificate)
  std::string key;          // ?key=/path (client key)
  std::string sni;          // ?sni=name (server name; default: the host)
  bool verify_peer = true;  // ?verify=no (or 0) turns verification off
};

struct RedisUrl {
  RedisUrlScheme scheme = RedisUrlScheme::kPlain;
  // Canonical endpoints ("host:port", "[v6]:port", "unix:/path"): the
  // server, or for redis+sentinel:// the Sentinels (default port 26379).
  std::vector<std::string> endpoints;
  std::optional<std::string> username;
  std::optional<std::string> password;
  std::optional<int> database;
  std::string master_name;  // redis+sentinel:// only
  std::optional<std::string> sentinel_username;
  std::optional<std::string> sentinel_password;
  RedisTlsUrlOptions tls;
  std::optional<RedisReadFrom> read_from;  // ?read_from=

  // The URL rebuilt with every password replaced by "***".
  std::string Redacted() const;
  bool is_sentinel() const {
    return scheme == RedisUrlScheme::kSentinel ||
           scheme == RedisUrlScheme::kSentinelTls;
  }
  bool is_tls() const {
    return scheme == RedisUrlScheme::kRediss ||
           scheme == RedisUrlScheme::kSentinelTls;
  }
};

// True when `text` has the form "scheme://..." (as opposed to the plain
// endpoint forms).
bool IsRedisUrl(std::string_view text);

// Parses any of the forms above. InvalidArgument naming the wrong part.
absl::StatusOr<RedisUrl> ParseRedisUrl(std::string_view text);

// An endpoint or URL as text fit for a message or LOG line: the parsed
// form's Redacted(), or "(malformed redis endpoint)".
std::string RedactRedisEndpoint(std::string_view text);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_REDIS_URL_H_
