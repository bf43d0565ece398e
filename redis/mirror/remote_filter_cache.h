// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The remote reader's cache of table filters (include/siftdb/remote_filter.h):
// each filter fetched from Redis is decoded once (blocked, classic, Ribbon
// or partitioned, by its trailer; anything else, or a policy that is not
// siftdb's, answers "maybe") and kept in an LRU bounded in bytes. A prefix-only
// filter
// ("prefixonly.<siftdb policy>") is decoded too, but answers "maybe" for
// keys: it holds none; prefixes are probed whatever the policy's tag. Entries
// are keyed by id and checked against the manifest's (crc32c, size), so a
// reused id never serves old bytes.
//
// Thread safety: not thread-safe; the reader guards it with its mutex.

#ifndef SIFTDB_REDIS_MIRROR_REMOTE_FILTER_CACHE_H_
#define SIFTDB_REDIS_MIRROR_REMOTE_FILTER_CACHE_H_

#include <cstdint>
#include <list>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "filter/blocked_bloom.h"
#include "filter/classic_bloom.h"
#include "filter/filter_format.h"
#include "filter/partitioned_filter.h"
#include "filter/ribbon_reader.h"
#include "redis/mirror/redis_mirror_format.h"

namespace siftdb {

// One decoded filter of kind 'B', 'C' or 'R' (anything else: "maybe").
struct RemoteInnerFilter {
  enum class Kind {
    kBlocked,
    kClassic,
    kRibbon,
    kAlwaysMaybe
  } kind = Kind::kAlwaysMaybe;
  ParsedBlockedBloom blocked;
  ParsedClassicBloom classic;
  ParsedRibbon ribbon;

  // `bytes` must outlive this.
  void Decode(std::string_view bytes) {
    kind = Kind::kAlwaysMaybe;
    FilterTrailer t;
    if (!DecodeFilterTrailer(bytes, &t)) return;
    if (t.kind == FilterKind::kBlocked) {
      blocked = ParsedBlockedBloom(bytes);
      if (blocked.valid()) kind = Kind::kBlocked;
    } else if (t.kind == FilterKind::kClassic) {
      classic = ParsedClassicBloom(bytes);
      if (classic.valid()) kind = Kind::kClassic;
    } else if (t.kind == FilterKind::kRibbon) {
      ribbon = ParsedRibbon(bytes);
      if (ribbon.valid()) kind = Kind::kRibbon;
    }
  }
  bool HashMayMatch(uint64_t hash) const {
    switch (kind) {
      case Kind::kBlocked:
        return blocked.HashMayMatch(hash);
      case Kind::kClassic:
        return classic.HashMayMatch(hash);
      case Kind::kRibbon:
        return ribbon.HashMayMatch(hash);
      case Kind::kAlwaysMaybe:
        break;
    }
    return true;
  }
};

// A table filter fetched from Redis, decoded once: an ordinary filter, or a
// partitioned one (kind 'P', docs/filter_format.md section 7: the index is
// checked, each partition verified with its CRC and decoded by its kind; a
// damaged partition answers "maybe", an index that does not decode makes
// the whole filter answer "maybe").
struct RemoteCachedFilter {
  uint64_t id = 0;
  uint32_t crc = 0;
  uint64_t size = 0;
  std::string bytes;  // not modified after Decode (the views point in)
  RemoteInnerFilter whole;
  bool partitioned = false;  // and the index decoded
  FilterPartitionIndex index;
  std::vector<RemoteInnerFilter> partitions;
  // The filter holds whole keys (the policy carries no prefix-only tag).
  bool keys_usable = false;

  void Decode(std::string_view policy) {
    whole = RemoteInnerFilter();
    partitioned = false;
    partitions.clear();
    keys_usable = policy.starts_with("siftdb.");
    // Persisted tag of table/format.h (kPrefixOnlyFilterTag).
    constexpr std::string_view kPrefixOnly = "prefixonly.";
    if (policy.starts_with(kPrefixOnly))
      policy.remove_prefix(kPrefixOnly.size());
    // Only siftdb's own policies hash with XXH3 and carry this trailer.
    if (!policy.starts_with("siftdb.")) return;
    if (!IsPartitionedFilter(bytes)) {
      whole.Decode(bytes);
      return;
    }
    if (!FilterPartitionIndex::Parse(bytes, &index)) return;  // "maybe"
    partitions.resize(index.size());
    const std::string_view all(bytes);
    for (size_t i = 0; i < index.size(); i++) {
      const FilterPartitionIndex::Entry& e = index.entry(i);
      std::string_view inner;
      if (FilterPartitionIndex::VerifyPartition(
              all.substr(e.offset, size_t{e.size} + kPartitionCrcSize),
              &inner)) {
        partitions[i].Decode(inner);
      }
    }
    partitioned = true;
  }
  // A key and its hash.
  bool MayMatch(std::string_view key, uint64_t hash) const {
    return !keys_usable || PrefixMayMatch(key, hash);
  }
  // A prefix and its hash (the caller checked that the table holds
  // prefixes of its extractor).
  bool PrefixMayMatch(std::string_view key, uint64_t hash) const {
    if (!partitioned) return whole.HashMayMatch(hash);
    const size_t i = index.Find(key);
    // Past the last partition: past every key of the table.
    return i < partitions.size() && partitions[i].HashMayMatch(hash);
  }
};

// LRU of table filters, bounded in bytes. Entries are keyed by id and
// checked against (crc, size), so a reused id never serves old bytes.
class RemoteFilterCache {
 public:
  explicit RemoteFilterCache(size_t max_bytes) : max_bytes_(max_bytes) {}

  RemoteCachedFilter* Lookup(const MirrorImmutableEntry& e) {
    auto it = index_.find(e.id);
    if (it == index_.end()) return nullptr;
    RemoteCachedFilter* f = it->second->get();
    if (f->crc != e.crc32c || f->size != e.size) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return f;
  }

  // Inserts (replacing an entry with the same id) and evicts from the cold
  // end; the filter just inserted stays even when alone over the bound.
  // Pointers from Lookup stay valid until the next Insert.
  RemoteCachedFilter* Insert(std::unique_ptr<RemoteCachedFilter> f) {
    Erase(f->id);
    bytes_ += f->bytes.size();
    lru_.push_front(std::move(f));
    index_[lru_.front()->id] = lru_.begin();
    while (bytes_ > max_bytes_ && lru_.size() > 1) {
      evictions_++;
      Erase(lru_.back()->id);
    }
    return lru_.front().get();
  }

  void Clear() {
    lru_.clear();
    index_.clear();
    bytes_ = 0;
  }
  size_t size() const { return lru_.size(); }
  size_t bytes() const { return bytes_; }
  uint64_t evictions() const { return evictions_; }

 private:
  void Erase(uint64_t id) {
    auto it = index_.find(id);
    if (it == index_.end()) return;
    bytes_ -= (*it->second)->bytes.size();
    lru_.erase(it->second);
    index_.erase(it);
  }

  const size_t max_bytes_;
  std::list<std::unique_ptr<RemoteCachedFilter>> lru_;  // front: most recent
  std::map<uint64_t, std::list<std::unique_ptr<RemoteCachedFilter>>::iterator>
      index_;
  size_t bytes_ = 0;
  uint64_t evictions_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_MIRROR_REMOTE_FILTER_CACHE_H_
