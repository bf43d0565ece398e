// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Arena: a bump allocator for the MemTable's skiplist. Memory comes in
// 4 KiB blocks; a request larger than a quarter block gets a block of its
// own so the tail of the current block is not wasted. Everything is freed
// at once when the Arena is destroyed; there is no per-allocation free.
//
// Thread safety: Allocate/AllocateAligned need external synchronization
// (the MemTable has one writer at a time). MemoryUsage() may be called from
// any thread without locks.
// Ownership: returned memory belongs to the Arena and lives as long as it.

#ifndef SIFTDB_UTIL_ARENA_H_
#define SIFTDB_UTIL_ARENA_H_

#include <atomic>
#include <cstddef>
#include <memory>
#include <vector>

namespace siftdb {

class Arena {
 public:
  static constexpr size_t kBlockSize = 4096;
  // AllocateAligned's guarantee; enough for pointers and 64-bit integers.
  static constexpr size_t kAlignment = sizeof(void*) > 8 ? sizeof(void*)
                                                         : size_t{8};

  Arena() = default;
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() = default;

  // A pointer to `bytes` fresh bytes (no alignment promised). A request of
  // 0 bytes is served as 1 so the result is always a distinct pointer.
  char* Allocate(size_t bytes) {
    if (bytes == 0) bytes = 1;
    if (bytes <= alloc_bytes_remaining_) {
      char* result = alloc_ptr_;
      alloc_ptr_ += bytes;
      alloc_bytes_remaining_ -= bytes;
      return result;
    }
    return AllocateFallback(bytes);
  }

  // Like Allocate, aligned to kAlignment.
  char* AllocateAligned(size_t bytes);

  // Bytes obtained from the system so far (blocks plus bookkeeping).
  size_t MemoryUsage() const {
    return memory_usage_.load(std::memory_order_relaxed);
  }

 private:
  char* AllocateFallback(size_t bytes);
  char* AllocateNewBlock(size_t block_bytes);

  // Bump region of the current block.
  char* alloc_ptr_ = nullptr;
  size_t alloc_bytes_remaining_ = 0;
  std::vector<std::unique_ptr<char[]>> blocks_;
  std::atomic<size_t> memory_usage_{0};
};

}  // namespace siftdb

#endif  // SIFTDB_UTIL_ARENA_H_
