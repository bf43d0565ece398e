// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: the filter readers (filter/filter_reader.h and the policies'
// KeyMayMatch) for siftdb's blocked and classic Bloom and Ribbon encodings.
//
// Input: byte 0 picks the mode.
// - Even: the rest is serialized filter bytes (any alignment). All three
//   policies read it; FilterReader must agree with the policy's
//   KeyMayMatch and HashMayMatch for every probe key (the contract in
//   filter_reader.h) and nothing may crash whatever the trailer says.
// - Odd: byte 1 picks the policy (byte 1 mod 3) and bits per key (byte 1
//   div 3; including 0, negative,
//   NaN, huge), the rest is keys (each: a length byte, then that many
//   bytes). A filter built from those keys must answer "may match" for
//   every one of them, through the policy and through FilterReader.

#include <cmath>
#include <cstdint>
#include <limits>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "filter/filter_reader.h"
#include "fuzz/fuzz_util.h"
#include "siftdb/filter_policy.h"

namespace siftdb::fuzz {
namespace {

const FilterPolicy* Policy(int i) {
  static const auto* policies = new std::shared_ptr<const FilterPolicy>[3] {
    NewBloomFilterPolicy(10), NewClassicBloomFilterPolicy(10),
        NewRibbonFilterPolicy(10)
  };
  return policies[i].get();
}

void CheckAgree(const FilterPolicy* policy, std::string_view filter,
                std::string_view key) {
  const FilterReader reader(policy, filter);
  const bool may = reader.KeyMayMatch(key);
  FUZZ_CHECK(may == policy->KeyMayMatch(key, filter));
  FUZZ_CHECK(may == policy->HashMayMatch(policy->HashKey(key), filter));
}

void RawMode(std::string_view filter) {
  std::vector<std::string> keys = {"", "a", "key", std::string(100, 'x')};
  // Keys taken from the input reach bits a fixed set would not.
  for (size_t i = 0; i + 8 <= filter.size() && keys.size() < 40; i += 8) {
    keys.emplace_back(filter.substr(i, 8));
  }
  for (int p = 0; p < 3; ++p) {
    for (const std::string& key : keys) CheckAgree(Policy(p), filter, key);
  }
}

void KeysMode(uint8_t config, std::string_view rest) {
  static constexpr double kBitsPerKey[] = {
      10,  0,   -1,  std::numeric_limits<double>::quiet_NaN(), 0.5, 1, 3.3, 20,
      100, 150, 1e9, std::numeric_limits<double>::infinity()};
  const double bits =
      kBitsPerKey[(config / 3) % (sizeof(kBitsPerKey) / sizeof(double))];
  const int kind = config % 3;
  const std::shared_ptr<const FilterPolicy> policy =
      kind == 0   ? NewBloomFilterPolicy(bits)
      : kind == 1 ? NewClassicBloomFilterPolicy(bits)
                  : NewRibbonFilterPolicy(bits);
  std::vector<std::string> keys;
  while (!rest.empty()) {
    const size_t n =
        std::min<size_t>(static_cast<uint8_t>(rest[0]), rest.size() - 1);
    keys.emplace_back(rest.substr(1, n));
    rest.remove_prefix(1 + n);
  }
  std::unique_ptr<FilterBitsBuilder> builder = policy->NewBuilder();
  for (const std::string& key : keys) builder->AddKey(key);
  std::string filter;
  builder->Finish(&filter);
  FUZZ_CHECK(builder->NumAdded() == 0);  // Finish resets the builder

  const FilterReader reader(policy.get(), filter);
  for (const std::string& key : keys) {
    FUZZ_CHECK(policy->KeyMayMatch(key, filter));
    FUZZ_CHECK(reader.KeyMayMatch(key));
  }
}

}  // namespace
}  // namespace siftdb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace siftdb::fuzz;
  if (size == 0) return 0;
  const std::string_view rest = AsView(data + 1, size - 1);
  if ((data[0] & 1) == 0) {
    RawMode(rest);
  } else if (!rest.empty()) {
    KeysMode(static_cast<uint8_t>(rest[0]), rest.substr(1));
  }
  return 0;
}
