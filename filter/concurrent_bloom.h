// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ConcurrentBloom: an in-memory, cache-line-blocked Bloom filter that keys
// are added to while other threads query it. The MemTable keeps one over
// the user keys it holds, so that point reads and seeks of keys it does
// not hold skip its skiplist.
//
// Probe layout: the same as the persisted blocked filter
// (filter/blocked_bloom.h): the 64-bit key hash picks one 512-bit block by
// BlockedBloomBlockIndex and k bits inside it by the
// kBlockedProbePowers sequence. It is never persisted, so its k and size
// are free to change.
//
// Thread safety: MayMatch() may run from any threads, concurrently with
// each other and with Add(); Add() needs external synchronization (one
// writer at a time, as MemTable::Add). Words are updated with a relaxed
// load and store (no locked instruction: there is one writer) and read
// with relaxed loads: a reader is guaranteed to see a key's bits when the Add()
// happens-before its query. That is the only case in which a "no" would be
// a false negative: the DB publishes a write's sequence number under its
// mutex after the MemTable insert, and a reader takes its sequence number
// under the same mutex, so every key it may see was added before.
// Not copyable.

#ifndef SIFTDB_FILTER_CONCURRENT_BLOOM_H_
#define SIFTDB_FILTER_CONCURRENT_BLOOM_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace siftdb {

class ConcurrentBloom {
 public:
  // Probes per key. With the MemTable's default sizing (1/16 of the write
  // buffer for entries of ~100 bytes: ~80 bits per key) six probes give a
  // false positive rate far below 0.1%; at 10 bits per key still ~1%.
  static constexpr int kProbes = 6;

  // A filter of num_bytes rounded down to whole 64-byte blocks. Fewer than
  // 64 bytes: a filter that stores nothing and always answers "may match".
  explicit ConcurrentBloom(size_t num_bytes);
  ConcurrentBloom(const ConcurrentBloom&) = delete;
  ConcurrentBloom& operator=(const ConcurrentBloom&) = delete;
  ~ConcurrentBloom();

  // Records the key whose FilterKeyHash is `hash`. REQUIRES: no concurrent
  // Add().
  void Add(uint64_t hash);

  // False only when no key with this hash was added (see the ordering note
  // above). Before the first Add() (an empty MemTable's filter) every
  // query is "no" without touching the bit array.
  bool MayMatch(uint64_t hash) const;

  // Starts loading the block MayMatch(hash) reads (a batch of lookups
  // overlaps its cache misses). No effect on answers.
  void Prefetch(uint64_t hash) const;

  // Bytes of the bit array (0 when disabled).
  size_t MemoryUsage() const;

 private:
  struct alignas(64) Block {
    std::atomic<uint64_t> words[8];
  };
  const uint32_t num_blocks_;
  std::unique_ptr<Block[]> blocks_;  // num_blocks_ zeroed blocks, or null
  // Set (relaxed, as the words) by the first Add(): a reader that must see
  // an Add()'s bits sees this too.
  std::atomic<bool> has_keys_{false};
};

}  // namespace siftdb

#endif  // SIFTDB_FILTER_CONCURRENT_BLOOM_H_
