// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Helpers for the table tests: in-memory files, a sorted-vector iterator,
// internal-key construction, one-call table building/opening, a standard
// entry set (MakeEntries) and checked scans and lookups.
// Not thread-safe unless stated.

#ifndef SIFTDB_TESTS_TABLE_TABLE_TEST_UTIL_H_
#define SIFTDB_TESTS_TABLE_TABLE_TEST_UTIL_H_

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "gtest/gtest.h"
#include "siftdb/comparator.h"
#include "siftdb/env.h"
#include "siftdb/iterator.h"
#include "table/block.h"
#include "table/block_builder.h"
#include "table/internal_key.h"
#include "table/table.h"
#include "table/table_builder.h"
#include "table/table_options.h"
#include "util/mutex.h"

namespace siftdb::test {

// A WritableFile appending to a string.
class StringSink final : public WritableFile {
 public:
  absl::Status Append(std::string_view data) override {
    contents_.append(data.data(), data.size());
    return absl::OkStatus();
  }
  absl::Status Flush() override { return absl::OkStatus(); }
  absl::Status Sync() override { return absl::OkStatus(); }
  absl::Status Close() override { return absl::OkStatus(); }
  const std::string& contents() const { return contents_; }

 private:
  std::string contents_;
};

// A RandomAccessFile over a private copy of some bytes; counts reads
// (thread-safe).
class StringSource final : public RandomAccessFile {
 public:
  explicit StringSource(std::string contents)
      : contents_(std::move(contents)) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    reads_.fetch_add(1, std::memory_order_relaxed);
    if (offset > contents_.size()) {
      *result = {};
      return absl::OkStatus();
    }
    n = std::min<uint64_t>(n, contents_.size() - offset);
    std::memcpy(scratch, contents_.data() + offset, n);
    *result = std::string_view(scratch, n);
    return absl::OkStatus();
  }
  uint64_t reads() const { return reads_.load(); }

 private:
  const std::string contents_;
  mutable std::atomic<uint64_t> reads_{0};
};

// A RandomAccessFile whose bytes a test may damage (Flip) after
// Table::Open. Thread-safe.
class DamageableSource final : public RandomAccessFile {
 public:
  explicit DamageableSource(std::string contents)
      : contents_(std::move(contents)) {}
  absl::Status Read(uint64_t offset, size_t n, std::string_view* result,
                    char* scratch) const override {
    MutexLock lock(&mu_);
    if (offset > contents_.size()) {
      *result = {};
      return absl::OkStatus();
    }
    n = std::min<uint64_t>(n, contents_.size() - offset);
    std::memcpy(scratch, contents_.data() + offset, n);
    *result = std::string_view(scratch, n);
    return absl::OkStatus();
  }
  // Flips one bit of the byte at offset.
  void Flip(size_t offset) {
    MutexLock lock(&mu_);
    contents_[offset] ^= 0x10;
  }

 private:
  mutable Mutex mu_;
  std::string contents_ ABSL_GUARDED_BY(mu_);
};

inline std::string IKey(std::string_view user_key, SequenceNumber seq,
                        ValueType type = kTypeValue) {
  std::string k;
  AppendInternalKey(&k, user_key, seq, type);
  return k;
}

// Internal keys with their values, in InternalKeyComparator order.
using KVList = std::vector<std::pair<std::string, std::string>>;

// Sorts internal keys by InternalKeyComparator over the bytewise user
// order and drops repeated keys (which would make a block's order
// ambiguous).
inline void SortInternalKeys(KVList* entries) {
  const InternalKeyComparator icmp(BytewiseComparator());
  std::sort(entries->begin(), entries->end(),
            [&](const auto& a, const auto& b) {
              return icmp.Compare(a.first, b.first) < 0;
            });
  entries->erase(std::unique(entries->begin(), entries->end(),
                             [](const auto& a, const auto& b) {
                               return a.first == b.first;
                             }),
                 entries->end());
}

// The bytes of one block holding `entries` (in order).
inline std::string BuildBlockBytes(const KVList& entries,
                                   int restart_interval) {
  BlockBuilder builder(restart_interval);
  for (const auto& [k, v] : entries) builder.Add(k, v);
  return std::string(builder.Finish());
}

// A Block over a copy of `bytes` (as if read from 000004.sst at offset
// 4096); null when Block::Create refuses them.
inline std::unique_ptr<Block> BlockFromBytes(const std::string& bytes) {
  BlockContents c;
  c.owned = std::make_unique<char[]>(bytes.size());
  std::memcpy(c.owned.get(), bytes.data(), bytes.size());
  c.size = bytes.size();
  auto block = Block::Create(std::move(c), 4096, "000004.sst");
  return block.ok() ? std::move(*block) : nullptr;
}

