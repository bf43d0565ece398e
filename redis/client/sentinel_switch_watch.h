// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// SentinelSwitchWatch: a background thread subscribed to the Sentinels'
// "+switch-master" channel, so that a RedisClient reached through Sentinel
// learns of a failover as Sentinel announces it, not only when its master
// fails or at its next periodic check (redis/client/redis_client.h).
//
// The thread holds one subscription, to one Sentinel at a time (SUBSCRIBE
// +switch-master, with the Sentinels' AUTH and TLS). A message
// "<master-name> <old-ip> <old-port> <new-ip> <new-port>" naming the
// watched master bumps generation(). So does every subscription made,
// the first one included: while there was none, a message may have been
// missed, so a client that sees the generation change asks the Sentinels
// again (it never trusts the address in the message: the Sentinels'
// answer, checked with ROLE, decides). When the subscription has been
// quiet for ping_interval the thread sends PING; no answer within another
// ping_interval, or any connection error, and it moves to the next Sentinel
// (after a pause), reporting subscribed() == false meanwhile, so clients
// fall back to periodic checks.
//
// Thread safety: every public method is thread-safe. The destructor stops
// and joins the thread; it returns within one connect timeout (at once
// unless the thread is connecting to a Sentinel that does not answer).

#ifndef SIFTDB_REDIS_CLIENT_SENTINEL_SWITCH_WATCH_H_
#define SIFTDB_REDIS_CLIENT_SENTINEL_SWITCH_WATCH_H_

#include <atomic>
#include <cstdint>
#include <string_view>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/time/time.h"
#include "redis/client/sentinel_connection.h"
#include "util/mutex.h"

namespace siftdb {

class SentinelSwitchWatch {
 public:
  // Starts the thread; `set` names the Sentinels and the master to watch.
  explicit SentinelSwitchWatch(SentinelSet set,
                               absl::Duration ping_interval = absl::Seconds(1));
  SentinelSwitchWatch(const SentinelSwitchWatch&) = delete;
  SentinelSwitchWatch& operator=(const SentinelSwitchWatch&) = delete;
  ~SentinelSwitchWatch();

  // Changes when the master may have moved (see above). Starts at 0.
  uint64_t generation() const {
    return generation_.load(std::memory_order_acquire);
  }
  // True while a subscription is live.
  bool subscribed() const {
    return subscribed_.load(std::memory_order_acquire);
  }
  // +switch-master messages seen for the watched master.
  int64_t switches() const { return switches_.load(std::memory_order_relaxed); }
  // Subscriptions made (the first one and every one after a loss).
  int64_t subscriptions() const {
    return subscriptions_.load(std::memory_order_relaxed);
  }

  // True when a +switch-master payload names `master_name` (exposed for
  // tests).
  static bool NamesMaster(std::string_view payload,
                          std::string_view master_name);

 private:
  void Run();
  // Subscribes on `c` and reads messages until the connection fails, goes
  // quiet or the watch stops.
  void Listen(SentinelConnection* c);
  // Handles one reply on the subscription; false when it is not one a
  // subscription may carry. *pong is set when it answers our PING.
  bool Handle(const RedisReply& reply, bool* pong);
  bool stopping() const;

  const SentinelSet set_;
  const absl::Duration ping_interval_;
  std::atomic<uint64_t> generation_{0};
  std::atomic<bool> subscribed_{false};
  std::atomic<int64_t> switches_{0};
  std::atomic<int64_t> subscriptions_{0};
  mutable Mutex mu_;
  CondVar stop_cv_;  // signalled when stop_ is set
  bool stop_ ABSL_GUARDED_BY(mu_) = false;
  // The connection the thread is reading, for the destructor to shut down.
  SentinelConnection* live_ ABSL_GUARDED_BY(mu_) = nullptr;
  std::thread thread_;  // last: starts after every other member is made
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_CLIENT_SENTINEL_SWITCH_WATCH_H_
