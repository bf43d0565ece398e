// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "db/filter_budget.h"

#include <algorithm>
#include <cmath>
#include <numeric>
#include <string>

#include "absl/strings/str_format.h"
#include "db/version_edit.h"
#include "filter/bloom_math.h"
#include "filter/filter_format.h"
#include "table/format.h"

namespace siftdb {

namespace {

// ln^2 2: a Bloom filter of b bits/key (k optimal) passes about
// exp(-b ln^2 2) of absent keys.
constexpr double kLn2Squared = 0.4804530139182014;
// FilterPolicy clamps above this (siftdb/filter_policy.h).
constexpr double kMaxBitsPerKey = 100;

absl::Status BadOption(const std::string& what) {
  return absl::InvalidArgumentError("invalid option: " + what);
}

// The run groups of a tree whose bottom is level `bottom`: index 0 is the
// level-0 runs, index L the level-L run (see Options::
// optimize_filters_for_memory_budget).
std::vector<FilterRunGroup> TreeShape(const Options& o, int bottom) {
  std::vector<FilterRunGroup> groups;
  groups.push_back({static_cast<double>(o.write_buffer_size),
                    std::max(1, o.level0_file_num_compaction_trigger)});
  double target = static_cast<double>(o.max_bytes_for_level_base);
  for (int level = 1; level <= bottom; level++) {
    groups.push_back({target, 1});
    target *= o.max_bytes_for_level_multiplier;
  }
  return groups;
}

}  // namespace

std::vector<double> AllocateFilterBits(std::span<const FilterRunGroup> groups,
                                       double average_bits) {
  std::vector<double> bits(groups.size(), 0.0);
  if (!(average_bits > 0)) return bits;
  double total_keys = 0;
  for (const FilterRunGroup& g : groups) {
    if (g.size > 0 && g.count > 0) total_keys += g.size * g.count;
  }
  if (total_keys <= 0) return bits;
  const double budget = average_bits * total_keys;

  // Largest first: the groups that get no filter are always the largest.
  std::vector<size_t> order(groups.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return groups[a].size > groups[b].size;
  });
  size_t first = 0;  // order[first..] share the budget
  while (first < order.size() &&
         !(groups[order.back()].size > 0 && groups[order.back()].count > 0)) {
    order.pop_back();  // empty groups get 0
  }
  for (;;) {
    if (first == order.size()) return bits;
    // With p_j = lambda * N_j, b_j = -ln(lambda N_j) / ln^2 2; the budget
    // fixes ln lambda = -(B ln^2 2 + sum n_j N_j ln N_j) / sum n_j N_j.
    double keys = 0;
    double keys_log = 0;
    for (size_t i = first; i < order.size(); i++) {
      const FilterRunGroup& g = groups[order[i]];
      keys += g.count * g.size;
      keys_log += g.count * g.size * std::log(g.size);
    }
    const double log_lambda = -(budget * kLn2Squared + keys_log) / keys;
    const FilterRunGroup& largest = groups[order[first]];
    if (log_lambda + std::log(largest.size) >= 0) {
      first++;  // p would be >= 1: no filter; the others share the budget
      continue;
    }
    for (size_t i = first; i < order.size(); i++) {
      const double b =
          -(log_lambda + std::log(groups[order[i]].size)) / kLn2Squared;
      bits[order[i]] = std::max(0.0, b);
    }
    return bits;
  }
}

double BaseFilterBitsPerKey(const Options& o) {
  return o.filter_policy != nullptr ? o.filter_policy->BitsPerKey()
                                    : o.filter_bits_per_key;
}

double OutputFilterBitsPerKey(const Options& o, int level, int deepest_level) {
  level = std::clamp(level, 0, kNumLevels - 1);
  if (!o.filter_bits_per_key_per_level.empty()) {
    const auto& v = o.filter_bits_per_key_per_level;
    const double b =
        static_cast<size_t>(level) < v.size() ? v[level] : v.back();
    return std::min(b, kMaxBitsPerKey);
  }
  const double base = BaseFilterBitsPerKey(o);
  if (!o.optimize_filters_for_memory_budget) return base;
  const int bottom =
      std::clamp(std::max(level, deepest_level), 0, kNumLevels - 1);
  const std::vector<FilterRunGroup> shape = TreeShape(o, bottom);
  const std::vector<double> bits = AllocateFilterBits(shape, base);
  return std::min(bits[level], kMaxBitsPerKey);
}

