// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// FilterReader: decode a serialized filter once, query it many times. The
// table layer keeps one per open table (next to the 64-byte-aligned filter
// bytes) instead of calling FilterPolicy::KeyMayMatch, which re-reads the
// trailer on every query. For siftdb's own policies the reader probes the
// bits directly (one cache line per blocked query); for any other policy it
// forwards to the policy.
//
// Contract: reader.HashMayMatch(policy->HashKey(k)) ==
// policy->KeyMayMatch(k, filter) for every key k, so no false negatives.
//
// Ownership: the policy and the filter bytes must outlive the reader.
// Thread safety: immutable after construction; share freely. Copyable (a
// few words).

#ifndef SIFTDB_FILTER_FILTER_READER_H_
#define SIFTDB_FILTER_FILTER_READER_H_

#include <cstdint>
#include <string_view>

#include "filter/blocked_bloom.h"
#include "filter/classic_bloom.h"
#include "filter/filter_hash.h"
#include "filter/ribbon_reader.h"
#include "siftdb/filter_policy.h"

namespace siftdb {

class FilterReader {
 public:
  // Answers "may match" for everything.
  FilterReader() = default;
  // policy == nullptr also gives an always-may-match reader.
  FilterReader(const FilterPolicy* policy, std::string_view filter);

  // The hash HashMayMatch expects (the policy's HashKey).
  uint64_t HashKey(std::string_view key) const {
    return mode_ == Mode::kPolicy ? policy_->HashKey(key) : FilterKeyHash(key);
  }

  bool HashMayMatch(uint64_t hash) const {
    switch (mode_) {
      case Mode::kBlocked:
        return blocked_.HashMayMatch(hash);
      case Mode::kClassic:
        return classic_.HashMayMatch(hash);
      case Mode::kRibbon:
        return ribbon_.HashMayMatch(hash);
      case Mode::kPolicy:
        return policy_->HashMayMatch(hash, filter_);
      case Mode::kAlwaysMayMatch:
        break;
    }
    return true;
  }

  // Starts loading what HashMayMatch(hash) will read (blocked filters
  // only; a no-op otherwise). Lets a batch overlap its cache misses.
  void Prefetch(uint64_t hash) const {
    if (mode_ == Mode::kBlocked) blocked_.Prefetch(hash);
  }

  bool KeyMayMatch(std::string_view key) const {
    return HashMayMatch(HashKey(key));
  }

 private:
  enum class Mode { kAlwaysMayMatch, kBlocked, kClassic, kRibbon, kPolicy };

  Mode mode_ = Mode::kAlwaysMayMatch;
  const FilterPolicy* policy_ = nullptr;
  std::string_view filter_;
  ParsedBlockedBloom blocked_;
  ParsedClassicBloom classic_;
  ParsedRibbon ribbon_;
};

}  // namespace siftdb

#endif  // SIFTDB_FILTER_FILTER_READER_H_
