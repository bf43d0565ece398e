// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/arena.h"

#include <cstdint>

namespace siftdb {

static_assert((Arena::kAlignment & (Arena::kAlignment - 1)) == 0,
              "alignment must be a power of two");

char* Arena::AllocateAligned(size_t bytes) {
  if (bytes == 0) bytes = 1;
  const size_t misalign =
      reinterpret_cast<uintptr_t>(alloc_ptr_) & (kAlignment - 1);
  const size_t slop = misalign == 0 ? 0 : kAlignment - misalign;
  const size_t needed = bytes + slop;
  if (needed <= alloc_bytes_remaining_) {
    char* result = alloc_ptr_ + slop;
    alloc_ptr_ += needed;
    alloc_bytes_remaining_ -= needed;
    return result;
  }
  // New blocks come from operator new[], aligned at least to
  // __STDCPP_DEFAULT_NEW_ALIGNMENT__ >= kAlignment.
  return AllocateFallback(bytes);
}

char* Arena::AllocateFallback(size_t bytes) {
  if (bytes > kBlockSize / 4) {
    // Big: its own block, keeping the current block's tail for later.
    return AllocateNewBlock(bytes);
  }
  // Small: abandon the tail of the current block and start a new one.
  alloc_ptr_ = AllocateNewBlock(kBlockSize);
  alloc_bytes_remaining_ = kBlockSize;
  char* result = alloc_ptr_;
  alloc_ptr_ += bytes;
  alloc_bytes_remaining_ -= bytes;
  return result;
}

char* Arena::AllocateNewBlock(size_t block_bytes) {
  blocks_.push_back(std::make_unique_for_overwrite<char[]>(block_bytes));
  memory_usage_.fetch_add(block_bytes + sizeof(std::unique_ptr<char[]>),
                          std::memory_order_relaxed);
  return blocks_.back().get();
}

}  // namespace siftdb
