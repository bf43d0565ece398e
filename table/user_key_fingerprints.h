// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// UserKeyFingerprints: a RestartSearchHint for a block of internal keys
// whose user keys are ordered bytewise (a table's index block under
// BytewiseComparator). It keeps, for every restart point, 8 bytes of its
// user key as an integer, in one array: a search of the array reads a few
// cache lines where a binary search of the block's restart points reads
// two lines per step (the restart offset, then the key), each a likely
// cache miss in a large index block.
//
// The fingerprint of a user key k: let P be the longest prefix the block's
// first and next-to-last restart keys share (so every restart key but the
// last starts with P; a table's last index key is a short successor).
// When k starts with P, the 8 bytes after P, big-endian, zero-padded past
// k's end; when k sorts below every key starting with P, 0; above, all
// ones. k1 < k2 bytewise implies fp(k1) <= fp(k2), so a restart key whose
// fingerprint is below the target's is below the target, one whose
// fingerprint is above is above it, and only equal fingerprints need their
// keys compared (UserKeyFingerprints::Narrow).
//
// Memory: 8.5 bytes per restart point (every index entry), beside the
// block.
// Thread safety: immutable after Build; Narrow is safe from many threads.

#ifndef SIFTDB_TABLE_USER_KEY_FINGERPRINTS_H_
#define SIFTDB_TABLE_USER_KEY_FINGERPRINTS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "table/block.h"

namespace siftdb {

class UserKeyFingerprints final : public RestartSearchHint {
 public:
  // Blocks with fewer restart points are searched as fast without a hint.
  static constexpr uint32_t kMinRestarts = 8;

  // The hint for `block`, whose keys must be internal keys ordered by user
  // key bytewise. Null when the block has fewer than kMinRestarts restart
  // points or a restart entry that does not decode as a full internal key
  // (the block's own searches then report what is wrong).
  static std::unique_ptr<const UserKeyFingerprints> Build(const Block& block);

  // RestartSearchHint. A target shorter than an internal key's trailer
  // narrows nothing.
  void Narrow(std::string_view target, uint32_t* lo,
              uint32_t* hi) const override;
  size_t MemoryUsage() const override;

  // The fingerprint of a user key (exposed for tests).
  uint64_t Fingerprint(std::string_view user_key) const;
  std::string_view shared_prefix() const { return prefix_; }

 private:
  // Every kSampleStride-th fingerprint is also kept in a small array of
  // its own, searched first: with a few hundred index blocks the samples
  // stay in the CPU's caches, and the search then reads the one or two
  // cache lines of the stretch they name instead of a binary search's
  // five or six across the whole array.
  static constexpr uint32_t kSampleStride = 16;

  UserKeyFingerprints(std::string prefix, std::vector<uint64_t> fingerprints,
                      std::vector<uint64_t> samples)
      : prefix_(std::move(prefix)),
        fingerprints_(std::move(fingerprints)),
        samples_(std::move(samples)) {}

  const std::string prefix_;                  // P
  const std::vector<uint64_t> fingerprints_;  // one per restart point
  const std::vector<uint64_t> samples_;       // fingerprints_[16 k]
};

}  // namespace siftdb

#endif  // SIFTDB_TABLE_USER_KEY_FINGERPRINTS_H_
