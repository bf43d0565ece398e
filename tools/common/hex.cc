// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/common/hex.h"

#include "absl/strings/escaping.h"
#include "absl/strings/str_format.h"
#include "util/absl_compat.h"

namespace siftdb::tools {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string ToHex(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes.size() * 2);
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 0xf]);
  }
  return out;
}

absl::StatusOr<std::string> FromHex(std::string_view hex) {
  if (hex.size() >= 2 && hex[0] == '0' && (hex[1] == 'x' || hex[1] == 'X')) {
    hex.remove_prefix(2);
  }
  if (hex.size() % 2 != 0) {
    return absl::InvalidArgumentError(
        absl::StrFormat("hex string '%s' has an odd number of digits", hex));
  }
  std::string out;
  out.reserve(hex.size() / 2);
  for (size_t i = 0; i < hex.size(); i += 2) {
    const int hi = HexDigit(hex[i]);
    const int lo = HexDigit(hex[i + 1]);
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("hex string '%s' has a non-hex digit at position %d",
                          hex, hi < 0 ? i : i + 1));
    }
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return out;
}

std::string Escape(std::string_view bytes) {
  return absl::CHexEscape(AsAbsl(bytes));
}

std::string FormatBytes(std::string_view bytes, bool hex) {
  return hex ? ToHex(bytes) : Escape(bytes);
}

std::string HexDump(std::string_view bytes, uint64_t base_offset) {
  std::string out;
  for (size_t line = 0; line < bytes.size(); line += 16) {
    const std::string_view chunk = bytes.substr(line, 16);
    absl::StrAppendFormat(&out, "%08x ", base_offset + line);
    for (size_t i = 0; i < 16; i++) {
      if (i == 8) out.push_back(' ');
      if (i < chunk.size()) {
        absl::StrAppendFormat(&out, " %02x",
                              static_cast<unsigned char>(chunk[i]));
      } else {
        out.append("   ");
      }
    }
    out.append("  |");
    for (unsigned char c : chunk) {
      out.push_back(c >= 0x20 && c < 0x7f ? static_cast<char>(c) : '.');
    }
    out.append("|\n");
  }
  return out;
}

}  // namespace siftdb::tools
