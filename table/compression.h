// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Block compression: the one place that turns block bytes into their stored
// form (CompressBlock) and back (UncompressBlock), for every
// CompressionType. The stored form of each type is specified in
// docs/table_format.md ("Block compression"):
//
//   none:   the block bytes
//   snappy: snappy's raw format (its own varint length header first)
//   lz4:    varint32 uncompressed length, then one LZ4 block (raw format)
//   zstd:   varint32 uncompressed length, then one zstd frame that records
//           the same content size (and, in a table with a compression
//           dictionary, that dictionary's ID: table/compression_dict.h)
//
// Decoding never trusts a length it has not checked: every claimed
// uncompressed size is bounded (kMaxUncompressedBlockSize and, where the
// format allows, a bound from the stored size) before anything is
// allocated, and the decoded size must equal the claimed one.
//
// Thread safety: every function may be called from any thread (zstd's
// contexts are per thread).

#ifndef SIFTDB_TABLE_COMPRESSION_H_
#define SIFTDB_TABLE_COMPRESSION_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "siftdb/options.h"

namespace siftdb {

class ZstdDictionary;

// Block bytes as they were before compression. Owns its memory.
struct BlockContents {
  std::unique_ptr<char[]> owned;
  size_t size = 0;
  // The compression type the block was stored with.
  CompressionType stored_type = kNoCompression;

  std::string_view data() const { return {owned.get(), size}; }
};

// No block siftdb writes is larger (block_size is at most 64 MiB, plus one
// entry of at most 1 MiB key and 64 MiB value): a stored block claiming more
// is corrupt, and is rejected before any allocation.
inline constexpr size_t kMaxUncompressedBlockSize = size_t{256} << 20;

// Whether `type` is a block type this build reads and writes (none,
// snappy, lz4, zstd).
bool IsBlockCompressionType(uint8_t type);

// "none", "snappy", "lz4", "zstd", "disabled" (kDisableCompressionOption),
// or "unknown(N)".
std::string CompressionTypeName(uint8_t type);

// The type named by `name` (lower case, as CompressionTypeName gives, but
// never "disabled"); false for any other name.
bool ParseCompressionType(std::string_view name, CompressionType* type);

// Compresses `raw` with `type` at `level` (CompressionOptions::level) into
// *out (replaced), in the stored form above. false when `type` is none or
// unknown or the compressor failed: the caller stores the block raw.
// `dictionary` (zstd only; ignored by the other types): compress against
// it (at the level it was built for).
bool CompressBlock(CompressionType type, int level, std::string_view raw,
                   std::string* out,
                   const ZstdDictionary* dictionary = nullptr);

// Undoes `type` applied to `stored`. DataLoss, its message prefixed by
// context() (built only on error; e.g. "000012.sst: block at offset 4096"),
// on an unknown type, bytes that do not decompress, a decoded size other
// than the recorded one, or a zstd frame that names a dictionary other than
// `dictionary` (the table's; null: it has none).
absl::StatusOr<BlockContents> UncompressBlock(
    std::string_view stored, uint8_t type,
    absl::FunctionRef<std::string()> context,
    const ZstdDictionary* dictionary = nullptr);
absl::StatusOr<BlockContents> UncompressBlock(
    std::string_view stored, uint8_t type, std::string_view context,
    const ZstdDictionary* dictionary = nullptr);

}  // namespace siftdb

#endif  // SIFTDB_TABLE_COMPRESSION_H_
