// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/common/args.h"

#include <utility>

#include "absl/strings/numbers.h"
#include "absl/strings/str_format.h"
#include "util/absl_compat.h"

namespace siftdb::tools {

ArgParser::ArgParser(std::string program, std::string usage_line)
    : program_(std::move(program)), usage_line_(std::move(usage_line)) {}

void ArgParser::AddFlag(std::string name, std::string value_name,
                        std::string help) {
  if (value_name.empty()) value_name = "VALUE";
  order_.push_back(name);
  specs_[std::move(name)] = Spec{std::move(value_name), std::move(help)};
}

void ArgParser::AddBoolFlag(std::string name, std::string help) {
  order_.push_back(name);
  specs_[std::move(name)] = Spec{"", std::move(help)};
}

absl::Status ArgParser::Parse(int argc, const char* const* argv) {
  bool flags_done = false;
  for (int i = 1; i < argc; i++) {
    const std::string_view arg = argv[i];
    if (flags_done || arg.size() < 2 || arg.substr(0, 2) != "--") {
      positional_.emplace_back(arg);
      continue;
    }
    if (arg == "--") {
      flags_done = true;
      continue;
    }
    std::string_view body = arg.substr(2);
    std::string_view name = body;
    std::optional<std::string_view> value;
    if (const size_t eq = body.find('='); eq != std::string_view::npos) {
      name = body.substr(0, eq);
      value = body.substr(eq + 1);
    }
    auto spec = specs_.find(name);
    if (spec == specs_.end()) {
      return absl::InvalidArgumentError(
          absl::StrFormat("unknown flag --%s", name));
    }
    if (spec->second.value_name.empty()) {  // boolean
      std::string v(value.value_or("true"));
      if (v == "1") v = "true";
      if (v == "0") v = "false";
      if (v != "true" && v != "false") {
        return absl::InvalidArgumentError(
            absl::StrFormat("flag --%s is boolean; got value '%s'", name, v));
      }
      values_[std::string(name)] = v;
      continue;
    }
    if (!value.has_value()) {
      if (i + 1 >= argc) {
        return absl::InvalidArgumentError(
            absl::StrFormat("flag --%s needs a value (--%s=%s)", name, name,
                            spec->second.value_name));
      }
      value = argv[++i];
    }
    values_[std::string(name)] = std::string(*value);
  }
  return absl::OkStatus();
}

bool ArgParser::Has(std::string_view name) const {
  return values_.find(name) != values_.end();
}

std::string ArgParser::GetString(std::string_view name,
                                 std::string_view default_value) const {
  auto it = values_.find(name);
  return it == values_.end() ? std::string(default_value) : it->second;
}

bool ArgParser::GetBool(std::string_view name) const {
  auto it = values_.find(name);
  return it != values_.end() && it->second == "true";
}

absl::StatusOr<uint64_t> ArgParser::GetUint64(std::string_view name,
                                              uint64_t default_value) const {
  auto it = values_.find(name);
  if (it == values_.end()) return default_value;
  uint64_t v;
  if (!absl::SimpleAtoi(AsAbsl(it->second), &v)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "flag --%s wants an unsigned integer; got '%s'", name, it->second));
  }
  return v;
}

absl::StatusOr<double> ArgParser::GetDouble(std::string_view name,
                                            double default_value) const {
  auto it = values_.find(name);
  if (it == values_.end()) return default_value;
  double v;
  if (!absl::SimpleAtod(AsAbsl(it->second), &v)) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "flag --%s wants a number; got '%s'", name, it->second));
  }
  return v;
}

std::string ArgParser::Usage() const {
  std::string out = absl::StrFormat("usage: %s\n", usage_line_);
  for (const std::string& name : order_) {
    const Spec& spec = specs_.find(name)->second;
    const std::string left =
        spec.value_name.empty()
            ? absl::StrFormat("--%s", name)
            : absl::StrFormat("--%s=%s", name, spec.value_name);
    absl::StrAppendFormat(&out, "  %-28s %s\n", left, spec.help);
  }
  return out;
}

}  // namespace siftdb::tools
