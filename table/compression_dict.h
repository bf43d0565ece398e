// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// ZstdDictionary: the zstd dictionary of one table (docs/table_format.md,
// "Compression dictionary"). A table built with
// CompressionOptions::max_dict_bytes and zstd holds one in its
// "compression_dict" meta block, and each of its zstd data blocks is a zstd
// frame compressed against it (the frame header names the dictionary's ID).
//
// The stored bytes are always in zstd's dictionary format (magic
// 0xEC30A437, a non-zero ID, entropy tables, then content), whether zstd's
// trainer chose the content or it is raw sample bytes (finalized by zstd).
//
// Thread safety: immutable after construction; any number of threads may
// compress or decompress with one dictionary at once.
// Ownership: the dictionary owns its bytes and zstd's digested forms.

#ifndef SIFTDB_TABLE_COMPRESSION_DICT_H_
#define SIFTDB_TABLE_COMPRESSION_DICT_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/statusor.h"

struct ZSTD_CDict_s;
struct ZSTD_DDict_s;

namespace siftdb {

// Smallest max_dict_bytes zstd can build a dictionary in.
inline constexpr size_t kMinCompressionDictBytes = 256;
// Largest accepted (a dictionary is held whole by every open table).
inline constexpr size_t kMaxCompressionDictBytes = size_t{16} << 20;

// The zstd level for CompressionOptions::level: zstd's default for
// kDefaultCompressionLevel, others clamped to zstd's range.
int ZstdLevel(int level);

class ZstdDictionary {
 public:
  // Builds a dictionary of at most `max_bytes` from `samples` (the
  // concatenation of samples of the given sizes), for compression at zstd
  // `level` (CompressionOptions::level; kDefaultCompressionLevel: zstd's
  // default). `train`: zstd's trainer picks the content; otherwise the
  // content is raw sample bytes spread evenly over the samples. null when
  // zstd cannot build one from these samples (too few, or too alike): the
  // table is then written without a dictionary.
  static std::unique_ptr<ZstdDictionary> Build(
      std::string_view samples, const std::vector<size_t>& sample_sizes,
      size_t max_bytes, int level, bool train);

  // The dictionary stored in a table, for decompression. DataLoss,
  // prefixed by `context`, when the bytes are not a zstd dictionary with an
  // ID or zstd cannot load them.
  static absl::StatusOr<std::unique_ptr<ZstdDictionary>> Load(
      std::string bytes, std::string_view context);

  ZstdDictionary(const ZstdDictionary&) = delete;
  ZstdDictionary& operator=(const ZstdDictionary&) = delete;
  ~ZstdDictionary();

  std::string_view bytes() const { return bytes_; }
  // The ID every frame compressed against this dictionary records.
  uint32_t id() const { return id_; }
  // For compression: set by Build() only (null after Load()).
  const ZSTD_CDict_s* cdict() const { return cdict_; }
  const ZSTD_DDict_s* ddict() const { return ddict_; }

 private:
  ZstdDictionary(std::string bytes, uint32_t id);

  const std::string bytes_;
  const uint32_t id_;
  ZSTD_CDict_s* cdict_ = nullptr;
  ZSTD_DDict_s* ddict_ = nullptr;
};

}  // namespace siftdb

#endif  // SIFTDB_TABLE_COMPRESSION_DICT_H_
