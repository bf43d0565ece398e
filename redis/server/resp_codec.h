// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The RESP2 framing the BF.* server (redis/server/bloom_server.h) needs on
// both of its sides, without hiredis:
//   ParseRequest     - one client request, RESP multibulk (what redis-cli,
//                      redis-benchmark and every client library send) or an
//                      inline line ("BF.ADD f a\r\n", telnet style), with
//                      Redis's protocol error texts and size limits.
//   ReplyLength      - the byte length of the first complete reply in an
//                      upstream Redis stream, so pass-through replies are
//                      forwarded byte for byte (a nil array stays "*-1").
//   AppendReply      - a RedisReply (from the BF.* interpreter) as RESP2.
//
// Thread safety: pure functions over caller-owned buffers.

#ifndef SIFTDB_REDIS_SERVER_RESP_CODEC_H_
#define SIFTDB_REDIS_SERVER_RESP_CODEC_H_

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

#include "redis/client/redis_reply.h"

namespace siftdb {

struct RespLimits {
  // Largest inline line and largest single bulk argument, in bytes.
  size_t max_inline = 64 * 1024;
  size_t max_bulk = 512 * 1024 * 1024;
  // Most arguments in one multibulk request.
  size_t max_args = 1024 * 1024;
};

enum class RespParse {
  kNeedMore,  // no complete request yet; nothing consumed
  kRequest,   // *argv holds one request (possibly empty: a blank line)
  kError,     // *error holds Redis's protocol error; the stream is lost
};

// Parses the first request of `in`. On kRequest, *consumed is its length.
RespParse ParseRequest(std::string_view in, const RespLimits& limits,
                       std::vector<std::string>* argv, size_t* consumed,
                       std::string* error);

// The length of the first complete RESP2 reply of `in`; 0 when it is
// incomplete; -1 when `in` is not RESP2.
long ReplyLength(std::string_view in);

// Appends `reply` in RESP2 (nil as the nil bulk string "$-1").
void AppendReply(const RedisReply& reply, std::string* out);

// "-<text>\r\n" with CR/LF in the text replaced by spaces.
std::string ErrorReply(std::string_view text);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_SERVER_RESP_CODEC_H_
