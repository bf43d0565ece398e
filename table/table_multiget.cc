// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Table::MultiGetLocate, MultiGetPin and MultiGetFinish: point lookups of a
// sorted batch of keys in one table, in three steps that each start the
// memory loads the next one needs:
// Locate probes every key's filter (the caller prefetched the filter
// lines) and walks the surviving keys in order through the index, where
// consecutive keys that land in the same data block share one index
// search, and starts loading each block's cache entry; Pin pins the cached
// blocks and starts loading their bytes, and hints the file reads of the
// others; Finish reads those and searches every block.

#include "absl/strings/str_format.h"
#include "table/table.h"
#include "util/coding.h"
#include "util/statistics.h"

namespace siftdb {

void Table::MultiGetLocate(std::span<GetRequest> requests,
                           MultiGetBlocks* blocks) const {
  const bool filtered = !filter_policy_name_.empty();
  // A filter kept in the block cache is looked up once for the batch.
  const FilterReader* batch_filter = nullptr;
  ShardedCache::Handle* filter_handle = nullptr;
  // (Partitioned filters are probed key by key: each key its partition.)
  if (filtered && filter_policy_ != nullptr && filter_in_cache_ &&
      !filter_resident() && !filter_partitioned_) {
    auto handle = CachedFilterHandle();
    if (handle.ok()) {
      filter_handle = *handle;
      batch_filter = &static_cast<const LoadedFilter*>(
                          options_.block_cache->Value(filter_handle))
                          ->reader;
    } else {
      Record(options_.statistics, Ticker::kFilterLoadErrors);
    }
  }
  auto may_match = [&](std::string_view user_key, const uint64_t* hash) {
    return batch_filter != nullptr
               ? UserKeyMayMatchIn(*batch_filter, user_key, hash)
               : UserKeyMayMatch(user_key, hash);
  };
  // The separator of the last block found: a later (larger) key at or
  // below it lands in the same block, since every earlier separator is
  // below the key that found this one.
  std::string separator;
  bool have_separator = false;
  bool past_last_block = false;
  for (GetRequest& request : requests) {
    request.block = GetRequest::kRuledOut;
    request.filter = FilterOutcome::kNotChecked;
    const std::string_view internal_key = request.internal_key;
    if (internal_key.size() < kInternalKeyTrailerSize) {
      request.status = absl::InvalidArgumentError(absl::StrFormat(
          "%s: MultiGet with a %d-byte key (not an internal key)", file_name_,
          internal_key.size()));
      continue;
    }
    if (filtered) {
      Record(options_.statistics, Ticker::kFilterChecks);
      if (!may_match(ExtractUserKey(internal_key), request.user_key_hash)) {
        Record(options_.statistics, Ticker::kFilterNegatives);
        request.filter = FilterOutcome::kNegative;
        continue;
      }
      Record(options_.statistics, Ticker::kFilterPositives);
    }
    request.block = GetRequest::kPastLastBlock;
    if (past_last_block) continue;
    if (have_separator && comparator_.Compare(internal_key, separator) <= 0) {
      request.block = static_cast<int>(blocks->index_values_.size()) - 1;
      continue;
    }
    std::string_view index_value;  // points into index_block_
    bool in_index = false;
    absl::Status s =
        index_block_->Seek(comparator_, file_name_, internal_key,
                           [&](std::string_view key, std::string_view value) {
                             separator.assign(key.data(), key.size());
                             index_value = value;
                             in_index = true;
                           });
    have_separator = false;
    if (!s.ok()) {
      request.status = std::move(s);
      continue;
    }
    if (!in_index) {
      past_last_block = true;  // this key and every later one
      continue;
    }
    PrefetchCachedBlock(index_value);
    blocks->index_values_.push_back(index_value);
    have_separator = true;
    request.block = static_cast<int>(blocks->index_values_.size()) - 1;
  }
  if (filter_handle != nullptr) options_.block_cache->Release(filter_handle);
}

void Table::PrefetchCachedBlock(std::string_view index_value) const {
  ShardedCache* const cache = options_.block_cache;
  BlockHandle handle;
  if (cache == nullptr || !handle.DecodeFrom(&index_value)) return;
  const CacheKey cache_key = CacheKeyAt(handle.offset());
  cache->Prefetch(cache_key.view());
}

void Table::MultiGetPin(std::span<GetRequest> requests,
                        MultiGetBlocks* blocks) const {
  const size_t n = blocks->index_values_.size();
  blocks->handles_.resize(n);
  blocks->pinned_.resize(n);
  const bool hint = HintReads();
  auto fail_block = [&](size_t b, const absl::Status& s) {
    for (GetRequest& request : requests) {
      if (request.block == static_cast<int>(b)) request.status = s;
    }
  };
  for (size_t b = 0; b < n; b++) {
    absl::Status s =
        DecodeDataHandle(blocks->index_values_[b], &blocks->handles_[b]);
    if (!s.ok()) {
      fail_block(b, s);
      continue;
    }
    const BlockHandle& handle = blocks->handles_[b];
    PinnedBlock& pinned = blocks->pinned_[b];
    if (PinCachedBlock(handle, &pinned)) {
      pinned.block->Prefetch();
    } else if (hint) {
      // Read in Finish, after every table of the batch has hinted its
      // reads: the storage reads then overlap.
      file_->WillRead(handle.offset(), handle.size() + kBlockTrailerSize);
    }
  }
}

void Table::MultiGetFinish(
    const ReadOptions& options, std::span<GetRequest> requests,
    MultiGetBlocks* blocks,
    absl::FunctionRef<void(size_t, std::string_view, std::string_view)> found)
    const {
  const bool filtered = !filter_policy_name_.empty();
  bool read_blocks = false;
  bool slow_read = false;
  for (size_t i = 0; i < requests.size(); i++) {
    GetRequest& request = requests[i];
    if (!request.status.ok() || request.block == GetRequest::kRuledOut) {
      continue;
    }
    bool same_user_key = false;
    if (request.block >= 0) {
      const size_t b = static_cast<size_t>(request.block);
      PinnedBlock& pinned = blocks->pinned_[b];
      if (pinned.block == nullptr) {
        // Not in the cache: read now. On failure every request of the
        // block (this one and the later ones) fails, and none rereads it.
        bool slow = false;
        absl::Status s =
            ReadDataBlock(options, blocks->handles_[b], *file_, &pinned, &slow);
        read_blocks = true;
        slow_read = slow_read || slow;
        if (!s.ok()) {
          for (size_t j = i; j < requests.size(); j++) {
            if (requests[j].block == request.block) requests[j].status = s;
          }
          continue;
        }
      }
      const std::string_view user_key = ExtractUserKey(request.internal_key);
      absl::Status s = pinned.block->Seek(
          comparator_, file_name_, request.internal_key,
          [&](std::string_view key, std::string_view value) {
            same_user_key = key.size() >= kInternalKeyTrailerSize &&
                            comparator_.user_comparator()->Compare(
                                ExtractUserKey(key), user_key) == 0;
            found(i, key, value);
          });
      if (!s.ok()) {
        request.status = std::move(s);
        continue;
      }
    }
    // A key the filter passed but no entry matched: a false positive.
    if (filtered && !same_user_key) {
      Record(options_.statistics, Ticker::kFilterFalsePositives);
    }
    if (filtered) {
      request.filter = same_user_key ? FilterOutcome::kTruePositive
                                     : FilterOutcome::kFalsePositive;
    }
  }
  if (read_blocks) NoteReadSpeed(slow_read);
}

}  // namespace siftdb
