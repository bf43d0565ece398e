// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DBImpl::MultiGet: many point lookups against one read state. The keys
// are sorted, the MemTables' filter lines are loaded for the whole batch
// before any is probed, and the keys the MemTables do not answer go to
// Version::MultiGet, which reads each level once for all of them.

#include <algorithm>
#include <optional>

#include "absl/container/fixed_array.h"
#include "absl/container/inlined_vector.h"
#include "db/db_impl.h"
#include "db/lookup_key.h"
#include "db/memtable.h"
#include "db/version.h"
#include "filter/filter_hash.h"
#include "siftdb/filter_policy.h"

namespace siftdb {

std::vector<absl::Status> DBImpl::MultiGet(
    const ReadOptions& options, std::span<const std::string_view> keys,
    std::vector<std::string>* values) {
  std::vector<absl::Status> statuses(keys.size());
  // Reuses the caller's strings (and their capacity) across calls.
  values->resize(keys.size());
  for (std::string& value : *values) value.clear();
  if (keys.empty()) return statuses;
  const ReadState state = AcquireReadState(options);
  if (keys.size() == 1) {
    // Nothing to share: the plain lookup, without the batch's bookkeeping.
    statuses[0] = keys[0].size() > kMaxKeySize
                      ? KeyTooLarge(keys[0])
                      : GetFromState(options, state, keys[0], &(*values)[0]);
  } else {
    MultiGetFromState(options, state, keys, values, &statuses);
  }
  ReleaseReadState(state);
  for (size_t i = 0; i < keys.size(); i++) {
    if (!statuses[i].ok()) (*values)[i].clear();
  }
  return statuses;
}

void DBImpl::MultiGetFromState(const ReadOptions& options,
                               const ReadState& state,
                               std::span<const std::string_view> keys,
                               std::vector<std::string>* values,
                               std::vector<absl::Status>* statuses) {
  // The keys a lookup can serve, in user-key order (equal keys stay in
  // the caller's order; each gets its own answer).
  absl::FixedArray<size_t, 32> order(keys.size());
  size_t count = 0;
  for (size_t i = 0; i < keys.size(); i++) {
    if (keys[i].size() > kMaxKeySize) {
      (*statuses)[i] = KeyTooLarge(keys[i]);
    } else {
      order[count++] = i;
    }
  }
  const Comparator* ucmp = internal_comparator_.user_comparator();
  std::stable_sort(
      order.begin(), order.begin() + count,
      [&](size_t a, size_t b) { return ucmp->Compare(keys[a], keys[b]) < 0; });

  // MemTables: hash every key and load its filter lines first, so the
  // misses of the whole batch overlap, then probe.
  absl::FixedArray<std::optional<LookupKey>, 32> lookup_keys(count);
  absl::FixedArray<uint64_t, 32> mem_hashes(count);
  for (size_t j = 0; j < count; j++) {
    const std::string_view key = keys[order[j]];
    lookup_keys[j].emplace(key, state.sequence);
    mem_hashes[j] = FilterKeyHash(key);
    state.mem->PrefetchFilter(mem_hashes[j]);
    if (state.imm != nullptr) state.imm->PrefetchFilter(mem_hashes[j]);
  }
  absl::FixedArray<uint64_t, 32> filter_hashes(count);
  absl::InlinedVector<Version::MultiGetKey, 32> pending;
  absl::InlinedVector<size_t, 32> pending_index;  // pending[p]: keys[index]
  pending.reserve(count);
  pending_index.reserve(count);
  for (size_t j = 0; j < count; j++) {
    const size_t i = order[j];
    const LookupKey& lkey = *lookup_keys[j];
    std::string* value = &(*values)[i];
    absl::Status s;
    if (state.mem->Get(lkey, value, &s, &mem_hashes[j]) ||
        (state.imm != nullptr &&
         state.imm->Get(lkey, value, &s, &mem_hashes[j]))) {
      (*statuses)[i] = std::move(s);
      continue;
    }
    Version::MultiGetKey key;
    key.key = &lkey;
    if (filter_policy_ != nullptr) {
      filter_hashes[j] = filter_policy_->HashKey(keys[i]);
      key.user_key_hash = &filter_hashes[j];
    }
    key.value = value;
    pending.push_back(std::move(key));
    pending_index.push_back(i);
  }
  if (pending.empty()) return;

  state.current->MultiGet(options, std::span(pending));
  using State = Version::MultiGetKey::State;
  for (size_t p = 0; p < pending.size(); p++) {
    absl::Status& status = (*statuses)[pending_index[p]];
    switch (pending[p].state) {
      case State::kFound:
        status = absl::OkStatus();
        break;
      case State::kFailed:
        status = std::move(pending[p].status);
        break;
      case State::kSearching:
      case State::kDeleted:
        status = KeyNotFound();
        break;
    }
  }
}

}  // namespace siftdb
