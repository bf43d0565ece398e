// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Group commit of BF.* requests: ExecuteBloomBatch runs a batch of
// requests from different client connections (all of one Redis user on one
// database) on one BloomSession, merging every BF.ADD / BF.MADD of a filter
// into one RedisBloom::MAdd and every BF.EXISTS / BF.MEXISTS of a filter
// into one MExists, and slices each request's reply out of the batch's
// per-item results, so each client gets exactly the reply RedisBloom 2.8.20
// gives for its command alone (integer 1/0 for BF.ADD; an array, ending
// with the error that stopped a full NONSCALING filter, for BF.MADD). Any
// other command runs alone through RedisBloomCommands::Execute.
//
// The caller guarantees the batch is a valid linearisation: requests of
// different connections were all pending at once (so any order is one the
// clients could have seen), and a connection appears more than once only
// with adds, which MAdd applies in their order.
//
// Commands other than adds and probes run on a fresh interpreter (no
// cached filter layout): a session is one of several per user, and a
// layout cached by one of them may predate another's growth of the filter
// (BF.SCANDUMP, whose chunks follow the layout, would end early).
//
// Thread safety: a BloomSession is used by one thread at a time.

#ifndef SIFTDB_REDIS_SERVER_BLOOM_BATCH_H_
#define SIFTDB_REDIS_SERVER_BLOOM_BATCH_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "redis/bloom/redis_bloom_command.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_reply.h"

namespace siftdb {

// One upstream connection as one Redis user on one database, with the
// BF.* interpreter and the filter API on it.
class BloomSession {
 public:
  // Connects and authenticates with `options` (user, password, database).
  static absl::StatusOr<std::unique_ptr<BloomSession>> Open(
      const RedisClientOptions& options);

  RedisClient* client() { return client_.get(); }
  RedisBloomCommands* commands() { return commands_.get(); }
  RedisBloom* bloom() { return bloom_.get(); }

 private:
  BloomSession() = default;
  std::unique_ptr<RedisClient> client_;
  std::unique_ptr<RedisBloomCommands> commands_;
  std::unique_ptr<RedisBloomImpl> bloom_;
};

// What a batch may merge: a request's kind, from its argv.
enum class BloomRequestKind { kAdd, kExists, kOther };
BloomRequestKind ClassifyBloomRequest(const std::vector<std::string>& argv);

// One reply per request, in the order of `requests`.
std::vector<RedisReply> ExecuteBloomBatch(
    BloomSession* session,
    const std::vector<const std::vector<std::string>*>& requests);

// A reply for a failed call: RedisBloom's text when the status carries one;
// the Redis server's own error (e.g. "NOPERM ...", "NOAUTH ...") when the
// status quotes one; else "ERR " + message.
RedisReply BloomErrorReply(const absl::Status& status);

}  // namespace siftdb

#endif  // SIFTDB_REDIS_SERVER_BLOOM_BATCH_H_
