// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/db_stress/powerloss.h"

#include <atomic>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "siftdb/db.h"
#include "util/random.h"
#include "util/testing/fault_injection_env.h"

namespace siftdb::stress {
namespace {

// Records, per key, every acknowledged write with the order of its
// acknowledgement, and the newest "durability point": a synced write makes
// durable every write acknowledged before it began.
class DurabilityTracker : public WriteObserver {
 public:
  explicit DurabilityTracker(uint32_t num_keys) : history_(num_keys) {}

  uint64_t Begin() override { return ticket_.load(); }
  void Acked(uint32_t k, uint32_t id, bool sync,
             uint64_t begin_ticket) override {
    // Only the thread owning k touches history_[k].
    history_[k].push_back({id, ++ticket_});
    if (sync) {
      uint64_t prev = durable_.load();
      while (prev < begin_ticket &&
             !durable_.compare_exchange_weak(prev, begin_ticket)) {
      }
    }
  }

  // id (0: absent) is a correct post-crash state of k with pending in
  // flight.
  bool Acceptable(uint32_t k, uint32_t found, uint32_t pending) const {
    const uint64_t durable = durable_.load();
    auto matches = [found](uint32_t id) {
      return IsAbsent(id) ? found == 0 : id == found;
    };
    if (pending != 0 && matches(pending)) return true;
    const std::vector<Entry>& h = history_[k];
    // The newest write acknowledged by the durability point, and anything
    // after it.
    size_t base = h.size();
    for (size_t i = 0; i < h.size(); i++) {
      if (h[i].ticket <= durable) base = i;
    }
    if (base == h.size()) {
      // Nothing is certainly durable: never written is fine too.
      if (found == 0) return true;
      base = 0;
    }
    for (size_t i = base; i < h.size(); i++) {
      if (matches(h[i].id)) return true;
    }
    return false;
  }

  // After a verified reopen: the state found is the new starting point.
  void Reset(uint32_t k, uint32_t id) {
    history_[k].clear();
    history_[k].push_back({id, 0});
  }

 private:
  struct Entry {
    uint32_t id;
    uint64_t ticket;
  };
  std::vector<std::vector<Entry>> history_;
  std::atomic<uint64_t> ticket_{1};
  std::atomic<uint64_t> durable_{0};
};

}  // namespace

absl::StatusOr<std::string> RunPowerLossCycles(const std::string& db_path,
                                               Options options,
                                               const StressConfig& config,
                                               uint64_t cycles) {
  FaultInjectionEnv env(Env::Default());
  options.env = &env;
  auto state =
      ExpectedState::Open(db_path + ".expected-powerloss", config.num_keys);
  if (!state.ok()) return state.status();
  DurabilityTracker tracker(config.num_keys);
  for (uint32_t k = 0; k < config.num_keys; k++) {
    tracker.Reset(k, (*state)->acked(k));
  }
  Random rnd(config.seed);
  uint64_t present = 0, lost_in_flight = 0;
  for (uint64_t cycle = 0; cycle < cycles; cycle++) {
    auto db = DB::Open(options, db_path);
    if (!db.ok()) {
      return absl::Status(db.status().code(),
                          absl::StrFormat("cycle %d: reopen: %s", cycle,
                                          db.status().message()));
    }
    std::atomic<bool> stop{false};
    StressConfig run = config;
    run.seed = config.seed * 7919 + cycle;
    std::thread crasher([&] {
      std::this_thread::sleep_for(
          std::chrono::milliseconds(20 + rnd.Uniform(300)));
      env.SetFilesystemActive(false);  // the power goes out
      stop.store(true);
    });
    absl::Status s = RunWorkload(db->get(), state->get(), run, &stop,
                                 /*tolerate_write_errors=*/true, &tracker);
    crasher.join();
    if (!s.ok()) {
      return absl::Status(s.code(),
                          absl::StrFormat("cycle %d: %s", cycle, s.message()));
    }
    db->reset();
    s = env.SimulatePowerLoss();
    env.SetFilesystemActive(true);
    if (!s.ok()) return s;

    db = DB::Open(options, db_path);
    if (!db.ok()) {
      return absl::Status(db.status().code(),
                          absl::StrFormat("cycle %d: open after power loss: %s",
                                          cycle, db.status().message()));
    }
    ExpectedState* st = state->get();
    auto result = Verify(db->get(), st, [&](uint32_t k, uint32_t found) {
      return tracker.Acceptable(k, found, st->pending(k));
    });
    if (!result.ok()) {
      return absl::Status(
          result.status().code(),
          absl::StrFormat("cycle %d: %s", cycle, result.status().message()));
    }
    for (uint32_t k = 0; k < config.num_keys; k++) {
      tracker.Reset(k, st->acked(k));
    }
    present = result->keys_present;
    lost_in_flight += result->keys_in_flight_lost;
  }
  return absl::StrFormat(
      "%d cycles ok; %d keys present at the end; %d in-flight writes lost "
      "in total",
      cycles, present, lost_in_flight);
}

}  // namespace siftdb::stress
