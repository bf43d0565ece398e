// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The block-level commands: verify and raw walk the file's blocks directly
// (not through Table::Open), so they can describe a damaged table as far as
// its footer, metaindex and index allow.

#include <algorithm>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "filter/filter_format.h"
#include "table/block.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "table/table_properties.h"
#include "tools/common/hex.h"
#include "tools/sst_dump/sst_dump.h"
#include "util/coding.h"
#include "util/crc32c.h"

namespace siftdb::sst_dump {

namespace {

// One block of the file and what it holds.
struct BlockRef {
  enum Kind {
    kData,
    kFilter,
    kIndex,
    kProperties,
    kMetaindex,
    kDictionary,
    kOtherMeta
  };
  Kind kind;
  std::string label;  // e.g. "data block 3", "filter.siftdb.BlockedBloom"
  BlockHandle handle;
};

std::vector<BlockRef> AllBlocks(const TableLayout& layout) {
  std::vector<BlockRef> blocks;
  for (size_t i = 0; i < layout.data.size(); i++) {
    blocks.push_back({BlockRef::kData, absl::StrFormat("data block %d", i),
                      layout.data[i].second});
  }
  for (const auto& [name, handle] : layout.meta) {
    BlockRef::Kind kind = BlockRef::kOtherMeta;
    if (name == kPropertiesMetaKey) kind = BlockRef::kProperties;
    if (name.rfind(kFilterMetaPrefix, 0) == 0) kind = BlockRef::kFilter;
    if (name == kCompressionDictMetaKey) kind = BlockRef::kDictionary;
    blocks.push_back({kind, name, handle});
  }
  blocks.push_back({BlockRef::kIndex, "index", layout.footer.index_handle});
  blocks.push_back(
      {BlockRef::kMetaindex, "metaindex", layout.footer.metaindex_handle});
  std::stable_sort(blocks.begin(), blocks.end(),
                   [](const BlockRef& a, const BlockRef& b) {
                     return a.handle.offset() < b.handle.offset();
                   });
  return blocks;
}

// Reads a block (CRC verified; a data block decompressed against
// `dictionary` when not null) and parses it as a key/value block.
absl::StatusOr<std::unique_ptr<Block>> ReadKvBlock(
    const RandomAccessFile& file, const std::string& name, uint64_t limit,
    const BlockHandle& handle, const ZstdDictionary* dictionary = nullptr) {
  ReadBlockOptions ro;
  ro.verify_checksum = true;
  ro.file_name = name;
  ro.limit = limit;
  ro.dictionary = dictionary;
  auto contents = ReadBlock(file, ro, handle);
  if (!contents.ok()) return contents.status();
  return Block::Create(std::move(*contents), handle.offset(), name);
}

// Reads every entry of `block`; its status.
absl::Status WalkBlock(const Block& block, const Comparator* cmp,
                       const std::string& name, size_t* entries) {
  auto it = block.NewIterator(cmp, name);
  for (it->SeekToFirst(); it->Valid(); it->Next()) ++*entries;
  return it->status();
}

}  // namespace

absl::StatusOr<std::unique_ptr<RandomAccessFile>> OpenFile(
    Env* env, const std::string& path, uint64_t* size) {
  auto file_size = env->GetFileSize(path);
  if (!file_size.ok()) return file_size.status();
  *size = *file_size;
  return env->NewRandomAccessFile(path);
}

absl::StatusOr<TableLayout> ReadLayout(const RandomAccessFile& file,
                                       const std::string& name,
                                       uint64_t file_size) {
  TableLayout layout;
  layout.file_size = file_size;
  if (file_size < kFooterSize) {
    return absl::DataLossError(absl::StrFormat(
        "%s: not a siftdb table (file of %d bytes is shorter than the "
        "%d-byte footer)",
        name, file_size, kFooterSize));
  }
  const uint64_t footer_offset = file_size - kFooterSize;
  char space[kFooterSize];
  std::string_view input;
  absl::Status s = file.Read(footer_offset, kFooterSize, &input, space);
  if (!s.ok()) return s;
  s = layout.footer.DecodeFrom(
      input, absl::StrFormat("%s: footer at offset %d", name, footer_offset));
  if (!s.ok()) return s;

  InternalKeyComparator icmp(BytewiseComparator());
  auto read_handles = [&](const BlockHandle& handle, const Comparator* cmp,
                          std::vector<std::pair<std::string, BlockHandle>>* out)
      -> absl::Status {
    auto block = ReadKvBlock(file, name, footer_offset, handle);
    if (!block.ok()) return block.status();
    auto it = (*block)->NewIterator(cmp, name);
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      BlockHandle h;
      std::string_view v = it->value();
      if (!h.DecodeFrom(&v)) {
        return absl::DataLossError(absl::StrFormat(
            "%s: block at offset %d: malformed block handle for key %s", name,
            handle.offset(), tools::Escape(it->key())));
      }
      out->emplace_back(std::string(it->key()), h);
    }
    return it->status();
  };
  s = read_handles(layout.footer.metaindex_handle, BytewiseComparator(),
                   &layout.meta);
  if (!s.ok()) return s;
  s = read_handles(layout.footer.index_handle, &icmp, &layout.data);
  if (!s.ok()) return s;
  for (const auto& [key, handle] : layout.meta) {
    if (key != kCompressionDictMetaKey) continue;
    ReadBlockOptions ro;
    ro.file_name = name;
    ro.limit = footer_offset;
    auto dict = ReadCompressionDictionary(file, ro, handle);
    if (!dict.ok()) return dict.status();
    layout.dictionary = std::move(*dict);
  }
  return layout;
}