std::shared_ptr<const FilterPolicy> OutputFilterPolicy(
    const std::shared_ptr<const FilterPolicy>& base, const Options& options,
    int level, int deepest_level) {
  if (base == nullptr) return nullptr;
  if (options.filter_bits_per_key_per_level.empty() &&
      !options.optimize_filters_for_memory_budget) {
    return base;
  }
  const double bits = OutputFilterBitsPerKey(options, level, deepest_level);
  if (!(bits > 0)) return nullptr;
  if (bits == base->BitsPerKey()) return base;
  auto policy = FilterPolicyFromName(base->Name(), bits);
  // Open refuses a policy it cannot resize; keep the base's size otherwise.
  return policy.ok() ? *policy : base;
}

absl::Status ValidateFilterBudgetOptions(const Options& o) {
  const auto& per_level = o.filter_bits_per_key_per_level;
  for (size_t i = 0; i < per_level.size(); i++) {
    if (!(per_level[i] >= 0 && per_level[i] <= kMaxBitsPerKey)) {
      return BadOption(absl::StrFormat(
          "filter_bits_per_key_per_level[%d] = %g (must be in [0, 100]; 0 "
          "writes that level without a filter)",
          i, per_level[i]));
    }
  }
  if (per_level.empty() && !o.optimize_filters_for_memory_budget) {
    return absl::OkStatus();
  }
  if (!per_level.empty() && o.optimize_filters_for_memory_budget) {
    return BadOption(
        "filter_bits_per_key_per_level set with "
        "optimize_filters_for_memory_budget = true (choose one)");
  }
  const char* mode = per_level.empty() ? "optimize_filters_for_memory_budget"
                                       : "filter_bits_per_key_per_level";
  if (o.filter_policy != nullptr &&
      !FilterPolicyFromName(o.filter_policy->Name(), 10).ok()) {
    return BadOption(absl::StrFormat(
        "%s with filter_policy \"%s\" (per-level sizes need one of siftdb's "
        "policies: siftdb.BlockedBloom, siftdb.ClassicBloom, siftdb.Ribbon)",
        mode, o.filter_policy->Name()));
  }
  if (o.remote_filter.mode == RemoteFilterOptions::Mode::kOff) {
    return absl::OkStatus();
  }
  // The mirror needs a filter in every table (as with
  // optimize_filters_for_hits): refuse any shape leaving a level without.
  if (!per_level.empty()) {
    for (size_t i = 0; i < per_level.size(); i++) {
      if (per_level[i] == 0) {
        return BadOption(absl::StrFormat(
            "filter_bits_per_key_per_level[%d] = 0 with Options.remote_filter "
            "on (the Redis mirror needs a filter in every table)",
            i));
      }
    }
    return absl::OkStatus();
  }
  if (!(BaseFilterBitsPerKey(o) > 0)) return absl::OkStatus();
  for (int bottom = 0; bottom < kNumLevels; bottom++) {
    for (int level = 0; level <= bottom; level++) {
      if (!(OutputFilterBitsPerKey(o, level, bottom) > 0)) {
        return BadOption(absl::StrFormat(
            "optimize_filters_for_memory_budget = true with "
            "Options.remote_filter on and %g bits/key: level %d of a %d-level "
            "tree would get no filter (the Redis mirror needs one in every "
            "table; raise the bits/key or turn one off)",
            BaseFilterBitsPerKey(o), level, bottom + 1));
      }
    }
  }
  return absl::OkStatus();
}

double ExpectedFilterFpRate(std::string_view policy_name, double bits_per_key) {
  if (policy_name.starts_with(kPrefixOnlyFilterTag)) {
    policy_name.remove_prefix(std::string_view(kPrefixOnlyFilterTag).size());
  }
  if (!(bits_per_key > 0)) return -1;
  if (policy_name == kBlockedBloomPolicyName ||
      policy_name == kRibbonPolicyName) {
    return BlockedFpRate(bits_per_key, BlockedOptimalK(bits_per_key));
  }
  if (policy_name == kClassicBloomPolicyName) {
    return ClassicFpRate(bits_per_key, ClassicOptimalK(bits_per_key));
  }
  return -1;
}

}  // namespace siftdb
