// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/table.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/strings/str_format.h"
#include "table/readahead_file.h"
#include "table/two_level_iterator.h"
#include "table/user_key_fingerprints.h"
#include "util/coding.h"

namespace siftdb {
namespace {

void DeleteCachedBlock(std::string_view /*key*/, void* value) {
  delete static_cast<Block*>(value);
}

// An Iterator cleanup for a block read for one iterator alone.
void DeleteOwnedBlock(void* block, void* /*unused*/) {
  delete static_cast<Block*>(block);
}

// DataLoss naming the file and the offset when the footer's index handle,
// the end of the data blocks or the filter handle disagree with the sizes
// the properties record (siftdb.index.size, siftdb.data.size,
// siftdb.filter.size).
absl::Status CheckLayoutAgainstProperties(
    const std::string& name, const Footer& footer, uint64_t footer_offset,
    uint64_t data_end, bool have_filter, const BlockHandle& filter_handle,
    bool have_dict, const BlockHandle& dict_handle,
    const TableProperties& props) {
  const BlockHandle& index = footer.index_handle;
  if (index.size() != props.index_size) {
    return absl::DataLossError(absl::StrFormat(
        "%s: footer at offset %d names an index block of %d bytes at offset "
        "%d, but the properties say the index is %d bytes",
        name, footer_offset, index.size(), index.offset(), props.index_size));
  }
  if (data_end != props.data_size) {
    return absl::DataLossError(absl::StrFormat(
        "%s: footer at offset %d: the data blocks end at offset %d, but the "
        "properties say %d",
        name, footer_offset, data_end, props.data_size));
  }
  if (have_filter && filter_handle.size() != props.filter_size) {
    return absl::DataLossError(absl::StrFormat(
        "%s: metaindex block at offset %d names a filter block of %d bytes "
        "at offset %d, but the properties say the filter is %d bytes",
        name, footer.metaindex_handle.offset(), filter_handle.size(),
        filter_handle.offset(), props.filter_size));
  }
  const uint64_t dict_size = have_dict ? dict_handle.size() : 0;
  if (dict_size != props.compression_dict_size) {
    return absl::DataLossError(absl::StrFormat(
        "%s: metaindex block at offset %d names a compression dictionary of "
        "%d bytes, but the properties say %d",
        name, footer.metaindex_handle.offset(), dict_size,
        props.compression_dict_size));
  }
  return absl::OkStatus();
}

}  // namespace

Table::Table(const TableOptions& options, std::string file_name,
             std::unique_ptr<RandomAccessFile> file, uint64_t file_size)
    : options_(options),
      comparator_(UserComparatorOf(options)),
      file_name_(std::move(file_name)),
      file_(std::move(file)),
      file_size_(file_size) {}

Table::~Table() {
  ReleasePinnedFilter();
  if (index_memory_ > 0 && options_.heap_index_bytes != nullptr) {
    options_.heap_index_bytes->fetch_sub(index_memory_,
                                         std::memory_order_relaxed);
  }
  if (partition_index_bytes_ > 0 && options_.heap_filter_bytes != nullptr) {
    options_.heap_filter_bytes->fetch_sub(partition_index_bytes_,
                                          std::memory_order_relaxed);
  }
}

absl::StatusOr<BlockContents> Table::ReadMetaBlock(
    const BlockHandle& handle) const {
  ReadBlockOptions ro;
  ro.verify_checksum = true;  // meta blocks are always verified
  ro.statistics = options_.statistics;
  ro.file_name = file_name_;
  ro.limit = file_size_ - kFooterSize;
  // Index and filter blocks span many pages: read them in one go rather
  // than a fault at a time (the file may be advised for random access).
  file_->WillRead(handle.offset(), handle.size() + kBlockTrailerSize);
  return ReadBlock(*file_, ro, handle);
}

absl::StatusOr<std::unique_ptr<Table>> Table::Open(
    const TableOptions& options, std::string file_name,
    std::unique_ptr<RandomAccessFile> file, uint64_t file_size) {
  if (file == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: Table::Open without a file", file_name));
  }
  if (file_size < kFooterSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s: not a siftdb table (file of %d bytes is shorter than the %d-byte "
        "footer)",
        file_name, file_size, kFooterSize));
  }
  if (options.advise_random) file->AdviseRandomAccess();
  std::unique_ptr<Table> table(
      new Table(options, std::move(file_name), std::move(file), file_size));
  const std::string& name = table->file_name_;