absl::Status Verify(Env* env, const std::string& path, std::FILE* out) {
  uint64_t size = 0;
  auto file = OpenFile(env, path, &size);
  if (!file.ok()) return file.status();
  auto layout = ReadLayout(**file, path, size);
  if (!layout.ok()) return layout.status();

  InternalKeyComparator icmp(BytewiseComparator());
  std::vector<std::string> errors;
  const uint64_t limit = size - kFooterSize;
  uint64_t expected_offset = 0;
  size_t data_blocks = 0, entries = 0;
  const std::vector<BlockRef> blocks = AllBlocks(*layout);
  for (const BlockRef& b : blocks) {
    // The blocks must tile [0, footer) exactly.
    if (b.handle.offset() > expected_offset) {
      errors.push_back(absl::StrFormat(
          "%s: %d bytes at offset %d belong to no block", path,
          b.handle.offset() - expected_offset, expected_offset));
    } else if (b.handle.offset() < expected_offset) {
      errors.push_back(
          absl::StrFormat("%s: %s at offset %d overlaps the block before it",
                          path, b.label, b.handle.offset()));
    }
    if (b.kind == BlockRef::kFilter) {
      ReadBlockOptions ro;
      ro.verify_checksum = true;
      ro.file_name = path;
      ro.limit = limit;
      auto contents = ReadBlock(**file, ro, b.handle);
      if (!contents.ok()) {
        errors.push_back(std::string(contents.status().message()));
      } else if (contents->stored_type != kNoCompression) {
        errors.push_back(absl::StrFormat(
            "%s: filter block at offset %d is compressed (must be raw)", path,
            b.handle.offset()));
      }
    } else if (b.kind == BlockRef::kDictionary) {
      // Read, verified and loaded by ReadLayout.
    } else {
      auto block =
          ReadKvBlock(**file, path, limit, b.handle, layout->dictionary.get());
      absl::Status s = block.status();
      if (s.ok()) {
        const Comparator* cmp =
            (b.kind == BlockRef::kData || b.kind == BlockRef::kIndex)
                ? static_cast<const Comparator*>(&icmp)
                : BytewiseComparator();
        size_t n = 0;
        s = WalkBlock(**block, cmp, path, &n);
        if (b.kind == BlockRef::kData) entries += n;
      }
      if (!s.ok()) errors.push_back(std::string(s.message()));
    }
    if (b.kind == BlockRef::kData) data_blocks++;
    expected_offset =
        std::max(expected_offset,
                 b.handle.offset() + b.handle.size() + kBlockTrailerSize);
  }
  if (expected_offset != limit && errors.empty()) {
    errors.push_back(absl::StrFormat(
        "%s: blocks end at offset %d but the footer starts at %d", path,
        expected_offset, limit));
  }
  if (!errors.empty()) {
    return absl::DataLossError(absl::StrJoin(errors, "\n"));
  }
  std::fprintf(out,
               "%s: OK: verified %zu blocks (%zu data blocks, %zu entries), "
               "%llu bytes\n",
               path.c_str(), blocks.size(), data_blocks, entries,
               static_cast<unsigned long long>(size));
  return absl::OkStatus();
}

