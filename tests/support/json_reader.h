// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A small JSON reader for test vectors (no JSON library is among siftdb's
// dependencies). Parses RFC 8259 text into a JsonValue tree: objects keep
// their member order, strings are decoded to UTF-8 (\u0000 included, so
// binary-looking strings survive), numbers keep both their double value and
// their source text (for exact 64-bit integers). Test-only: recursion depth
// is bounded (kMaxDepth) and errors name the byte offset.
//
// Thread safety: ParseJson is reentrant; a JsonValue is a plain value.

#ifndef SIFTDB_TESTS_SUPPORT_JSON_READER_H_
#define SIFTDB_TESTS_SUPPORT_JSON_READER_H_

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"

namespace siftdb::test {

class JsonValue {
 public:
  enum class Type { kNull, kBool, kNumber, kString, kArray, kObject };

  Type type() const { return type_; }
  bool is_null() const { return type_ == Type::kNull; }
  bool is_string() const { return type_ == Type::kString; }
  bool is_array() const { return type_ == Type::kArray; }
  bool is_object() const { return type_ == Type::kObject; }
  bool is_number() const { return type_ == Type::kNumber; }

  bool boolean() const { return bool_; }
  double number() const { return number_; }
  // The number's source text parsed as an integer (exact up to 2^63).
  int64_t integer() const;
  const std::string& str() const { return str_; }
  const std::vector<JsonValue>& array() const { return array_; }
  const std::vector<std::pair<std::string, JsonValue>>& members() const {
    return members_;
  }

  // Member lookup; a missing key (or a non-object) gives a null value.
  const JsonValue& operator[](std::string_view key) const;
  bool Has(std::string_view key) const;
  // Element lookup; out of range gives a null value.
  const JsonValue& operator[](size_t i) const;
  size_t size() const;

 private:
  friend class JsonParser;
  Type type_ = Type::kNull;
  bool bool_ = false;
  double number_ = 0;
  std::string str_;  // string value, or a number's source text
  std::vector<JsonValue> array_;
  std::vector<std::pair<std::string, JsonValue>> members_;
};

absl::StatusOr<JsonValue> ParseJson(std::string_view text);
absl::StatusOr<JsonValue> ReadJsonFile(const std::string& path);

}  // namespace siftdb::test

#endif  // SIFTDB_TESTS_SUPPORT_JSON_READER_H_
