// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/format.h"

#include <cstring>
#include <memory>
#include <string>

#include "absl/functional/function_ref.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "table/compression_dict.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace siftdb {

void BlockHandle::EncodeTo(std::string* dst) const {
  PutVarint64(dst, offset_);
  PutVarint64(dst, size_);
}

bool BlockHandle::DecodeFrom(std::string_view* input) {
  return GetVarint64(input, &offset_) && GetVarint64(input, &size_);
}

void Footer::EncodeTo(std::string* dst) const {
  const size_t start = dst->size();
  metaindex_handle.EncodeTo(dst);
  index_handle.EncodeTo(dst);
  dst->resize(start + 2 * BlockHandle::kMaxEncodedLength, '\0');  // padding
  PutFixed32(dst, format_version);
  PutFixed64(dst, kTableMagicNumber);
}

absl::Status Footer::DecodeFrom(std::string_view input,
                                std::string_view context) {
  if (input.size() != kEncodedLength) {
    return absl::DataLossError(
        absl::StrFormat("%s: footer is %d bytes, expected %d", context,
                        input.size(), kEncodedLength));
  }
  const char* magic_ptr = input.data() + kEncodedLength - 8;
  const uint64_t magic = DecodeFixed64(magic_ptr);
  if (magic != kTableMagicNumber) {
    return absl::DataLossError(absl::StrFormat(
        "%s: not a siftdb table (bad magic number 0x%016x)", context, magic));
  }
  format_version = DecodeFixed32(magic_ptr - 4);
  if (format_version != kTableFormatVersion &&
      format_version != kTableFormatVersionWithDictionary) {
    return absl::DataLossError(absl::StrFormat(
        "%s: unsupported table format version %d (this reader knows %d and "
        "%d)",
        context, format_version, kTableFormatVersion,
        kTableFormatVersionWithDictionary));
  }
  std::string_view handles =
      input.substr(0, 2 * BlockHandle::kMaxEncodedLength);
  if (!metaindex_handle.DecodeFrom(&handles) ||
      !index_handle.DecodeFrom(&handles)) {
    return absl::DataLossError(
        absl::StrFormat("%s: footer has a malformed block handle", context));
  }
  return absl::OkStatus();
}

uint32_t BlockChecksum(std::string_view block, uint8_t type) {
  uint32_t crc = crc32c::Value(block.data(), block.size());
  const char t = static_cast<char>(type);
  crc = crc32c::Extend(crc, &t, 1);
  return crc32c::Mask(crc);
}

void AppendBlockTrailer(std::string* dst, std::string_view block,
                        uint8_t type) {
  dst->push_back(static_cast<char>(type));
  PutFixed32(dst, BlockChecksum(block, type));
}

namespace {

// Uninitialized storage: every byte is overwritten by a read or by the
// decompressor, so zero-filling it (make_unique<char[]>) is wasted work on
// the hot read path.
std::unique_ptr<char[]> NewBuffer(size_t n) {
  return std::make_unique_for_overwrite<char[]>(n);
}

// Error context for a block: built only when an error is reported.
std::string BlockContext(std::string_view file_name, uint64_t offset) {
  return absl::StrFormat("%s: block at offset %d", file_name, offset);
}

}  // namespace

