// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// recompress: what the table's data blocks would take with each
// compression siftdb writes (none, snappy, lz4, zstd at the library's
// default level, and zstd with a dictionary), by compressing each block's
// contents in memory the way TableBuilder does (the compressed form kept
// only when it saves at least 12.5%). The dictionary is built as
// TableBuilder builds one (CompressionOptions::max_dict_bytes, raw
// samples): of the table's own dictionary's size, or for a table without
// one 16 KiB (at most an eighth of its raw data), from the first data
// blocks, 8 times that many bytes; its bytes count in the file size.
// Nothing is written.

#include <algorithm>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "siftdb/options.h"
#include "table/compression.h"
#include "table/compression_dict.h"
#include "table/format.h"
#include "tools/sst_dump/sst_dump.h"

namespace siftdb::sst_dump {
namespace {

// The dictionary size tried for a table without one (RocksDB's usual
// advice for max_dict_bytes).
constexpr size_t kDefaultDictBytes = 16 << 10;

// The stored size of `raw` under `type` (and `dictionary`, when not null),
// as TableBuilder decides it.
uint64_t StoredSize(std::string_view raw, CompressionType type,
                    const ZstdDictionary* dictionary = nullptr) {
  std::string compressed;
  if (CompressBlock(type, CompressionOptions::kDefaultCompressionLevel, raw,
                    &compressed, dictionary) &&
      compressed.size() < raw.size() &&
      8 * (raw.size() - compressed.size()) >= raw.size()) {
    return compressed.size() + kBlockTrailerSize;
  }
  return raw.size() + kBlockTrailerSize;
}

}  // namespace

absl::Status Recompress(Env* env, const std::string& path, std::FILE* out) {
  uint64_t size = 0;
  auto file = OpenFile(env, path, &size);
  if (!file.ok()) return file.status();
  auto layout = ReadLayout(**file, path, size);
  if (!layout.ok()) return layout.status();

  constexpr CompressionType kTypes[] = {kNoCompression, kSnappyCompression,
                                        kLZ4Compression, kZstdCompression};
  constexpr int kNumTypes = 4;
  uint64_t now = 0;  // the data blocks as stored, with trailers
  uint64_t with[kNumTypes] = {};
  ReadBlockOptions ro;
  ro.verify_checksum = true;
  ro.file_name = path;
  ro.limit = size - kFooterSize;
  ro.dictionary = layout->dictionary.get();
  // Every block's contents (the dictionary needs them all before the
  // first can be compressed against it).
  std::vector<std::string> blocks;
  for (const auto& [key, handle] : layout->data) {
    auto contents = ReadBlock(**file, ro, handle);
    if (!contents.ok()) return contents.status();
    now += handle.size() + kBlockTrailerSize;
    blocks.emplace_back(contents->data());
    for (int i = 0; i < kNumTypes; i++)
      with[i] += StoredSize(blocks.back(), kTypes[i]);
  }
  // A table without one: 16 KiB, or for a small table an eighth of its
  // raw data bytes (at least the smallest max_dict_bytes, 256).
  const size_t dict_bytes =
      layout->dictionary != nullptr
          ? layout->dictionary->bytes().size()
          : std::clamp<size_t>(with[0] / 8, 256, kDefaultDictBytes);
  std::string samples;
  std::vector<size_t> sample_sizes;
  for (const std::string& b : blocks) {
    if (samples.size() >= 8 * dict_bytes) break;
    samples += b;
    sample_sizes.push_back(b.size());
  }
  std::unique_ptr<ZstdDictionary> dict = ZstdDictionary::Build(
      samples, sample_sizes, dict_bytes,
      CompressionOptions::kDefaultCompressionLevel, /*train=*/false);
  uint64_t with_dict = 0;
  if (dict != nullptr) {
    for (const std::string& b : blocks) {
      with_dict += StoredSize(b, kZstdCompression, dict.get());
    }
  }
  std::fprintf(out, "%s: %zu data blocks, %llu bytes of %llu as stored\n",
               path.c_str(), layout->data.size(),
               static_cast<unsigned long long>(now),
               static_cast<unsigned long long>(size));
  for (int i = 0; i < kNumTypes; i++) {
    const uint64_t file_size = size - now + with[i];
    std::fprintf(out,
                 "  %-7s data blocks %llu bytes, file %llu bytes (%.1f%% of "
                 "now)\n",
                 CompressionTypeName(kTypes[i]).c_str(),
                 static_cast<unsigned long long>(with[i]),
                 static_cast<unsigned long long>(file_size),
                 size == 0 ? 0.0 : 100.0 * file_size / size);
  }
  if (dict == nullptr) {
    std::fprintf(out,
                 "  zstd+%zuB dictionary: zstd built none from %zu blocks\n",
                 dict_bytes, sample_sizes.size());
    return absl::OkStatus();
  }
  // The table's own dictionary block is replaced by the new one.
  const uint64_t old_dict =
      layout->dictionary != nullptr
          ? layout->dictionary->bytes().size() + kBlockTrailerSize
          : 0;
  const uint64_t file_size = size - now + with_dict - old_dict +
                             dict->bytes().size() + kBlockTrailerSize;
  std::fprintf(out,
               "  zstd+dictionary of %zu bytes: data blocks %llu bytes, file "
               "%llu bytes (%.1f%% of now)\n",
               dict->bytes().size(), static_cast<unsigned long long>(with_dict),
               static_cast<unsigned long long>(file_size),
               size == 0 ? 0.0 : 100.0 * file_size / size);
  return absl::OkStatus();
}

}  // namespace siftdb::sst_dump
