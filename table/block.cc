// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/block.h"

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <string>

#include "absl/strings/str_format.h"
#include "util/coding.h"

namespace siftdb {

absl::StatusOr<std::unique_ptr<Block>> Block::Create(
    BlockContents contents, uint64_t offset, std::string_view file_name) {
  auto malformed = [&](std::string_view what) {
    return absl::DataLossError(
        absl::StrFormat("%s: block at offset %d: %s", file_name, offset, what));
  };
  const size_t size = contents.size;
  if (size < sizeof(uint32_t)) return malformed("too short for a block");
  if (size > UINT32_MAX) return malformed("block larger than 4 GiB");
  const char* data = contents.owned.get();
  const uint32_t num_restarts = DecodeFixed32(data + size - sizeof(uint32_t));
  const uint64_t max_restarts = (size - sizeof(uint32_t)) / sizeof(uint32_t);
  if (num_restarts > max_restarts) {
    return malformed(absl::StrFormat(
        "restart count %d does not fit in %d bytes", num_restarts, size));
  }
  const uint32_t restart_offset = static_cast<uint32_t>(
      size - (uint64_t{1} + num_restarts) * sizeof(uint32_t));
  // Restart points: the first at 0, strictly increasing, each the start of
  // an entry (so inside the entry region). An empty entry region has at most
  // the one restart point 0.
  uint32_t prev = 0;
  for (uint32_t i = 0; i < num_restarts; i++) {
    const uint32_t r = DecodeFixed32(data + restart_offset + 4 * i);
    const bool ok = i == 0
                        ? (r == 0 && (restart_offset > 0 || num_restarts == 1))
                        : (r > prev && r < restart_offset);
    if (!ok) {
      return malformed(
          absl::StrFormat("restart point %d has bad offset %d", i, r));
    }
    prev = r;
  }
  if (num_restarts == 0 && restart_offset != 0) {
    return malformed("entries but no restart point");
  }
  return std::unique_ptr<Block>(
      new Block(std::move(contents), offset, restart_offset, num_restarts));
}

Block::Block(BlockContents contents, uint64_t offset, uint32_t restart_offset,
             uint32_t num_restarts)
    : contents_(std::move(contents)),
      offset_(offset),
      restart_offset_(restart_offset),
      num_restarts_(num_restarts) {}

namespace {

// Decodes the entry header at p (entries end at limit). Returns the start of
// the key delta, or nullptr when the header is malformed or the key delta
// and value do not fit before limit.
inline const char* DecodeEntry(const char* p, const char* limit,
                               uint32_t* shared, uint32_t* non_shared,
                               uint32_t* value_length) {
  if (limit - p >= 3 &&
      ((static_cast<uint8_t>(p[0]) | static_cast<uint8_t>(p[1]) |
        static_cast<uint8_t>(p[2])) &
       0x80) == 0) {
    // Fast path: all three lengths fit in one byte each (keys and values
    // below 128 bytes, the common case).
    *shared = static_cast<uint8_t>(p[0]);
    *non_shared = static_cast<uint8_t>(p[1]);
    *value_length = static_cast<uint8_t>(p[2]);
    p += 3;
  } else {
    if ((p = GetVarint32Ptr(p, limit, shared)) == nullptr) return nullptr;
    if ((p = GetVarint32Ptr(p, limit, non_shared)) == nullptr) return nullptr;
    if ((p = GetVarint32Ptr(p, limit, value_length)) == nullptr) {
      return nullptr;
    }
  }
  if (uint64_t{*non_shared} + *value_length >
      static_cast<uint64_t>(limit - p)) {
    return nullptr;
  }
  return p;
}

// Binary search of a block's restart points (`restarts` is the offset of
// the restart array, `num_restarts` >= 1) for the last one whose key is <
// target under compare; 0 when none is. `hint`, when set, narrows the
// range first. Returns that restart's index, or the block offset of a
// malformed restart entry in *malformed (and 0).
template <typename Compare>
uint32_t LastRestartBefore(const char* data, uint32_t restarts,
                           uint32_t num_restarts, std::string_view target,
                           const Compare& compare,
                           const RestartSearchHint* hint,
                           std::optional<uint32_t>* malformed) {
  const char* const limit = data + restarts;
  uint32_t left = 0;
  uint32_t right = num_restarts - 1;
  if (hint != nullptr) {
    // Every key before `left` (when left > 0, `left`'s too) is below the
    // target, so the search below may start there.
    hint->Narrow(target, &left, &right);
  }
  while (left < right) {
    const uint32_t mid = (left + right + 1) / 2;
    const uint32_t offset = DecodeFixed32(limit + mid * sizeof(uint32_t));
    uint32_t shared, non_shared, value_length;
    const char* key_ptr =
        DecodeEntry(data + offset, limit, &shared, &non_shared, &value_length);
    if (key_ptr == nullptr || shared != 0) {
      *malformed = offset;
      return 0;
    }
    if (compare(std::string_view(key_ptr, non_shared), target) < 0) {
      left = mid;
    } else {
      right = mid - 1;
    }
  }
  return left;
}

// The current key of a block iterator. Keys up to kInline bytes (every
// 16-byte user key with its 8-byte trailer) live inside the iterator, so
// opening one, which happens for every data block a scan or lookup
// touches, allocates nothing for its key.
class KeyBuffer {
 public:
  KeyBuffer() = default;
  KeyBuffer(const KeyBuffer&) = delete;
  KeyBuffer& operator=(const KeyBuffer&) = delete;