// Builds a table from `entries` (already sorted); the file bytes.
inline absl::StatusOr<std::string> BuildTable(
    const TableOptions& options, const KVList& entries,
    TableProperties* props = nullptr) {
  StringSink sink;
  TableBuilder builder(options, &sink);
  for (const auto& [k, v] : entries) builder.Add(k, v);
  absl::Status s = builder.Finish();
  if (!s.ok()) return s;
  if (builder.FileSize() != sink.contents().size()) {
    return absl::InternalError("FileSize() disagrees with the bytes written");
  }
  if (props != nullptr) *props = builder.properties();
  return sink.contents();
}

inline absl::StatusOr<std::unique_ptr<Table>> OpenTable(
    const TableOptions& options, const std::string& contents,
    std::string name = "000001.sst") {
  return Table::Open(options, std::move(name),
                     std::make_unique<StringSource>(contents), contents.size());
}

// An iterator over a sorted vector of pairs, ordered by `cmp`.
class VectorIterator final : public Iterator {
 public:
  VectorIterator(const Comparator* cmp, KVList entries)
      : cmp_(cmp), entries_(std::move(entries)), pos_(entries_.size()) {}
  bool Valid() const override { return pos_ < entries_.size(); }
  void SeekToFirst() override { pos_ = 0; }
  void SeekToLast() override {
    pos_ = entries_.empty() ? entries_.size() : entries_.size() - 1;
  }
  void Seek(std::string_view target) override {
    pos_ = 0;
    while (pos_ < entries_.size() &&
           cmp_->Compare(entries_[pos_].first, target) < 0) {
      pos_++;
    }
  }
  void Next() override { pos_++; }
  void Prev() override { pos_ = pos_ == 0 ? entries_.size() : pos_ - 1; }
  std::string_view key() const override { return entries_[pos_].first; }
  std::string_view value() const override { return entries_[pos_].second; }
  absl::Status status() const override { return absl::OkStatus(); }

 private:
  const Comparator* cmp_;
  const KVList entries_;
  size_t pos_;
};

// Deterministic pseudo-random bytes (xorshift), for values of a given
// compressibility.
class TestRandom {
 public:
  explicit TestRandom(uint64_t seed) : x_(seed * 0x9E3779B97F4A7C15ull + 1) {}
  uint64_t Next() {
    x_ ^= x_ << 13;
    x_ ^= x_ >> 7;
    x_ ^= x_ << 17;
    return x_;
  }
  uint64_t Uniform(uint64_t n) { return n == 0 ? 0 : Next() % n; }
  bool OneIn(uint64_t n) { return Uniform(n) == 0; }
  std::string Bytes(size_t n) {
    std::string s(n, '\0');
    for (auto& c : s) c = static_cast<char>(Next());
    return s;
  }
  // Bytes that snappy compresses well (a few distinct letters in runs).
  std::string Compressible(size_t n) {
    std::string s;
    while (s.size() < n) s.append(1 + Uniform(20), 'a' + Uniform(4));
    s.resize(n);
    return s;
  }

 private:
  uint64_t x_;
};

// Entries for user keys "key000000".."keyNNNNNN" (one version each, every
// seventh a deletion) with values of the given kind.
inline KVList MakeEntries(size_t n, bool compressible, uint64_t seed,
                          size_t value_size = 100) {
  TestRandom rnd(seed);
  KVList entries;
  for (size_t i = 0; i < n; i++) {
    char user_key[32];
    std::snprintf(user_key, sizeof(user_key), "key%06zu", i);
    const ValueType type = i % 7 == 3 ? kTypeDeletion : kTypeValue;
    std::string value = type == kTypeDeletion
                            ? std::string()
                            : (compressible ? rnd.Compressible(value_size)
                                            : rnd.Bytes(value_size));
    entries.emplace_back(IKey(user_key, 1000 + i, type), std::move(value));
  }
  return entries;
}

inline void CheckScan(const Table& table, const KVList& entries,
                      bool verify = false) {
  ReadOptions ro;
  ro.verify_checksums = verify;
  auto it = table.NewIterator(ro);
  size_t i = 0;
  for (it->SeekToFirst(); it->Valid(); it->Next(), i++) {
    ASSERT_LT(i, entries.size());
    ASSERT_EQ(it->key(), entries[i].first);
    ASSERT_EQ(it->value(), entries[i].second);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(i, entries.size());
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    ASSERT_GT(i, 0u);
    i--;
    ASSERT_EQ(it->key(), entries[i].first);
  }
  ASSERT_TRUE(it->status().ok()) << it->status();
  ASSERT_EQ(i, 0u);
}

struct GetResult {
  bool called = false;
  std::string key, value;
};

inline GetResult Get(const Table& table, std::string_view ikey,
                     const uint64_t* hash = nullptr,
                     absl::Status* status = nullptr) {
  GetResult r;
  absl::Status s = table.InternalGet(
      ReadOptions(), ikey, hash, [&](std::string_view k, std::string_view v) {
        EXPECT_FALSE(r.called);
        r.called = true;
        r.key = k;
        r.value = v;
      });
  if (status != nullptr) {
    *status = s;
  } else {
    EXPECT_TRUE(s.ok()) << s;
  }
  return r;
}

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_TABLE_TABLE_TEST_UTIL_H_
