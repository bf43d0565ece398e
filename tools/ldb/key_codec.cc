// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0

#include "tools/ldb/key_codec.h"

#include "absl/strings/str_format.h"

namespace siftdb::ldb {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

absl::StatusOr<std::string> DecodeArg(std::string_view arg, bool hex,
                                      std::string_view what) {
  if (!hex) return std::string(arg);
  std::string_view digits = arg;
  if (digits.size() >= 2 && digits[0] == '0' &&
      (digits[1] == 'x' || digits[1] == 'X')) {
    digits.remove_prefix(2);
  }
  if (digits.size() % 2 != 0) {
    return absl::InvalidArgumentError(absl::StrFormat(
        "%s '%s': hex needs an even number of digits", what, arg));
  }
  std::string out;
  out.reserve(digits.size() / 2);
  for (size_t i = 0; i < digits.size(); i += 2) {
    const int hi = HexDigit(digits[i]);
    const int lo = HexDigit(digits[i + 1]);
    if (hi < 0 || lo < 0) {
      return absl::InvalidArgumentError(
          absl::StrFormat("%s '%s': '%c' at offset %d is not a hex digit", what,
                          arg, hi < 0 ? digits[i] : digits[i + 1],
                          (arg.size() - digits.size()) + i + (hi < 0 ? 0 : 1)));
    }
    out.push_back(static_cast<char>(hi << 4 | lo));
  }
  return out;
}

std::string EncodeForOutput(std::string_view bytes, bool hex) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  if (hex) {
    out.reserve(2 + 2 * bytes.size());
    out += "0x";
    for (unsigned char c : bytes) {
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 0xf]);
    }
    return out;
  }
  out.reserve(bytes.size());
  for (unsigned char c : bytes) {
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out.push_back(static_cast<char>(c));
    } else {
      out += "\\x";
      out.push_back(kDigits[c >> 4]);
      out.push_back(kDigits[c & 0xf]);
    }
  }
  return out;
}

}  // namespace siftdb::ldb