  size_t size() const { return size_; }
  std::string_view view() const { return {data_, size_}; }
  void clear() { size_ = 0; }
  // Keeps the first `shared` bytes and appends [p, p + n).
  // REQUIRES: shared <= size().
  void Assign(size_t shared, const char* p, size_t n) {
    const size_t need = shared + n;
    if (need > capacity_) Grow(need, shared);
    std::memcpy(data_ + shared, p, n);
    size_ = need;
  }

 private:
  static constexpr size_t kInline = 40;

  void Grow(size_t need, size_t keep) {
    const size_t capacity = std::max(need, 2 * capacity_);
    auto bigger = std::make_unique_for_overwrite<char[]>(capacity);
    std::memcpy(bigger.get(), data_, keep);
    heap_ = std::move(bigger);
    data_ = heap_.get();
    capacity_ = capacity;
  }

  char inline_[kInline];
  std::unique_ptr<char[]> heap_;
  char* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
};

class BlockIterator final : public Iterator {
 public:
  BlockIterator(const Block* block, const Comparator* comparator,
                std::string_view file_name, uint32_t restart_offset,
                const RestartSearchHint* hint)
      : comparator_(comparator),
        hint_(hint),
        file_name_(file_name),
        block_offset_(block->offset()),
        data_(block->data().data()),
        restarts_(restart_offset),
        num_restarts_(block->num_restarts()),
        current_(restarts_),
        restart_index_(num_restarts_) {}

  bool Valid() const override { return current_ < restarts_; }
  std::string_view key() const override { return key_.view(); }
  std::string_view value() const override { return value_; }
  absl::Status status() const override { return status_; }

  void Next() override { ParseNextKey(); }

  void Prev() override {
    // Back up to the last restart point before the current entry, then
    // scan forward to the entry just before it.
    const uint32_t original = current_;
    while (RestartPoint(restart_index_) >= original) {
      if (restart_index_ == 0) {
        MarkInvalid();
        return;
      }
      restart_index_--;
    }
    SeekToRestartPoint(restart_index_);
    while (ParseNextKey() && NextEntryOffset() < original) {
    }
  }

  void Seek(std::string_view target) override {
    if (!status_.ok()) return;
    std::optional<uint32_t> malformed;
    const uint32_t left = LastRestartBefore(
        data_, restarts_, num_restarts_, target,
        [this](std::string_view a, std::string_view b) {
          return comparator_->Compare(a, b);
        },
        hint_, &malformed);
    if (malformed.has_value()) {
      CorruptionAt(*malformed);
      return;
    }
    SeekToRestartPoint(left);
    while (ParseNextKey()) {
      if (comparator_->Compare(key_.view(), target) >= 0) return;
    }
  }

  void SeekToFirst() override {
    if (!status_.ok()) return;
    SeekToRestartPoint(0);
    ParseNextKey();
  }

  void SeekToLast() override {
    if (!status_.ok()) return;
    SeekToRestartPoint(num_restarts_ - 1);
    while (ParseNextKey() && NextEntryOffset() < restarts_) {
    }
  }

 private:
  uint32_t RestartPoint(uint32_t index) const {
    return DecodeFixed32(data_ + restarts_ + index * sizeof(uint32_t));
  }

  // Offset just past the current entry (value_ ends the entry).
  uint32_t NextEntryOffset() const {
    return static_cast<uint32_t>((value_.data() + value_.size()) - data_);
  }

  void SeekToRestartPoint(uint32_t index) {
    key_.clear();
    restart_index_ = index;
    // ParseNextKey starts at NextEntryOffset(), i.e. at the restart point.
    value_ = std::string_view(data_ + RestartPoint(index), 0);
  }

  void MarkInvalid() {
    current_ = restarts_;
    restart_index_ = num_restarts_;
  }

