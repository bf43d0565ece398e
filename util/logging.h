// Copyright (c) siftdb authors.
//
// Small text helpers: formatted logging to a Logger, number formatting and
// parsing, and escaping of binary keys for messages.
//
// Thread safety: all functions are thread-safe (Log is as safe as the
// Logger, and every siftdb Logger is thread-safe).

#ifndef SIFTDB_UTIL_LOGGING_H_
#define SIFTDB_UTIL_LOGGING_H_

#include <cstdint>
#include <string>
#include <string_view>

#include "absl/strings/str_format.h"
#include "siftdb/env.h"

namespace siftdb {

// Formats with absl::StrFormat and writes one line to logger; a null
// logger is ignored. Example: Log(info_log, "flushed %d keys", n);
template <typename... Args>
void Log(Logger* logger, const absl::FormatSpec<Args...>& format,
         const Args&... args) {
  if (logger == nullptr) return;
  logger->Log(absl::StrFormat(format, args...));
}

// Decimal text of num.
std::string NumberToString(uint64_t num);
void AppendNumberTo(std::string* dst, uint64_t num);

// value with every byte that is not printable ASCII written as \xNN, so a
// binary key can go in a message or log line.
std::string EscapeString(std::string_view value);
void AppendEscapedStringTo(std::string* dst, std::string_view value);

// Parses a run of decimal digits at the front of *in into *value and
// removes them from *in. False (with *in unchanged) when *in does not
// start with a digit or the number does not fit in 64 bits.
bool ConsumeDecimalNumber(std::string_view* in, uint64_t* value);

}  // namespace siftdb

#endif  // SIFTDB_UTIL_LOGGING_H_
