// Copyright (c) siftdb authors.

#include "util/logging.h"

#include <limits>

namespace siftdb {

std::string NumberToString(uint64_t num) {
  std::string r;
  AppendNumberTo(&r, num);
  return r;
}

void AppendNumberTo(std::string* dst, uint64_t num) {
  absl::StrAppendFormat(dst, "%d", num);
}

std::string EscapeString(std::string_view value) {
  std::string r;
  AppendEscapedStringTo(&r, value);
  return r;
}

void AppendEscapedStringTo(std::string* dst, std::string_view value) {
  for (char c : value) {
    if (c >= ' ' && c <= '~') {
      dst->push_back(c);
    } else {
      absl::StrAppendFormat(dst, "\\x%02x",
                            static_cast<unsigned>(static_cast<uint8_t>(c)));
    }
  }
}

bool ConsumeDecimalNumber(std::string_view* in, uint64_t* value) {
  constexpr uint64_t kMax = std::numeric_limits<uint64_t>::max();
  uint64_t v = 0;
  size_t digits = 0;
  while (digits < in->size()) {
    const char c = (*in)[digits];
    if (c < '0' || c > '9') break;
    const uint64_t d = static_cast<uint64_t>(c - '0');
    if (v > (kMax - d) / 10) return false;  // v * 10 + d would overflow
    v = v * 10 + d;
    digits++;
  }
  if (digits == 0) return false;
  *value = v;
  in->remove_prefix(digits);
  return true;
}

}  // namespace siftdb