  void CorruptionAt(uint32_t offset) {
    status_ = absl::DataLossError(absl::StrFormat(
        "%s: block at offset %d: malformed entry at block offset %d",
        file_name_, block_offset_, offset));
    MarkInvalid();
    key_.clear();
    value_ = {};
  }

  // Moves to the entry after the current one; false at the end or on
  // corruption.
  bool ParseNextKey() {
    current_ = NextEntryOffset();
    if (current_ >= restarts_) {
      MarkInvalid();
      return false;
    }
    uint32_t shared, non_shared, value_length;
    const char* p = DecodeEntry(data_ + current_, data_ + restarts_, &shared,
                                &non_shared, &value_length);
    if (p == nullptr || shared > key_.size()) {
      CorruptionAt(current_);
      return false;
    }
    key_.Assign(shared, p, non_shared);
    value_ = std::string_view(p + non_shared, value_length);
    while (restart_index_ + 1 < num_restarts_ &&
           RestartPoint(restart_index_ + 1) <= current_) {
      restart_index_++;
    }
    return true;
  }

  const Comparator* const comparator_;
  const RestartSearchHint* const hint_;  // may be null
  const std::string_view file_name_;
  const uint64_t block_offset_;
  const char* const data_;
  const uint32_t restarts_;      // offset of the restart array
  const uint32_t num_restarts_;  // >= 1

  uint32_t current_;        // offset of the current entry; >= restarts_: none
  uint32_t restart_index_;  // restart block holding current_
  KeyBuffer key_;
  std::string_view value_;
  absl::Status status_;
};

}  // namespace

template <typename Compare>
absl::Status Block::SeekWith(
    const Compare& compare, std::string_view file_name, std::string_view target,
    absl::FunctionRef<void(std::string_view, std::string_view)> found) const {
  // BlockIterator::Seek's search, without what an iterator keeps for Next
  // and Prev (its restart index, its status), and with the same errors.
  if (num_restarts_ == 0) return absl::OkStatus();
  const char* const data = contents_.data().data();
  const char* const limit = data + restart_offset_;
  auto malformed = [&](uint32_t at) {
    return absl::DataLossError(absl::StrFormat(
        "%s: block at offset %d: malformed entry at block offset %d", file_name,
        offset_, at));
  };
  std::optional<uint32_t> bad;
  const uint32_t left = LastRestartBefore(data, restart_offset_, num_restarts_,
                                          target, compare, hint_.get(), &bad);
  if (bad.has_value()) return malformed(*bad);
  // Then forward from it to the first entry >= target.
  KeyBuffer key;
  uint32_t current = DecodeFixed32(limit + left * sizeof(uint32_t));
  while (current < restart_offset_) {
    uint32_t shared, non_shared, value_length;
    const char* p =
        DecodeEntry(data + current, limit, &shared, &non_shared, &value_length);
    if (p == nullptr || shared > key.size()) return malformed(current);
    key.Assign(shared, p, non_shared);
    if (compare(key.view(), target) >= 0) {
      found(key.view(), std::string_view(p + non_shared, value_length));
      return absl::OkStatus();
    }
    current = static_cast<uint32_t>((p + non_shared + value_length) - data);
  }
  return absl::OkStatus();
}

absl::Status Block::Seek(
    const Comparator* comparator, std::string_view file_name,
    std::string_view target,
    absl::FunctionRef<void(std::string_view, std::string_view)> found) const {
  return SeekWith(
      [comparator](std::string_view a, std::string_view b) {
        return comparator->Compare(a, b);
      },
      file_name, target, found);
}

absl::Status Block::Seek(
    const InternalKeyComparator& comparator, std::string_view file_name,
    std::string_view target,
    absl::FunctionRef<void(std::string_view, std::string_view)> found) const {
  return SeekWith(
      [&comparator](std::string_view a, std::string_view b) {
        return comparator.CompareInline(a, b);
      },
      file_name, target, found);
}

bool Block::RestartKey(uint32_t index, std::string_view* key) const {
  if (index >= num_restarts_) return false;
  const char* const data = contents_.data().data();
  const char* const limit = data + restart_offset_;
  uint32_t shared, non_shared, value_length;
  const char* p =
      DecodeEntry(data + DecodeFixed32(limit + index * sizeof(uint32_t)), limit,
                  &shared, &non_shared, &value_length);
  if (p == nullptr || shared != 0) return false;
  *key = std::string_view(p, non_shared);
  return true;
}

std::unique_ptr<Iterator> Block::NewIterator(const Comparator* comparator,
                                             std::string_view file_name) const {
  if (num_restarts_ == 0) return NewEmptyIterator();
  return std::make_unique<BlockIterator>(this, comparator, file_name,
                                         restart_offset_, hint_.get());
}

}  // namespace siftdb
