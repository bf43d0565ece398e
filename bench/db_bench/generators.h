// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Keys and values for db_bench, shaped like LevelDB's db_bench so results
// compare: keys are zero-padded decimal numbers ("%016d" for the default
// 16-byte keys) and values are made of pieces that compress to a chosen
// fraction of their size (LevelDB's RandomGenerator idea: each 100-byte
// piece repeats a random printable prefix of ratio * 100 bytes).
//
// Thread safety: none; each benchmark thread owns its generators.

#ifndef SIFTDB_BENCH_DB_BENCH_GENERATORS_H_
#define SIFTDB_BENCH_DB_BENCH_GENERATORS_H_

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>

namespace siftdb::bench {

// Formats key numbers into a reused buffer.
class KeyFormatter {
 public:
  // key_prefix: bytes of 'a' before each number (LevelDB's --key_prefix).
  // num_groups > 0 (RocksDB's --keys_per_prefix): every key begins with
  // its group, GroupPrefix(2 * (k % num_groups)), so the written groups
  // are the even ones and each odd one is an absent prefix between two
  // present ones.
  explicit KeyFormatter(int key_size, int key_prefix = 0,
                        int group_prefix_size = 0, uint64_t num_groups = 0)
      : key_size_(key_size),
        key_prefix_(key_prefix),
        group_prefix_size_(group_prefix_size),
        num_groups_(num_groups) {}
  KeyFormatter(const KeyFormatter&) = delete;
  KeyFormatter& operator=(const KeyFormatter&) = delete;

  // key_prefix 'a's, then k as a decimal number zero-padded on the left to
  // key_size bytes (longer when k has more digits). Valid until the next
  // call.
  std::string_view Key(uint64_t k);
  // Key(k) + ".": absent from the DB yet between Key(k) and Key(k + 1), so
  // only a filter (not the index) can reject it (LevelDB's readmissing).
  std::string_view MissingKey(uint64_t k);
  // Group g as group_prefix_size decimal digits (more when g needs them).
  // Valid until the next call.
  std::string_view GroupPrefix(uint64_t g);

 private:
  // Appends k in decimal, zero-padded on the left to `width` bytes.
  void AppendNumber(uint64_t k, int width);

  int key_size_;
  int key_prefix_;
  int group_prefix_size_;
  uint64_t num_groups_;
  std::string buf_;
};

// Values that compress to about `compression_ratio` of their size.
class ValueGenerator {
 public:
  // Prepares a pool of at least 1 MiB and at least max_value_size bytes.
  ValueGenerator(double compression_ratio, size_t max_value_size,
                 uint64_t seed);
  ValueGenerator(const ValueGenerator&) = delete;
  ValueGenerator& operator=(const ValueGenerator&) = delete;

  // The next `len` bytes of the pool (wrapping). REQUIRES len <=
  // max_value_size. Valid as long as the generator.
  std::string_view Generate(size_t len);

 private:
  std::string pool_;
  size_t pos_ = 0;
};

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_DB_BENCH_GENERATORS_H_