  // Footer.
  char footer_space[kFooterSize];
  std::string_view footer_input;
  const uint64_t footer_offset = file_size - kFooterSize;
  absl::Status s = table->file_->Read(footer_offset, kFooterSize, &footer_input,
                                      footer_space);
  Record(options.statistics, Ticker::kBytesRead, footer_input.size());
  if (!s.ok()) return s;
  if (footer_input.size() != kFooterSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s: footer at offset %d: truncated read (%d of %d bytes)", name,
        footer_offset, footer_input.size(), kFooterSize));
  }
  s = table->footer_.DecodeFrom(
      footer_input,
      absl::StrFormat("%s: footer at offset %d", name, footer_offset));
  if (!s.ok()) return s;

  // Metaindex: "filter.<name>" and "properties" -> handles.
  auto metaindex_contents =
      table->ReadMetaBlock(table->footer_.metaindex_handle);
  if (!metaindex_contents.ok()) return metaindex_contents.status();
  auto metaindex =
      Block::Create(std::move(*metaindex_contents),
                    table->footer_.metaindex_handle.offset(), name);
  if (!metaindex.ok()) return metaindex.status();
  BlockHandle props_handle, filter_handle, dict_handle;
  bool have_props = false, have_filter = false, have_dict = false;
  std::string filter_name;
  {
    auto it = (*metaindex)->NewIterator(BytewiseComparator(), name);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      const std::string_view key = it->key();
      std::string_view value = it->value();
      BlockHandle handle;
      const bool is_props = key == kPropertiesMetaKey;
      const bool is_dict = key == kCompressionDictMetaKey;
      const bool is_filter = key.size() > std::strlen(kFilterMetaPrefix) &&
                             key.starts_with(kFilterMetaPrefix);
      // A meta block we do not know.
      if (!is_props && !is_filter && !is_dict) continue;
      if (!handle.DecodeFrom(&value)) {
        return absl::DataLossError(absl::StrFormat(
            "%s: metaindex block at offset %d: bad handle for %s", name,
            table->footer_.metaindex_handle.offset(), key));
      }
      if (is_props) {
        props_handle = handle;
        have_props = true;
      } else if (is_dict) {
        dict_handle = handle;
        have_dict = true;
      } else if (!have_filter) {
        filter_handle = handle;
        have_filter = true;
        filter_name = key.substr(std::strlen(kFilterMetaPrefix));
      }
    }
    if (!it->status().ok()) return it->status();
  }
  if (!have_props) {
    return absl::DataLossError(absl::StrFormat(
        "%s: metaindex block at offset %d has no properties entry", name,
        table->footer_.metaindex_handle.offset()));
  }

  // Properties.
  {
    auto contents = table->ReadMetaBlock(props_handle);
    if (!contents.ok()) return contents.status();
    auto block =
        Block::Create(std::move(*contents), props_handle.offset(), name);
    if (!block.ok()) return block.status();
    auto it = (*block)->NewIterator(BytewiseComparator(), name);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      s = DecodeTableProperty(it->key(), it->value(), &table->props_);
      if (!s.ok()) {
        return absl::DataLossError(
            absl::StrFormat("%s: properties block at offset %d: %s", name,
                            props_handle.offset(), s.message()));
      }
    }
    if (!it->status().ok()) return it->status();
  }

  // Data blocks end where the first meta block begins.
  uint64_t data_end = std::min({table->footer_.index_handle.offset(),
                                table->footer_.metaindex_handle.offset(),
                                props_handle.offset()});
  if (have_filter) data_end = std::min(data_end, filter_handle.offset());
  if (have_dict) data_end = std::min(data_end, dict_handle.offset());
  table->data_end_ = data_end;

  // No CRC covers the footer or a metaindex handle's target: a handle
  // naming another intact block (a data block as the index, say) would read
  // as a smaller table, its missing keys "absent". The properties, read
  // through a handle already verified, say where the blocks must be.
  s = CheckLayoutAgainstProperties(name, table->footer_, footer_offset,
                                   data_end, have_filter, filter_handle,
                                   have_dict, dict_handle, table->props_);
  if (!s.ok()) return s;

  // Compression dictionary (verified like every meta block, then by zstd).
  if (have_dict) {
    ReadBlockOptions ro;
    ro.statistics = options.statistics;
    ro.file_name = name;
    ro.limit = footer_offset;
    auto dict = ReadCompressionDictionary(*table->file_, ro, dict_handle);
    if (!dict.ok()) return dict.status();
    table->dictionary_ = std::move(*dict);
  }

  // Index.
  {
    auto contents = table->ReadMetaBlock(table->footer_.index_handle);
    if (!contents.ok()) return contents.status();
    auto block = Block::Create(std::move(*contents),
                               table->footer_.index_handle.offset(), name);
    if (!block.ok()) return block.status();
    table->index_block_ = std::move(*block);
    // Index searches read a few cache lines of fingerprints instead of a
    // binary search's two per step (table/user_key_fingerprints.h); the
    // fingerprints keep the order only of bytewise user keys.
    if (table->comparator_.user_comparator() == BytewiseComparator()) {
      table->index_block_->SetSearchHint(
          UserKeyFingerprints::Build(*table->index_block_));
    }
    table->index_memory_ = table->index_block_->size() +
                           table->index_block_->SearchHintMemoryUsage();
    if (options.heap_index_bytes != nullptr) {
      options.heap_index_bytes->fetch_add(table->index_memory_,
                                          std::memory_order_relaxed);
    }
  }

  if (options.block_cache != nullptr) {
    table->cache_id_ = options.block_cache->NewId();
  }
  if (have_filter) {
    s = table->LoadFilter(filter_name, filter_handle);
    if (!s.ok()) return s;
  }
  return table;
}

