// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// TableOptions: everything the table layer needs to write or read one
// table. A plain struct; copy it freely.
//
// Ownership: user_comparator, block_cache and statistics are NOT owned and
// must outlive every TableBuilder and Table built with these options.
// filter_policy is shared.

#ifndef SIFTDB_TABLE_TABLE_OPTIONS_H_
#define SIFTDB_TABLE_TABLE_OPTIONS_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

#include "siftdb/comparator.h"
#include "siftdb/filter_policy.h"
#include "siftdb/options.h"
#include "siftdb/slice_transform.h"
#include "util/cache.h"
#include "util/statistics.h"

namespace siftdb {

struct TableOptions {
  // Order of the user keys inside the internal keys. null:
  // BytewiseComparator().
  const Comparator* user_comparator = nullptr;
  // Approximate uncompressed size of a data block: a block is cut once its
  // estimated size reaches this many bytes.
  size_t block_size = 4096;
  // Keys between restart points in a data block. Values < 1 act as 1.
  int block_restart_interval = 16;
  // Compression tried on data and index blocks (kept only when it saves at
  // least 12.5%).
  CompressionType compression = kSnappyCompression;
  // Compressor level for LZ4 and zstd (CompressionOptions::level).
  int compression_level = CompressionOptions::kDefaultCompressionLevel;
  // CompressionOptions::max_dict_bytes and zstd_max_train_bytes: with zstd
  // and max_dict_bytes > 0, the builder holds the first data blocks back,
  // builds the table's dictionary from them and compresses every data
  // block against it (table/compression_dict.h).
  size_t compression_max_dict_bytes = 0;
  size_t compression_zstd_max_train_bytes = 0;
  // Builds the whole-table filter over user keys. null: tables have no
  // filter. When reading, a table's filter is interpreted by this policy
  // when the names match, otherwise by FilterPolicyFromName().
  std::shared_ptr<const FilterPolicy> filter_policy;
  // When set (and filter_policy too), the filter also holds the prefix of
  // every user key in the extractor's domain, and the table records the
  // extractor's Name(). When reading, only a table recorded under this
  // extractor's name answers prefix probes; any other answers "may match".
  std::shared_ptr<const SliceTransform> prefix_extractor;
  // Whether the filter holds whole user keys. false (only honoured with a
  // prefix_extractor): prefixes only, and the filter is stored under the
  // name kPrefixOnlyFilterTag + policy name, which readers that do not
  // know the tag cannot decode, so they answer "may match".
  bool whole_key_filtering = true;
  // Cache of uncompressed data blocks (possibly shared with other DBs; each
  // table prefixes its keys with its own ShardedCache::NewId()). null: no
  // caching.
  ShardedCache* block_cache = nullptr;
  // When true (and block_cache is set), a table keeps its filter in the
  // block cache, charged there and evicted like a data block, instead of
  // on the heap for as long as it is open (RocksDB's
  // cache_index_and_filter_blocks, for filters). Open still reads and
  // verifies the filter (and leaves it in the cache); a probe that misses
  // the cache reads it again, and a probe whose reload fails answers "may
  // match". Table::PinFilter keeps one table's filter in the cache until
  // the table closes. Without a block cache filters stay on the heap.
  bool cache_filter = false;
  // Options::partition_filters and filter_partition_size: when writing,
  // cut large filters into partitions (filter/partitioned_filter.h). When
  // reading, a partitioned filter is recognised whatever these say; with
  // cache_filter each partition is a block-cache entry of its own.
  bool partition_filters = false;
  size_t filter_partition_size = 4096;
  // Bytes of the filters held now: on the heap by open tables, and in the
  // block cache (cache_filter; counted until the cache drops them, even
  // after their table closed). Shared so that a counter outlives the
  // cache entries that update it. May be null: not counted.
  std::shared_ptr<std::atomic<uint64_t>> heap_filter_bytes;
  std::shared_ptr<std::atomic<uint64_t>> cached_filter_bytes;
  // Bytes of the index blocks (with their search fingerprints) held by
  // open tables, which keep them on the heap while they are open. May be
  // null: not counted.
  std::shared_ptr<std::atomic<uint64_t>> heap_index_bytes;
  // Where counters are recorded. May be null.
  Statistics* statistics = nullptr;
  // Verify the CRC of every block read, whatever ReadOptions says.
  bool paranoid_checks = false;
  // Options::advise_random_on_open: Table::Open advises its file for
  // random access (RandomAccessFile::AdviseRandomAccess).
  bool advise_random = false;
  // A data block whose bytes took longer than this to arrive (read and
  // CRC check; ReadBlockOptions::arrival_nanos) came from storage, not from
  // memory: the table goes on hinting its reads (Table::kHintedReads). From
  // memory that is one CRC pass over a few KiB, a fraction of the block's
  // decoding (about 3 us with Snappy and 12 us with zstd for 4 KiB on the
  // benchmarks' 2-core VM; not timed when the CRC is checked); a read from
  // storage takes 20 us or more.
  int64_t slow_block_read_nanos = 15'000;
};

// The user comparator of `options`, defaulted.
inline const Comparator* UserComparatorOf(const TableOptions& options) {
  return options.user_comparator != nullptr ? options.user_comparator
                                            : BytewiseComparator();
}

}  // namespace siftdb

#endif  // SIFTDB_TABLE_TABLE_OPTIONS_H_
