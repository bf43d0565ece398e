// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// SkipList: an ordered set of keys over an Arena, the MemTable's index.
//
// Thread safety: one writer at a time (externally synchronized) may Insert
// while any number of readers call Contains or use iterators without any
// lock. This holds because
//   (1) nodes are never removed or freed until the SkipList is destroyed
//       (the arena owns them), and
//   (2) a node is fully initialised before it is published: its key and
//       next pointers are written first, then the predecessor's next pointer
//       is stored with release semantics; readers load with acquire.
// Keys must be unique (the MemTable guarantees it: every entry carries its
// own sequence number).
//
// Insert is cheap for keys arriving in order: the writer remembers where
// the previous key went and skips the search when the new key belongs
// right after it. A key that points into its own bytes can share the
// node's allocation (AllocateKey), so a search step reads the node and
// the key's first bytes from neighbouring memory.

#ifndef SIFTDB_DB_SKIPLIST_H_
#define SIFTDB_DB_SKIPLIST_H_

#include <atomic>
#include <cassert>
#include <cstdint>
#include <new>

#include "util/arena.h"
#include "util/random.h"

namespace siftdb {

template <typename Key, class Compare>
class SkipList {
 private:
  struct Node;

 public:
  // compare(a, b) returns <0, 0, >0. The arena must outlive the list.
  SkipList(Compare compare, Arena* arena);
  SkipList(const SkipList&) = delete;
  SkipList& operator=(const SkipList&) = delete;

  // REQUIRES: no equal key is present; external synchronization of writers.
  void Insert(const Key& key);

  // Returns `bytes` of arena memory placed right after the links of a new
  // node; the next Insert uses that node. For a key that points into those
  // bytes. REQUIRES: external synchronization of writers; an Insert
  // follows before the next AllocateKey.
  char* AllocateKey(size_t bytes);
  bool Contains(const Key& key) const;
  // True when no Insert finished before this call (safe beside a writer:
  // an insert publishes its node with a release store).
  bool Empty() const { return head_->Next(0) == nullptr; }

  // A cursor over the list; valid while the list lives.
  class Iterator {
   public:
    explicit Iterator(const SkipList* list) : list_(list), node_(nullptr) {}
    bool Valid() const { return node_ != nullptr; }
    const Key& key() const { return node_->key; }
    void Next() { node_ = node_->Next(0); }
    // Linear in the height search: finds the last node < key.
    void Prev() {
      node_ = list_->FindLessThan(node_->key);
      if (node_ == list_->head_) node_ = nullptr;
    }
    void Seek(const Key& target) {
      node_ = list_->FindGreaterOrEqual(target, nullptr);
    }
    void SeekToFirst() { node_ = list_->head_->Next(0); }
    void SeekToLast() {
      node_ = list_->FindLast();
      if (node_ == list_->head_) node_ = nullptr;
    }

   private:
    const SkipList* list_;
    Node* node_;
  };

 private:
  static constexpr int kMaxHeight = 12;
  static constexpr unsigned kBranching = 4;  // 1 in 4 nodes grows a level

  int GetMaxHeight() const {
    return max_height_.load(std::memory_order_relaxed);
  }
  static size_t NodeSize(int height) {
    return sizeof(Node) + sizeof(std::atomic<Node*>) * (height - 1);
  }
  Node* NewNode(const Key& key, int height);
  // True when key belongs right after the previously inserted node, so
  // prev_ already holds its predecessors.
  bool FollowsLastInsert(const Key& key) const;
  int RandomHeight();
  bool Equal(const Key& a, const Key& b) const { return compare_(a, b) == 0; }
  bool KeyIsAfterNode(const Key& key, Node* n) const {
    return n != nullptr && compare_(n->key, key) < 0;
  }
  // First node >= key; fills prev[level] with the last node < key per level
  // when prev is non-null.
  Node* FindGreaterOrEqual(const Key& key, Node** prev) const;
  Node* FindLessThan(const Key& key) const;  // head_ when none
  Node* FindLast() const;                    // head_ when empty

  Compare const compare_;
  Arena* const arena_;
  Node* const head_;
  // Height of the tallest node. Readers may see a stale value; that is safe
  // because head_'s upper links then read as nullptr.
  std::atomic<int> max_height_;
  Random rnd_;  // writer only
  // Writer only: per level, the last node before the most recently
  // inserted key (that node itself at the levels it spans); head_ above
  // the current height.
  Node* prev_[kMaxHeight];
  // Writer only: the node AllocateKey reserved for the next Insert.
  char* reserved_node_ = nullptr;
  int reserved_height_ = 0;
};

template <typename Key, class Compare>
struct SkipList<Key, Compare>::Node {
  explicit Node(const Key& k) : key(k) {}
  Key const key;