namespace {

// Reads the block at `handle` and its trailer into *got (backed by *buf
// unless the file answered from its own memory), checking bounds, length
// and, with verify_checksum, the CRC.
absl::Status ReadRawBlock(const RandomAccessFile& file,
                          const ReadBlockOptions& options,
                          const BlockHandle& handle, bool verify_checksum,
                          std::unique_ptr<char[]>* buf, std::string_view* got) {
  auto context = [&options, &handle] {
    return BlockContext(options.file_name, handle.offset());
  };
  const uint64_t limit = options.limit;
  if (handle.offset() > limit || handle.size() > limit - handle.offset() ||
      kBlockTrailerSize > limit - handle.offset() - handle.size()) {
    return absl::DataLossError(absl::StrFormat(
        "%s: block of %d bytes extends past the end of its region (%d)",
        context(), handle.size(), limit));
  }
  const size_t n = static_cast<size_t>(handle.size());
  const size_t total = n + kBlockTrailerSize;
  // A mapped file answers from its mapping and needs no scratch.
  if (!file.IsMemoryMapped()) *buf = NewBuffer(total);
  absl::Status s = file.Read(handle.offset(), total, got, buf->get());
  if (options.statistics != nullptr) {
    options.statistics->Record(Ticker::kBytesRead, got->size());
  }
  if (!s.ok()) {
    return absl::Status(s.code(),
                        absl::StrFormat("%s: %s", context(), s.message()));
  }
  if (got->size() != total) {
    return absl::DataLossError(absl::StrFormat(
        "%s: truncated read (%d of %d bytes)", context(), got->size(), total));
  }
  if (verify_checksum) {
    const char* const data = got->data();
    const uint8_t type = static_cast<uint8_t>(data[n]);
    const uint32_t stored = DecodeFixed32(data + n + 1);
    if (BlockChecksum(std::string_view(data, n), type) != stored) {
      return absl::DataLossError(
          absl::StrFormat("%s: checksum mismatch", context()));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::unique_ptr<ZstdDictionary>> ReadCompressionDictionary(
    const RandomAccessFile& file, const ReadBlockOptions& options,
    const BlockHandle& handle) {
  ReadBlockOptions ro = options;
  ro.verify_checksum = true;
  ro.dictionary = nullptr;
  auto contents = ReadBlock(file, ro, handle);
  if (!contents.ok()) return contents.status();
  return ZstdDictionary::Load(
      std::string(contents->data()),
      absl::StrFormat("%s: compression dictionary at offset %d",
                      options.file_name, handle.offset()));
}

absl::Status VerifyBlockChecksum(const RandomAccessFile& file,
                                 const ReadBlockOptions& options,
                                 const BlockHandle& handle) {
  std::unique_ptr<char[]> buf;
  std::string_view got;
  return ReadRawBlock(file, options, handle, /*verify_checksum=*/true, &buf,
                      &got);
}

absl::StatusOr<BlockContents> ReadBlock(const RandomAccessFile& file,
                                        const ReadBlockOptions& options,
                                        const BlockHandle& handle) {
  auto context = [&options, &handle] {
    return BlockContext(options.file_name, handle.offset());
  };
  // The bytes have arrived once the first pass over them is done (the CRC
  // check, a copy, or the decoding): each pass below calls arrived(), and
  // the first call is the one recorded.
  const int64_t start =
      options.arrival_nanos != nullptr ? absl::GetCurrentTimeNanos() : 0;
  bool arrival_recorded = options.arrival_nanos == nullptr;
  const auto arrived = [&options, start, &arrival_recorded] {
    if (arrival_recorded) return;
    *options.arrival_nanos = absl::GetCurrentTimeNanos() - start;
    arrival_recorded = true;
  };
  std::unique_ptr<char[]> buf;
  std::string_view got;
  absl::Status s =
      ReadRawBlock(file, options, handle, options.verify_checksum, &buf, &got);
  if (!s.ok()) return s;
  if (options.verify_checksum) arrived();
  const size_t n = static_cast<size_t>(handle.size());
  const size_t total = n + kBlockTrailerSize;
  // The file may answer from its own memory (a mapping or a readahead
  // window): a compressed block is decompressed straight from there.
  const char* const data = got.data();
  const uint8_t type = static_cast<uint8_t>(data[n]);
  if (type == kNoCompression) {
    if (data != buf.get()) {
      if (buf == nullptr) buf = NewBuffer(total);
      std::memcpy(buf.get(), data, total);
    }
    arrived();
    BlockContents out;
    out.owned = std::move(buf);  // the trailer bytes stay allocated, unused
    out.size = n;
    out.stored_type = kNoCompression;
    return out;
  }
  // LZ4 and zstd decoders do not check what they produce (no checksum in
  // LZ4's block format, none asked of zstd's frame): their blocks are
  // always checked against the trailer's CRC, so damage is DataLoss, never
  // wrong values.
  if (!options.verify_checksum &&
      (type == kLZ4Compression || type == kZstdCompression)) {
    if (BlockChecksum(std::string_view(data, n), type) !=
        DecodeFixed32(data + n + 1)) {
      return absl::DataLossError(
          absl::StrFormat("%s: checksum mismatch", context()));
    }
    arrived();
  }
  auto contents = UncompressBlock(std::string_view(data, n), type, context,
                                  options.dictionary);
  arrived();
  return contents;
}

}  // namespace siftdb
