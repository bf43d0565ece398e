// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RocksDB's Bloom and Ribbon filters for filter_bench's side-by-side rows
// (issue #18), built and queried through the FilterBitsBuilder and
// FilterBitsReader objects RocksDB's own FilterPolicy hands out: the code
// its block-based tables run. Compiled only in the comparison build
// (SIFTDB_BENCH_COMPARE with ROCKSDB_INTERNAL_INCLUDE_DIR): RocksDB 7.8
// declares those two classes in an internal header of its source tree.
//
// Thread safety: one thread per object. Not copyable.

#ifndef SIFTDB_BENCH_FILTER_BENCH_ROCKSDB_H_
#define SIFTDB_BENCH_FILTER_BENCH_ROCKSDB_H_

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace siftdb::bench {

class RocksDBFilter {
 public:
  // RocksDB's NewRibbonFilterPolicy(bits) when ribbon, else its
  // NewBloomFilterPolicy(bits) (the "fast local" format).
  RocksDBFilter(bool ribbon, double bits_per_key);
  ~RocksDBFilter();
  RocksDBFilter(const RocksDBFilter&) = delete;
  RocksDBFilter& operator=(const RocksDBFilter&) = delete;

  void AddKey(std::string_view key);
  // Builds the filter from the keys added; MayMatch may follow.
  void Finish();
  bool MayMatch(std::string_view key) const;
  // Bytes of the built filter.
  size_t size() const;

 private:
  struct Rep;
  std::unique_ptr<Rep> rep_;
};

// "RocksDB 7.8.3", from the linked library.
std::string RocksDBFilterLibrary();

}  // namespace siftdb::bench

#endif  // SIFTDB_BENCH_FILTER_BENCH_ROCKSDB_H_
