// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// WriteController: how fast writers may go while compaction falls behind.
// DBImpl measures the compaction debt (level-0 files, estimated pending
// compaction bytes) against the soft and hard limits of Options and tells
// the controller; a write group's leader asks it how long to wait before
// writing, and charges it with the bytes the group wrote.
//
//  * Below every soft limit: no delay, no accounting.
//  * Between soft and hard limits ("delayed"): writes proceed at a rate
//    that falls smoothly with the debt, from Options::delayed_write_rate at
//    the soft limit to a sixteenth of it near the hard limit. The rate is
//    enforced over time, not per write: each group's bytes push a virtual
//    clock forward by bytes / rate, and a leader waits only when that clock
//    runs more than kMinDelayMicros ahead of now, so small writes are not
//    each charged a sleep, and a burst after an idle spell is not punished.
//  * At a hard limit ("stopped"): DBImpl waits for compactions, as before.
//
// Thread safety: not thread-safe; DBImpl calls it with its mutex held.

#ifndef SIFTDB_DB_WRITE_CONTROLLER_H_
#define SIFTDB_DB_WRITE_CONTROLLER_H_

#include <cstdint>

namespace siftdb {

// The compaction debt, and where it sits between the soft and hard limits.
struct WritePressure {
  // < 0: below every soft limit. [0, 1): delayed, 0 at a soft limit and
  // toward 1 near a hard limit. >= 1: at or past a hard limit (stopped).
  double level = -1;
  const char* cause = nullptr;  // "level0" or "pending-compaction-bytes"
};

// Pressure from one measure: value against its soft and hard limits (a
// limit of 0 is off). soft <= hard when both are on.
WritePressure PressureOf(uint64_t value, uint64_t soft, uint64_t hard,
                         const char* cause);
// The larger of two pressures.
WritePressure Stronger(const WritePressure& a, const WritePressure& b);

class WriteController {
 public:
  // A wait shorter than this is not slept; it stays owed.
  static constexpr uint64_t kMinDelayMicros = 1000;
  // A single wait is at most this long before the leader looks again (the
  // debt may have fallen meanwhile).
  static constexpr uint64_t kMaxDelayMicros = 100000;

  // delayed_write_rate: bytes/s at a soft limit (0: 16 MiB/s).
  explicit WriteController(uint64_t delayed_write_rate);

  // The current pressure (from DBImpl, under its mutex).
  void SetPressure(const WritePressure& p);
  bool delayed() const { return pressure_.level >= 0 && pressure_.level < 1; }
  bool stopped() const { return pressure_.level >= 1; }
  const WritePressure& pressure() const { return pressure_; }
  // Bytes per second allowed now (0 when not delayed).
  uint64_t rate() const;

  // How long the next group should wait before writing, at now_micros
  // (0 when not delayed or nothing is owed beyond kMinDelayMicros); at most
  // kMaxDelayMicros.
  uint64_t DelayMicros(uint64_t now_micros) const;
  // A group wrote `bytes` at now_micros; while delayed it is owed at rate().
  void Charge(uint64_t now_micros, uint64_t bytes);

 private:
  const uint64_t delayed_write_rate_;
  WritePressure pressure_;
  // While delayed: the time (ns, on the now_micros clock) at which
  // everything written so far has been paid for at rate() (0: nothing owed).
  uint64_t paid_until_nanos_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_DB_WRITE_CONTROLLER_H_