std::unique_ptr<Iterator> Table::NewIndexIterator() const {
  return index_block_->NewIterator(&comparator_, file_name_);
}

std::unique_ptr<Iterator> Table::NewDataBlockIterator(
    const ReadOptions& options, std::string_view index_value) const {
  return NewDataBlockIterator(options, index_value, *file_);
}

Table::PinnedBlock::~PinnedBlock() {
  if (cache_handle != nullptr) cache->Release(cache_handle);
}

absl::Status Table::VerifyDataBlockChecksums() const {
  std::unique_ptr<Iterator> index = NewIndexIterator();
  ReadBlockOptions ro;
  ro.statistics = options_.statistics;
  ro.file_name = file_name_;
  ro.limit = data_end_;
  // Every data block, in order: one hint for all of them.
  file_->WillRead(0, data_end_);
  uint64_t expected_offset = 0;
  for (index->SeekToFirst(); index->Valid(); index->Next()) {
    BlockHandle handle;
    std::string_view input = index->value();
    if (!handle.DecodeFrom(&input) || handle.offset() != expected_offset) {
      return absl::DataLossError(absl::StrFormat(
          "%s: index block at offset %d: block handle does not follow the "
          "previous block (expected offset %d)",
          file_name_, footer_.index_handle.offset(), expected_offset));
    }
    absl::Status s = VerifyBlockChecksum(*file_, ro, handle);
    if (!s.ok()) return s;
    expected_offset = handle.offset() + handle.size() + kBlockTrailerSize;
  }
  if (!index->status().ok()) return index->status();
  if (expected_offset != data_end_) {
    return absl::DataLossError(absl::StrFormat(
        "%s: data blocks end at offset %d, the meta blocks begin at %d",
        file_name_, expected_offset, data_end_));
  }
  // The check touched every data page of a mapped table; without this they
  // would stay in the process's resident set for as long as the table
  // stays open (at 50M keys, 1.8 GB of peak RSS during a fill).
  file_->ReleaseResidentBytes(0, data_end_);
  return absl::OkStatus();
}

absl::Status Table::DecodeDataHandle(std::string_view index_value,
                                     BlockHandle* handle) const {
  if (handle->DecodeFrom(&index_value)) return absl::OkStatus();
  return absl::DataLossError(
      absl::StrFormat("%s: index block at offset %d: malformed block handle",
                      file_name_, footer_.index_handle.offset()));
}

bool Table::PinCachedBlock(const BlockHandle& handle,
                           PinnedBlock* pinned) const {
  ShardedCache* const cache = options_.block_cache;
  if (cache == nullptr) return false;
  const CacheKey cache_key = CacheKeyAt(handle.offset());
  ShardedCache::Handle* cache_handle = cache->Lookup(cache_key.view());
  if (cache_handle == nullptr) {
    Record(options_.statistics, Ticker::kBlockCacheMisses);
    return false;
  }
  Record(options_.statistics, Ticker::kBlockCacheHits);
  pinned->cache = cache;
  pinned->cache_handle = cache_handle;
  pinned->block = static_cast<const Block*>(cache->Value(cache_handle));
  return true;
}

