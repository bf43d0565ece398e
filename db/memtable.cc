// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/memtable.h"

#include <algorithm>
#include <cstring>

#include "filter/filter_hash.h"
#include "siftdb/comparator.h"
#include "util/coding.h"
#include "util/compare_bytes.h"

namespace siftdb {
namespace {

// Decodes the length-prefixed string at p. Entries in the arena were
// written by Add(), so they are well formed.
std::string_view GetLengthPrefixed(const char* p) {
  uint32_t len;
  const char* q = GetVarint32Ptr(p, p + kMaxVarint32Bytes, &len);
  return std::string_view(q, len);
}

// InternalKeyComparator::Compare under the bytewise user comparator, for
// keys that hold their 8-byte trailer, inline: the skiplist compares a
// dozen times per insert and lookup. User keys ascending, then the packed
// sequence and type descending.
int CompareBytewiseInternalKeys(std::string_view a, std::string_view b) {
  const size_t a_user = a.size() - kInternalKeyTrailerSize;
  const size_t b_user = b.size() - kInternalKeyTrailerSize;
  const int r = CompareBytes(std::string_view(a.data(), a_user),
                             std::string_view(b.data(), b_user));
  if (r != 0) return r;
  const uint64_t a_tag = DecodeFixed64(a.data() + a_user);
  const uint64_t b_tag = DecodeFixed64(b.data() + b_user);
  if (a_tag == b_tag) return 0;
  return a_tag > b_tag ? -1 : +1;
}

}  // namespace

MemTable::KeyComparator::KeyComparator(const InternalKeyComparator& c)
    : comparator(c), bytewise(c.user_comparator() == BytewiseComparator()) {}

MemTable::MemTable(const InternalKeyComparator& comparator, size_t filter_bytes,
                   const SliceTransform* prefix_extractor)
    : comparator_(comparator),
      table_(comparator_, &arena_),
      filter_(filter_bytes),
      prefix_extractor_(prefix_extractor) {}

bool MemTable::UserKeyMayMatch(std::string_view user_key) const {
  return filter_.MayMatch(FilterKeyHash(user_key));
}

bool MemTable::PrefixMayMatch(std::string_view prefix) const {
  if (prefix_extractor_ == nullptr) return true;
  return filter_.MayMatch(FilterKeyHash(prefix));
}

size_t MemTable::ApproximateMemoryUsage() const { return arena_.MemoryUsage(); }

int MemTable::KeyComparator::operator()(const char* a, const char* b) const {
  const std::string_view ka = GetLengthPrefixed(a);
  const std::string_view kb = GetLengthPrefixed(b);
  // A seek target may be too short to hold a trailer: the general
  // comparator orders such keys.
  if (bytewise && ka.size() >= kInternalKeyTrailerSize &&
      kb.size() >= kInternalKeyTrailerSize) {
    return CompareBytewiseInternalKeys(ka, kb);
  }
  return comparator.Compare(ka, kb);
}

class MemTableIterator : public Iterator {
 public:
  explicit MemTableIterator(MemTable::Table* table) : iter_(table) {}

  bool Valid() const override { return iter_.Valid(); }
  void Seek(std::string_view k) override {
    tmp_.clear();
    PutLengthPrefixedSlice(&tmp_, k);
    iter_.Seek(tmp_.data());
  }
  void SeekToFirst() override { iter_.SeekToFirst(); }
  void SeekToLast() override { iter_.SeekToLast(); }
  void Next() override { iter_.Next(); }
  void Prev() override { iter_.Prev(); }
  std::string_view key() const override {
    return GetLengthPrefixed(iter_.key());
  }
  std::string_view value() const override {
    std::string_view k = GetLengthPrefixed(iter_.key());
    return GetLengthPrefixed(k.data() + k.size());
  }
  absl::Status status() const override { return absl::OkStatus(); }

 private:
  MemTable::Table::Iterator iter_;
  std::string tmp_;  // the encoded seek target
};

std::unique_ptr<Iterator> MemTable::NewIterator() {
  return std::make_unique<MemTableIterator>(&table_);
}

void MemTable::Add(SequenceNumber s, ValueType type, std::string_view user_key,
                   std::string_view value) {
  // Start loading the filter's block now; it is set below, after the
  // entry is encoded.
  const uint64_t hash = FilterKeyHash(user_key);
  filter_.Prefetch(hash);
  const size_t internal_key_size = user_key.size() + kInternalKeyTrailerSize;
  const size_t encoded_len = VarintLength(internal_key_size) +
                             internal_key_size + VarintLength(value.size()) +
                             value.size();
  // The entry shares the skiplist node's allocation: a search step then
  // finds the key next to the node's links instead of one cache miss away.
  char* buf = table_.AllocateKey(encoded_len);
  char* p = EncodeVarint32(buf, static_cast<uint32_t>(internal_key_size));
  // memcpy from a null pointer is undefined even for 0 bytes, and an empty
  // string_view may hold one.
  if (!user_key.empty()) std::memcpy(p, user_key.data(), user_key.size());
  p += user_key.size();
  EncodeFixed64(p, PackSequenceAndType(s, type));
  p += kInternalKeyTrailerSize;
  p = EncodeVarint32(p, static_cast<uint32_t>(value.size()));
  if (!value.empty()) std::memcpy(p, value.data(), value.size());
  // The filter first: a reader that finds the entry must find its bits.
  filter_.Add(hash);
  if (prefix_extractor_ != nullptr && prefix_extractor_->InDomain(user_key)) {
    filter_.Add(FilterKeyHash(prefix_extractor_->Transform(user_key)));
  }
  table_.Insert(buf);
  num_entries_++;
}

bool MemTable::Get(const LookupKey& key, std::string* value,
                   absl::Status* status, const uint64_t* user_key_hash) {
  const uint64_t hash =
      user_key_hash != nullptr ? *user_key_hash : FilterKeyHash(key.user_key());
  if (!filter_.MayMatch(hash)) return false;
  Table::Iterator iter(&table_);
  iter.Seek(key.memtable_key().data());
  if (!iter.Valid()) return false;
  // The first entry at or after the lookup key: the newest entry for this
  // user key visible at the lookup's sequence, if its user key matches.
  std::string_view ikey = GetLengthPrefixed(iter.key());
  if (comparator_.comparator.user_comparator()->Compare(ExtractUserKey(ikey),
                                                        key.user_key()) != 0) {
    return false;
  }
  const uint64_t tag = DecodeFixed64(ikey.data() + ikey.size() - 8);
  switch (static_cast<ValueType>(tag & 0xff)) {
    case kTypeValue: {
      std::string_view v = GetLengthPrefixed(ikey.data() + ikey.size());
      value->assign(v.data(), v.size());
      *status = absl::OkStatus();
      return true;
    }
    case kTypeDeletion:
      *status = KeyNotFound();
      return true;
  }
  return false;
}

}  // namespace siftdb