namespace {

// Prints the file's size and its footer's fields.
void PrintRawFooter(const std::string& path, uint64_t size,
                    const Footer& footer, std::FILE* out) {
  std::fprintf(
      out,
      "%s: %llu bytes\nfooter at offset %llu (%zu bytes): metaindex "
      "(offset %llu, size %llu), index (offset %llu, size %llu), "
      "format version %u, magic 0x%016llx\n",
      path.c_str(), static_cast<unsigned long long>(size),
      static_cast<unsigned long long>(size - kFooterSize), kFooterSize,
      static_cast<unsigned long long>(footer.metaindex_handle.offset()),
      static_cast<unsigned long long>(footer.metaindex_handle.size()),
      static_cast<unsigned long long>(footer.index_handle.offset()),
      static_cast<unsigned long long>(footer.index_handle.size()),
      footer.format_version,
      static_cast<unsigned long long>(kTableMagicNumber));
}

// Reads block b's stored bytes and trailer into *buf; *stored views them.
// False when the block extends past `limit` (the footer) or cannot be
// read; the reason is then printed and appended to *errors.
bool ReadStoredBlock(const RandomAccessFile& file, const std::string& path,
                     uint64_t limit, const BlockRef& b, std::string* buf,
                     std::string_view* stored, std::FILE* out,
                     std::vector<std::string>* errors) {
  const uint64_t offset = b.handle.offset();
  if (offset > limit || b.handle.size() > limit - offset ||
      kBlockTrailerSize > limit - offset - b.handle.size()) {
    std::fprintf(out, ": extends past the footer\n");
    errors->push_back(absl::StrFormat(
        "%s: %s at offset %d extends past the footer", path, b.label, offset));
    return false;
  }
  const size_t n = static_cast<size_t>(b.handle.size());
  buf->assign(n + kBlockTrailerSize, '\0');
  absl::Status s = file.Read(offset, buf->size(), stored, buf->data());
  if (s.ok() && stored->size() != buf->size()) {
    s = absl::DataLossError(absl::StrFormat(
        "%s: block at offset %d: truncated read", path, offset));
  }
  if (!s.ok()) {
    std::fprintf(out, ": %s\n", std::string(s.message()).c_str());
    errors->push_back(std::string(s.message()));
    return false;
  }
  return true;
}

// Prints a filter block's trailer fields and a hex dump of it.
void DumpFilterBlock(std::string_view data, std::FILE* out) {
  FilterTrailer trailer;
  if (DecodeFilterTrailer(data, &trailer)) {
    std::fprintf(out,
                 "  filter trailer: kind '%c', k %d, version %d, param %u\n",
                 static_cast<char>(trailer.kind), trailer.k, trailer.version,
                 trailer.param);
  } else {
    std::fprintf(out, "  filter trailer: not a siftdb filter encoding\n");
  }
  std::fputs(tools::HexDump(data).c_str(), out);
}

// How raw prints the value of an entry in a block of `kind`: a data
// value, a property (hex; also decoded into *props) or a block handle.
std::string RawEntryValue(BlockRef::Kind kind, std::string_view key,
                          std::string_view value, const DumpOptions& opts,
                          TableProperties* props) {
  if (kind == BlockRef::kData) {
    return "'" + tools::FormatBytes(value, opts.output_hex) + "'";
  }
  if (kind == BlockRef::kProperties) {
    std::string hex = tools::ToHex(value);
    (void)DecodeTableProperty(key, value, props);
    return hex;
  }
  BlockHandle h;
  std::string_view v = value;
  return h.DecodeFrom(&v)
             ? absl::StrFormat("offset %d, size %d", h.offset(), h.size())
             : "(malformed handle) " + tools::ToHex(value);
}

// Prints the decoded table properties, one indented line each.
void PrintDecodedProperties(const TableProperties& props, std::FILE* out) {
  std::fprintf(out, "  decoded:\n");
  std::string text = TablePropertiesToString(props);
  size_t start = 0;
  while (start < text.size()) {
    const size_t end = text.find('\n', start);
    std::fprintf(out, "    %s\n", text.substr(start, end - start).c_str());
    start = end + 1;
  }
}

// Prints every entry of key/value block b (data and index keys through
// `icmp`), then for the properties block the decoded properties. An
// iteration error is printed and appended to *errors.
void DumpKvBlock(const Block& block, const BlockRef& b, const std::string& path,
                 const Comparator* icmp, const DumpOptions& opts,
                 std::FILE* out, std::vector<std::string>* errors) {
  const bool internal = b.kind == BlockRef::kData || b.kind == BlockRef::kIndex;
  auto it = block.NewIterator(internal ? icmp : BytewiseComparator(), path);
  TableProperties props;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    const std::string key =
        internal ? InternalKeyDebugString(it->key(), opts.output_hex)
                 : tools::FormatBytes(it->key(), opts.output_hex);
    const std::string value =
        RawEntryValue(b.kind, it->key(), it->value(), opts, &props);
    std::fprintf(out, "  %s => %s\n", key.c_str(), value.c_str());
  }
  if (!it->status().ok()) {
    std::fprintf(out, "  %s\n", std::string(it->status().message()).c_str());
    errors->push_back(std::string(it->status().message()));
  }
  if (b.kind == BlockRef::kProperties) PrintDecodedProperties(props, out);
}

