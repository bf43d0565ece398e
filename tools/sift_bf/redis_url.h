// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ParseRedisUrl: the minimal redis-cli `-u` URL sift_bf accepts,
//   redis://[[user]:password@]host[:port][/db]
// with %XX escapes in user and password and an IPv6 host in brackets.
// Other schemes (rediss://, unix://, http://) are refused with a message
// saying so: sift_bf speaks plain TCP only. A full URL parser shared by
// every Redis user is a separate piece of work; this one stays small.
//
// Thread safety: pure function.

#ifndef SIFTDB_TOOLS_SIFT_BF_REDIS_URL_H_
#define SIFTDB_TOOLS_SIFT_BF_REDIS_URL_H_

#include <optional>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"

namespace siftdb::sift_bf {

struct RedisUrl {
  std::string host;  // without brackets
  int port = 6379;
  std::optional<std::string> user;      // present when the URL names one
  std::optional<std::string> password;  // present when the URL has one
  std::optional<int> db;                // present with a /db path
};

// InvalidArgument naming the URL and the problem.
absl::StatusOr<RedisUrl> ParseRedisUrl(std::string_view url);

}  // namespace siftdb::sift_bf

#endif  // SIFTDB_TOOLS_SIFT_BF_REDIS_URL_H_
