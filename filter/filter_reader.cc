// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "filter/filter_reader.h"

#include <cstring>

#include "filter/filter_format.h"

namespace siftdb {

FilterReader::FilterReader(const FilterPolicy* policy, std::string_view filter)
    : policy_(policy), filter_(filter) {
  if (policy == nullptr) return;
  // The "siftdb." names are reserved for filter_policy.cc's policies, whose
  // HashKey is FilterKeyHash and whose HashMayMatch is exactly these views.
  if (std::strcmp(policy->Name(), kBlockedBloomPolicyName) == 0) {
    blocked_ = ParsedBlockedBloom(filter);
    mode_ = blocked_.valid() ? Mode::kBlocked : Mode::kAlwaysMayMatch;
  } else if (std::strcmp(policy->Name(), kClassicBloomPolicyName) == 0) {
    classic_ = ParsedClassicBloom(filter);
    mode_ = classic_.valid() ? Mode::kClassic : Mode::kAlwaysMayMatch;
  } else if (std::strcmp(policy->Name(), kRibbonPolicyName) == 0) {
    ribbon_ = ParsedRibbon(filter);
    mode_ = ribbon_.valid() ? Mode::kRibbon : Mode::kAlwaysMayMatch;
  } else {
    mode_ = Mode::kPolicy;
  }
}

}  // namespace siftdb
