// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Table: an open, immutable table file (format in docs/table_format.md).
// Open() reads and verifies (CRC always) the footer, metaindex, properties,
// index and filter blocks and keeps the index block in memory, and the
// filter too: on the heap, or in the block cache with
// TableOptions::cache_filter (reloaded when evicted); data blocks are read
// on demand, through the block cache when TableOptions::block_cache is set.
//
// Thread safety: every method is const and safe to call from many threads.
// Ownership: the Table owns its file. Iterators borrow the Table: destroy
// them before it. TableOptions pointers (comparator, cache, statistics) must
// outlive it.
// Errors: damage anywhere (bad magic, truncation, CRC mismatch, malformed
// block, varint or restart array) is absl::DataLossError whose message
// starts with the file name and names the offset, e.g.
// "000012.sst: block at offset 4096: checksum mismatch". Data-block CRCs
// are checked when ReadOptions::verify_checksums or
// TableOptions::paranoid_checks is set.

#ifndef SIFTDB_TABLE_TABLE_H_
#define SIFTDB_TABLE_TABLE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <new>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "filter/filter_reader.h"
#include "filter/partitioned_filter.h"
#include "siftdb/env.h"
#include "siftdb/iterator.h"
#include "siftdb/options.h"
#include "table/block.h"
#include "table/compression_dict.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "table/table_options.h"
#include "table/table_properties.h"
#include "util/coding.h"
#include "util/mutex.h"

namespace siftdb {

class Table {
 public:
  // Opens the table in `file` (file_size bytes long). file_name is used in
  // every error message.
  static absl::StatusOr<std::unique_ptr<Table>> Open(
      const TableOptions& options, std::string file_name,
      std::unique_ptr<RandomAccessFile> file, uint64_t file_size);

  Table(const Table&) = delete;
  Table& operator=(const Table&) = delete;
  ~Table();

  // An iterator over the table's internal keys (InternalKeyComparator
  // order). Errors are fail-stop (see table/two_level_iterator.h). With
  // ReadOptions' iterate bounds it does not read the data blocks that lie
  // wholly outside them (counting kBoundsSkippedBlocks); keys outside the
  // bounds in the blocks it reads are still returned.
  std::unique_ptr<Iterator> NewIterator(const ReadOptions& options) const;

  // What the filter did for one point lookup (Version counts these per
  // level for siftdb.stats).
  enum class FilterOutcome : uint8_t {
    kNotChecked,     // no filter, or the lookup failed before the probe
    kNegative,       // "no": no data block read
    kTruePositive,   // "maybe", and an entry with the user key exists
    kFalsePositive,  // "maybe", but no entry has the user key
  };

  // Point lookup. It
  // checks the filter on the user key of internal_key first (with
  // *user_key_hash when non-null and the table's filter was built by a
  // policy of the same Name() as TableOptions::filter_policy, whose HashKey
  // computed it). When the filter says no: returns OK without reading a data
  // block or calling `found`, counting kFilterNegatives. Otherwise reads the
  // one data block that may hold the key and calls found(key, value) for its
  // first entry >= internal_key, if any (an entry in a later block never
  // has the same user key). Counts kFilterFalsePositives when the filter
  // said maybe but no entry with that user key exists. When outcome is
  // non-null it is set to what the filter did.
  absl::Status InternalGet(
      const ReadOptions& options, std::string_view internal_key,
      const uint64_t* user_key_hash,
      absl::FunctionRef<void(std::string_view, std::string_view)> found,
      FilterOutcome* outcome = nullptr) const;

  // One key of a MultiGet (below).
  struct GetRequest {
    std::string_view internal_key;
    const uint64_t* user_key_hash = nullptr;  // as for InternalGet
    absl::Status status;  // out: OK, or why this key's blocks failed
    // Set by MultiGetLocate: the data block that may hold the key (an
    // index into the batch's blocks), or one of:
    static constexpr int kRuledOut = -1;       // by the filter, or a bad key
    static constexpr int kPastLastBlock = -2;  // past the table's last key
    int block = kRuledOut;
    FilterOutcome filter = FilterOutcome::kNotChecked;  // out, as InternalGet
  };
  class MultiGetBlocks;

