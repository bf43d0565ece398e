// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// TableBuilder: writes one immutable table file (format in
// docs/table_format.md) from internal keys added in increasing order.
//
// Thread safety: one thread at a time.
// Ownership: `file` is not owned; it must outlive the builder. The builder
// never syncs or closes it: after a successful Finish() the caller Sync()s
// and Close()s it.
// Errors: the first error (an I/O error from the file, or a key that is
// malformed or out of order) sticks: later calls do nothing and status(),
// Finish() return it.
// Lifecycle: construct, Add()*, then exactly one of Finish() or Abandon().

#ifndef SIFTDB_TABLE_TABLE_BUILDER_H_
#define SIFTDB_TABLE_TABLE_BUILDER_H_

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "filter/partitioned_filter.h"
#include "siftdb/env.h"
#include "table/block_builder.h"
#include "table/compression_dict.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "table/table_options.h"
#include "table/table_properties.h"

namespace siftdb {

class TableBuilder {
 public:
  TableBuilder(const TableOptions& options, WritableFile* file);
  TableBuilder(const TableBuilder&) = delete;
  TableBuilder& operator=(const TableBuilder&) = delete;
  ~TableBuilder();

  // REQUIRES: Finish()/Abandon() not called; internal_key is a well-formed
  // internal key greater than every key added before (InternalKeyComparator
  // order). A violation makes status() InvalidArgument.
  void Add(std::string_view internal_key, std::string_view value);

  // Writes the last data block, the filter, index, properties and metaindex
  // blocks and the footer. REQUIRES: Finish()/Abandon() not called.
  absl::Status Finish();

  // Records the files this table is made from (property
  // siftdb.input.files, sorted ascending). May be called any time before
  // Finish(); a later call replaces an earlier one.
  void SetInputFiles(std::vector<uint64_t> numbers);

  // Gives up on the table; the caller deletes the file.
  void Abandon();

  // Compresses this table's zstd data blocks against `dictionary`, built
  // by an earlier table written with the same options (a compaction's
  // first output), instead of holding back blocks and building one: the
  // table still stores the dictionary, so it reads alone. Does nothing
  // when the options build no dictionary, or `dictionary` is null or was
  // loaded from a table (ZstdDictionary::Load: it cannot compress).
  // REQUIRES: no Add() yet; `dictionary` was built for the same zstd level.
  void ReuseDictionary(std::shared_ptr<const ZstdDictionary> dictionary);
  // The dictionary this table's blocks are compressed against; null when
  // it has none (or before it is built: until the held-back blocks end, at
  // the latest in Finish()).
  const std::shared_ptr<const ZstdDictionary>& dictionary() const {
    return dictionary_;
  }

  uint64_t NumEntries() const { return props_.num_entries; }
  // Whether tables built with `options` get a partitioned filter when it
  // would exceed one partition (TableOptions::partition_filters, and a
  // table the remote reader and older readers can handle).
  static bool PartitionsFilters(const TableOptions& options);
  // Bytes written to the file so far (its final size after Finish()).
  // Data blocks held back to build a compression dictionary (at most
  // TableOptions::compression_zstd_max_train_bytes, or 8 times
  // compression_max_dict_bytes, of block bytes) are not counted until they
  // are written.
  uint64_t FileSize() const { return offset_; }
  absl::Status status() const { return status_; }
  // Complete after a successful Finish(); counts so far before it.
  const TableProperties& properties() const { return props_; }

 private:
  // Ends the current data block (when non-empty) and writes it.
  void Flush();
  // Adds a new user key's filter entries: the key (unless prefix-only)
  // and its prefix (when new and in the extractor's domain).
  void AddToFilter(std::string_view user_key);
  // Finishes `block`, compresses it as configured (against `dictionary`
  // when not null), writes it, resets it.
  void WriteBlock(BlockBuilder* block, BlockHandle* handle,
                  const ZstdDictionary* dictionary = nullptr);
  void WriteCompressedBlock(std::string_view raw,
                            const ZstdDictionary* dictionary,
                            BlockHandle* handle);
  // Builds the dictionary from the held-back data blocks (none when zstd
  // cannot), then writes them and their index entries; the last one's
  // entry stays pending, as after any data block.
  void EndBuffering();
  void WriteRawBlock(std::string_view contents, CompressionType type,
                     BlockHandle* handle);

  const TableOptions options_;
  const InternalKeyComparator comparator_;
  WritableFile* const file_;
  uint64_t offset_ = 0;
  absl::Status status_;
  bool closed_ = false;  // Finish() or Abandon() called

  BlockBuilder data_block_;
  BlockBuilder index_block_;
  std::string last_key_;  // the last key added
  // After a data block is written, its index entry waits for the next key so
  // the separator can be shortened (FindShortestSeparator(last, next)).
  bool pending_index_entry_ = false;
  BlockHandle pending_handle_;

  std::unique_ptr<FilterBitsBuilder> filter_builder_;  // null: no filter
  // Instead of filter_builder_ when the filter is partitioned
  // (TableOptions::partition_filters and a table that qualifies).
  std::unique_ptr<PartitionedFilterBuilder> partitioned_builder_;
  // With a filter: whether it holds whole user keys, and the extractor
  // whose prefixes it holds (null: none).
  bool filter_whole_keys_ = true;
  const SliceTransform* prefix_extractor_ = nullptr;
  std::string last_prefix_;  // the prefix added last
  bool have_last_prefix_ = false;
  std::string compressed_;  // scratch for the compressed form

  // A compression dictionary (TableOptions::compression_max_dict_bytes
  // with zstd): the first data blocks wait in buffered_ until
  // buffer_limit_ bytes of them are there (or Finish()), then the
  // dictionary is built from them and they are written.
  struct BufferedBlock {
    std::string raw;
    std::string index_key;  // the separator after it; set by the next Add()
  };
  bool buffering_ = false;
  std::vector<BufferedBlock> buffered_;
  size_t buffered_bytes_ = 0;
  size_t buffer_limit_ = 0;
  std::shared_ptr<const ZstdDictionary> dictionary_;  // null: none
  TableProperties props_;
};

}  // namespace siftdb

#endif  // SIFTDB_TABLE_TABLE_BUILDER_H_
