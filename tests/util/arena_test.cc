// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "util/arena.h"

#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "gtest/gtest.h"
#include "util/random.h"

namespace siftdb {
namespace arena_test {

TEST(ArenaTest, EmptyUsesNoMemory) {
  Arena arena;
  EXPECT_EQ(0u, arena.MemoryUsage());
}

TEST(ArenaTest, ZeroByteRequestsGetDistinctPointers) {
  Arena arena;
  char* a = arena.Allocate(0);
  char* b = arena.Allocate(0);
  ASSERT_NE(nullptr, a);
  EXPECT_NE(a, b);
}

TEST(ArenaTest, SmallAllocationsShareBlocks) {
  Arena arena;
  for (int i = 0; i < 100; i++) arena.Allocate(10);  // 1000 bytes
  const size_t usage = arena.MemoryUsage();
  EXPECT_GE(usage, Arena::kBlockSize);
  EXPECT_LT(usage, 2 * Arena::kBlockSize);
}

TEST(ArenaTest, LargeRequestGetsOwnBlockKeepingCurrentTail) {
  Arena arena;
  char* first = arena.Allocate(16);
  const size_t before = arena.MemoryUsage();
  char* big = arena.Allocate(100000);
  EXPECT_GE(arena.MemoryUsage(), before + 100000);
  // The small allocation after it continues in the first block.
  char* next = arena.Allocate(16);
  EXPECT_EQ(first + 16, next);
  std::memset(big, 0xab, 100000);  // whole block writable
}

TEST(ArenaTest, AlignedAllocationsAreAligned) {
  Arena arena;
  Random rnd(17);
  for (int i = 0; i < 2000; i++) {
    arena.Allocate(rnd.Uniform(13) + 1);  // knock the bump pointer around
    char* p = arena.AllocateAligned(rnd.Uniform(200) + 1);
    EXPECT_EQ(0u, reinterpret_cast<uintptr_t>(p) % Arena::kAlignment);
  }
}

// Many allocations of varied sizes keep their contents (no overlap), and
// usage tracks the bytes handed out within a block's worth of slack.
TEST(ArenaTest, RandomAllocationsDoNotOverlap) {
  Arena arena;
  Random rnd(301);
  std::vector<std::pair<size_t, char*>> allocated;
  size_t bytes = 0;
  for (int i = 0; i < 20000; i++) {
    size_t s;
    if (i % (20000 / 10) == 0) {
      s = i;
    } else {
      s = rnd.OneIn(4000)
              ? rnd.Uniform(6000)
              : (rnd.OneIn(10) ? rnd.Uniform(100) : rnd.Uniform(20));
    }
    if (s == 0) s = 1;
    char* r = rnd.OneIn(10) ? arena.AllocateAligned(s) : arena.Allocate(s);
    for (size_t b = 0; b < s; b++) r[b] = static_cast<char>(i % 256);
    bytes += s;
    allocated.emplace_back(s, r);
    ASSERT_GE(arena.MemoryUsage(), bytes);
    if (i > 2000) {
      // At most ~10% waste, plus the partly used current block.
      ASSERT_LE(arena.MemoryUsage(), bytes * 1.10 + 2 * Arena::kBlockSize);
    }
  }
  for (size_t i = 0; i < allocated.size(); i++) {
    const auto& [size, p] = allocated[i];
    for (size_t b = 0; b < size; b++) {
      ASSERT_EQ(static_cast<char>(i % 256), p[b]) << "allocation " << i;
    }
  }
}

}  // namespace arena_test
}  // namespace siftdb