  // InternalGet for many keys, in three steps, so that a caller batching
  // over several tables can take each step for all of them before the next,
  // overlapping the memory misses and file reads of the whole batch.
  // REQUIRES: requests sorted by internal key, ascending (equal keys
  // allowed). Locate probes the filters and finds each key's data block in
  // the index (starting to load its block-cache entry); Pin pins the blocks
  // the cache holds (starting to load their bytes) and tells the file which
  // of the others will be read (RandomAccessFile::WillRead), so their reads
  // from storage overlap; Finish reads those and searches every block,
  // calling found(i, key, value) as InternalGet calls found for
  // requests[i]. An error reading a block is set on the requests that
  // needed it; the others go on. Statistics as InternalGet records them,
  // per key. The same options, requests and *blocks throughout, unchanged
  // between.
  void MultiGetLocate(std::span<GetRequest> requests,
                      MultiGetBlocks* blocks) const;
  // Data block reads are hinted (MultiGetPin for the batch; a Get's or an
  // iterator's read of a mapped table just before it, so that a block
  // spanning two pages is one read from storage) in a table's first this
  // many block reads (or MultiGet batches that read blocks), and for this
  // many after a slow read (TableOptions::slow_block_read_nanos) that
  // storage explains: one while hinting or within this many reads after,
  // or a second within kSlowReadsToConfirm reads of a first.
  static constexpr int kHintedReads = 64;
  static constexpr int kSlowReadsToConfirm = 8;
  void MultiGetPin(std::span<GetRequest> requests,
                   MultiGetBlocks* blocks) const;
  void MultiGetFinish(const ReadOptions& options,
                      std::span<GetRequest> requests, MultiGetBlocks* blocks,
                      absl::FunctionRef<void(size_t i, std::string_view key,
                                             std::string_view value)>
                          found) const;
  // Starts loading the filter line a probe with user_key_hash would read,
  // when the table's filter takes the caller's hashes and is held by the
  // table (else nothing).
  void PrefetchFilter(uint64_t user_key_hash) const {
    if (filter_whole_keys_ && hash_compatible_) {
      const LoadedFilter* f = resident_filter_.load(std::memory_order_acquire);
      if (f != nullptr) f->reader.Prefetch(user_key_hash);
    }
  }

  // The filter alone: false only when user_key is certainly absent. True
  // when the table has no filter or one no known policy can read. A
  // prefix-only filter is probed with the key's prefix when the table was
  // built under TableOptions::prefix_extractor's name (else: true). Records
  // no statistics.
  bool UserKeyMayMatch(std::string_view user_key,
                       const uint64_t* user_key_hash) const;

  // False only when no user key of the table has `prefix` as its prefix
  // under TableOptions::prefix_extractor. True whenever the table's filter
  // holds no prefixes of that extractor's name (built without one, or with
  // another), or cannot be read. Counts kPrefixFilterChecks and
  // kPrefixFilterNegatives for the probes it makes.
  bool PrefixMayMatch(std::string_view prefix) const;

  // Approximate file offset where the data for internal_key begins (or
  // would begin); the end of the data blocks for keys past the last.
  uint64_t ApproximateOffsetOf(std::string_view internal_key) const;

  const TableProperties& properties() const { return props_; }
  // Bytes this table holds on the heap for its index: the index block and
  // its search fingerprints (counted in TableOptions::heap_index_bytes).
  size_t index_memory() const { return index_memory_; }
  // The raw filter bytes (exactly the filter block's bytes in the file),
  // 64-byte aligned, when the table holds them: always without
  // TableOptions::cache_filter, and after PinFilter with it. Empty when the
  // table has no filter or its filter is in the block cache (CopyFilter
  // reads it from there).
  std::string_view filter_data() const {
    const LoadedFilter* f = resident_filter_.load(std::memory_order_acquire);
    return f != nullptr ? f->bytes() : std::string_view();
  }
  // A partitioned filter with TableOptions::cache_filter holds only its
  // index on the heap and each partition in the block cache: filter_data()
  // is then empty, PinFilter does nothing and CopyFilter reads the block
  // from the file.
  // The size of the filter block (0: no filter), wherever it is held.
  size_t filter_size() const { return filter_size_; }
  // Sets *bytes to the filter block's bytes (empty: no filter), from the
  // table, the block cache, or the file (verifying its CRC; DataLoss naming
  // the file and offset when damaged).
  absl::Status CopyFilter(std::string* bytes) const;
  // With TableOptions::cache_filter and a block cache: loads the filter
  // into the cache when absent and keeps it there, pinned, until the table
  // closes (so probes skip the cache lookup). Idempotent and thread-safe;
  // a failed load leaves the filter unpinned (probes reload it). No effect
  // otherwise (the filter is on the heap already, or there is none).
  void PinFilter() const;
  // Whether probes read the filter without a block-cache lookup (on the
  // heap, or pinned); false when the table has no filter.
  bool filter_resident() const {
    return resident_filter_.load(std::memory_order_acquire) != nullptr;
  }
  // Name of the policy that built the filter ("" when none).
  std::string_view filter_policy_name() const { return filter_policy_name_; }
  // The policy used to probe the filter (null when none or unknown).
  const FilterPolicy* filter_policy() const { return filter_policy_.get(); }

