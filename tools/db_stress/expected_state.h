// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ExpectedState: what db_stress has written, kept in a memory-mapped file
// so that it survives the SIGKILL of the process that wrote it.
//
// For each key index k there are two 32-bit words:
//   acked[k]    the last write the DB acknowledged for k
//   pending[k]  the write in flight for k (0: none)
// A write id is (sequence per key) | kDeleteBit for a deletion; 0 means
// "never written" and counts as absent. A writer sets pending, calls the
// DB, then sets acked and clears pending; the page cache keeps the words
// across a process crash, so after one the DB must hold acked[k] or
// pending[k] for every k.
//
// Thread safety: each key must be written by one thread at a time (the
// stress threads partition the keys); distinct keys are independent.

#ifndef SIFTDB_TOOLS_DB_STRESS_EXPECTED_STATE_H_
#define SIFTDB_TOOLS_DB_STRESS_EXPECTED_STATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "absl/status/statusor.h"

namespace siftdb::stress {

inline constexpr uint32_t kDeleteBit = 0x80000000u;

inline bool IsAbsent(uint32_t id) { return id == 0 || (id & kDeleteBit); }

class ExpectedState {
 public:
  // Opens path, creating it (all keys never written) when missing or when
  // it was made for another key count.
  static absl::StatusOr<std::unique_ptr<ExpectedState>> Open(
      const std::string& path, uint32_t num_keys);
  ExpectedState(const ExpectedState&) = delete;
  ExpectedState& operator=(const ExpectedState&) = delete;
  ~ExpectedState();

  uint32_t num_keys() const { return num_keys_; }
  uint32_t acked(uint32_t k) const {
    return words_[2 * k].load(std::memory_order_relaxed);
  }
  uint32_t pending(uint32_t k) const {
    return words_[2 * k + 1].load(std::memory_order_relaxed);
  }
  void SetPending(uint32_t k, uint32_t id) {
    words_[2 * k + 1].store(id, std::memory_order_release);
  }
  void Ack(uint32_t k, uint32_t id) {
    words_[2 * k].store(id, std::memory_order_release);
    words_[2 * k + 1].store(0, std::memory_order_release);
  }
  // The id a new write of k takes (one more than any seen).
  uint32_t NextId(uint32_t k) const {
    const uint32_t a = acked(k) & ~kDeleteBit;
    const uint32_t p = pending(k) & ~kDeleteBit;
    return (a > p ? a : p) + 1;
  }

 private:
  ExpectedState(uint32_t num_keys, void* map, size_t map_size);

  const uint32_t num_keys_;
  void* const map_;
  const size_t map_size_;
  std::atomic<uint32_t>* words_;
};

}  // namespace siftdb::stress

#endif  // SIFTDB_TOOLS_DB_STRESS_EXPECTED_STATE_H_
