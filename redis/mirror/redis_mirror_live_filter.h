// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// LiveFilter: the local copy of one live (MemTable) filter of the Redis
// mirror, a growing chain of blocked Bloom sub-filters. The number of keys
// a MemTable will hold is not known in advance, so the filter starts with
// one sub-filter of initial_capacity keys and, when the newest one has
// taken its capacity of new keys, adds another, `growth` times larger and
// with an error rate `tightening` times smaller (sub-filter i is sized for
// error_rate * tightening^(i+1)), so the chain's overall false-positive rate
// stays below error_rate (the scalable Bloom filter construction, as
// RedisBloom uses it).
//
// Each sub-filter is a standard serialized blocked filter
// (docs/filter_format.md: bits, then the 8-byte trailer), so the bytes held
// here are exactly the Redis string's value, and a Redis reader probes it
// with GETBIT / BITFIELD u1 at the same bit offsets the local code uses.
//
// Add() records which bits it newly set (a Delta) so that the mirror writer
// sends only those (BITFIELD SET u1) and sends sub-filters created since the
// last send whole.
//
// A key already present in some sub-filter is not added again (and not
// counted), as RedisBloom does; the "inserted" counts are keys that set at
// least one bit.
//
// Thread safety: not thread-safe; owned by the mirror's thread.

#ifndef SIFTDB_REDIS_MIRROR_REDIS_MIRROR_LIVE_FILTER_H_
#define SIFTDB_REDIS_MIRROR_REDIS_MIRROR_LIVE_FILTER_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "redis/mirror/redis_mirror_format.h"

namespace siftdb {

struct LiveFilterOptions {
  uint64_t initial_capacity = 16384;  // keys of sub-filter 0 (>= 1)
  double error_rate = 0.01;           // bound on the whole chain, (0, 1)
  double growth = 2;                  // >= 1
  double tightening = 0.5;            // (0, 1)
  int max_subfilters = 32;            // the last one then takes everything
  // Name of the SliceTransform whose prefixes the owner adds besides the
  // whole keys ("" when none); recorded in Entry() for readers. The filter
  // itself only sees hashes.
  std::string prefix_extractor;
};

// The blocked filter for `capacity` keys at false-positive rate
// `error_rate`: the smallest bits per key (in steps of 1/8) whose expected
// blocked rate at the best k is at most error_rate (at most 100 bits/key).
MirrorSubFilter SizeSubFilter(uint64_t capacity, double error_rate);

class LiveFilter {
 public:
  // Bits newly set since the last Reset, for sub-filters that existed then;
  // sub-filters from index first_new on were created since and are sent
  // whole.
  struct Delta {
    std::vector<std::vector<uint64_t>> bits;  // [subfilter] -> bit offsets
    size_t first_new = 0;
    uint64_t inserted = 0;  // keys that set at least one bit
    size_t num_bits() const;
    // After everything so far was sent: track changes from now on.
    void Reset(const LiveFilter& filter);
  };

  explicit LiveFilter(const LiveFilterOptions& options);
  LiveFilter(const LiveFilter&) = delete;
  LiveFilter& operator=(const LiveFilter&) = delete;

  // Adds keys by their FilterKeyHash (filter/filter_hash.h); records the
  // changes in *delta (may be null).
  void Add(const uint64_t* hashes, size_t n, Delta* delta);
  // True when the hash may have been added (a local probe of the chain).
  bool HashMayMatch(uint64_t hash) const;

  int num_subfilters() const { return static_cast<int>(subs_.size()); }
  const MirrorSubFilter& subfilter(int i) const { return subs_[i]->desc; }
  // The serialized sub-filter: the Redis string's value.
  const std::string& bytes(int i) const { return subs_[i]->bytes; }
  uint64_t capacity(int i) const { return subs_[i]->capacity; }
  double error_rate(int i) const { return subs_[i]->error_rate; }
  uint64_t inserted(int i) const { return subs_[i]->inserted; }

  uint64_t total_capacity() const;
  uint64_t total_inserted() const { return total_inserted_; }
  uint64_t bitmap_bits() const;
  const LiveFilterOptions& options() const { return options_; }

  // The manifest entry for this filter under `id`.
  MirrorLiveEntry Entry(uint64_t id) const;
  // Its meta hash contents.
  MirrorFilterMeta Meta(uint64_t first_version) const;

 private:
  struct Sub {
    MirrorSubFilter desc;
    uint64_t capacity = 0;
    double error_rate = 0;
    uint64_t inserted = 0;
    std::string bytes;  // never resized after construction
  };
  void AddSubFilter();

  const LiveFilterOptions options_;
  std::vector<std::unique_ptr<Sub>> subs_;
  uint64_t total_inserted_ = 0;
};

}  // namespace siftdb

#endif  // SIFTDB_REDIS_MIRROR_REDIS_MIRROR_LIVE_FILTER_H_
