// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tests/support/json_reader.h"

#include <cctype>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "absl/status/status.h"
#include "absl/strings/str_format.h"

namespace siftdb::test {

namespace {
constexpr int kMaxDepth = 64;
const JsonValue& NullValue() {
  static const JsonValue* const kNull = new JsonValue();
  return *kNull;
}
}  // namespace

int64_t JsonValue::integer() const {
  if (type_ != Type::kNumber) return 0;
  return std::strtoll(str_.c_str(), nullptr, 10);
}

const JsonValue& JsonValue::operator[](std::string_view key) const {
  for (const auto& [k, v] : members_) {
    if (k == key) return v;
  }
  return NullValue();
}

bool JsonValue::Has(std::string_view key) const {
  for (const auto& member : members_) {
    if (member.first == key) return true;
  }
  return false;
}

const JsonValue& JsonValue::operator[](size_t i) const {
  return i < array_.size() ? array_[i] : NullValue();
}

size_t JsonValue::size() const {
  return type_ == Type::kArray ? array_.size() : members_.size();
}

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  absl::StatusOr<JsonValue> ParseDocument() {
    JsonValue v;
    absl::Status s = ParseValue(&v, 0);
    if (!s.ok()) return s;
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing characters");
    return v;
  }

 private:
  absl::Status Error(const std::string& what) const {
    return absl::InvalidArgumentError(
        absl::StrFormat("json: %s at offset %d", what, pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' ||
            text_[pos_] == '\r')) {
      pos_++;
    }
  }

  bool Consume(std::string_view word) {
    if (text_.substr(pos_, word.size()) == word) {
      pos_ += word.size();
      return true;
    }
    return false;
  }

  absl::Status ParseValue(JsonValue* v, int depth) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    char c = text_[pos_];
    if (c == '{') return ParseObject(v, depth);
    if (c == '[') return ParseArray(v, depth);
    if (c == '"') {
      v->type_ = JsonValue::Type::kString;
      return ParseString(&v->str_);
    }
    if (Consume("true")) {
      v->type_ = JsonValue::Type::kBool;
      v->bool_ = true;
      return absl::OkStatus();
    }
    if (Consume("false")) {
      v->type_ = JsonValue::Type::kBool;
      return absl::OkStatus();
    }
    if (Consume("null")) return absl::OkStatus();
    return ParseNumber(v);
  }

  absl::Status ParseObject(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kObject;
    pos_++;  // '{'
    SkipSpace();
    if (Consume("}")) return absl::OkStatus();
    while (true) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') {
        return Error("expected member name");
      }
      std::string key;
      absl::Status s = ParseString(&key);
      if (!s.ok()) return s;
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      JsonValue member;
      s = ParseValue(&member, depth + 1);
      if (!s.ok()) return s;
      v->members_.emplace_back(std::move(key), std::move(member));
      SkipSpace();
      if (Consume(",")) continue;
      if (Consume("}")) return absl::OkStatus();
      return Error("expected ',' or '}'");
    }
  }

  absl::Status ParseArray(JsonValue* v, int depth) {
    v->type_ = JsonValue::Type::kArray;
    pos_++;  // '['
    SkipSpace();
    if (Consume("]")) return absl::OkStatus();
    while (true) {
      JsonValue element;
      absl::Status s = ParseValue(&element, depth + 1);
      if (!s.ok()) return s;
      v->array_.push_back(std::move(element));
      SkipSpace();
      if (Consume(",")) continue;
      if (Consume("]")) return absl::OkStatus();
      return Error("expected ',' or ']'");
    }
  }

  bool ParseHex4(uint32_t* out) {
    if (pos_ + 4 > text_.size()) return false;
    uint32_t v = 0;
    for (int i = 0; i < 4; i++) {
      char c = text_[pos_ + i];
      v <<= 4;
      if (c >= '0' && c <= '9') {
        v |= c - '0';
      } else if (c >= 'a' && c <= 'f') {
        v |= c - 'a' + 10;
      } else if (c >= 'A' && c <= 'F') {
        v |= c - 'A' + 10;
      } else {
        return false;
      }
    }
    pos_ += 4;
    *out = v;
    return true;
  }

  static void AppendUtf8(std::string* out, uint32_t cp) {
    if (cp < 0x80) {
      out->push_back(static_cast<char>(cp));
    } else if (cp < 0x800) {
      out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else if (cp < 0x10000) {
      out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    } else {
      out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
      out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
    }
  }

  absl::Status ParseString(std::string* out) {
    pos_++;  // opening quote
    while (true) {
      if (pos_ >= text_.size()) return Error("unterminated string");
      char c = text_[pos_++];
      if (c == '"') return absl::OkStatus();
      if (static_cast<unsigned char>(c) < 0x20) {
        return Error("control character in string");
      }
      if (c != '\\') {
        out->push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return Error("unterminated escape");
      char e = text_[pos_++];
      switch (e) {
        case '"':
        case '\\':
        case '/':
          out->push_back(e);
          break;
        case 'b':
          out->push_back('\b');
          break;
        case 'f':
          out->push_back('\f');
          break;
        case 'n':
          out->push_back('\n');
          break;
        case 'r':
          out->push_back('\r');
          break;
        case 't':
          out->push_back('\t');
          break;
        case 'u': {
          uint32_t cp;
          if (!ParseHex4(&cp)) return Error("bad \\u escape");
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t low;
            if (!Consume("\\u") || !ParseHex4(&low) || low < 0xDC00 ||
                low > 0xDFFF) {
              return Error("unpaired surrogate");
            }
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(out, cp);
          break;
        }
        default:
          return Error("bad escape");
      }
    }
  }

  absl::Status ParseNumber(JsonValue* v) {
    size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') pos_++;
    while (pos_ < text_.size() &&
           (isdigit(static_cast<unsigned char>(text_[pos_])) ||
            text_[pos_] == '.' || text_[pos_] == 'e' || text_[pos_] == 'E' ||
            text_[pos_] == '+' || text_[pos_] == '-')) {
      pos_++;
    }
    if (pos_ == start) return Error("unexpected character");
    v->type_ = JsonValue::Type::kNumber;
    v->str_ = std::string(text_.substr(start, pos_ - start));
    char* end = nullptr;
    v->number_ = std::strtod(v->str_.c_str(), &end);
    if (end != v->str_.c_str() + v->str_.size()) return Error("bad number");
    return absl::OkStatus();
  }

  std::string_view text_;
  size_t pos_ = 0;
};

absl::StatusOr<JsonValue> ParseJson(std::string_view text) {
  return JsonParser(text).ParseDocument();
}

absl::StatusOr<JsonValue> ReadJsonFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError("json: cannot open " + path);
  std::stringstream buffer;
  buffer << in.rdbuf();
  absl::StatusOr<JsonValue> v = ParseJson(buffer.str());
  if (!v.ok()) {
    return absl::InvalidArgumentError(
        absl::StrFormat("%s: %s", path, v.status().message()));
  }
  return v;
}

}  // namespace siftdb::test