absl::Status Table::ReadDataBlock(const ReadOptions& options,
                                  const BlockHandle& handle,
                                  const RandomAccessFile& file,
                                  PinnedBlock* pinned, bool* slow) const {
  ShardedCache* const cache = options_.block_cache;
  // A block about to enter the cache is verified whatever the ReadOptions
  // say: other readers will trust it from there.
  const bool will_cache = cache != nullptr && options.fill_cache;
  ReadBlockOptions ro;
  ro.verify_checksum =
      options.verify_checksums || options_.paranoid_checks || will_cache;
  ro.statistics = options_.statistics;
  ro.file_name = file_name_;
  ro.limit = data_end_;
  ro.dictionary = dictionary_.get();
  // Only the bytes' arrival is timed: zstd's decoding of a block in memory
  // can take as long as a read from storage, and the cache insertion below
  // may evict and free other blocks, whose pauses in the allocator say
  // nothing about where this block came from.
  int64_t arrival_nanos = 0;
  ro.arrival_nanos = &arrival_nanos;
  auto contents = ReadBlock(file, ro, handle);
  *slow = arrival_nanos > options_.slow_block_read_nanos;
  Record(options_.statistics, Ticker::kDataBlockReads);
  if (!contents.ok()) return contents.status();
  auto block = Block::Create(std::move(*contents), handle.offset(), file_name_);
  if (!block.ok()) return block.status();

  if (will_cache) {
    const CacheKey cache_key = CacheKeyAt(handle.offset());
    const size_t charge = (*block)->size();
    pinned->cache = cache;
    pinned->cache_handle = cache->Insert(cache_key.view(), block->release(),
                                         charge, &DeleteCachedBlock);
    pinned->block =
        static_cast<const Block*>(cache->Value(pinned->cache_handle));
    return absl::OkStatus();
  }
  pinned->owned = std::move(*block);
  pinned->block = pinned->owned.get();
  return absl::OkStatus();
}

void Table::NoteReadSpeed(bool slow) const {
  const int left = reads_to_hint_.load(std::memory_order_relaxed);
  if (slow) {
    // Hinting now or lately (a table whose reads come from storage), or a
    // second slow read soon after a first: storage. A lone slow read
    // after a long fast run is more likely a descheduled thread.
    if (left > -kHintedReads ||
        unconfirmed_slow_reads_.load(std::memory_order_relaxed) > 0) {
      reads_to_hint_.store(kHintedReads, std::memory_order_relaxed);
      unconfirmed_slow_reads_.store(0, std::memory_order_relaxed);
    } else {
      unconfirmed_slow_reads_.store(kSlowReadsToConfirm,
                                    std::memory_order_relaxed);
    }
    return;
  }
  if (left > -kHintedReads) {
    reads_to_hint_.fetch_sub(1, std::memory_order_relaxed);
  }
  if (unconfirmed_slow_reads_.load(std::memory_order_relaxed) > 0) {
    unconfirmed_slow_reads_.fetch_sub(1, std::memory_order_relaxed);
  }
}

absl::Status Table::PinDataBlock(const ReadOptions& options,
                                 std::string_view index_value,
                                 const RandomAccessFile& file,
                                 PinnedBlock* pinned) const {
  BlockHandle handle;
  absl::Status s = DecodeDataHandle(index_value, &handle);
  if (!s.ok()) return s;
  if (PinCachedBlock(handle, pinned)) return absl::OkStatus();
  // From storage, a mapped block spanning two pages would be two faults,
  // one read each: hint it whole first.
  if (file.IsMemoryMapped() && HintReads()) {
    file.WillRead(handle.offset(), handle.size() + kBlockTrailerSize);
  }
  bool slow = false;
  s = ReadDataBlock(options, handle, file, pinned, &slow);
  NoteReadSpeed(slow);
  return s;
}

std::unique_ptr<Iterator> Table::NewDataBlockIterator(
    const ReadOptions& options, std::string_view index_value,
    const RandomAccessFile& file) const {
  PinnedBlock pinned;
  absl::Status s = PinDataBlock(options, index_value, file, &pinned);
  if (!s.ok()) return NewErrorIterator(std::move(s));
  auto iter = pinned.block->NewIterator(&comparator_, file_name_);
  if (pinned.cache_handle != nullptr) {
    iter->RegisterCleanup(&ReleaseCacheHandle, pinned.cache,
                          pinned.cache_handle);
    pinned.cache_handle = nullptr;  // now the iterator's to release
  } else {
    iter->RegisterCleanup(&DeleteOwnedBlock, pinned.owned.release(), nullptr);
  }
  return iter;
}

