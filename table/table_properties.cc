// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "table/table_properties.h"

#include <algorithm>
#include <bit>
#include <cstring>

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "table/internal_key.h"
#include "util/absl_compat.h"
#include "util/coding.h"

namespace siftdb {
namespace {

namespace pn = property_names;

std::string VarintValue(uint64_t v) {
  std::string s;
  PutVarint64(&s, v);
  return s;
}

std::string DoubleValue(double d) {
  std::string s;
  PutFixed64(&s, std::bit_cast<uint64_t>(d));
  return s;
}

// The integer properties, by name.
struct IntProperty {
  const char* name;
  uint64_t TableProperties::*field;
};
constexpr IntProperty kIntProperties[] = {
    {pn::kCompressionDictSize, &TableProperties::compression_dict_size},
    {pn::kCreationTime, &TableProperties::creation_time},
    {pn::kDataBlocks, &TableProperties::num_data_blocks},
    {pn::kDataSize, &TableProperties::data_size},
    {pn::kFilterNumKeys, &TableProperties::filter_num_keys},
    {pn::kFilterSize, &TableProperties::filter_size},
    {pn::kIndexSize, &TableProperties::index_size},
    {pn::kNumDeletions, &TableProperties::num_deletions},
    {pn::kNumEntries, &TableProperties::num_entries},
    {pn::kRawKeySize, &TableProperties::raw_key_size},
    {pn::kRawValueSize, &TableProperties::raw_value_size},
};

struct StringProperty {
  const char* name;
  std::string TableProperties::*field;
};
constexpr StringProperty kStringProperties[] = {
    {pn::kComparator, &TableProperties::comparator_name},
    {pn::kCompression, &TableProperties::compression_name},
    {pn::kFilterPolicy, &TableProperties::filter_policy_name},
    {pn::kFilterPrefixExtractor, &TableProperties::filter_prefix_extractor},
    {pn::kLargestKey, &TableProperties::largest_key},
    {pn::kSmallestKey, &TableProperties::smallest_key},
};

}  // namespace

std::vector<std::pair<std::string, std::string>> EncodeTableProperties(
    const TableProperties& props) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const IntProperty& p : kIntProperties) {
    // Tables without a dictionary keep the layout they had before
    // dictionaries existed.
    if (p.field == &TableProperties::compression_dict_size &&
        props.compression_dict_size == 0) {
      continue;
    }
    out.emplace_back(p.name, VarintValue(props.*(p.field)));
  }
  for (const StringProperty& p : kStringProperties) {
    // Tables without prefixes in their filter keep the layout they had
    // before prefix extractors existed.
    if (p.field == &TableProperties::filter_prefix_extractor &&
        props.filter_prefix_extractor.empty()) {
      continue;
    }
    out.emplace_back(p.name, props.*(p.field));
  }
  out.emplace_back(pn::kFilterBitsPerKey,
                   DoubleValue(props.filter_bits_per_key));
  out.emplace_back(pn::kFormatVersion, VarintValue(props.format_version));
  if (props.has_input_files) {
    std::string v;
    PutVarint64(&v, props.input_files.size());
    for (uint64_t number : props.input_files) PutVarint64(&v, number);
    out.emplace_back(pn::kInputFiles, std::move(v));
  }
  std::sort(out.begin(), out.end());
  return out;
}

absl::Status DecodeTableProperty(std::string_view name, std::string_view value,
                                 TableProperties* props) {
  auto bad = [&]() {
    return absl::DataLossError(absl::StrFormat(
        "property %s has a malformed value (%d bytes)", name, value.size()));
  };
  for (const IntProperty& p : kIntProperties) {
    if (name != p.name) continue;
    std::string_view in = value;
    uint64_t v;
    if (!GetVarint64(&in, &v) || !in.empty()) return bad();
    props->*(p.field) = v;
    return absl::OkStatus();
  }
  for (const StringProperty& p : kStringProperties) {
    if (name != p.name) continue;
    (props->*(p.field)).assign(value.data(), value.size());
    return absl::OkStatus();
  }
  if (name == pn::kFilterBitsPerKey) {
    if (value.size() != 8) return bad();
    props->filter_bits_per_key =
        std::bit_cast<double>(DecodeFixed64(value.data()));
    return absl::OkStatus();
  }
  if (name == pn::kFormatVersion) {
    std::string_view in = value;
    uint64_t v;
    if (!GetVarint64(&in, &v) || !in.empty() || v > UINT32_MAX) return bad();
    props->format_version = static_cast<uint32_t>(v);
    return absl::OkStatus();
  }
  if (name == pn::kInputFiles) {
    std::string_view in = value;
    uint64_t count;
    // Each number takes at least one byte: a count above the bytes left
    // is damage, checked before anything is allocated.
    if (!GetVarint64(&in, &count) || count > in.size()) return bad();
    std::vector<uint64_t> numbers;
    numbers.reserve(count);
    for (uint64_t i = 0; i < count; i++) {
      uint64_t number;
      if (!GetVarint64(&in, &number)) return bad();
      numbers.push_back(number);
    }
    if (!in.empty()) return bad();
    props->has_input_files = true;
    props->input_files = std::move(numbers);
    return absl::OkStatus();
  }
  props->unknown.emplace_back(std::string(name), std::string(value));
  return absl::OkStatus();
}

std::string TablePropertiesToString(const TableProperties& props) {
  std::string out;
  auto line = [&out](std::string_view name, const std::string& value) {
    absl::StrAppendFormat(&out, "%s: %s\n", name, value);
  };
  for (const IntProperty& p : kIntProperties) {
    if (p.field == &TableProperties::compression_dict_size &&
        props.compression_dict_size == 0) {
      continue;
    }
    line(p.name, absl::StrFormat("%d", props.*(p.field)));
  }
  line(pn::kComparator, props.comparator_name);
  line(pn::kCompression, props.compression_name);
  line(pn::kFilterPolicy, props.filter_policy_name);
  if (!props.filter_prefix_extractor.empty()) {
    line(pn::kFilterPrefixExtractor, props.filter_prefix_extractor);
  }
  line(pn::kFilterBitsPerKey, absl::StrFormat("%g", props.filter_bits_per_key));
  line(pn::kFormatVersion, absl::StrFormat("%d", props.format_version));
  if (props.has_input_files) {
    line(pn::kInputFiles, props.input_files.empty()
                              ? std::string("(none)")
                              : absl::StrJoin(props.input_files, " "));
  }
  line(pn::kSmallestKey, props.smallest_key.empty()
                             ? std::string("(none)")
                             : InternalKeyDebugString(props.smallest_key,
                                                      /*hex=*/false));
  line(pn::kLargestKey, props.largest_key.empty()
                            ? std::string("(none)")
                            : InternalKeyDebugString(props.largest_key,
                                                     /*hex=*/false));
  for (const auto& [name, value] : props.unknown) {
    line(name, absl::StrFormat("(unknown, %d bytes) %s", value.size(),
                               absl::BytesToHexString(AsAbsl(value))));
  }
  return out;
}

}  // namespace siftdb
