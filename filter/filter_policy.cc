// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The FilterPolicy implementations: siftdb.BlockedBloom (default),
// siftdb.ClassicBloom and siftdb.Ribbon. All hash each key once with XXH3-64
// when it is added and lay the hashes out at Finish(); the encodings live in
// blocked_bloom.cc, classic_bloom.cc and ribbon_builder.cc.

#include "siftdb/filter_policy.h"

#include <cmath>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "filter/blocked_bloom.h"
#include "filter/bloom_math.h"
#include "filter/classic_bloom.h"
#include "filter/filter_format.h"
#include "filter/filter_hash.h"
#include "filter/ribbon_builder.h"
#include "filter/ribbon_reader.h"
#include "util/absl_compat.h"

namespace siftdb {

namespace {

// Above this, more bits buy nothing the formats can express (k <= 30) and a
// typo (1000 instead of 10) would make huge filters.
constexpr double kMaxBitsPerKey = 100;

// bits_per_key as the policies use it: 0 means "build always-may-match
// (empty) filters"; otherwise in (0, kMaxBitsPerKey].
double SanitizeBitsPerKey(double bits_per_key) {
  if (!(bits_per_key > 0)) return 0;  // <= 0 or NaN
  return bits_per_key > kMaxBitsPerKey ? kMaxBitsPerKey : bits_per_key;
}

enum class Mode { kBlocked, kClassic, kRibbon };

// The hashes of the keys added so far, in fixed-size chunks: growing never
// copies, and each 64 KiB chunk comes from the allocator's reusable heap
// rather than a fresh mapping (a doubling std::vector of a million hashes
// spent most of AddKey's time in page faults and copies).
class HashList {
 public:
  HashList() = default;
  HashList(const HashList&) = delete;
  HashList& operator=(const HashList&) = delete;

  void Add(uint64_t hash) {
    if (used_ == kChunkHashes) {
      chunks_.emplace_back(new uint64_t[kChunkHashes]);  // uninitialized
      used_ = 0;
    }
    chunks_.back()[used_++] = hash;
  }
  bool empty() const { return chunks_.empty(); }
  uint64_t back() const { return chunks_.back()[used_ - 1]; }
  size_t size() const {
    return chunks_.empty() ? 0 : (chunks_.size() - 1) * kChunkHashes + used_;
  }
  // Calls fn(const uint64_t* hashes, size_t n) for each chunk in order.
  template <typename Fn>
  void ForEachChunk(Fn&& fn) const {
    for (size_t i = 0; i < chunks_.size(); ++i) {
      fn(chunks_[i].get(), i + 1 == chunks_.size() ? used_ : kChunkHashes);
    }
  }
  void Clear() {
    chunks_.clear();
    used_ = kChunkHashes;
  }

 private:
  static constexpr size_t kChunkHashes = 8192;
  std::vector<std::unique_ptr<uint64_t[]>> chunks_;
  size_t used_ = kChunkHashes;  // in chunks_.back(); full when no chunks
};

// Collects one hash per added key; lays them out at Finish().
class BloomBitsBuilder final : public FilterBitsBuilder {
 public:
  BloomBitsBuilder(Mode mode, double bits_per_key, int k)
      : mode_(mode),
        bits_per_key_(bits_per_key),
        k_(k),
        ribbon_shape_(mode == Mode::kRibbon
                          ? RibbonShapeForBitsPerKey(bits_per_key)
                          : RibbonShape{}) {}

  void AddKey(std::string_view key) override {
    ++num_added_;
    if (bits_per_key_ <= 0) return;  // disabled: the filter will be empty
    const uint64_t h = FilterKeyHash(key);
    // Keys usually arrive sorted, so a repeated key is the previous one.
    if (hashes_.empty() || hashes_.back() != h) hashes_.Add(h);
  }

  size_t NumAdded() const override { return num_added_; }

