// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/sift_bf/redis_cli_text.h"

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace siftdb {

namespace {

bool IsBlank(char c) {
  return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\v' ||
         c == '\f';
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

absl::Status Invalid() {
  return absl::InvalidArgumentError("Invalid argument(s)");
}

std::string FormatTty(const RedisReply& r, const std::string& prefix) {
  switch (r.type()) {
    case RedisReply::Type::kError:
      return absl::StrCat("(error) ", r.str(), "\n");
    case RedisReply::Type::kStatus:
      return r.str() + "\n";
    case RedisReply::Type::kInteger:
      return absl::StrCat("(integer) ", r.integer(), "\n");
    case RedisReply::Type::kString:
      return ReprString(r.str()) + "\n";
    case RedisReply::Type::kNil:
      return "(nil)\n";
    case RedisReply::Type::kArray: {
      const auto& e = r.elements();
      if (e.empty()) return "(empty array)\n";
      int width = 0;
      for (size_t n = e.size(); n > 0; n /= 10) width++;
      // Nested entries line up under the first one's text.
      const std::string nested = prefix + std::string(width + 2, ' ');
      std::string out;
      for (size_t i = 0; i < e.size(); i++) {
        out += absl::StrFormat("%s%*d) ", i == 0 ? "" : prefix, width, i + 1);
        out += FormatTty(e[i], nested);
      }
      return out;
    }
  }
  return "\n";
}

std::string FormatRaw(const RedisReply& r) {
  switch (r.type()) {
    case RedisReply::Type::kNil:
      return "";
    case RedisReply::Type::kError:
      return r.str() + "\n";
    case RedisReply::Type::kStatus:
    case RedisReply::Type::kString:
      return r.str();
    case RedisReply::Type::kInteger:
      return absl::StrCat(r.integer());
    case RedisReply::Type::kArray: {
      std::string out;
      for (size_t i = 0; i < r.elements().size(); i++) {
        if (i > 0) out += "\n";
        out += FormatRaw(r.elements()[i]);
      }
      return out;
    }
  }
  return "";
}

}  // namespace

absl::StatusOr<std::vector<std::string>> SplitRedisCliArgs(
    std::string_view line) {
  std::vector<std::string> args;
  size_t p = 0;
  const size_t n = line.size();
  auto at = [&](size_t i) { return i < n ? line[i] : '\0'; };
  while (true) {
    while (p < n && IsBlank(line[p])) p++;
    if (p >= n) return args;
    std::string current;
    bool in_double = false;
    bool in_single = false;
    bool done = false;
    while (!done) {
      const char c = at(p);
      if (in_double) {
        if (c == '\\' && at(p + 1) == 'x' && HexValue(at(p + 2)) >= 0 &&
            HexValue(at(p + 3)) >= 0) {
          current.push_back(static_cast<char>(HexValue(at(p + 2)) * 16 +
                                              HexValue(at(p + 3))));
          p += 3;
        } else if (c == '\\' && p + 1 < n) {
          p++;
          switch (line[p]) {
            case 'n':
              current.push_back('\n');
              break;
            case 'r':
              current.push_back('\r');
              break;
            case 't':
              current.push_back('\t');
              break;
            case 'b':
              current.push_back('\b');
              break;
            case 'a':
              current.push_back('\a');
              break;
            default:
              current.push_back(line[p]);
              break;
          }
        } else if (c == '"') {
          if (p + 1 < n && !IsBlank(line[p + 1])) return Invalid();
          done = true;
        } else if (p >= n) {
          return Invalid();  // unterminated quotes
        } else {
          current.push_back(c);
        }
      } else if (in_single) {
        if (c == '\\' && at(p + 1) == '\'') {
          p++;
          current.push_back('\'');
        } else if (c == '\'') {
          if (p + 1 < n && !IsBlank(line[p + 1])) return Invalid();
          done = true;
        } else if (p >= n) {
          return Invalid();
        } else {
          current.push_back(c);
        }
      } else if (p >= n || IsBlank(c)) {
        done = true;
      } else if (c == '"') {
        in_double = true;
      } else if (c == '\'') {
        in_single = true;
      } else {
        current.push_back(c);
      }
      if (p < n) p++;
    }
    args.push_back(std::move(current));
  }
}

std::string ReprString(std::string_view s) {
  std::string out = "\"";
  for (unsigned char c : s) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '\a':
        out += "\\a";
        break;
      case '\b':
        out += "\\b";
        break;
      default:
        if (c >= 0x20 && c < 0x7f) {
          out.push_back(static_cast<char>(c));
        } else {
          out += absl::StrFormat("\\x%02x", c);
        }
    }
  }
  out += "\"";
  return out;
}

std::string FormatReplyTty(const RedisReply& reply) {
  return FormatTty(reply, "");
}

std::string FormatReplyRaw(const RedisReply& reply) {
  return FormatRaw(reply) + "\n";
}

}  // namespace siftdb
