// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// FilterPolicy: builds a compact probabilistic summary (a filter) of a set of
// keys, stored in every table, and answers "may this key be in the set?".
//
// Contract (never relaxed): KeyMayMatch(k, filter) is true for every key k
// that was added to the builder that produced `filter` — no false negatives.
// A filter that a policy cannot decode (empty, truncated, unknown version or
// made by another policy) answers true ("may match"), never a false "no".
//
// Thread safety: a FilterPolicy is immutable and may be shared by many
// threads. A FilterBitsBuilder is used by one thread at a time.
// Persistence: Name() is stored in each table's properties; a policy whose
// encoding changes must change its name.

#ifndef SIFTDB_INCLUDE_FILTER_POLICY_H_
#define SIFTDB_INCLUDE_FILTER_POLICY_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "siftdb/export.h"

namespace siftdb {

// Accumulates keys (hashing each once) and serializes a filter over them.
class SIFTDB_EXPORT FilterBitsBuilder {
 public:
  FilterBitsBuilder() = default;
  FilterBitsBuilder(const FilterBitsBuilder&) = delete;
  FilterBitsBuilder& operator=(const FilterBitsBuilder&) = delete;
  virtual ~FilterBitsBuilder() = default;

  // Adds a key; adding the same key twice is harmless.
  virtual void AddKey(std::string_view key) = 0;
  // Keys added since construction or the last Finish().
  virtual size_t NumAdded() const = 0;
  // Appends the serialized filter over every added key to *dst and resets
  // the builder to empty.
  virtual void Finish(std::string* dst) = 0;
};

class SIFTDB_EXPORT FilterPolicy {
 public:
  virtual ~FilterPolicy() = default;

  // Persisted; identifies the encoding.
  virtual const char* Name() const = 0;
  // Configured bits per key (may be fractional).
  virtual double BitsPerKey() const = 0;

  virtual std::unique_ptr<FilterBitsBuilder> NewBuilder() const = 0;

  // False only when `key` was certainly not added to `filter`.
  virtual bool KeyMayMatch(std::string_view key,
                           std::string_view filter) const = 0;

  // Hash-once, probe-many: HashMayMatch(HashKey(k), f) == KeyMayMatch(k, f).
  // Lets a reader that checks one key against many filters hash it once.
  // (siftdb's policies: HashKey is XXH3_64bits of the key, seed 0. The table
  // layer decodes each of its filters once, with an internal reader, rather
  // than calling KeyMayMatch per query.)
  virtual uint64_t HashKey(std::string_view key) const = 0;
  virtual bool HashMayMatch(uint64_t hash, std::string_view filter) const = 0;
};

// The default: a cache-line-blocked Bloom filter (every probe of a key lands
// in one 64-byte block) over XXH3-64 hashes; about 0.97% false positives at
// 10 bits per key. Name: "siftdb.BlockedBloom". Format:
// docs/filter_format.md.
//
// bits_per_key (both factories): values above 100 are clamped to 100
// (BitsPerKey() reports the value in use). bits_per_key <= 0 or NaN never
// crashes: the policy's builders then emit empty filters, which every reader
// treats as "may match" (the policy still reads filters built by other
// configurations). To disable filters, set Options.filter_bits_per_key = 0,
// which skips building them altogether.
SIFTDB_EXPORT std::shared_ptr<const FilterPolicy> NewBloomFilterPolicy(
    double bits_per_key);

// A classic Bloom filter whose k probes (double hashing) span the whole bit
// array: m = n * bits_per_key bits (whole bytes, at least 64) and
// k = round(bits_per_key * ln 2). Name: "siftdb.ClassicBloom".
SIFTDB_EXPORT std::shared_ptr<const FilterPolicy> NewClassicBloomFilterPolicy(
    double bits_per_key);

// A Standard Ribbon filter (Dillinger & Walzer 2021): about 29% smaller than
// the blocked Bloom filter at the same false-positive rate, but 4-7x slower
// to build and 2.5-4x slower per query (docs/benchmarks.md).
// bits_per_key_equivalent names the rate: the filter aims at the blocked
// Bloom filter's theoretical rate at that many bits per key (about 0.96% at
// 10) and uses about 0.71 times as many bits. Same clamping and <= 0
// behavior as above. Name: "siftdb.Ribbon". Format: docs/filter_format.md.
SIFTDB_EXPORT std::shared_ptr<const FilterPolicy> NewRibbonFilterPolicy(
    double bits_per_key_equivalent);

// The policy whose Name() is `name`, configured with bits_per_key.
// NotFound for an unknown name.
SIFTDB_EXPORT absl::StatusOr<std::shared_ptr<const FilterPolicy>>
FilterPolicyFromName(std::string_view name, double bits_per_key);

}  // namespace siftdb

#endif  // SIFTDB_INCLUDE_FILTER_POLICY_H_
