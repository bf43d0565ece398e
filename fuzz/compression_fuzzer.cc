// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: block decompression (table/compression.h) of arbitrary
// stored bytes. Input: one type-selector byte (its low two bits pick none,
// snappy, lz4 or zstd; any other value of the whole byte is tried as a raw
// type too), then the stored bytes of one block.
//
// Checked besides "no crash, no out-of-bounds read, no huge allocation":
// - every failure is DataLoss and names the context;
// - a success decodes to at most kMaxUncompressedBlockSize bytes;
// - the stored bytes, taken as a block's contents, round-trip through
//   CompressBlock and UncompressBlock for every type.

#include <cstdint>
#include <string>
#include <string_view>

#include "fuzz/fuzz_util.h"
#include "table/compression.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace siftdb;
  if (size == 0) return 0;
  constexpr CompressionType kTypes[] = {kNoCompression, kSnappyCompression,
                                        kLZ4Compression, kZstdCompression};
  const std::string_view stored = fuzz::AsView(data + 1, size - 1);
  for (uint8_t type : {static_cast<uint8_t>(kTypes[data[0] & 3]), data[0]}) {
    auto r = UncompressBlock(stored, type, "fuzz.sst: block at offset 0");
    if (!r.ok()) {
      FUZZ_CHECK(absl::IsDataLoss(r.status()));
      FUZZ_CHECK(r.status().message().find("fuzz.sst: block at offset 0") !=
                 absl::string_view::npos);
      continue;
    }
    FUZZ_CHECK(r->size <= kMaxUncompressedBlockSize);
    FUZZ_CHECK(r->stored_type == type);
  }
  for (CompressionType type : kTypes) {
    std::string out;
    if (!CompressBlock(type, CompressionOptions::kDefaultCompressionLevel,
                       stored, &out)) {
      FUZZ_CHECK(type == kNoCompression);
      continue;
    }
    auto back = UncompressBlock(out, type, "roundtrip");
    FUZZ_CHECK(back.ok());
    FUZZ_CHECK(back->data() == stored);
  }
  return 0;
}
