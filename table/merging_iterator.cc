// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/merging_iterator.h"

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_format.h"
#include "table/internal_key.h"
#include "table/iterator_wrapper.h"

namespace siftdb {
namespace {

class MergingIterator final : public Iterator {
 public:
  // user_comparator and probes: see NewProbingMergingIterator (null and
  // empty for a plain merge).
  MergingIterator(const Comparator* comparator,
                  const Comparator* user_comparator,
                  std::vector<std::unique_ptr<Iterator>> children,
                  std::vector<ChildProbe> probes, SeekPrefix seek_prefix,
                  std::vector<ChildPrefixProbe> prefix_probes)
      : comparator_(comparator),
        user_comparator_(user_comparator),
        probes_(std::move(probes)),
        seek_prefix_(std::move(seek_prefix)),
        prefix_probes_(std::move(prefix_probes)) {
    children_.reserve(children.size());
    for (auto& child : children) children_.emplace_back(std::move(child));
    const bool probing = !probes_.empty() || !prefix_probes_.empty();
    deferred_.assign(probing ? children_.size() : 0, kPositioned);
    heap_.reserve(children_.size());
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
    ClearDeferred();
    for (IteratorWrapper& child : children_) child.SeekToFirst();
    direction_ = kForward;
    if (CheckAllChildren()) BuildHeap();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    ClearDeferred();
    for (IteratorWrapper& child : children_) child.SeekToLast();
    direction_ = kReverse;
    if (CheckAllChildren()) BuildHeap();
  }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    ClearDeferred();
    std::optional<std::string_view> prefix;
    if (seek_prefix_ != nullptr) prefix = seek_prefix_(target);
    for (size_t i = 0; i < children_.size(); i++) {
      if (prefix.has_value() && !prefix_probes_.empty() &&
          prefix_probes_[i] != nullptr && !prefix_probes_[i](target, *prefix)) {
        deferred_[i] = kLeftOut;
        num_left_out_++;
      } else if (!probes_.empty() && probes_[i] != nullptr &&
                 !probes_[i](target)) {
        deferred_[i] = kDeferred;
        num_deferred_++;
      } else {
        children_[i].Seek(target);
      }
    }
    direction_ = kForward;
    if (!CheckAllChildren()) return;
    BuildHeap();
    if (num_deferred_ == 0) return;
    // A deferred child's first entry at or after target has a larger user
    // key than target's, so it cannot come before an entry with target's
    // user key: when the merge starts with one, the deferred children may
    // wait until the merge moves on.
    deferred_target_.assign(target.begin(), target.end());
    if (current_ == nullptr ||
        user_comparator_->Compare(ExtractUserKey(current_->key()),
                                  ExtractUserKey(target)) != 0) {
      ResolveDeferred();
    }
  }