  const std::string& file_name() const { return file_name_; }
  uint64_t file_size() const { return file_size_; }
  const Footer& footer() const { return footer_; }
  // Offset where the data blocks end (the first meta block).
  uint64_t data_end() const { return data_end_; }
  // The table's compression dictionary; null when it has none.
  const ZstdDictionary* compression_dictionary() const {
    return dictionary_.get();
  }

  // Verifies the CRC of every data block without decompressing it, and
  // that the index's blocks tile [0, data_end()) in order: a cheap check
  // of bytes just written (Open already verified the meta blocks). Then
  // releases the data blocks' pages from the process's resident set
  // (RandomAccessFile::ReleaseResidentBytes): a check is not a read.
  absl::Status VerifyDataBlockChecksums() const;

  // Iterator over the index block: separator key -> encoded BlockHandle.
  std::unique_ptr<Iterator> NewIndexIterator() const;
  // Iterator over the data block named by an index value (an encoded
  // BlockHandle); an error iterator on failure.
  std::unique_ptr<Iterator> NewDataBlockIterator(
      const ReadOptions& options, std::string_view index_value) const;
  // As above, reading a missed block through `file` (a view of this
  // table's file, e.g. a ReadaheadFile).
  std::unique_ptr<Iterator> NewDataBlockIterator(
      const ReadOptions& options, std::string_view index_value,
      const RandomAccessFile& file) const;

 private:
  class DataBlockOpener;  // NewIterator's, table.cc

  // A data block held for reading: from the block cache (released on
  // destruction) or owned.
  struct PinnedBlock {
    PinnedBlock() = default;
    PinnedBlock(PinnedBlock&& other) noexcept
        : block(other.block),
          cache(other.cache),
          cache_handle(std::exchange(other.cache_handle, nullptr)),
          owned(std::move(other.owned)) {}
    PinnedBlock(const PinnedBlock&) = delete;
    PinnedBlock& operator=(const PinnedBlock&) = delete;
    ~PinnedBlock();
    const Block* block = nullptr;
    ShardedCache* cache = nullptr;
    ShardedCache::Handle* cache_handle = nullptr;
    std::unique_ptr<Block> owned;
  };
  // Finds the data block named by index_value in the block cache or reads
  // it through `file` (caching it when options.fill_cache). A read from a
  // mapped file is hinted whole first while the table's reads are slow
  // (reads_to_hint_), so that a block spanning two pages is one read from
  // storage; every read counts towards reads_to_hint_.
  absl::Status PinDataBlock(const ReadOptions& options,
                            std::string_view index_value,
                            const RandomAccessFile& file,
                            PinnedBlock* pinned) const;
  // PinDataBlock's steps: decode the handle in an index entry (DataLoss
  // naming the index block when malformed); pin the block from the cache
  // (false when it is not there); read it (and cache it).
  absl::Status DecodeDataHandle(std::string_view index_value,
                                BlockHandle* handle) const;
  bool PinCachedBlock(const BlockHandle& handle, PinnedBlock* pinned) const;
  // *slow: whether the block's bytes took longer than
  // TableOptions::slow_block_read_nanos to arrive (ReadBlockOptions::
  // arrival_nanos).
  absl::Status ReadDataBlock(const ReadOptions& options,
                             const BlockHandle& handle,
                             const RandomAccessFile& file, PinnedBlock* pinned,
                             bool* slow) const;
  // Counts reads_to_hint_ down, or sets it back after a slow read that
  // storage explains (see reads_to_hint_): once per block PinDataBlock
  // reads (Gets, iterators), once per MultiGet batch that read any (whose
  // reads the hints themselves make fast, so they count as one).
  void NoteReadSpeed(bool slow) const;
  bool HintReads() const {
    return reads_to_hint_.load(std::memory_order_relaxed) > 0;
  }

