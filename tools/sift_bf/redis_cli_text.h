// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// redis-cli's text conventions, for siftdb tools that speak to Redis (or to
// siftdb's Redis-compatible command interpreters) the way redis-cli does:
//   * SplitRedisCliArgs: split a command line into arguments with redis-cli's
//     rules: blanks separate; "double quotes" allow \xHH, \n, \r, \t, \b, \a
//     and \<any> escapes; 'single quotes' allow only \'; a closing quote must
//     be followed by a blank or the end of the line. Binary arguments (dump
//     chunks) can therefore be typed or piped in.
//   * FormatReplyTty: redis-cli's human format ((integer) 1, "quoted\x00",
//     (nil), (error) ..., numbered and indented arrays, (empty array)).
//   * FormatReplyRaw: redis-cli --raw (bytes as they are, one per line).
//
// Thread safety: pure functions.

#ifndef SIFTDB_TOOLS_SIFT_BF_REDIS_CLI_TEXT_H_
#define SIFTDB_TOOLS_SIFT_BF_REDIS_CLI_TEXT_H_

#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"
#include "redis/client/redis_reply.h"

namespace siftdb {

// InvalidArgument("Invalid argument(s)") on unbalanced quotes, as redis-cli
// reports them. An empty or blank line gives no arguments.
absl::StatusOr<std::vector<std::string>> SplitRedisCliArgs(
    std::string_view line);

// "..." with \\ \" \n \r \t \a \b escaped and other unprintable bytes as
// \xHH (Redis's sdscatrepr).
std::string ReprString(std::string_view s);

// Each ends with a newline, like redis-cli's output for one reply.
std::string FormatReplyTty(const RedisReply& reply);
std::string FormatReplyRaw(const RedisReply& reply);

}  // namespace siftdb

#endif  // SIFTDB_TOOLS_SIFT_BF_REDIS_CLI_TEXT_H_
