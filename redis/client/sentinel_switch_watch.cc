// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/client/sentinel_switch_watch.h"

#include <pthread.h>
#include <signal.h>

#include <vector>

#include "absl/strings/str_split.h"
#include "util/absl_compat.h"

namespace siftdb {

namespace {

constexpr std::string_view kChannel = "+switch-master";

// Where a watch starts: spread the subscriptions of many clients over the
// Sentinels instead of piling them on the first.
size_t FirstSentinel(size_t n) {
  static std::atomic<size_t> next{0};
  return n == 0 ? 0 : next.fetch_add(1, std::memory_order_relaxed) % n;
}

}  // namespace

SentinelSwitchWatch::SentinelSwitchWatch(SentinelSet set,
                                         absl::Duration ping_interval)
    : set_(std::move(set)),
      ping_interval_(ping_interval),
      thread_([this] { Run(); }) {}

SentinelSwitchWatch::~SentinelSwitchWatch() {
  {
    MutexLock l(&mu_);
    stop_ = true;
    if (live_ != nullptr) live_->Shutdown();
  }
  stop_cv_.SignalAll();
  thread_.join();
}

bool SentinelSwitchWatch::stopping() const {
  MutexLock l(&mu_);
  return stop_;
}

bool SentinelSwitchWatch::NamesMaster(std::string_view payload,
                                      std::string_view master_name) {
  // "<master-name> <old-ip> <old-port> <new-ip> <new-port>"
  std::vector<absl::string_view> parts =
      absl::StrSplit(AsAbsl(payload), ' ', absl::SkipEmpty());
  return parts.size() == 5 && parts[0] == AsAbsl(master_name);
}

bool SentinelSwitchWatch::Handle(const RedisReply& reply, bool* pong) {
  if (!reply.is_array() || reply.elements().empty() ||
      !reply.elements()[0].is_string()) {
    return false;
  }
  const std::vector<RedisReply>& e = reply.elements();
  const std::string& kind = e[0].str();
  if (kind == "pong") {
    *pong = true;
    return true;
  }
  if (kind == "subscribe") return true;
  if (kind != "message" || e.size() != 3 || !e[2].is_string()) return false;
  if (NamesMaster(e[2].str(), set_.master_name)) {
    switches_.fetch_add(1, std::memory_order_relaxed);
    generation_.fetch_add(1, std::memory_order_acq_rel);
  }
  return true;
}

void SentinelSwitchWatch::Listen(SentinelConnection* c) {
  if (!c->Send({"SUBSCRIBE", std::string(kChannel)}).ok()) return;
  RedisReply reply;
  absl::StatusOr<bool> got = c->ReadReplyWithin(&reply, set_.command_timeout);
  if (!got.ok() || !*got || !reply.is_array() || reply.elements().size() != 3 ||
      !reply.elements()[0].is_string() ||
      reply.elements()[0].str() != "subscribe") {
    return;  // refused (e.g. an ACL without channel rights) or no answer
  }
  subscriptions_.fetch_add(1, std::memory_order_relaxed);
  // Messages sent while no subscription was live are lost: make clients
  // ask the Sentinels again.
  generation_.fetch_add(1, std::memory_order_acq_rel);
  subscribed_.store(true, std::memory_order_release);
  bool awaiting_pong = false;
  while (!stopping()) {
    got = c->ReadReplyWithin(&reply, ping_interval_);
    if (!got.ok()) break;
    if (*got) {
      bool pong = false;
      if (!Handle(reply, &pong)) break;
      if (pong) awaiting_pong = false;
      continue;
    }
    // Quiet for a whole interval: is the Sentinel still there?
    if (awaiting_pong || !c->Send({"PING"}).ok()) break;
    awaiting_pong = true;
  }
  subscribed_.store(false, std::memory_order_release);
}

void SentinelSwitchWatch::Run() {
  // A write to a Sentinel that closed the connection must fail with EPIPE,
  // not kill the process: SIGPIPE is raised in the writing thread, and this
  // thread blocks it for its whole life (it runs nothing else).
  sigset_t pipe;
  sigemptyset(&pipe);
  sigaddset(&pipe, SIGPIPE);
  pthread_sigmask(SIG_BLOCK, &pipe, nullptr);
  const size_t n = set_.sentinels.size();
  size_t index = FirstSentinel(n);
  const absl::Duration max_pause = std::max(ping_interval_, absl::Seconds(1));
  absl::Duration pause = absl::Milliseconds(50);
  while (n > 0 && !stopping()) {
    absl::StatusOr<std::unique_ptr<SentinelConnection>> c =
        SentinelConnection::Open(set_, set_.sentinels[index % n]);
    if (c.ok()) {
      {
        MutexLock l(&mu_);
        if (stop_) return;
        live_ = c->get();
      }
      const int64_t before = subscriptions();
      Listen(c->get());
      {
        MutexLock l(&mu_);
        live_ = nullptr;
      }
      // A subscription that lived resets the pause.
      if (subscriptions() != before) pause = absl::Milliseconds(50);
    }
    index++;
    MutexLock l(&mu_);
    if (!stop_) stop_cv_.WaitFor(&mu_, absl::ToChronoNanoseconds(pause));
    pause = std::min(pause * 2, max_pause);
  }
}

}  // namespace siftdb