  void Next() override {
    if (!Valid()) return;
    if (num_deferred_ > 0 && !ResolveDeferred()) return;
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
    // Deferred children exist only moving forward; the direction switch
    // below repositions every child but the current one.
    ClearDeferred();
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

  void ClearDeferred() {
    if (num_deferred_ == 0 && num_left_out_ == 0) return;
    std::fill(deferred_.begin(), deferred_.end(), kPositioned);
    num_deferred_ = 0;
    num_left_out_ = 0;
  }

  // Positions the deferred children at deferred_target_ and rebuilds the
  // heap (current_ stays the top: every deferred child's entry is larger).
  // Children left out of a prefix seek stay out. False (and the iterator
  // failed) on a child error.
  bool ResolveDeferred() {
    for (size_t i = 0; i < children_.size(); i++) {
      if (deferred_[i] != kDeferred) continue;
      children_[i].Seek(
          std::string_view(deferred_target_.data(), deferred_target_.size()));
      deferred_[i] = kPositioned;
    }
    num_deferred_ = 0;
    if (!CheckAllChildren()) return false;
    BuildHeap();
    return true;
  }

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

  // Heap of the valid, positioned children in direction_'s order;
  // current_ = its top. REQUIRES: no child has failed.
  void BuildHeap() {
    heap_.clear();
    for (size_t i = 0; i < children_.size(); i++) {
      if (!deferred_.empty() && deferred_[i] != kPositioned) continue;
      if (children_[i].Valid()) heap_.push_back(&children_[i]);
    }
    for (size_t i = heap_.size() / 2; i-- > 0;) SiftDown(i);
    next_index_ = 0;
    current_ = heap_.empty() ? nullptr : heap_[0];
  }

  // The top child (current_) moved in direction_: put it back in place, or
  // drop it when exhausted.
  // In a scan one child (the largest level's) usually supplies many
  // entries in a row, so the top mostly stays the top: the order of the
  // top's two heap children is remembered (next_index_) while only the top
  // moves, and a step costs one key comparison instead of two.
  void ReplaceTop() {
    if (!current_->Valid()) {
      heap_[0] = heap_.back();
      heap_.pop_back();
      next_index_ = 0;
      if (heap_.empty()) {
        current_ = nullptr;
        return;
      }
    }
    const size_t n = heap_.size();
    if (n >= 2) {
      if (next_index_ == 0) {
        next_index_ = (n >= 3 && Before(heap_[2], heap_[1])) ? 2 : 1;
      }
      const size_t next = next_index_;
      if (Before(heap_[next], heap_[0])) {
        // The top moves below its smaller child; the rest of the heap
        // below `next` takes it in.
        std::swap(heap_[0], heap_[next]);
        next_index_ = 0;
        SiftDown(next);
      }
    }
    current_ = heap_[0];
  }

  const Comparator* const comparator_;
  const Comparator* const user_comparator_;  // null unless probing
  // Inline room for a usual tree's sources (two MemTables, a few level-0
  // tables, the deeper levels): an iterator is built for every seek, and
  // these would be three allocations each time.
  static constexpr size_t kInlineChildren = 10;
  absl::InlinedVector<IteratorWrapper, kInlineChildren> children_;
  // Empty, or one per child (a null probe: always position the child).
  const std::vector<ChildProbe> probes_;
  // Prefix seeks: see NewProbingMergingIterator (null and empty: none).
  const SeekPrefix seek_prefix_;
  const std::vector<ChildPrefixProbe> prefix_probes_;
  // Per child, when probing (else empty): whether the last Seek positioned
  // it. A deferred or left-out child's wrapper state is stale and it is not
  // in heap_.
  enum ChildState : uint8_t {
    kPositioned = 0,
    kDeferred = 1,  // its probe said no; positioned once the merge moves on
    kLeftOut = 2,   // its prefix probe said no; out until the next Seek
  };
  absl::InlinedVector<uint8_t, kInlineChildren> deferred_;
  size_t num_deferred_ = 0;
  size_t num_left_out_ = 0;
  // The Seek target deferred children await.
  absl::InlinedVector<char, 64> deferred_target_;
  // Valid children, a binary heap in direction_'s order (top first).
  absl::InlinedVector<IteratorWrapper*, kInlineChildren> heap_;
  IteratorWrapper* current_ = nullptr;  // heap_[0], or null
  // 1 or 2: which of heap_[1] and heap_[2] comes out first; 0: not known.
  // Valid while only heap_[0] changes (see ReplaceTop).
  size_t next_index_ = 0;
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
  return std::make_unique<MergingIterator>(
      comparator, nullptr, std::move(present), std::vector<ChildProbe>(),
      nullptr, std::vector<ChildPrefixProbe>());
}

std::unique_ptr<Iterator> NewProbingMergingIterator(
    const InternalKeyComparator* comparator,
    std::vector<std::unique_ptr<Iterator>> children,
    std::vector<ChildProbe> probes) {
  return NewProbingMergingIterator(comparator, std::move(children),
                                   std::move(probes), nullptr,
                                   std::vector<ChildPrefixProbe>());
}

std::unique_ptr<Iterator> NewProbingMergingIterator(
    const InternalKeyComparator* comparator,
    std::vector<std::unique_ptr<Iterator>> children,
    std::vector<ChildProbe> probes, SeekPrefix seek_prefix,
    std::vector<ChildPrefixProbe> prefix_probes) {
  const bool prefix_seeks = seek_prefix != nullptr;
  if (probes.size() != children.size() ||
      (prefix_seeks && prefix_probes.size() != children.size())) {
    return NewErrorIterator(absl::InternalError(absl::StrFormat(
        "merging iterator: %d probes and %d prefix probes for %d children",
        probes.size(), prefix_probes.size(), children.size())));
  }
  const bool all_present =
      std::none_of(children.begin(), children.end(),
                   [](const std::unique_ptr<Iterator>& c) { return !c; });
  if (all_present && !children.empty() &&
      (children.size() > 1 || prefix_seeks)) {
    // The common case: nothing to drop, the vectors are taken as they are.
    return std::make_unique<MergingIterator>(
        comparator, comparator->user_comparator(), std::move(children),
        std::move(probes), std::move(seek_prefix),
        prefix_seeks ? std::move(prefix_probes)
                     : std::vector<ChildPrefixProbe>());
  }
  std::vector<std::unique_ptr<Iterator>> present;
  std::vector<ChildProbe> present_probes;
  std::vector<ChildPrefixProbe> present_prefix_probes;
  for (size_t i = 0; i < children.size(); i++) {
    if (children[i] == nullptr) continue;
    present.push_back(std::move(children[i]));
    present_probes.push_back(std::move(probes[i]));
    if (prefix_seeks)
      present_prefix_probes.push_back(std::move(prefix_probes[i]));
  }
  if (present.empty()) return NewEmptyIterator();
  // One child needs no merge, unless a prefix seek may leave it out.
  if (present.size() == 1 && !prefix_seeks) return std::move(present[0]);
  return std::make_unique<MergingIterator>(
      comparator, comparator->user_comparator(), std::move(present),
      std::move(present_probes), std::move(seek_prefix),
      std::move(present_prefix_probes));
}

}  // namespace siftdb
