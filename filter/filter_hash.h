// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The one hash every siftdb filter uses: XXH3 64-bit with seed 0
// (XXH3_64bits from libxxhash >= 0.8, whose output is stable across
// versions and platforms). A key is hashed once; every probe of every
// filter mode is derived from this 64-bit value, so a reader that checks one
// key against many filters hashes it once (FilterPolicy::HashKey).
//
// Persisted: changing this function changes every filter's meaning; it is
// part of the formats in docs/filter_format.md and must never change.
//
// Thread safety: pure function.

#ifndef SIFTDB_FILTER_FILTER_HASH_H_
#define SIFTDB_FILTER_FILTER_HASH_H_

#include <xxhash.h>

#include <cstdint>
#include <string_view>

namespace siftdb {

inline uint64_t FilterKeyHash(std::string_view key) {
  // XXH3 accepts a null pointer for length 0 (std::string_view{} has one).
  return XXH3_64bits(key.data(), key.size());
}

}  // namespace siftdb

#endif  // SIFTDB_FILTER_FILTER_HASH_H_
