// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "redis/bloom/redis_bloom_layout.h"

#include <cmath>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"
#include "redis/bloom/murmurhash64a.h"

namespace siftdb::redis_bloom {

namespace {

// RedisBloom divides by this truncated value of ln(2)^2; using the exact
// value changes bpe in its last bits and breaks dump compatibility.
constexpr double kLn2Squared = 0.480453013918201;
constexpr double kLn2 = 0.693147180559945309417232121458176568;

}  // namespace

double BitsPerEntry(double error) {
  double bpe = -(std::log(error) / kLn2Squared);
  return bpe < 0 ? -bpe : bpe;
}

uint32_t HashesForBpe(double bpe) {
  return static_cast<uint32_t>(std::ceil(kLn2 * bpe));
}

absl::StatusOr<LinkSpec> ComputeGrownLink(uint64_t capacity, double error) {
  if (!(error > 0 && error < 1)) {
    return absl::InvalidArgumentError(
        absl::StrFormat("bloom filter error rate %g is outside (0, 1)", error));
  }
  if (capacity < 1) {
    return absl::InvalidArgumentError("bloom filter capacity must be >= 1");
  }
  LinkSpec link;
  link.capacity = capacity;
  link.error = error;
  link.bpe = BitsPerEntry(error);
  link.hashes = HashesForBpe(link.bpe);
  const double want_bits = static_cast<double>(capacity) * link.bpe;
  // Refuse before the cast: a double past 2^64 does not convert.
  if (!(want_bits < static_cast<double>(kMaxLinkBytes) * 8)) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "bloom sub-filter of capacity %d at error %g needs %.0f bits, above "
        "Redis's 512 MB string limit (%d bytes)",
        capacity, error, want_bits, kMaxLinkBytes));
  }
  uint64_t bits = static_cast<uint64_t>(want_bits);
  uint64_t bytes = bits % 64 != 0 ? (bits / 64 + 1) * 8 : bits / 8;
  if (bytes == 0) bytes = 8;  // unreachable for capacity >= 1; be safe
  if (bytes > kMaxLinkBytes) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "bloom sub-filter of capacity %d at error %g needs %d bytes, above "
        "Redis's 512 MB string limit (%d bytes)",
        capacity, error, bytes, kMaxLinkBytes));
  }
  link.bytes = bytes;
  link.bits = bytes * 8;
  link.n2 = 0;
  return link;
}

absl::StatusOr<LinkSpec> ComputeLink(uint64_t capacity, double error) {
  if (capacity < 1 || capacity > kMaxCapacity) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "bloom filter capacity %d is outside [1, %d]", capacity, kMaxCapacity));
  }
  return ComputeGrownLink(capacity, error);
}

HashPair HashItem(std::string_view item) {
  HashPair h;
  h.a = MurmurHash64A(item.data(), item.size(), kMurmurHash64AMultiplier);
  h.b = MurmurHash64A(item.data(), item.size(), h.a);
  return h;
}

}  // namespace siftdb::redis_bloom
