// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "filter/concurrent_bloom.h"

#include <algorithm>
#include <limits>

#include "filter/blocked_bloom.h"

namespace siftdb {
namespace {

uint32_t BlocksFor(size_t num_bytes) {
  const size_t blocks = num_bytes / sizeof(uint64_t[8]);
  return static_cast<uint32_t>(
      std::min<size_t>(blocks, std::numeric_limits<uint32_t>::max()));
}

}  // namespace

ConcurrentBloom::ConcurrentBloom(size_t num_bytes)
    : num_blocks_(BlocksFor(num_bytes)) {
  // Value-initialization zeroes every word (std::atomic's default
  // constructor value-initializes since C++20).
  if (num_blocks_ > 0) blocks_ = std::make_unique<Block[]>(num_blocks_);
}

ConcurrentBloom::~ConcurrentBloom() = default;

void ConcurrentBloom::Add(uint64_t hash) {
  if (num_blocks_ == 0) return;
  if (!has_keys_.load(std::memory_order_relaxed)) {
    has_keys_.store(true, std::memory_order_relaxed);
  }
  Block& block = blocks_[BlockedBloomBlockIndex(hash, num_blocks_)];
  const uint32_t lo = static_cast<uint32_t>(hash);
  for (int i = 0; i < kProbes; i++) {
    const uint32_t bit = BlockedBloomProbeBit(lo, i);  // 0..511
    std::atomic<uint64_t>& word = block.words[bit >> 6];
    word.store(
        word.load(std::memory_order_relaxed) | (uint64_t{1} << (bit & 63)),
        std::memory_order_relaxed);
  }
}

void ConcurrentBloom::Prefetch(uint64_t hash) const {
  if (num_blocks_ != 0) {
    __builtin_prefetch(&blocks_[BlockedBloomBlockIndex(hash, num_blocks_)]);
  }
}

bool ConcurrentBloom::MayMatch(uint64_t hash) const {
  if (num_blocks_ == 0) return true;
  // Nothing added yet: no bit is set, and the (likely cold) block need not
  // be read to know it.
  if (!has_keys_.load(std::memory_order_relaxed)) return false;
  const Block& block = blocks_[BlockedBloomBlockIndex(hash, num_blocks_)];
  const uint32_t lo = static_cast<uint32_t>(hash);
  // Gather the probes' masks per word first: one load per touched word and
  // no early exit (a data-dependent branch per probe mispredicts for the
  // absent keys this filter exists for).
  uint64_t want[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  for (int i = 0; i < kProbes; i++) {
    const uint32_t bit = BlockedBloomProbeBit(lo, i);
    want[bit >> 6] |= uint64_t{1} << (bit & 63);
  }
  uint64_t missing = 0;
  for (int w = 0; w < 8; w++) {
    missing |= want[w] & ~block.words[w].load(std::memory_order_relaxed);
  }
  return missing == 0;
}

size_t ConcurrentBloom::MemoryUsage() const {
  return size_t{num_blocks_} * sizeof(Block);
}

}  // namespace siftdb
