// Copyright (c) siftdb authors.

#include "table/merging_iterator.h"

#include <utility>

#include "table/iterator_wrapper.h"

namespace siftdb {
namespace {

class MergingIterator final : public Iterator {
 public:
  MergingIterator(const Comparator* comparator,
                  std::vector<std::unique_ptr<Iterator>> children)
      : comparator_(comparator) {
    children_.reserve(children.size());
    for (auto& child : children) children_.emplace_back(std::move(child));
  }

  bool Valid() const override { return current_ != nullptr; }
  std::string_view key() const override { return current_->key(); }
  std::string_view value() const override { return current_->value(); }

  absl::Status status() const override {
    if (!status_.ok()) return status_;
    for (const IteratorWrapper& child : children_) {
      absl::Status s = child.status();
      if (!s.ok()) return s;
    }
    return absl::OkStatus();
  }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    for (IteratorWrapper& child : children_) child.SeekToFirst();
    direction_ = kForward;
    if (CheckAllChildren()) BuildHeap();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    for (IteratorWrapper& child : children_) child.SeekToLast();
    direction_ = kReverse;
    if (CheckAllChildren()) BuildHeap();
  }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    for (IteratorWrapper& child : children_) child.Seek(target);
    direction_ = kForward;
    if (CheckAllChildren()) BuildHeap();
  }

  void Next() override {
    if (!Valid()) return;
    if (direction_ != kForward) {
      // Every other child moves to its first entry after (key(), current)
      // in (key, child index) order.
      const std::string saved_key(key());
      const size_t cur = CurrentIndex();
      for (size_t i = 0; i < children_.size(); i++) {
        if (i == cur) continue;
        IteratorWrapper& child = children_[i];
        child.Seek(saved_key);
        if (i < cur && child.Valid() &&
            comparator_->Compare(saved_key, child.key()) == 0) {
          child.Next();
        }
      }
      direction_ = kForward;
      current_->Next();
      if (CheckAllChildren()) BuildHeap();
      return;
    }
    // current_ is the heap's top: advance it and restore the heap.
    current_->Next();
    if (CheckChild(*current_)) ReplaceTop();
  }

  void Prev() override {
    if (!Valid()) return;
    if (direction_ != kReverse) {
      // Every other child moves to its last entry before (key(), current)
      // in (key, child index) order.
      const std::string saved_key(key());
      const size_t cur = CurrentIndex();
      for (size_t i = 0; i < children_.size(); i++) {
        if (i == cur) continue;
        IteratorWrapper& child = children_[i];
        child.Seek(saved_key);
        if (!child.Valid()) {
          if (!child.status().ok()) continue;  // reported below
          child.SeekToLast();
        } else if (!(i < cur &&
                     comparator_->Compare(saved_key, child.key()) == 0)) {
          child.Prev();
        }
      }
      direction_ = kReverse;
      current_->Prev();
      if (CheckAllChildren()) BuildHeap();
      return;
    }
    current_->Prev();
    if (CheckChild(*current_)) ReplaceTop();
  }

 private:
  enum Direction { kForward, kReverse };

  size_t CurrentIndex() const {
    return static_cast<size_t>(current_ - children_.data());
  }

  // False (and the iterator failed) when `child` stopped on an error.
  bool CheckChild(const IteratorWrapper& child) {
    if (child.Valid()) return true;
    absl::Status s = child.status();
    if (s.ok()) return true;
    status_ = std::move(s);
    current_ = nullptr;
    return false;
  }

  bool CheckAllChildren() {
    for (const IteratorWrapper& child : children_) {
      if (!CheckChild(child)) return false;
    }
    return true;
  }

  // Heap order: true when a comes out before b in the current direction,
  // by key and then by child index (lower first moving forward, higher
  // first moving backward).
  bool Before(const IteratorWrapper* a, const IteratorWrapper* b) const {
    const int r = comparator_->Compare(a->key(), b->key());
    if (direction_ == kForward) return r < 0 || (r == 0 && a < b);
    return r > 0 || (r == 0 && a > b);
  }

  // Restores the heap below position i (its children are heaps).
  void SiftDown(size_t i) {
    const size_t n = heap_.size();
    IteratorWrapper* const item = heap_[i];
    while (true) {
      size_t child = 2 * i + 1;
      if (child >= n) break;
      if (child + 1 < n && Before(heap_[child + 1], heap_[child])) child++;
      if (!Before(heap_[child], item)) break;
      heap_[i] = heap_[child];
      i = child;
    }
    heap_[i] = item;
  }

  // Heap of the valid children in direction_'s order; current_ = its top.
  // REQUIRES: no child has failed.
  void BuildHeap() {
    heap_.clear();
    for (IteratorWrapper& child : children_) {
      if (child.Valid()) heap_.push_back(&child);
    }
    for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
    current_ = heap_.empty() ? nullptr : heap_[0];
  }

  // The top child (current_) moved in direction_: put it back in place, or
  // drop it when exhausted.
  void ReplaceTop() {
    if (!current_->Valid()) {
      heap_[0] = heap_.back();
      heap_.pop_back();
      if (heap_.empty()) {
        current_ = nullptr;
        return;
      }
    }
    SiftDown(0);
    current_ = heap_[0];
  }

  const Comparator* const comparator_;
  std::vector<IteratorWrapper> children_;
  // Valid children, a binary heap in direction_'s order (top first).
  std::vector<IteratorWrapper*> heap_;
  IteratorWrapper* current_ = nullptr;  // heap_[0], or null
  Direction direction_ = kForward;
  absl::Status status_;  // sticky first error
};

}  // namespace

std::unique_ptr<Iterator> NewMergingIterator(
    const Comparator* comparator,
    std::vector<std::unique_ptr<Iterator>> children) {
  std::vector<std::unique_ptr<Iterator>> present;
  for (auto& child : children) {
    if (child != nullptr) present.push_back(std::move(child));
  }
  if (present.empty()) return NewEmptyIterator();
  if (present.size() == 1) return std::move(present[0]);
  return std::make_unique<MergingIterator>(comparator, std::move(present));
}

}  // namespace siftdb
