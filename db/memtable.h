// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// MemTable: the in-memory, sorted buffer of recent writes, backed by a
// skiplist over an arena.
//
// Each entry is stored in the arena, right after its skiplist node, as
//   varint32(len(internal key)) . internal key . varint32(len(value)) . value
// and ordered by InternalKeyComparator (user key ascending, newest first).
//
// Thread safety: Add() requires external synchronization (one writer at a
// time, the write group's leader); Get(), NewIterator() and
// ApproximateMemoryUsage() may run concurrently with Add and each other
// without locks. Lifetime is reference counted: Ref() / Unref(); the last
// Unref deletes the MemTable. Ref/Unref themselves need external
// synchronization (the DB mutex).

#ifndef SIFTDB_DB_MEMTABLE_H_
#define SIFTDB_DB_MEMTABLE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "db/lookup_key.h"
#include "db/skiplist.h"
#include "filter/concurrent_bloom.h"
#include "siftdb/iterator.h"
#include "siftdb/slice_transform.h"
#include "table/internal_key.h"
#include "util/arena.h"

namespace siftdb {

class MemTable {
 public:
  // filter_bytes: size of the Bloom filter over the user keys added, which
  // lets Get and UserKeyMayMatch answer "absent" without a skiplist search;
  // 0 disables it (always "may match"). prefix_extractor (not owned; must
  // outlive the MemTable; null: none): the filter also holds the prefix of
  // every user key in its domain, for PrefixMayMatch.
  explicit MemTable(const InternalKeyComparator& comparator,
                    size_t filter_bytes = 0,
                    const SliceTransform* prefix_extractor = nullptr);
  MemTable(const MemTable&) = delete;
  MemTable& operator=(const MemTable&) = delete;

  void Ref() { ++refs_; }
  void Unref() {
    --refs_;
    if (refs_ <= 0) delete this;
  }

  // Bytes of memory in use (arena blocks). Excludes the filter, so that the
  // write buffer limit counts entries only.
  size_t ApproximateMemoryUsage() const;
  // Bytes of the user-key filter.
  size_t FilterMemoryUsage() const { return filter_.MemoryUsage(); }

  // Iterates internal keys (key()) and values. The MemTable must outlive
  // the iterator (callers hold a Ref).
  std::unique_ptr<Iterator> NewIterator();

  // REQUIRES: external synchronization of writers.
  void Add(SequenceNumber seq, ValueType type, std::string_view user_key,
           std::string_view value);

  // When the MemTable holds an entry for key at or below its sequence:
  // returns true with *status OK and *value set (a put) or *status NotFound
  // (a deletion). Returns false when the MemTable knows nothing of it.
  // user_key_hash, when non-null, is FilterKeyHash(key.user_key()), so a
  // caller asking several MemTables hashes the key once.
  bool Get(const LookupKey& key, std::string* value, absl::Status* status,
           const uint64_t* user_key_hash = nullptr);

  // False only when no entry for user_key was added before this call
  // (see filter/concurrent_bloom.h for the ordering this relies on).
  bool UserKeyMayMatch(std::string_view user_key) const;
  // Starts loading the filter bits Get(key, ..., &user_key_hash) reads
  // first, so a batch of lookups overlaps its cache misses.
  void PrefetchFilter(uint64_t user_key_hash) const {
    filter_.Prefetch(user_key_hash);
  }
  // False only when no user key added before this call has `prefix` as
  // its prefix under the constructor's extractor (always true without
  // one).
  bool PrefixMayMatch(std::string_view prefix) const;

  // Number of entries added.
  size_t NumEntries() const { return num_entries_; }
  // True when no Add finished before this call; unlike NumEntries, safe
  // for a reader beside the writer.
  bool Empty() const { return table_.Empty(); }

 private:
  ~MemTable() = default;  // only via Unref

  struct KeyComparator {
    const InternalKeyComparator comparator;
    // The user comparator is BytewiseComparator(): compare inline.
    const bool bytewise;
    explicit KeyComparator(const InternalKeyComparator& c);
    // Compares two arena entries by their internal keys.
    int operator()(const char* a, const char* b) const;
  };
  using Table = SkipList<const char*, KeyComparator>;
  friend class MemTableIterator;

  KeyComparator comparator_;
  int refs_ = 0;
  size_t num_entries_ = 0;  // writer only; read by the writer or under mutex
  Arena arena_;
  Table table_;
  ConcurrentBloom filter_;  // over the user keys of every entry
  const SliceTransform* const prefix_extractor_;  // and their prefixes
};

}  // namespace siftdb

#endif  // SIFTDB_DB_MEMTABLE_H_
