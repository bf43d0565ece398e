// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// recompress: what the table's data blocks would take with each
// compression siftdb writes (none, snappy, lz4, zstd at the library's
// default level), by compressing each block's contents in memory the way
// TableBuilder does (the compressed form kept only when it saves at least
// 12.5%). Nothing is written.

#include <cstdio>
#include <string>

#include "absl/strings/str_format.h"
#include "siftdb/options.h"
#include "table/compression.h"
#include "table/format.h"
#include "tools/sst_dump/sst_dump.h"

namespace siftdb::sst_dump {
namespace {

// The stored size of `raw` under `type`, as TableBuilder decides it.
uint64_t StoredSize(std::string_view raw, CompressionType type) {
  std::string compressed;
  if (CompressBlock(type, CompressionOptions::kDefaultCompressionLevel, raw,
                    &compressed) &&
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
  for (const auto& [key, handle] : layout->data) {
    auto contents = ReadBlock(**file, ro, handle);
    if (!contents.ok()) return contents.status();
    now += handle.size() + kBlockTrailerSize;
    for (int i = 0; i < kNumTypes; i++)
      with[i] += StoredSize(contents->data(), kTypes[i]);
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
  return absl::OkStatus();
}

}  // namespace siftdb::sst_dump
