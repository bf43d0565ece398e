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
    if (CheckAllChildren()) FindSmallest();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    for (IteratorWrapper& child : children_) child.SeekToLast();
    direction_ = kReverse;
    if (CheckAllChildren()) FindLargest();
  }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    for (IteratorWrapper& child : children_) child.Seek(target);
    direction_ = kForward;
    if (CheckAllChildren()) FindSmallest();
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
      if (!CheckAllChildren()) return;
    }
    current_->Next();
    if (CheckChild(*current_)) FindSmallest();
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
      if (!CheckAllChildren()) return;
    }
    current_->Prev();
    if (CheckChild(*current_)) FindLargest();
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

  // Smallest key; the lowest child index among equal keys.
  void FindSmallest() {
    IteratorWrapper* smallest = nullptr;
    for (IteratorWrapper& child : children_) {
      if (!child.Valid()) continue;
      if (smallest == nullptr ||
          comparator_->Compare(child.key(), smallest->key()) < 0) {
        smallest = &child;
      }
    }
    current_ = smallest;
  }

  // Largest key; the highest child index among equal keys.
  void FindLargest() {
    IteratorWrapper* largest = nullptr;
    for (IteratorWrapper& child : children_) {
      if (!child.Valid()) continue;
      if (largest == nullptr ||
          comparator_->Compare(child.key(), largest->key()) >= 0) {
        largest = &child;
      }
    }
    current_ = largest;
  }

  const Comparator* const comparator_;
  std::vector<IteratorWrapper> children_;
  IteratorWrapper* current_ = nullptr;
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
