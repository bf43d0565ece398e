// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/skiplist.h"

#include <atomic>
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