// raw for one block: its place, stored type and CRC, then its contents
// (a hex dump for filter and unknown meta blocks, else every entry).
// Problems are printed and appended to *errors.
void DumpRawBlock(const RandomAccessFile& file, const std::string& path,
                  uint64_t limit, const BlockRef& b, const Comparator* icmp,
                  const ZstdDictionary* dictionary, const DumpOptions& opts,
                  std::FILE* out, std::vector<std::string>* errors) {
  const uint64_t offset = b.handle.offset();
  std::fprintf(out, "\n%s at offset %llu, size %llu (+%zu-byte trailer)",
               b.label.c_str(), static_cast<unsigned long long>(offset),
               static_cast<unsigned long long>(b.handle.size()),
               kBlockTrailerSize);
  std::string buf;
  std::string_view stored;
  if (!ReadStoredBlock(file, path, limit, b, &buf, &stored, out, errors)) {
    return;
  }
  const size_t n = static_cast<size_t>(b.handle.size());
  const uint8_t type = static_cast<uint8_t>(stored[n]);
  const bool crc_ok =
      BlockChecksum(stored.substr(0, n), type) == DecodeFixed32(&stored[n + 1]);
  std::fprintf(out, ", stored %s, crc %s\n", CompressionTypeName(type).c_str(),
               crc_ok ? "ok" : "MISMATCH");
  if (!crc_ok) {
    errors->push_back(absl::StrFormat(
        "%s: block at offset %d: checksum mismatch", path, offset));
  }
  const std::string context =
      absl::StrFormat("%s: block at offset %d", path, offset);
  auto contents =
      UncompressBlock(stored.substr(0, n), type, context, dictionary);
  if (!contents.ok()) {
    std::fprintf(out, "  %s\n",
                 std::string(contents.status().message()).c_str());
    errors->push_back(std::string(contents.status().message()));
    return;
  }
  if (b.kind == BlockRef::kFilter) {
    DumpFilterBlock(contents->data(), out);
    return;
  }
  if (b.kind == BlockRef::kDictionary) {
    std::fprintf(out, "  zstd dictionary, ID %u, %zu bytes\n",
                 dictionary != nullptr ? dictionary->id() : 0u, contents->size);
    return;
  }
  if (b.kind == BlockRef::kOtherMeta) {
    std::fputs(tools::HexDump(contents->data()).c_str(), out);
    return;
  }
  if (contents->stored_type != kNoCompression) {
    std::fprintf(out, "  uncompressed size %zu\n", contents->size);
  }
  auto block = Block::Create(std::move(*contents), offset, path);
  if (!block.ok()) {
    std::fprintf(out, "  %s\n", std::string(block.status().message()).c_str());
    errors->push_back(std::string(block.status().message()));
    return;
  }
  DumpKvBlock(**block, b, path, icmp, opts, out, errors);
}

}  // namespace

absl::Status Raw(Env* env, const std::string& path, const DumpOptions& opts,
                 std::FILE* out) {
  uint64_t size = 0;
  auto file = OpenFile(env, path, &size);
  if (!file.ok()) return file.status();
  auto layout = ReadLayout(**file, path, size);
  if (!layout.ok()) return layout.status();
  PrintRawFooter(path, size, layout->footer, out);

  InternalKeyComparator icmp(BytewiseComparator());
  const uint64_t limit = size - kFooterSize;
  std::vector<std::string> errors;
  for (const BlockRef& b : AllBlocks(*layout)) {
    DumpRawBlock(**file, path, limit, b, &icmp, layout->dictionary.get(), opts,
                 out, &errors);
  }
  if (!errors.empty()) return absl::DataLossError(absl::StrJoin(errors, "\n"));
  return absl::OkStatus();
}

}  // namespace siftdb::sst_dump