  // The block cache key of the bytes at `offset` of this table: the
  // table's cache id, then the offset, fixed64 each (data blocks at their
  // offset, the filter at its block's, filter partitions past it).
  struct CacheKey {
    char bytes[16];
    std::string_view view() const { return {bytes, sizeof(bytes)}; }
  };
  CacheKey CacheKeyAt(uint64_t offset) const {
    CacheKey key;
    EncodeFixed64(key.bytes, cache_id_);
    EncodeFixed64(key.bytes + 8, offset);
    return key;
  }

  // Starts loading the block cache's entry for the data block named by
  // index_value (no effect without a cache or on a malformed handle).
  void PrefetchCachedBlock(std::string_view index_value) const;

  struct AlignedDelete {
    void operator()(char* p) const {
      ::operator delete[](p, std::align_val_t{64});
    }
  };

  Table(const TableOptions& options, std::string file_name,
        std::unique_ptr<RandomAccessFile> file, uint64_t file_size);

  // The filter's bytes and their decoded reader, held by the table (on
  // the heap) or by the block cache (cache_filter). Adds its size to a
  // TableOptions filter-bytes counter while it lives. Not movable (the
  // reader points into data).
  struct LoadedFilter {
    LoadedFilter(std::string_view contents,
                 std::shared_ptr<const FilterPolicy> filter_policy,
                 std::shared_ptr<std::atomic<uint64_t>> bytes_counter);
    ~LoadedFilter();
    LoadedFilter(const LoadedFilter&) = delete;
    LoadedFilter& operator=(const LoadedFilter&) = delete;
    std::string_view bytes() const {
      return std::string_view(data.get(), size);
    }
    // Rounded up to whole cache lines (zeroed) so every 64-byte probe
    // stays inside.
    std::unique_ptr<char[], AlignedDelete> data;
    size_t size = 0;
    size_t allocated = 0;
    std::shared_ptr<const FilterPolicy> policy;  // outlives reader
    FilterReader reader;
    std::shared_ptr<std::atomic<uint64_t>> counter;  // may be null
  };

  absl::StatusOr<BlockContents> ReadMetaBlock(const BlockHandle& handle) const;
  // At Open: records the filter's name and kind, reads and verifies it, and
  // holds it (heap) or leaves it in the block cache (cache_filter).
  absl::Status LoadFilter(std::string_view name, const BlockHandle& handle);
  // Reads and verifies the filter block from the file into a new
  // LoadedFilter counted in `counter`.
  absl::StatusOr<std::unique_ptr<LoadedFilter>> ReadFilter(
      const std::shared_ptr<std::atomic<uint64_t>>& counter) const;
  // Finds the filter in the block cache or reads it in; the handle is the
  // caller's to release. An error (counting kFilterLoadErrors) when it
  // could not be read.
  absl::StatusOr<ShardedCache::Handle*> CachedFilterHandle() const;
  // Runs probe(const FilterReader&) on the filter (resident, or through
  // the block cache) and returns its answer; true ("may match") when the
  // filter cannot be had.
  template <typename Probe>
  bool ProbeFilter(const Probe& probe) const;
  // Runs probe on the filter (or partition) the block-cache handle holds
  // and releases it; true ("may match") after counting kFilterLoadErrors
  // when the load failed.
  bool ProbeCached(const absl::StatusOr<ShardedCache::Handle*>& handle,
                   absl::FunctionRef<bool(const FilterReader&)> probe) const;
  // Partitioned filters (table_partitioned_filter.cc). At Open: takes the
  // 'P' filter block just read: keeps the whole of it (heap mode, when
  // heap_filter_ holds it) or only its index (cache mode).
  void LoadPartitionedFilter(std::string_view contents);
  // Runs probe(const FilterReader&) on the partition that would hold
  // locate_key (a user key or a prefix): false when none can; true when the
  // filter or the partition cannot be had (a failed load counts
  // kFilterLoadErrors).
  template <typename Probe>
  bool ProbePartition(std::string_view locate_key, const Probe& probe) const;
  // Finds partition i in the block cache or reads it (its sub-range of the
  // filter block, verified with its own CRC); the caller releases it.
  absl::StatusOr<ShardedCache::Handle*> CachedPartitionHandle(size_t i) const;
  // UserKeyMayMatch and PrefixMayMatch for partitioned filters.
  bool PartitionedUserKeyMayMatch(std::string_view user_key,
                                  const uint64_t* user_key_hash) const;
  bool PartitionedPrefixMayMatch(std::string_view prefix) const;
  // Releases the pinned filter's cache handle (the destructor's).
  void ReleasePinnedFilter();
  // UserKeyMayMatch given the filter.
  bool UserKeyMayMatchIn(const FilterReader& reader, std::string_view user_key,
                         const uint64_t* user_key_hash) const;

