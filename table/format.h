// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The physical layout of a table file (specified byte by byte in
// docs/table_format.md):
//
//   [data block 0] ... [data block N-1]
//   [filter block]        (only when the table has a filter)
//   [index block]
//   [properties block]
//   [metaindex block]
//   [footer]              (kFooterSize bytes)
//
// Every block is followed by a kBlockTrailerSize-byte trailer: one
// compression-type byte and the masked CRC32C of the block bytes plus that
// type byte. A BlockHandle (offset, size) locates a block; size excludes the
// trailer.
//
// This file holds the handle and footer codecs and ReadBlock(), the one
// routine that turns file bytes into verified, decompressed block contents.
// Thread safety: pure functions, plus ReadBlock() which only calls the
// thread-safe RandomAccessFile::Read().

#ifndef SIFTDB_TABLE_FORMAT_H_
#define SIFTDB_TABLE_FORMAT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "siftdb/env.h"
#include "siftdb/options.h"
#include "table/compression.h"
#include "util/statistics.h"

namespace siftdb {

// Persisted constants: never change.
// The last 8 bytes of every table, little-endian; the file ends with the
// ASCII bytes "SiftSST1".
inline constexpr uint64_t kTableMagicNumber = 0x3154535374666953ull;
// Table format versions. 1: every table without a compression dictionary.
// 2: a table with one (its "compression_dict" meta block): a reader that
// knows only version 1 refuses it by name rather than failing on its first
// data block. This reader reads both.
inline constexpr uint32_t kTableFormatVersion = 1;
inline constexpr uint32_t kTableFormatVersionWithDictionary = 2;
// compression type (1 byte) + masked crc32c (fixed32).
inline constexpr size_t kBlockTrailerSize = 5;
// Metaindex keys: "filter.<policy name>" and "properties".
inline constexpr char kFilterMetaPrefix[] = "filter.";
// Put before the policy name of a filter that holds prefixes only (no
// whole keys), in the metaindex key and the filter.policy property alike.
// Persisted: never change. A reader that does not know it finds no policy
// of the tagged name and answers "may match" for every key.
inline constexpr char kPrefixOnlyFilterTag[] = "prefixonly.";
inline constexpr char kPropertiesMetaKey[] = "properties";
// The table's zstd dictionary (table/compression_dict.h), stored raw.
inline constexpr char kCompressionDictMetaKey[] = "compression_dict";

// Where a block lives in the file. Encoded as varint64 offset, varint64 size.
class BlockHandle {
 public:
  // Longest encoding: two 10-byte varint64s.
  static constexpr size_t kMaxEncodedLength = 20;

  BlockHandle() = default;
  BlockHandle(uint64_t offset, uint64_t size) : offset_(offset), size_(size) {}

  uint64_t offset() const { return offset_; }
  uint64_t size() const { return size_; }
  void set_offset(uint64_t offset) { offset_ = offset; }
  void set_size(uint64_t size) { size_ = size; }

  void EncodeTo(std::string* dst) const;
  // Consumes a handle from the front of *input; false when malformed.
  bool DecodeFrom(std::string_view* input);

 private:
  uint64_t offset_ = 0;
  uint64_t size_ = 0;
};

// The fixed-size tail of every table.
//   metaindex handle | index handle | zero padding to 2 * 20 bytes
//   | fixed32 format version | fixed64 magic
struct Footer {
  static constexpr size_t kEncodedLength =
      2 * BlockHandle::kMaxEncodedLength + 4 + 8;

  BlockHandle metaindex_handle;
  BlockHandle index_handle;
  uint32_t format_version = kTableFormatVersion;

  // Appends exactly kEncodedLength bytes.
  void EncodeTo(std::string* dst) const;
  // Decodes the kEncodedLength bytes of `input`. DataLoss (message prefixed
  // with `context`) on a wrong size, bad magic, unknown format version or
  // malformed handle.
  absl::Status DecodeFrom(std::string_view input, std::string_view context);
};
inline constexpr size_t kFooterSize = Footer::kEncodedLength;

// The masked CRC32C stored in a block trailer, computed over the block
// bytes followed by the type byte.
uint32_t BlockChecksum(std::string_view block, uint8_t type);

// Appends the 5-byte trailer for `block` stored with `type`.
void AppendBlockTrailer(std::string* dst, std::string_view block, uint8_t type);

struct ReadBlockOptions {
  bool verify_checksum = false;
  // Statistics to record kBytesRead in (may be null).
  Statistics* statistics = nullptr;
  // Name used in error messages.
  std::string_view file_name;
  // Bytes of the file that blocks may occupy: a handle reaching past it is
  // corrupt (usually the offset of the footer).
  uint64_t limit = UINT64_MAX;
  // The table's compression dictionary (null: none); not owned.
  const ZstdDictionary* dictionary = nullptr;
  // When set: how long the block's bytes took to arrive, in nanoseconds.
  // That is the read and the CRC check when the CRC is checked (the check
  // is the first touch of a mapped block's pages), else the read and the
  // decoding (then the first touch). Set on success only.
  int64_t* arrival_nanos = nullptr;
};

// Reads the block at `handle` with its trailer, verifies the CRC when asked,
// and decompresses it (UncompressBlock). LZ4 and zstd blocks have their CRC
// verified whatever verify_checksum says. Every failure is DataLoss (or the
// file's own error for I/O failures) and names the file and the block offset,
// e.g. "000012.sst: block at offset 4096: checksum mismatch".
absl::StatusOr<BlockContents> ReadBlock(const RandomAccessFile& file,
                                        const ReadBlockOptions& options,
                                        const BlockHandle& handle);

// Reads the compression dictionary block at `handle` (CRC verified whatever
// options.verify_checksum says) and loads it (ZstdDictionary::Load).
// Errors as ReadBlock's, and DataLoss naming the file and offset when the
// bytes are not a dictionary zstd can load.
absl::StatusOr<std::unique_ptr<ZstdDictionary>> ReadCompressionDictionary(
    const RandomAccessFile& file, const ReadBlockOptions& options,
    const BlockHandle& handle);

// Reads the block at `handle` with its trailer and verifies its CRC,
// without decompressing it: what a check of freshly written bytes needs.
// Errors as ReadBlock's (options.verify_checksum is ignored: always on).
absl::Status VerifyBlockChecksum(const RandomAccessFile& file,
                                 const ReadBlockOptions& options,
                                 const BlockHandle& handle);

}  // namespace siftdb

#endif  // SIFTDB_TABLE_FORMAT_H_
