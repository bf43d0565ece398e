// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/user_key_fingerprints.h"

#include <algorithm>
#include <cstring>

#include "table/internal_key.h"

namespace siftdb {
namespace {

uint64_t FingerprintOf(std::string_view prefix, std::string_view user_key) {
  const size_t p = prefix.size();
  const size_t common = std::min(user_key.size(), p);
  const int c =
      common == 0 ? 0 : std::memcmp(user_key.data(), prefix.data(), common);
  if (c < 0 || (c == 0 && user_key.size() < p)) return 0;  // below P's keys
  if (c > 0) return ~uint64_t{0};                          // above them
  unsigned char tail[8] = {0, 0, 0, 0, 0, 0, 0, 0};
  std::memcpy(tail, user_key.data() + p,
              std::min<size_t>(sizeof(tail), user_key.size() - p));
  uint64_t v = 0;
  for (unsigned char b : tail) v = (v << 8) | b;
  return v;
}

}  // namespace

std::unique_ptr<const UserKeyFingerprints> UserKeyFingerprints::Build(
    const Block& block) {
  const uint32_t n = block.num_restarts();
  if (n < kMinRestarts) return nullptr;
  std::vector<std::string_view> user_keys(n);
  for (uint32_t i = 0; i < n; i++) {
    std::string_view key;
    if (!block.RestartKey(i, &key) || key.size() < kInternalKeyTrailerSize) {
      return nullptr;
    }
    user_keys[i] = ExtractUserKey(key);
  }
  // P from the first and the next-to-last keys: a table's last index key
  // is a short successor of its largest key ("1" after "0999"), which
  // would share nothing with the others. The last key is fingerprinted
  // like any other (any P gives an order-keeping fingerprint).
  const std::string_view first = user_keys.front();
  const std::string_view last = user_keys[n - 2];
  size_t shared = 0;
  while (shared < first.size() && shared < last.size() &&
         first[shared] == last[shared]) {
    shared++;
  }
  std::string prefix(first.substr(0, shared));
  std::vector<uint64_t> fingerprints(n);
  for (uint32_t i = 0; i < n; i++) {
    fingerprints[i] = FingerprintOf(prefix, user_keys[i]);
  }
  std::vector<uint64_t> samples;
  for (uint32_t i = 0; i < n; i += kSampleStride) {
    samples.push_back(fingerprints[i]);
  }
  return std::unique_ptr<const UserKeyFingerprints>(new UserKeyFingerprints(
      std::move(prefix), std::move(fingerprints), std::move(samples)));
}

uint64_t UserKeyFingerprints::Fingerprint(std::string_view user_key) const {
  return FingerprintOf(prefix_, user_key);
}

size_t UserKeyFingerprints::MemoryUsage() const {
  return sizeof(*this) + prefix_.capacity() + 1 +
         sizeof(uint64_t) * (fingerprints_.capacity() + samples_.capacity());
}

void UserKeyFingerprints::Narrow(std::string_view target, uint32_t* lo,
                                 uint32_t* hi) const {
  if (target.size() < kInternalKeyTrailerSize) return;
  const uint64_t f = Fingerprint(ExtractUserKey(target));
  const auto begin = fingerprints_.begin();
  const auto end = fingerprints_.end();
  // Restart keys before `first` are below the target; from `last` on,
  // above it; those between have the target's fingerprint. The samples
  // name the stretch of kSampleStride fingerprints holding `first`: every
  // fingerprint before the first sample >= f is below f.
  const size_t j = static_cast<size_t>(
      std::lower_bound(samples_.begin(), samples_.end(), f) - samples_.begin());
  const size_t from = j == 0 ? 0 : (j - 1) * kSampleStride + 1;
  const size_t to = std::min(fingerprints_.size(), j * kSampleStride);
  const auto first = std::lower_bound(begin + from, begin + to, f);
  // Ties are few where fingerprints help at all: step over them rather
  // than search again, which would read as many cache lines as the first
  // search (a binary search of many ties is the bound).
  auto last = first;
  for (int i = 0; i < 4 && last != end && *last == f; i++) ++last;
  if (last != end && *last == f) last = std::upper_bound(last, end, f);
  const auto i0 = static_cast<uint32_t>(first - begin);
  const auto i1 = static_cast<uint32_t>(last - begin);
  *lo = i0 > 0 ? i0 - 1 : 0;
  *hi = i1 > 0 ? i1 - 1 : 0;
}

}  // namespace siftdb
