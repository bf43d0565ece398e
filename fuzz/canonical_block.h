// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// IsCanonicalBlock: whether block bytes are exactly what BlockBuilder
// writes for their own entries at some restart interval. Only for such
// blocks do all of a block's access paths (forward from the start,
// backward and Seek from the restart points) have to agree: Block::Create
// checks that restart offsets lie inside the entries, not that they fall on
// entry boundaries with a full key, so a damaged block may decode to
// different, equally well-formed-looking entries on different paths. That
// is garbage out for garbage in, not a bug; the fuzz targets check
// agreement only for canonical blocks and "no crash, DataLoss on error"
// for the rest.
//
// Thread safety: a pure function.

#ifndef SIFTDB_FUZZ_CANONICAL_BLOCK_H_
#define SIFTDB_FUZZ_CANONICAL_BLOCK_H_

#include <cstring>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "siftdb/comparator.h"
#include "table/block.h"
#include "table/block_builder.h"

namespace siftdb::fuzz {

inline bool IsCanonicalBlock(std::string_view bytes,
                             const Comparator* comparator) {
  BlockContents contents;
  contents.owned = std::make_unique<char[]>(bytes.size());
  if (!bytes.empty()) {
    std::memcpy(contents.owned.get(), bytes.data(), bytes.size());
  }
  contents.size = bytes.size();
  auto block = Block::Create(std::move(contents), 0, "canonical");
  if (!block.ok()) return false;
  std::vector<std::pair<std::string, std::string>> entries;
  std::unique_ptr<Iterator> it = (*block)->NewIterator(comparator, "canonical");
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    if (!entries.empty() &&
        comparator->Compare(entries.back().first, it->key()) >= 0) {
      return false;  // not in the order a builder requires
    }
    entries.emplace_back(std::string(it->key()), std::string(it->value()));
  }
  if (!it->status().ok()) return false;
  const size_t n = entries.size();
  const uint32_t restarts = (*block)->num_restarts();
  if (restarts == 0 || restarts > n + (n == 0)) return false;
  // A builder starts a restart every `interval` entries (one restart for
  // no entries), so ceil(n / interval) == restarts. Try the smallest such
  // intervals (a bounded number: each try rebuilds the block).
  const size_t first = n == 0 ? 1 : (n + restarts - 1) / restarts;
  for (size_t interval = first; interval < first + 64; ++interval) {
    if (n > 0 && (n + interval - 1) / interval != restarts) break;
    BlockBuilder builder(static_cast<int>(interval));
    for (const auto& [k, v] : entries) builder.Add(k, v);
    if (builder.Finish() == bytes) return true;
  }
  return false;
}

}  // namespace siftdb::fuzz

#endif  // SIFTDB_FUZZ_CANONICAL_BLOCK_H_
