// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// TableProperties: facts about one table, computed by TableBuilder and
// stored in the table's properties block as a sorted block of named
// properties (name -> encoded value; see docs/table_format.md,
// "Properties block"). Readers skip names they do not know, so new
// properties can be added without breaking old readers.
//
// Persisted: the property names and their value encodings never change.
// Thread safety: a plain value type.

#ifndef SIFTDB_TABLE_TABLE_PROPERTIES_H_
#define SIFTDB_TABLE_TABLE_PROPERTIES_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"

namespace siftdb {

struct TableProperties {
  uint64_t num_entries = 0;
  uint64_t num_deletions = 0;
  // Sum of the sizes of all internal keys / values added.
  uint64_t raw_key_size = 0;
  uint64_t raw_value_size = 0;
  // Bytes of all data blocks as stored, trailers included (the offset where
  // the data blocks end).
  uint64_t data_size = 0;
  // Stored bytes of the index block, trailer excluded.
  uint64_t index_size = 0;
  // Bytes of the filter (the filter block without its trailer); 0: none.
  uint64_t filter_size = 0;
  // Bytes of the compression dictionary (its meta block without the
  // trailer); 0: none. Stored only when non-zero.
  uint64_t compression_dict_size = 0;
  uint64_t num_data_blocks = 0;
  // Name of the filter policy ("" when the table has no filter), its bits
  // per key, and the number of distinct user keys added to the filter.
  std::string filter_policy_name;
  double filter_bits_per_key = 0;
  uint64_t filter_num_keys = 0;
  // Name of the prefix extractor whose prefixes the filter also holds (""
  // when none).
  std::string filter_prefix_extractor;
  // Name of the user comparator the keys are ordered by.
  std::string comparator_name;
  // Compression configured when writing ("none", "snappy", "lz4" or
  // "zstd"); each block may still be stored raw (its trailer tells).
  std::string compression_name;
  // Smallest and largest internal key ("" when the table is empty).
  std::string smallest_key;
  std::string largest_key;
  // Unix seconds when the table was finished.
  uint64_t creation_time = 0;
  uint32_t format_version = 0;
  // The files this table was made from, when the writer recorded them
  // (has_input_files): the log a flush emptied, or the input tables a
  // compaction output fully merged (see db/builder.h and
  // DBImpl::FinishCompactionOutputFile). Repair, with no readable MANIFEST,
  // drops any file a surviving table names here: its data is superseded.
  bool has_input_files = false;
  std::vector<uint64_t> input_files;

  // Properties read from a table that this reader does not know
  // (name -> raw value); never written back by TableBuilder.
  std::vector<std::pair<std::string, std::string>> unknown;
};

// Property names. Persisted: never change.
namespace property_names {
inline constexpr char kComparator[] = "siftdb.comparator";
inline constexpr char kCompression[] = "siftdb.compression";
inline constexpr char kCompressionDictSize[] = "siftdb.compression.dict.size";
inline constexpr char kCreationTime[] = "siftdb.creation.time";
inline constexpr char kDataBlocks[] = "siftdb.data.blocks";
inline constexpr char kDataSize[] = "siftdb.data.size";
inline constexpr char kFilterBitsPerKey[] = "siftdb.filter.bits_per_key";
inline constexpr char kFilterNumKeys[] = "siftdb.filter.num_keys";
inline constexpr char kFilterPolicy[] = "siftdb.filter.policy";
inline constexpr char kFilterPrefixExtractor[] =
    "siftdb.filter.prefix_extractor";
inline constexpr char kFilterSize[] = "siftdb.filter.size";
inline constexpr char kFormatVersion[] = "siftdb.format.version";
inline constexpr char kIndexSize[] = "siftdb.index.size";
// varint64 count, then that many varint64 file numbers (ascending).
inline constexpr char kInputFiles[] = "siftdb.input.files";
inline constexpr char kLargestKey[] = "siftdb.key.largest";
inline constexpr char kSmallestKey[] = "siftdb.key.smallest";
inline constexpr char kNumDeletions[] = "siftdb.num.deletions";
inline constexpr char kNumEntries[] = "siftdb.num.entries";
inline constexpr char kRawKeySize[] = "siftdb.raw.key.size";
inline constexpr char kRawValueSize[] = "siftdb.raw.value.size";
}  // namespace property_names

// The (name, encoded value) pairs of `props`, sorted by name (bytewise):
// integers as varint64, bits per key as the fixed64 of its IEEE-754 bits,
// strings as their bytes.
std::vector<std::pair<std::string, std::string>> EncodeTableProperties(
    const TableProperties& props);

// Applies one stored property to *props. Unknown names go to
// props->unknown; a known name whose value is malformed is DataLoss
// (message names the property; the caller adds file and offset).
absl::Status DecodeTableProperty(std::string_view name, std::string_view value,
                                 TableProperties* props);

// One "name: value" line per property, for tools and logs.
std::string TablePropertiesToString(const TableProperties& props);

}  // namespace siftdb

#endif  // SIFTDB_TABLE_TABLE_PROPERTIES_H_
