// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/mirror/redis_mirror_live_filter.h"

#include <algorithm>
#include <cmath>
#include <map>

#include "absl/base/const_init.h"
#include "filter/blocked_bloom.h"
#include "filter/bloom_math.h"
#include "filter/filter_format.h"
#include "util/mutex.h"

namespace siftdb {

namespace {

// The smallest bits per key (a multiple of 1/8, at most 100) whose blocked
// rate at the best k is at most error_rate: a binary search (the rate falls
// as bits per key grow), memoized because every MemTable asks again.
double BitsPerKeyForRate(double error_rate) {
  static Mutex mu;
  static auto* memo = new std::map<double, double>();
  {
    MutexLock l(&mu);
    auto it = memo->find(error_rate);
    if (it != memo->end()) return it->second;
  }
  int lo = 8, hi = 800;  // eighths of a bit
  while (lo < hi) {
    const int mid = (lo + hi) / 2;
    const double bpk = mid / 8.0;
    if (BlockedFpRate(bpk, BlockedOptimalK(bpk)) <= error_rate) {
      hi = mid;
    } else {
      lo = mid + 1;
    }
  }
  const double bpk = lo / 8.0;
  MutexLock l(&mu);
  if (memo->size() < 4096) (*memo)[error_rate] = bpk;
  return bpk;
}

}  // namespace

MirrorSubFilter SizeSubFilter(uint64_t capacity, double error_rate) {
  if (capacity == 0) capacity = 1;
  if (!(error_rate > 0)) error_rate = 1e-9;
  const double bpk = BitsPerKeyForRate(error_rate);
  MirrorSubFilter s;
  s.num_blocks = BlockedBloomNumBlocks(capacity, bpk);
  s.k = BlockedOptimalK(bpk);
  return s;
}

size_t LiveFilter::Delta::num_bits() const {
  size_t n = 0;
  for (const auto& b : bits) n += b.size();
  return n;
}

void LiveFilter::Delta::Reset(const LiveFilter& filter) {
  bits.assign(filter.num_subfilters(), {});
  first_new = filter.num_subfilters();
  inserted = 0;
}

LiveFilter::LiveFilter(const LiveFilterOptions& options) : options_(options) {
  AddSubFilter();
}

void LiveFilter::AddSubFilter() {
  const int i = num_subfilters();
  auto sub = std::make_unique<Sub>();
  const double growth = std::max(1.0, options_.growth);
  const double cap =
      static_cast<double>(std::max<uint64_t>(1, options_.initial_capacity)) *
      std::pow(growth, i);
  sub->capacity = static_cast<uint64_t>(std::min(cap, 4e9));
  sub->error_rate = options_.error_rate * std::pow(options_.tightening, i + 1);
  sub->desc = SizeSubFilter(sub->capacity, sub->error_rate);
  sub->bytes = EmptySubFilter(sub->desc);
  subs_.push_back(std::move(sub));
}

bool LiveFilter::HashMayMatch(uint64_t hash) const {
  for (const auto& sub : subs_) {
    if (ParsedBlockedBloom(sub->bytes).HashMayMatch(hash)) return true;
  }
  return false;
}

void LiveFilter::Add(const uint64_t* hashes, size_t n, Delta* delta) {
  std::vector<ParsedBlockedBloom> parsed;
  parsed.reserve(subs_.size() + 1);
  for (const auto& sub : subs_) parsed.emplace_back(sub->bytes);
  uint64_t bits[kMaxProbes];
  for (size_t j = 0; j < n; j++) {
    const uint64_t h = hashes[j];
    // Present in an older sub-filter: not added again. (The newest needs
    // no probe: setting its bits tells whether any was missing.)
    bool present = false;
    for (size_t i = parsed.size() - 1; i-- > 0;) {
      if (parsed[i].HashMayMatch(h)) {
        present = true;
        break;
      }
    }
    if (present) continue;
    Sub* last = subs_.back().get();
    if (last->inserted >= last->capacity &&
        num_subfilters() < std::max(1, options_.max_subfilters)) {
      AddSubFilter();
      last = subs_.back().get();
      parsed.emplace_back(last->bytes);
    }
    const int index = num_subfilters() - 1;
    const MirrorSubFilter& d = last->desc;
    BlockedBloomProbeOffsets(h, d.num_blocks, d.k, bits);
    uint8_t* data = reinterpret_cast<uint8_t*>(last->bytes.data());
    bool changed = false;
    for (int p = 0; p < d.k; p++) {
      if (GetFilterBit(data, bits[p])) continue;
      SetFilterBit(data, bits[p]);
      changed = true;
      if (delta != nullptr && static_cast<size_t>(index) < delta->first_new) {
        delta->bits[index].push_back(bits[p]);
      }
    }
    if (changed) {
      last->inserted++;
      total_inserted_++;
      if (delta != nullptr) delta->inserted++;
    }
  }
}

uint64_t LiveFilter::total_capacity() const {
  uint64_t c = 0;
  for (const auto& s : subs_) c += s->capacity;
  return c;
}

uint64_t LiveFilter::bitmap_bits() const {
  uint64_t b = 0;
  for (const auto& s : subs_) b += uint64_t{s->desc.num_blocks} * kBlockBits;
  return b;
}

MirrorLiveEntry LiveFilter::Entry(uint64_t id) const {
  MirrorLiveEntry e;
  e.id = id;
  e.whole_keys = true;
  e.prefix_extractor = options_.prefix_extractor;
  for (const auto& s : subs_) e.subfilters.push_back(s->desc);
  return e;
}

MirrorFilterMeta LiveFilter::Meta(uint64_t first_version) const {
  MirrorFilterMeta m;
  m.kind = "live";
  m.capacity = total_capacity();
  m.error_rate = options_.error_rate;
  m.bitmap_size = bitmap_bits();
  m.hash_count = subs_.back()->desc.k;
  m.inserted_count = total_inserted_;
  m.version = first_version;
  m.level = -1;
  m.subfilters = num_subfilters();
  return m;
}

}  // namespace siftdb