// Opens a table iterator's data blocks, through its own readahead window.
class Table::DataBlockOpener final : public BlockOpener {
 public:
  DataBlockOpener(const Table* table, const ReadOptions& options,
                  const RandomAccessFile* file, uint64_t data_end)
      : table_(table), options_(options), readahead_(file, data_end) {}
  std::unique_ptr<Iterator> Open(std::string_view index_value) override {
    return table_->NewDataBlockIterator(options_, index_value, readahead_);
  }

 private:
  const Table* const table_;
  const ReadOptions options_;
  const ReadaheadFile readahead_;
};

std::unique_ptr<Iterator> Table::NewIterator(const ReadOptions& options) const {
  // With bounds, data blocks that lie wholly outside them are not read.
  TwoLevelBounds bounds;
  bounds.bounds = IterateBounds::From(comparator_.user_comparator(), options);
  bounds.statistics = options_.statistics;
  bounds.skipped = Ticker::kBoundsSkippedBlocks;
  // Scans go through a readahead window (one per iterator): large reads
  // of a file read with system calls, hints ahead of the scan on a
  // mapping (whose faults read only their own page). Point lookups
  // (InternalGet) read single blocks.
  return NewBoundedTwoLevelIteratorInPlace<DataBlockOpener>(
      NewIndexIterator(), bounds, this, options, file_.get(), data_end_);
}

absl::Status Table::InternalGet(
    const ReadOptions& options, std::string_view internal_key,
    const uint64_t* user_key_hash,
    absl::FunctionRef<void(std::string_view, std::string_view)> found,
    FilterOutcome* outcome) const {
  if (outcome != nullptr) *outcome = FilterOutcome::kNotChecked;
  if (internal_key.size() < kInternalKeyTrailerSize) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s: InternalGet with a %d-byte key (not an internal key)", file_name_,
        internal_key.size()));
  }
  const std::string_view user_key = ExtractUserKey(internal_key);
  const bool filtered = !filter_policy_name_.empty();
  if (filtered) {
    Record(options_.statistics, Ticker::kFilterChecks);
    if (!UserKeyMayMatch(user_key, user_key_hash)) {
      Record(options_.statistics, Ticker::kFilterNegatives);
      if (outcome != nullptr) *outcome = FilterOutcome::kNegative;
      return absl::OkStatus();
    }
    Record(options_.statistics, Ticker::kFilterPositives);
  }

  // Index and data block are searched in place: no iterator is allocated.
  bool same_user_key = false;
  std::string_view index_value;  // points into index_block_
  bool in_index = false;
  absl::Status s =
      index_block_->Seek(comparator_, file_name_, internal_key,
                         [&](std::string_view /*key*/, std::string_view value) {
                           index_value = value;
                           in_index = true;
                         });
  if (!s.ok()) return s;
  if (in_index) {
    PinnedBlock pinned;
    s = PinDataBlock(options, index_value, *file_, &pinned);
    if (!s.ok()) return s;
    s = pinned.block->Seek(comparator_, file_name_, internal_key,
                           [&](std::string_view key, std::string_view value) {
                             same_user_key =
                                 key.size() >= kInternalKeyTrailerSize &&
                                 comparator_.user_comparator()->Compare(
                                     ExtractUserKey(key), user_key) == 0;
                             found(key, value);
                           });
    if (!s.ok()) return s;
  }
  if (filtered && !same_user_key) {
    Record(options_.statistics, Ticker::kFilterFalsePositives);
  }
  if (filtered && outcome != nullptr) {
    *outcome = same_user_key ? FilterOutcome::kTruePositive
                             : FilterOutcome::kFalsePositive;
  }
  return absl::OkStatus();
}

uint64_t Table::ApproximateOffsetOf(std::string_view internal_key) const {
  auto index_iter = NewIndexIterator();
  index_iter->Seek(internal_key);
  if (index_iter->Valid()) {
    BlockHandle handle;
    std::string_view input = index_iter->value();
    if (handle.DecodeFrom(&input)) return handle.offset();
  }
  // Past the last key (or an unreadable index entry): the end of the data.
  return data_end_;
}

}  // namespace siftdb
