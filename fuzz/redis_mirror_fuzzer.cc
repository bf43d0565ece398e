// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Fuzz target: what the Redis mirror's reader (siftdb/remote_filter.h,
// redis/mirror/remote_filter.cc) parses from Redis, through the decoders of
// redis/mirror/redis_mirror_format.h: the manifest hash (DecodeManifest over
// HGETALL's field/value pairs, with DecodeImmutableValue /
// DecodeLiveValue for its entries and HexDecode for key ranges) and
// fetched filter bytes (DescribeFilterBytes, the trailer and bit-array
// parse the reader's cache and live probes use).
//
// Input: the manifest as text, one "field<TAB>value" pair per line (a line
// without a tab is a field with an empty value). Every value is also fed
// to the value decoders and, as bytes, to the filter parsers; so is the
// whole input.
//
// Checked besides "no crash, no out-of-bounds read":
// - an empty hash is NotFound, anything else refused is DataLoss;
// - a decoded manifest re-encodes (EncodeManifest) to pairs that decode
//   again, and a second round gives the same set of pairs (a fixed point);
// - decoded entries and hex survive encode/decode unchanged;
// - a filter that describes itself as valid has 1..kMaxProbes probes and
//   no more bits than its bytes hold;
// - the reader's plan for probing a decoded manifest's live filters
//   (PlanLiveProbeCost) stays within the caps of RemoteFilterReaderOptions
//   for batches of 1 to 50,000 keys: whole fetches within
//   max_fetch_bytes_per_batch, and bit reads within max_probe_ops_per_batch
//   unless the plan says it is over that cap (then the reader answers
//   "maybe" without probing).

#include <algorithm>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "filter/blocked_bloom.h"
#include "filter/classic_bloom.h"
#include "filter/filter_format.h"
#include "filter/ribbon_reader.h"
#include "fuzz/fuzz_util.h"
#include "redis/mirror/redis_mirror_format.h"
#include "redis/mirror/remote_filter_plan.h"

namespace siftdb::fuzz {
namespace {

using Fields = std::vector<std::pair<std::string, std::string>>;

Fields ParseLines(std::string_view text) {
  Fields fields;
  while (!text.empty()) {
    const size_t eol = text.find('\n');
    const std::string_view line = text.substr(0, eol);
    const size_t tab = line.find('\t');
    if (tab == std::string_view::npos) {
      fields.emplace_back(std::string(line), "");
    } else {
      fields.emplace_back(std::string(line.substr(0, tab)),
                          std::string(line.substr(tab + 1)));
    }
    if (eol == std::string_view::npos) break;
    text.remove_prefix(eol + 1);
  }
  return fields;
}

void CheckValue(std::string_view value) {
  MirrorImmutableEntry imm;
  if (DecodeImmutableValue(value, &imm).ok()) {
    MirrorImmutableEntry again;
    FUZZ_CHECK(DecodeImmutableValue(EncodeImmutableValue(imm), &again).ok());
    if (imm.policy != "?" && again.policy == "?") {
      again.policy = imm.policy;  // a policy that is not a token reads as "?"
    }
    FUZZ_CHECK(again == imm);
  }
  MirrorLiveEntry live;
  if (DecodeLiveValue(value, &live).ok()) {
    FUZZ_CHECK(!live.subfilters.empty());
    MirrorLiveEntry again;
    FUZZ_CHECK(DecodeLiveValue(EncodeLiveValue(live), &again).ok());
    FUZZ_CHECK(again == live);
  }
  std::string bytes;
  if (HexDecode(value, &bytes)) {
    FUZZ_CHECK(bytes.size() * 2 == value.size());
    std::string again;
    FUZZ_CHECK(HexDecode(HexEncode(bytes), &again));
    FUZZ_CHECK(again == bytes);
  }
}

void CheckFilterBytes(std::string_view bytes) {
  for (uint64_t keys : {uint64_t{0}, uint64_t{1}, uint64_t{1000}}) {
    const FilterBytesInfo info = DescribeFilterBytes(bytes, keys);
    if (!info.valid) continue;
    FUZZ_CHECK(info.k >= 1 &&
               info.k <=
                   (info.kind == 'R' || info.kind == 'P'  // 'P': its first
                        ? kRibbonMaxColumns - 1           // partition's k
                        : kMaxProbes));
    FUZZ_CHECK(info.bitmap_bits <= uint64_t{8} * bytes.size());
    FUZZ_CHECK(info.kind == 'B' || info.kind == 'C' || info.kind == 'R' ||
               info.kind == 'P');
    FUZZ_CHECK(info.error_rate >= 0 && info.error_rate <= 1);
  }
  // The reader's probes: any answer, no crash.
  const ParsedBlockedBloom blocked(bytes);
  const ParsedClassicBloom classic(bytes);
  const ParsedRibbon ribbon(bytes);
  for (uint64_t h : {uint64_t{0}, ~uint64_t{0}, uint64_t{0x9E3779B97F4A7C15}}) {
    (void)blocked.HashMayMatch(h);
    (void)classic.HashMayMatch(h);
    (void)ribbon.HashMayMatch(h);
  }
}

void CheckPlanWithinCaps(const MirrorManifest& m) {
  RemoteFilterReaderOptions small;
  small.max_fetch_bytes_per_batch = 1 << 16;
  small.max_probe_ops_per_batch = 1 << 12;
  for (const RemoteFilterReaderOptions& o :
       {RemoteFilterReaderOptions(), small}) {
    if (CountLiveSubFilters(m) > o.max_live_subfilters) continue;  // refused
    for (size_t keys : {size_t{1}, size_t{1000}, o.max_batch_keys}) {
      const LiveProbeCost cost = PlanLiveProbeCost(m, keys, 0, o);
      FUZZ_CHECK(cost.whole.size() == CountLiveSubFilters(m));
      FUZZ_CHECK(cost.fetch_bytes <= o.max_fetch_bytes_per_batch);
      FUZZ_CHECK(cost.over_op_cap ||
                 cost.bit_reads <= o.max_probe_ops_per_batch);
    }
  }
}

}  // namespace
}  // namespace siftdb::fuzz

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace siftdb;
  using namespace siftdb::fuzz;
  const std::string_view input = AsView(data, size);
  const Fields fields = ParseLines(input);
  auto m = DecodeManifest(fields);
  if (!m.ok()) {
    FUZZ_CHECK(fields.empty() ? absl::IsNotFound(m.status())
                              : absl::IsDataLoss(m.status()));
  } else {
    // Compared as sets: two fields may name one id ("mem:16", "mem:016"),
    // and such entries keep no defined order (docs/fuzzing.md, findings).
    Fields first = EncodeManifest(*m);
    auto again = DecodeManifest(first);
    FUZZ_CHECK(again.ok());
    Fields second = EncodeManifest(*again);
    std::sort(first.begin(), first.end());
    std::sort(second.begin(), second.end());
    FUZZ_CHECK(second == first);
    (void)m->FilterKeys(MirrorKeys("fuzz"));
    CheckPlanWithinCaps(*m);
  }
  for (const auto& [field, value] : fields) {
    CheckValue(value);
    CheckFilterBytes(value);
  }
  CheckFilterBytes(input);
  return 0;
}