  Node* Next(int n) { return next_[n].load(std::memory_order_acquire); }
  void SetNext(int n, Node* x) { next_[n].store(x, std::memory_order_release); }
  Node* NoBarrierNext(int n) {
    return next_[n].load(std::memory_order_relaxed);
  }
  void NoBarrierSetNext(int n, Node* x) {
    next_[n].store(x, std::memory_order_relaxed);
  }

 private:
  // Really height entries long; allocated past the end of the node.
  std::atomic<Node*> next_[1];
};

template <typename Key, class Compare>
typename SkipList<Key, Compare>::Node* SkipList<Key, Compare>::NewNode(
    const Key& key, int height) {
  char* mem = arena_->AllocateAligned(NodeSize(height));
  return new (mem) Node(key);
}

template <typename Key, class Compare>
char* SkipList<Key, Compare>::AllocateKey(size_t bytes) {
  assert(reserved_node_ == nullptr);
  reserved_height_ = RandomHeight();
  const size_t node_size = NodeSize(reserved_height_);
  reserved_node_ = arena_->AllocateAligned(node_size + bytes);
  return reserved_node_ + node_size;
}

template <typename Key, class Compare>
int SkipList<Key, Compare>::RandomHeight() {
  int height = 1;
  while (height < kMaxHeight && rnd_.OneIn(kBranching)) height++;
  return height;
}

template <typename Key, class Compare>
typename SkipList<Key, Compare>::Node*
SkipList<Key, Compare>::FindGreaterOrEqual(const Key& key, Node** prev) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  // The node that ended the search one level up: known to be >= key, so
  // meeting it again one level down needs no comparison.
  Node* known_not_before = nullptr;
  while (true) {
    Node* next = x->Next(level);
    if (next != known_not_before && KeyIsAfterNode(key, next)) {
      x = next;
    } else {
      if (prev != nullptr) prev[level] = x;
      if (level == 0) return next;
      known_not_before = next;
      level--;
    }
  }
}

template <typename Key, class Compare>
typename SkipList<Key, Compare>::Node* SkipList<Key, Compare>::FindLessThan(
    const Key& key) const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (next == nullptr || compare_(next->key, key) >= 0) {
      if (level == 0) return x;
      level--;
    } else {
      x = next;
    }
  }
}

template <typename Key, class Compare>
typename SkipList<Key, Compare>::Node* SkipList<Key, Compare>::FindLast()
    const {
  Node* x = head_;
  int level = GetMaxHeight() - 1;
  while (true) {
    Node* next = x->Next(level);
    if (next == nullptr) {
      if (level == 0) return x;
      level--;
    } else {
      x = next;
    }
  }
}

template <typename Key, class Compare>
SkipList<Key, Compare>::SkipList(Compare compare, Arena* arena)
    : compare_(compare),
      arena_(arena),
      head_(NewNode(Key(), kMaxHeight)),
      max_height_(1),
      rnd_(0x5eed5eed) {
  for (int i = 0; i < kMaxHeight; i++) {
    head_->SetNext(i, nullptr);
    prev_[i] = head_;
  }
}

template <typename Key, class Compare>
bool SkipList<Key, Compare>::FollowsLastInsert(const Key& key) const {
  // prev_[0] is the last node inserted. No node lies between it and key
  // at level 0, hence at no level, so prev_ holds key's predecessors.
  Node* const last = prev_[0];
  if (last == head_ || compare_(last->key, key) >= 0) return false;
  Node* const next = last->NoBarrierNext(0);
  return next == nullptr || compare_(next->key, key) > 0;
}

template <typename Key, class Compare>
void SkipList<Key, Compare>::Insert(const Key& key) {
  // prev_ is only written by the writer, so reading it needs no barrier.
  if (!FollowsLastInsert(key)) {
    [[maybe_unused]] Node* const next = FindGreaterOrEqual(key, prev_);
    assert(next == nullptr || !Equal(key, next->key));
  }

  int height;
  Node* x;
  if (reserved_node_ != nullptr) {
    height = reserved_height_;
    x = new (reserved_node_) Node(key);
    reserved_node_ = nullptr;
  } else {
    height = RandomHeight();
    x = NewNode(key, height);
  }
  if (height > GetMaxHeight()) {
    // prev_ holds head_ at every level above the current height.
    // A reader seeing the new height before the node is linked finds
    // nullptr at head_'s new levels and simply drops a level.
    max_height_.store(height, std::memory_order_relaxed);
  }
  for (int i = 0; i < height; i++) {
    // The node's own links need no barrier: it is not yet published.
    x->NoBarrierSetNext(i, prev_[i]->NoBarrierNext(i));
    prev_[i]->SetNext(i, x);  // publishes x at level i
    prev_[i] = x;
  }
}

template <typename Key, class Compare>
bool SkipList<Key, Compare>::Contains(const Key& key) const {
  Node* x = FindGreaterOrEqual(key, nullptr);
  return x != nullptr && Equal(key, x->key);
}

}  // namespace siftdb

#endif  // SIFTDB_DB_SKIPLIST_H_
