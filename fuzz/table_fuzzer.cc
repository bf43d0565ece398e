// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: opening and reading a table (table/table.h) whose file
// bytes are arbitrary. Input: the bytes of one .sst file, read through an
// in-memory RandomAccessFile.
//
// What it exercises: footer and handle decoding, the CRC-checked meta
// blocks (libFuzzer's comparison tracing repairs the stored masked CRCs),
// the index and data blocks, block decompression (the seeds hold none,
// snappy, lz4 and zstd blocks), the filter load, the block cache,
// iteration both ways, Seek, point gets and size estimates;
// once without and once with checksum verification of data blocks.
//
// Checked besides "no crash, no out-of-bounds read":
// - every failure is DataLoss (the file itself never fails to read);
// - for a table that reads without error and is consistent (well-formed
//   keys, ascending, within their index separators): backward iteration mirrors
//   forward iteration, Seek finds every key, a point get that reports an entry
//   for a key reports exactly that entry (the filter may say no: fuzzed filter
//   bits need not cover the keys), and size estimates stay within the file.

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/canonical_block.h"
#include "fuzz/fuzz_util.h"
#include "siftdb/filter_policy.h"
#include "table/internal_key.h"
#include "table/table.h"
#include "util/cache.h"

namespace siftdb::fuzz {
namespace {

using Entries = std::vector<std::pair<std::string, std::string>>;

void CheckFailure(const absl::Status& s) {
  FUZZ_CHECK(!s.ok());
  FUZZ_CHECK(absl::IsDataLoss(s));
}

// True when the table is one a correct writer could have produced: the
// index and data blocks are canonical (fuzz/canonical_block.h), every key
// is a well-formed internal key, keys ascend across the whole table, and
// each data block's keys lie after the previous index separator and at or
// before its own. Only then must Seek and InternalGet (which go
// through the index) find every key that iteration shows.
bool Consistent(const Table& table, std::string_view file_bytes,
                const ReadOptions& ro) {
  const InternalKeyComparator cmp(BytewiseComparator());
  const StringFile file(file_bytes);
  ReadBlockOptions rbo;
  rbo.file_name = "fuzz.sst";
  auto canonical = [&](const BlockHandle& handle) {
    auto contents = ReadBlock(file, rbo, handle);
    return contents.ok() && IsCanonicalBlock(contents->data(), &cmp);
  };
  if (!canonical(table.footer().index_handle)) return false;
  std::unique_ptr<Iterator> index = table.NewIndexIterator();
  std::string prev_separator, prev_key;
  bool first = true, first_key = true;
  for (index->SeekToFirst(); index->Valid(); index->Next()) {
    ParsedInternalKey parsed;
    const std::string separator(index->key());
    if (!ParseInternalKey(separator, &parsed)) return false;
    if (!first && cmp.Compare(prev_separator, separator) >= 0) return false;
    BlockHandle handle;
    std::string_view handle_bytes = index->value();
    if (!handle.DecodeFrom(&handle_bytes) || !canonical(handle)) return false;
    std::unique_ptr<Iterator> block =
        table.NewDataBlockIterator(ro, index->value());
    for (block->SeekToFirst(); block->Valid(); block->Next()) {
      const std::string_view key = block->key();
      if (!ParseInternalKey(key, &parsed)) return false;
      if (!first_key && cmp.Compare(prev_key, key) >= 0) return false;
      if (!first && cmp.Compare(prev_separator, key) >= 0) return false;
      if (cmp.Compare(key, separator) > 0) return false;
      prev_key = std::string(key);
      first_key = false;
    }
    if (!block->status().ok()) return false;
    prev_separator = separator;
    first = false;
  }
  return index->status().ok();
}

void ReadTable(const Table& table, std::string_view file_bytes, bool verify) {
  ReadOptions ro;
  ro.verify_checksums = verify;
  std::unique_ptr<Iterator> it = table.NewIterator(ro);
  Entries entries;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    FUZZ_CHECK(entries.size() <= table.file_size());
    entries.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  if (!it->status().ok()) {
    CheckFailure(it->status());
    return;
  }
  if (!Consistent(table, file_bytes, ro)) {
    // Still walk the other paths: no crash, errors are DataLoss.
    for (it->SeekToLast(); it->Valid(); it->Prev()) {
    }
    if (!it->status().ok()) CheckFailure(it->status());
    return;
  }

  Entries backward;
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    FUZZ_CHECK(backward.size() < entries.size());
    backward.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  FUZZ_CHECK(it->status().ok());
  FUZZ_CHECK(backward.size() == entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    FUZZ_CHECK(backward[i] == entries[entries.size() - 1 - i]);
  }

  for (const auto& entry : entries) {
    const std::string& key = entry.first;
    const std::string& value = entry.second;
    it->Seek(key);
    FUZZ_CHECK(it->Valid());
    FUZZ_CHECK(it->key() == key);
    FUZZ_CHECK(it->value() == value);

    // The filter may say no (fuzzed bits need not cover the keys); when
    // the get reports an entry, it is this one.
    const absl::Status s = table.InternalGet(
        ro, key, nullptr, [&](std::string_view k, std::string_view v) {
          FUZZ_CHECK(k == key);
          FUZZ_CHECK(v == value);
        });
    FUZZ_CHECK(s.ok());
    table.UserKeyMayMatch(ExtractUserKey(key), nullptr);

    FUZZ_CHECK(table.ApproximateOffsetOf(key) <= table.file_size());
  }
}

}  // namespace
}  // namespace siftdb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace siftdb;
  using namespace siftdb::fuzz;
  static const std::unique_ptr<ShardedCache> cache =
      NewShardedLRUCache(1 << 20);
  TableOptions options;
  options.filter_policy = NewBloomFilterPolicy(10);
  options.block_cache = cache.get();
  auto table =
      Table::Open(options, "fuzz.sst",
                  std::make_unique<StringFile>(AsView(data, size)), size);
  if (!table.ok()) {
    CheckFailure(table.status());
    return 0;
  }
  ReadTable(**table, AsView(data, size), false);
  ReadTable(**table, AsView(data, size), true);

  // Point gets and seeks for keys that need not be in the table.
  std::unique_ptr<Iterator> it = (*table)->NewIterator(ReadOptions());
  for (const std::string_view user_key : {"", "a", "k", "zzzz"}) {
    std::string key;
    AppendInternalKey(&key, user_key, kMaxSequenceNumber, kValueTypeForSeek);
    it->Seek(key);
    absl::Status s = (*table)->InternalGet(
        ReadOptions(), key, nullptr, [](std::string_view, std::string_view) {});
    if (!s.ok()) CheckFailure(s);
    (*table)->ApproximateOffsetOf(key);
  }
  if (!it->status().ok()) CheckFailure(it->status());
  return 0;
}
