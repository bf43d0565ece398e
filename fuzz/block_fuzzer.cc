// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: a table block (table/block.h) decoded from arbitrary bytes.
// Input: the uncompressed contents of one block (entries, restart array,
// restart count), as BlockBuilder::Finish writes them.
//
// Checked besides "no crash, no out-of-bounds read":
// - malformed bytes are DataLoss, from Create or from the iterator, on
//   every path (forward, backward, Seek);
// - for a canonical block (fuzz/canonical_block.h: exactly what
//   BlockBuilder writes for its entries): backward iteration gives the
//   same entries reversed, and Seek finds every key (and, for a key plus
//   "\0", the next one).

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "fuzz/canonical_block.h"
#include "fuzz/fuzz_util.h"
#include "siftdb/comparator.h"
#include "table/block.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace siftdb;
  using namespace siftdb::fuzz;
  BlockContents contents;
  contents.owned = std::make_unique<char[]>(size);
  if (size > 0) std::memcpy(contents.owned.get(), data, size);
  contents.size = size;
  auto block = Block::Create(std::move(contents), 0, "fuzz.sst");
  if (!block.ok()) {
    FUZZ_CHECK(absl::IsDataLoss(block.status()));
    return 0;
  }
  const Comparator* cmp = BytewiseComparator();
  std::unique_ptr<Iterator> it = (*block)->NewIterator(cmp, "fuzz.sst");

  std::vector<std::pair<std::string, std::string>> entries;
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    FUZZ_CHECK(entries.size() <= size);  // every entry takes >= 1 byte
    entries.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  if (!it->status().ok()) {
    FUZZ_CHECK(absl::IsDataLoss(it->status()));
    return 0;
  }
  const bool canonical = IsCanonicalBlock(AsView(data, size), cmp);

  // Backward and by Seek. Any block: no crash, errors are DataLoss.
  // A canonical one: every access path agrees.
  std::vector<std::pair<std::string, std::string>> backward;
  for (it->SeekToLast(); it->Valid(); it->Prev()) {
    FUZZ_CHECK(backward.size() <= size);
    backward.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  if (!canonical) {
    if (!it->status().ok()) FUZZ_CHECK(absl::IsDataLoss(it->status()));
    for (const auto& entry : entries) {
      it->Seek(entry.first);
      if (!it->status().ok()) FUZZ_CHECK(absl::IsDataLoss(it->status()));
    }
    return 0;
  }
  FUZZ_CHECK(it->status().ok());
  FUZZ_CHECK(backward.size() == entries.size());
  for (size_t i = 0; i < entries.size(); ++i) {
    FUZZ_CHECK(backward[i] == entries[entries.size() - 1 - i]);
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    it->Seek(entries[i].first);
    FUZZ_CHECK(it->Valid());
    FUZZ_CHECK(it->key() == entries[i].first);
    FUZZ_CHECK(it->value() == entries[i].second);
    it->Seek(entries[i].first + std::string(1, '\0'));
    if (i + 1 < entries.size()) {
      FUZZ_CHECK(it->Valid());
      FUZZ_CHECK(it->key() == entries[i + 1].first);
    } else {
      FUZZ_CHECK(!it->Valid());
    }
    FUZZ_CHECK(it->status().ok());
  }
  return 0;
}