  void Finish(std::string* dst) override {
    if (bits_per_key_ > 0) {
      const size_t n = hashes_.size();
      if (mode_ == Mode::kRibbon) {
        RibbonHashChunks chunks;
        hashes_.ForEachChunk([&](const uint64_t* h, size_t count) {
          chunks.emplace_back(h, count);
        });
        RibbonBuild(chunks, ribbon_shape_, dst);  // failure: empty filter
      } else if (mode_ == Mode::kBlocked) {
        BlockedBloomWriter writer(BlockedBloomNumBlocks(n, bits_per_key_), k_,
                                  dst);
        hashes_.ForEachChunk(
            [&](const uint64_t* h, size_t count) { writer.Add(h, count); });
      } else {
        ClassicBloomWriter writer(ClassicBloomNumBits(n, bits_per_key_), k_,
                                  dst);
        hashes_.ForEachChunk(
            [&](const uint64_t* h, size_t count) { writer.Add(h, count); });
      }
    }
    hashes_.Clear();
    num_added_ = 0;
  }

 private:
  const Mode mode_;
  const double bits_per_key_;  // 0: disabled
  const int k_;
  const RibbonShape ribbon_shape_;
  HashList hashes_;
  size_t num_added_ = 0;
};

// The policies differ only in their mode and the decoder they query with.
template <Mode kMode, typename ParsedFilter>
class BloomPolicy final : public FilterPolicy {
 public:
  explicit BloomPolicy(double bits_per_key)
      : bits_per_key_(SanitizeBitsPerKey(bits_per_key)),
        k_(kMode == Mode::kBlocked ? BlockedOptimalK(bits_per_key_)
                                   : ClassicOptimalK(bits_per_key_)) {}

  const char* Name() const override {
    switch (kMode) {
      case Mode::kBlocked:
        return kBlockedBloomPolicyName;
      case Mode::kClassic:
        return kClassicBloomPolicyName;
      case Mode::kRibbon:
        break;
    }
    return kRibbonPolicyName;
  }
  double BitsPerKey() const override { return bits_per_key_; }

  std::unique_ptr<FilterBitsBuilder> NewBuilder() const override {
    return std::make_unique<BloomBitsBuilder>(kMode, bits_per_key_, k_);
  }

  bool KeyMayMatch(std::string_view key,
                   std::string_view filter) const override {
    return HashMayMatch(FilterKeyHash(key), filter);
  }
  uint64_t HashKey(std::string_view key) const override {
    return FilterKeyHash(key);
  }
  bool HashMayMatch(uint64_t hash, std::string_view filter) const override {
    return ParsedFilter(filter).HashMayMatch(hash);
  }

 private:
  const double bits_per_key_;
  const int k_;
};

using BlockedBloomPolicy = BloomPolicy<Mode::kBlocked, ParsedBlockedBloom>;
using ClassicBloomPolicy = BloomPolicy<Mode::kClassic, ParsedClassicBloom>;
using RibbonPolicy = BloomPolicy<Mode::kRibbon, ParsedRibbon>;

}  // namespace

std::shared_ptr<const FilterPolicy> NewBloomFilterPolicy(double bits_per_key) {
  return std::make_shared<BlockedBloomPolicy>(bits_per_key);
}

std::shared_ptr<const FilterPolicy> NewClassicBloomFilterPolicy(
    double bits_per_key) {
  return std::make_shared<ClassicBloomPolicy>(bits_per_key);
}

std::shared_ptr<const FilterPolicy> NewRibbonFilterPolicy(
    double bits_per_key_equivalent) {
  return std::make_shared<RibbonPolicy>(bits_per_key_equivalent);
}

absl::StatusOr<std::shared_ptr<const FilterPolicy>> FilterPolicyFromName(
    std::string_view name, double bits_per_key) {
  if (name == kBlockedBloomPolicyName) {
    return NewBloomFilterPolicy(bits_per_key);
  }
  if (name == kClassicBloomPolicyName) {
    return NewClassicBloomFilterPolicy(bits_per_key);
  }
  if (name == kRibbonPolicyName) return NewRibbonFilterPolicy(bits_per_key);
  return absl::NotFoundError(absl::StrFormat(
      "unknown filter policy name \"%s\" (known: \"%s\", \"%s\", \"%s\")",
      absl::CHexEscape(AsAbsl(name)), kBlockedBloomPolicyName,
      kClassicBloomPolicyName, kRibbonPolicyName));
}

}  // namespace siftdb
