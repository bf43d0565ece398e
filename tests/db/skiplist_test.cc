// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/skiplist.h"

#include <atomic>
#include <cstring>
#include <set>
#include <thread>
#include <vector>

#include "gtest/gtest.h"
#include "util/arena.h"
#include "util/random.h"

namespace siftdb {
namespace skiplist_test {

using Key = uint64_t;

struct Cmp {
  int operator()(const Key& a, const Key& b) const {
    return a < b ? -1 : (a > b ? 1 : 0);
  }
};

TEST(SkipListTest, Empty) {
  Arena arena;
  SkipList<Key, Cmp> list(Cmp(), &arena);
  EXPECT_FALSE(list.Contains(10));
  SkipList<Key, Cmp>::Iterator it(&list);
  EXPECT_FALSE(it.Valid());
  it.SeekToFirst();
  EXPECT_FALSE(it.Valid());
  it.Seek(100);
  EXPECT_FALSE(it.Valid());
  it.SeekToLast();
  EXPECT_FALSE(it.Valid());
}

TEST(SkipListTest, InsertAndLookupMatchesStdSet) {
  for (int n : {1, 2, 10, 100, 2000}) {
    Arena arena;
    SkipList<Key, Cmp> list(Cmp(), &arena);
    std::set<Key> keys;
    Random rnd(n);
    while (static_cast<int>(keys.size()) < n) {
      Key k = rnd.Uniform(5000);
      if (keys.insert(k).second) list.Insert(k);
    }
    for (Key i = 0; i < 5000; i++) {
      ASSERT_EQ(list.Contains(i), keys.count(i) == 1) << i;
    }
    // Forward iteration and seeks.
    SkipList<Key, Cmp>::Iterator it(&list);
    it.SeekToFirst();
    for (Key k : keys) {
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(k, it.key());
      it.Next();
    }
    EXPECT_FALSE(it.Valid());
    for (Key target = 0; target < 5001; target += 7) {
      it.Seek(target);
      auto expected = keys.lower_bound(target);
      if (expected == keys.end()) {
        EXPECT_FALSE(it.Valid());
      } else {
        ASSERT_TRUE(it.Valid());
        EXPECT_EQ(*expected, it.key());
      }
    }
    // Backward iteration.
    it.SeekToLast();
    for (auto r = keys.rbegin(); r != keys.rend(); ++r) {
      ASSERT_TRUE(it.Valid());
      ASSERT_EQ(*r, it.key());
      it.Prev();
    }
    EXPECT_FALSE(it.Valid());
  }
}

// Insert skips its search when a key belongs right after the previous
// insert. Runs of ascending keys, interleaved with jumps backwards and
// forwards, exercise both paths and the switch between them; the list
// must stay exactly the set of keys inserted, at every level (Seek walks
// them all).
TEST(SkipListTest, AscendingRunsAndJumpsMatchStdSet) {
  Arena arena;
  SkipList<Key, Cmp> list(Cmp(), &arena);
  std::set<Key> keys;
  Random rnd(17);
  for (int run = 0; run < 300; run++) {
    Key k = rnd.Uniform(1000000);
    const int length = 1 + static_cast<int>(rnd.Uniform(40));
    for (int i = 0; i < length; i++, k += 1 + rnd.Uniform(3)) {
      if (keys.insert(k).second) list.Insert(k);
    }
  }
  // Keys just before and after existing ones: the hint must refuse them.
  for (Key k : std::set<Key>(keys)) {
    if (k > 0 && keys.insert(k - 1).second) list.Insert(k - 1);
  }
  SkipList<Key, Cmp>::Iterator it(&list);
  it.SeekToFirst();
  for (Key k : keys) {
    ASSERT_TRUE(it.Valid());
    ASSERT_EQ(k, it.key());
    it.Next();
  }
  EXPECT_FALSE(it.Valid());
  for (Key target = 0; target < 1000100; target += 997) {
    it.Seek(target);
    auto expected = keys.lower_bound(target);
    ASSERT_EQ(expected != keys.end(), it.Valid()) << target;
    if (it.Valid()) {
      ASSERT_EQ(*expected, it.key()) << target;
    }
  }
  for (Key k : keys) ASSERT_TRUE(list.Contains(k)) << k;
}

// Keys that point into memory from AllocateKey, as the MemTable's do: the
// bytes stay where they were written and the order is the keys' order.
struct CharPtrCmp {
  int operator()(const char* a, const char* b) const {
    const uint64_t x = DecodeKey(a), y = DecodeKey(b);
    return x < y ? -1 : (x > y ? 1 : 0);
  }
  static uint64_t DecodeKey(const char* p) {
    uint64_t v;
    std::memcpy(&v, p, sizeof(v));
    return v;
  }
};

TEST(SkipListTest, AllocateKeyHoldsKeyBytes) {
  Arena arena;
  SkipList<const char*, CharPtrCmp> list(CharPtrCmp(), &arena);
  std::set<uint64_t> keys;
  Random rnd(5);
  for (int i = 0; i < 3000; i++) {
    // Sizes vary so nodes land at every alignment, and some are big
    // enough for a block of their own.
    const uint64_t k = (i % 3 == 0) ? 5000000 + i : rnd.Uniform(4000000);
    if (!keys.insert(k).second) continue;
    const size_t size = sizeof(k) + rnd.Uniform(i % 50 == 0 ? 3000 : 40);
    char* mem = list.AllocateKey(size);
    std::memset(mem, 0xab, size);
    std::memcpy(mem, &k, sizeof(k));
    list.Insert(mem);
  }
  SkipList<const char*, CharPtrCmp>::Iterator it(&list);
  it.SeekToFirst();
  for (uint64_t k : keys) {
    ASSERT_TRUE(it.Valid());
    ASSERT_EQ(k, CharPtrCmp::DecodeKey(it.key()));
    it.Next();
  }
  EXPECT_FALSE(it.Valid());
}

// One writer inserts increasing keys while readers scan: every reader must
// see a sorted sequence, and every key published before its scan began.
TEST(SkipListTest, ConcurrentReadersSeeConsistentList) {
  Arena arena;
  SkipList<Key, Cmp> list(Cmp(), &arena);
  constexpr Key kKeys = 20000;
  std::atomic<Key> published{0};
  std::atomic<bool> done{false};
  std::atomic<int> failures{0};

  auto reader = [&] {
    while (!done.load(std::memory_order_acquire)) {
      const Key floor = published.load(std::memory_order_acquire);
      SkipList<Key, Cmp>::Iterator it(&list);
      Key expected = 0;
      Key count = 0;
      for (it.SeekToFirst(); it.Valid(); it.Next()) {
        // Keys are inserted as 0, 2, 4, ... in random order, but those below
        // `floor` were all present before the scan started.
        if (it.key() < expected) failures++;
        expected = it.key() + 1;
        count++;
      }
      if (count < floor) failures++;
    }
  };
  std::vector<std::thread> readers;
  for (int i = 0; i < 2; i++) readers.emplace_back(reader);

  for (Key i = 0; i < kKeys; i++) {
    list.Insert(i * 2);
    published.store(i + 1, std::memory_order_release);
  }
  done.store(true, std::memory_order_release);
  for (auto& t : readers) t.join();
  EXPECT_EQ(0, failures.load());
  for (Key i = 0; i < kKeys; i++) ASSERT_TRUE(list.Contains(i * 2));
}

}  // namespace skiplist_test
}  // namespace siftdb
