// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisBloomImpl::WaitForReplicas: the WAIT that follows each add step
// when RedisBloomOptions::wait_replicas is set (docs/redis_bloom.md,
// "Replicas and WAIT").

#include <algorithm>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/redis_bloom_impl.h"
#include "redis/bloom/redis_bloom_util.h"

namespace siftdb {

absl::Status RedisBloomImpl::WaitForReplicas(std::string_view name) {
  // WAIT's timeout 0 means "forever": never send it.
  const int64_t ms =
      std::max<int64_t>(1, absl::ToInt64Milliseconds(wait_timeout_));
  absl::StatusOr<RedisReply> reply = client_->Command(
      {"WAIT", absl::StrCat(wait_replicas_), absl::StrCat(ms)});
  if (!reply.ok()) return reply.status();
  if (reply->is_error()) return client_->ServerErrorStatus("WAIT", *reply);
  if (!reply->is_integer()) {
    return absl::InternalError(absl::StrFormat("%s: WAIT: unexpected reply %s",
                                               redis_bloom::BloomName(name),
                                               reply->DebugString()));
  }
  if (reply->integer() < wait_replicas_) {
    return absl::DeadlineExceededError(absl::StrFormat(
        "%s: WAIT: %d of %d replicas acknowledged the add within %d ms (the "
        "items are on the master %s; a failover may lose them)",
        redis_bloom::BloomName(name), reply->integer(), wait_replicas_, ms,
        client_->endpoint()));
  }
  return absl::OkStatus();
}

}  // namespace siftdb