  const TableOptions options_;
  const InternalKeyComparator comparator_;
  const std::string file_name_;
  const std::unique_ptr<RandomAccessFile> file_;
  const uint64_t file_size_;
  size_t index_memory_ = 0;  // see index_memory()
  uint64_t cache_id_ = 0;
  uint64_t data_end_ = 0;
  Footer footer_;
  TableProperties props_;
  std::unique_ptr<Block> index_block_;
  std::unique_ptr<ZstdDictionary> dictionary_;  // null: none

  BlockHandle filter_handle_;
  size_t filter_size_ = 0;
  std::string filter_policy_name_;
  std::shared_ptr<const FilterPolicy> filter_policy_;
  // Whether the filter lives in the block cache (cache_filter with a cache,
  // and a filter a known policy reads).
  bool filter_in_cache_ = false;
  // The filter probes read without a cache lookup: heap_filter_ (heap
  // mode), or the pinned cache entry's (after PinFilter). Set at most once,
  // from null, and valid until the table is destroyed.
  mutable std::atomic<const LoadedFilter*> resident_filter_{nullptr};
  std::unique_ptr<LoadedFilter> heap_filter_;
  mutable Mutex pin_mu_;
  mutable ShardedCache::Handle* pinned_filter_ ABSL_GUARDED_BY(pin_mu_) =
      nullptr;
  // Whether the filter is partitioned (kind 'P'). Then heap mode keeps the
  // whole block in heap_filter_ and heap_partitions_ decodes it; cache mode
  // keeps partition_index_ only (null: an index that did not decode, so
  // every probe answers "may match"), counted in heap_filter_bytes.
  bool filter_partitioned_ = false;
  // Read hints (RandomAccessFile::WillRead) pay off when the blocks come
  // from storage and cost a system call each when they are already in
  // memory (the page cache, or a mapping's resident pages). So data block
  // reads are hinted while this is above zero: each block a Get or an
  // iterator reads, and each MultiGet batch that reads any, counts it
  // down, on to -kHintedReads (at or below zero: minus the reads since
  // hinting stopped). A read slower than
  // TableOptions::slow_block_read_nanos sets it back to kHintedReads when
  // storage explains it: while it is above -kHintedReads, or when
  // unconfirmed_slow_reads_ is above zero. Otherwise the slow read only
  // sets unconfirmed_slow_reads_ to kSlowReadsToConfirm (each read counts
  // it down): on a busy machine a thread descheduled mid-read makes a lone
  // slow read of a block in memory, about 1 read in 250 on the 2-core VM,
  // and before this rule those re-armed a quarter of all reads' hints.
  // Starts hinting. Relaxed: a race only costs a few hints more or fewer.
  // An iterator's block hint inside its scan's window goes no further
  // (ReadaheadFile).
  mutable std::atomic<int> reads_to_hint_{kHintedReads};
  mutable std::atomic<int> unconfirmed_slow_reads_{0};
  std::unique_ptr<PartitionedFilterReader> heap_partitions_;
  std::unique_ptr<FilterPartitionIndex> partition_index_;
  size_t partition_index_bytes_ = 0;
  // True when filter_policy_ is TableOptions::filter_policy (same Name()),
  // so a caller's precomputed hash is valid for it.
  bool hash_compatible_ = false;
  // Whether the filter holds whole user keys (false: prefixes only).
  bool filter_whole_keys_ = true;
  // Whether the filter holds prefixes of TableOptions::prefix_extractor
  // (the table records that extractor's name).
  bool filter_prefixes_usable_ = false;
};

// The data blocks of one Table::MultiGet batch, pinned by MultiGetPin
// (released on destruction). Not copyable.
class Table::MultiGetBlocks {
 public:
  MultiGetBlocks() = default;
  MultiGetBlocks(const MultiGetBlocks&) = delete;
  MultiGetBlocks& operator=(const MultiGetBlocks&) = delete;

 private:
  friend class Table;
  // Per block: its handle in the index (pointing into the index block),
  // then, from Pin on, its decoded handle and the block (null until it is
  // pinned or read, and when it could not be).
  absl::InlinedVector<std::string_view, 4> index_values_;
  absl::InlinedVector<BlockHandle, 4> handles_;
  absl::InlinedVector<PinnedBlock, 4> pinned_;
};

}  // namespace siftdb

#endif  // SIFTDB_TABLE_TABLE_H_
