// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// How many filter bits per key a new table gets, by the level it is written
// to: uniform (Options::filter_bits_per_key or the policy's own), a fixed
// per-level list (Options::filter_bits_per_key_per_level) or the "Monkey"
// allocation of a tree-wide budget (Options::optimize_filters_for_memory_
// budget). include/siftdb/options.h states the contract; docs/operations.md
// the derivation.
// Thread safety: pure functions.

#ifndef SIFTDB_DB_FILTER_BUDGET_H_
#define SIFTDB_DB_FILTER_BUDGET_H_

#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "siftdb/filter_policy.h"
#include "siftdb/options.h"

namespace siftdb {

// One group of equal sorted runs: `count` runs of `size` keys (any unit
// proportional to keys; bytes will do).
struct FilterRunGroup {
  double size = 0;
  int count = 1;
};

// Bits per key for each group such that the expected number of runs whose
// filter passes an absent key, sum over runs of p(b) with
// p(b) = exp(-b ln^2 2), is least under the budget
// sum_j count_j * size_j * b_j = average_bits * sum_j count_j * size_j.
// The optimum has p_j proportional to size_j; a group for which that would
// reach p >= 1 gets 0 bits (no filter) and the rest share the budget. A
// group of size 0 gets 0. average_bits <= 0 gives 0 everywhere.
std::vector<double> AllocateFilterBits(std::span<const FilterRunGroup> groups,
                                       double average_bits);

// The bits/key the whole tree averages: filter_policy's BitsPerKey() when
// set, else filter_bits_per_key.
double BaseFilterBitsPerKey(const Options& options);

// Bits/key of a table written to `level` while the deepest level holding
// a table is `deepest_level` (used by optimize_filters_for_memory_budget
// only; the larger of the two is the tree's bottom). 0: no filter.
// Ignores optimize_filters_for_hits (OutputTableOptions applies it).
double OutputFilterBitsPerKey(const Options& options, int level,
                              int deepest_level);

// `base` (the DB's policy; null: filters off) resized for a table written
// to `level`: base itself when the size is the same, null for 0 bits.
std::shared_ptr<const FilterPolicy> OutputFilterPolicy(
    const std::shared_ptr<const FilterPolicy>& base, const Options& options,
    int level, int deepest_level);

// InvalidArgument naming the option: a per-level entry negative, NaN or
// above 100; the two modes together; either with a filter_policy that
// FilterPolicyFromName does not know; and, with remote_filter on, any level
// that could be written without a filter.
absl::Status ValidateFilterBudgetOptions(const Options& options);

// The false-positive rate a table's filter was sized for: its policy (the
// name a table records; a prefix-only tag is allowed) at bits_per_key
// (Ribbon's is Bloom-equivalent, so the blocked Bloom rate). -1 for a
// policy siftdb does not know or bits_per_key <= 0.
double ExpectedFilterFpRate(std::string_view policy_name, double bits_per_key);

}  // namespace siftdb

#endif  // SIFTDB_DB_FILTER_BUDGET_H_
