// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/compression.h"

#include <lz4.h>
#include <lz4hc.h>
#include <snappy.h>
#include <zstd.h>

#include <algorithm>
#include <cstring>
#include <limits>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "table/compression_dict.h"
#include "util/coding.h"

namespace siftdb {

bool IsBlockCompressionType(uint8_t type) {
  return type == kNoCompression || type == kSnappyCompression ||
         type == kLZ4Compression || type == kZstdCompression;
}

std::string CompressionTypeName(uint8_t type) {
  switch (type) {
    case kNoCompression:
      return "none";
    case kSnappyCompression:
      return "snappy";
    case kLZ4Compression:
      return "lz4";
    case kZstdCompression:
      return "zstd";
    case kDisableCompressionOption:
      return "disabled";
    default:
      return absl::StrFormat("unknown(%d)", type);
  }
}

bool ParseCompressionType(std::string_view name, CompressionType* type) {
  for (CompressionType t : {kNoCompression, kSnappyCompression, kLZ4Compression,
                            kZstdCompression}) {
    if (name == CompressionTypeName(t)) {
      *type = t;
      return true;
    }
  }
  return false;
}

namespace {

struct ZstdCCtxDeleter {
  void operator()(ZSTD_CCtx* c) const { ZSTD_freeCCtx(c); }
};
struct ZstdDCtxDeleter {
  void operator()(ZSTD_DCtx* d) const { ZSTD_freeDCtx(d); }
};

// One context per thread: creating one per block costs more than
// compressing a 4 KiB block.
ZSTD_CCtx* ThreadZstdCCtx() {
  thread_local std::unique_ptr<ZSTD_CCtx, ZstdCCtxDeleter> ctx(
      ZSTD_createCCtx());
  return ctx.get();
}
ZSTD_DCtx* ThreadZstdDCtx() {
  thread_local std::unique_ptr<ZSTD_DCtx, ZstdDCtxDeleter> ctx(
      ZSTD_createDCtx());
  return ctx.get();
}

// Appends one LZ4 block of `raw` to *out; false on failure.
bool Lz4Compress(int level, std::string_view raw, std::string* out) {
  const int n = static_cast<int>(raw.size());
  const int bound = LZ4_compressBound(n);
  if (bound <= 0) return false;  // input too large for LZ4
  const size_t start = out->size();
  out->resize(start + bound);
  char* dst = out->data() + start;
  int written;
  if (level == CompressionOptions::kDefaultCompressionLevel || level == 0) {
    written = LZ4_compress_default(raw.data(), dst, n, bound);
  } else if (level > 0) {
    written = LZ4_compress_HC(raw.data(), dst, n, bound, level);
  } else {
    // LZ4 caps the acceleration itself; this only keeps -level defined.
    const int acceleration = level < -(1 << 20) ? (1 << 20) : -level;
    written = LZ4_compress_fast(raw.data(), dst, n, bound, acceleration);
  }
  if (written <= 0) return false;
  out->resize(start + written);
  return true;
}

// Appends one zstd frame of `raw` (content size recorded; with a
// dictionary, its ID too) to *out.
bool ZstdCompress(int level, std::string_view raw, std::string* out,
                  const ZstdDictionary* dictionary) {
  ZSTD_CCtx* ctx = ThreadZstdCCtx();
  if (ctx == nullptr) return false;
  level = ZstdLevel(level);
  const size_t bound = ZSTD_compressBound(raw.size());
  const size_t start = out->size();
  out->resize(start + bound);
  const size_t written =
      dictionary != nullptr && dictionary->cdict() != nullptr
          ? ZSTD_compress_usingCDict(ctx, out->data() + start, bound,
                                     raw.data(), raw.size(),
                                     dictionary->cdict())
          : ZSTD_compressCCtx(ctx, out->data() + start, bound, raw.data(),
                              raw.size(), level);
  if (ZSTD_isError(written)) return false;
  out->resize(start + written);
  return true;
}

// Uninitialized storage: every byte is overwritten by the decompressor.
std::unique_ptr<char[]> NewBuffer(size_t n) {
  return std::make_unique_for_overwrite<char[]>(n);
}

absl::Status Loss(absl::FunctionRef<std::string()> context,
                  std::string_view type, std::string_view what) {
  return absl::DataLossError(
      absl::StrFormat("%s: corrupt %s block (%s)", context(), type, what));
}

absl::StatusOr<BlockContents> UncompressSnappy(
    std::string_view stored, absl::FunctionRef<std::string()> context) {
  size_t ulength = 0;
  if (!snappy::GetUncompressedLength(stored.data(), stored.size(), &ulength)) {
    return Loss(context, "snappy", "bad length header");
  }
  // A snappy element of n bytes expands to at most 64 / 3 * n bytes, so a
  // larger claimed length is corrupt; checking it first keeps a bad header
  // from making us allocate gigabytes.
  if (ulength / 32 > stored.size() || ulength > kMaxUncompressedBlockSize) {
    return Loss(
        context, "snappy",
        absl::StrFormat("claims %d bytes from %d", ulength, stored.size()));
  }
  BlockContents out;
  out.stored_type = kSnappyCompression;
  out.owned = NewBuffer(ulength);
  if (!snappy::RawUncompress(stored.data(), stored.size(), out.owned.get())) {
    return Loss(context, "snappy", "does not decompress");
  }
  out.size = ulength;
  return out;
}

// The varint32 length header of an LZ4 or zstd block, bounded by
// kMaxUncompressedBlockSize and `per_byte` times the payload's size.
absl::StatusOr<size_t> LengthHeader(std::string_view* stored,
                                    std::string_view type, size_t per_byte,
                                    absl::FunctionRef<std::string()> context) {
  uint32_t ulength = 0;
  if (!GetVarint32(stored, &ulength)) {
    return Loss(context, type, "bad length header");
  }
  if (ulength > kMaxUncompressedBlockSize ||
      ulength / per_byte > stored->size()) {
    return Loss(
        context, type,
        absl::StrFormat("claims %d bytes from %d", ulength, stored->size()));
  }
  return static_cast<size_t>(ulength);
}

absl::StatusOr<BlockContents> UncompressLz4(
    std::string_view stored, absl::FunctionRef<std::string()> context) {
  // Each byte of an LZ4 block yields at most 255 bytes of output (a match
  // length byte), so 256 per stored byte bounds any real block.
  auto ulength = LengthHeader(&stored, "lz4", 256, context);
  if (!ulength.ok()) return ulength.status();
  if (stored.size() > static_cast<size_t>(std::numeric_limits<int>::max())) {
    return Loss(context, "lz4", "too large");
  }
  BlockContents out;
  out.stored_type = kLZ4Compression;
  out.owned = NewBuffer(*ulength);
  const int got = LZ4_decompress_safe(stored.data(), out.owned.get(),
                                      static_cast<int>(stored.size()),
                                      static_cast<int>(*ulength));
  if (got < 0) return Loss(context, "lz4", "does not decompress");
  if (static_cast<size_t>(got) != *ulength) {
    return Loss(
        context, "lz4",
        absl::StrFormat("%d bytes decoded, %d recorded", got, *ulength));
  }
  out.size = *ulength;
  return out;
}

absl::StatusOr<BlockContents> UncompressZstd(
    std::string_view stored, absl::FunctionRef<std::string()> context,
    const ZstdDictionary* dictionary) {
  // zstd can shrink a run ~32768-fold, so only the absolute cap bounds the
  // header; the frame's own content size must agree with it.
  auto ulength = LengthHeader(&stored, "zstd", size_t{1} << 20, context);
  if (!ulength.ok()) return ulength.status();
  const unsigned long long frame_size =
      ZSTD_getFrameContentSize(stored.data(), stored.size());
  if (frame_size == ZSTD_CONTENTSIZE_ERROR ||
      frame_size == ZSTD_CONTENTSIZE_UNKNOWN) {
    return Loss(context, "zstd", "bad frame header");
  }
  if (frame_size != *ulength) {
    return Loss(context, "zstd",
                absl::StrFormat("frame holds %d bytes, %d recorded", frame_size,
                                *ulength));
  }
  // A frame compressed against a dictionary names it; only the table's own
  // dictionary can decode it.
  const unsigned dict_id =
      ZSTD_getDictID_fromFrame(stored.data(), stored.size());
  if (dict_id != 0 && (dictionary == nullptr || dictionary->id() != dict_id)) {
    return Loss(context, "zstd",
                dictionary == nullptr
                    ? absl::StrFormat("frame needs dictionary %d; the table "
                                      "has none",
                                      dict_id)
                    : absl::StrFormat("frame needs dictionary %d; the table "
                                      "has %d",
                                      dict_id, dictionary->id()));
  }
  ZSTD_DCtx* ctx = ThreadZstdDCtx();
  if (ctx == nullptr) {
    return absl::ResourceExhaustedError(absl::StrFormat(
        "%s: cannot allocate a zstd decompression context", context()));
  }
  BlockContents out;
  out.stored_type = kZstdCompression;
  out.owned = NewBuffer(*ulength);
  const size_t got =
      dict_id != 0 ? ZSTD_decompress_usingDDict(ctx, out.owned.get(), *ulength,
                                                stored.data(), stored.size(),
                                                dictionary->ddict())
                   : ZSTD_decompressDCtx(ctx, out.owned.get(), *ulength,
                                         stored.data(), stored.size());
  if (ZSTD_isError(got)) {
    return Loss(context, "zstd", ZSTD_getErrorName(got));
  }
  if (got != *ulength) {
    return Loss(
        context, "zstd",
        absl::StrFormat("%d bytes decoded, %d recorded", got, *ulength));
  }
  out.size = *ulength;
  return out;
}

}  // namespace

bool CompressBlock(CompressionType type, int level, std::string_view raw,
                   std::string* out, const ZstdDictionary* dictionary) {
  out->clear();
  switch (type) {
    case kSnappyCompression:
      snappy::Compress(raw.data(), raw.size(), out);
      return true;
    case kLZ4Compression:
    case kZstdCompression:
      if (raw.size() > kMaxUncompressedBlockSize) return false;
      PutVarint32(out, static_cast<uint32_t>(raw.size()));
      return type == kLZ4Compression
                 ? Lz4Compress(level, raw, out)
                 : ZstdCompress(level, raw, out, dictionary);
    default:
      return false;
  }
}

absl::StatusOr<BlockContents> UncompressBlock(
    std::string_view stored, uint8_t type,
    absl::FunctionRef<std::string()> context,
    const ZstdDictionary* dictionary) {
  switch (type) {
    case kNoCompression: {
      BlockContents out;
      out.owned = NewBuffer(stored.size());
      if (!stored.empty()) {
        std::memcpy(out.owned.get(), stored.data(), stored.size());
      }
      out.size = stored.size();
      return out;
    }
    case kSnappyCompression:
      return UncompressSnappy(stored, context);
    case kLZ4Compression:
      return UncompressLz4(stored, context);
    case kZstdCompression:
      return UncompressZstd(stored, context, dictionary);
    default:
      return absl::DataLossError(
          absl::StrFormat("%s: unknown compression type %d", context(), type));
  }
}

absl::StatusOr<BlockContents> UncompressBlock(
    std::string_view stored, uint8_t type, std::string_view context,
    const ZstdDictionary* dictionary) {
  return UncompressBlock(
      stored, type, [context] { return std::string(context); }, dictionary);
}

}  // namespace siftdb
