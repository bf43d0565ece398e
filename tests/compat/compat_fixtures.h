// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The text files of the compatibility fixtures (tests/testdata/compat/vN/),
// shared by their writer (tests/compat/make_fixtures) and the suites that
// check later builds against them (tests/compat, tests/mirror_compat).
// These encodings are frozen with the fixtures: never change how an existing
// file is parsed; a new layout belongs to a new fixture version.
//
// Blobs (keys, values, Redis keys, fields) are written as "x" followed by
// lowercase hex ("x" alone is the empty blob), so every line splits on
// single spaces. Lines starting with '#' and empty lines are comments.
//
//   answers.txt   one line per probed key, sorted by key (bytewise):
//                   x<key> x<value>|absent maybe|no
//                 the value DB::Get returned (absent: NotFound) and the
//                 answer siftdb::RemoteFilter gave, both while the writer
//                 was open with its mirror settled.
//   mirror.txt    one line per Redis key of the mirror, sorted by key:
//                   string <pttl> x<key> x<value>
//                   hash <pttl> x<key> <n> x<field1> x<value1> ... (n pairs)
//                 pttl: PTTL at dump time in ms, -1 for no expiry.
//
// Thread safety: plain functions over caller-owned values.

#ifndef SIFTDB_TESTS_COMPAT_COMPAT_FIXTURES_H_
#define SIFTDB_TESTS_COMPAT_COMPAT_FIXTURES_H_

#include <charconv>
#include <cstdint>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"

namespace siftdb::compat {

// The fixture databases of format v1: directory name under v1/, and the
// FilterPolicy their tables use (the mirror name is MirrorName(variant)).
inline constexpr const char* kV1Variants[] = {"blocked", "classic"};
inline std::string MirrorName(std::string_view variant) {
  return "compat_v1_" + std::string(variant);
}

inline std::string Blob(std::string_view bytes) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out = "x";
  out.reserve(1 + 2 * bytes.size());
  for (unsigned char c : bytes) {
    out.push_back(kDigits[c >> 4]);
    out.push_back(kDigits[c & 15]);
  }
  return out;
}

inline bool ParseBlob(std::string_view text, std::string* out) {
  if (text.empty() || text[0] != 'x' || text.size() % 2 != 1) return false;
  auto nibble = [](char c) -> int {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  out->clear();
  for (size_t i = 1; i < text.size(); i += 2) {
    const int hi = nibble(text[i]), lo = nibble(text[i + 1]);
    if (hi < 0 || lo < 0) return false;
    out->push_back(static_cast<char>(hi * 16 + lo));
  }
  return true;
}

// `text` split at every single space (empty pieces kept).
inline std::vector<std::string_view> SplitSpaces(std::string_view text) {
  std::vector<std::string_view> out;
  size_t start = 0;
  for (size_t i = 0; i <= text.size(); i++) {
    if (i == text.size() || text[i] == ' ') {
      out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  }
  return out;
}

template <typename Int>
bool ParseInt(std::string_view s, Int* v) {
  const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), *v);
  return !s.empty() && ec == std::errc() && end == s.data() + s.size();
}

struct Answer {
  std::string key;
  std::optional<std::string> value;  // nullopt: absent
  bool remote_maybe = true;
};

inline std::string FormatAnswer(const Answer& a) {
  return absl::StrCat(Blob(a.key), " ", a.value ? Blob(*a.value) : "absent",
                      " ", a.remote_maybe ? "maybe" : "no");
}

struct DumpedKey {
  bool is_hash = false;
  int64_t pttl = -1;
  std::string key;
  std::string value;                                        // strings
  std::vector<std::pair<std::string, std::string>> fields;  // hashes
};

inline std::string FormatDumpedKey(const DumpedKey& d) {
  std::string line =
      absl::StrCat(d.is_hash ? "hash " : "string ", d.pttl, " ", Blob(d.key));
  if (!d.is_hash) return absl::StrCat(line, " ", Blob(d.value));
  absl::StrAppend(&line, " ", d.fields.size());
  for (const auto& [f, v] : d.fields) {
    absl::StrAppend(&line, " ", Blob(f), " ", Blob(v));
  }
  return line;
}

// The non-comment lines of a file.
inline absl::StatusOr<std::vector<std::string>> ReadLines(
    const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open ", path));
  std::vector<std::string> lines;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    lines.push_back(line);
  }
  return lines;
}

inline absl::StatusOr<std::vector<Answer>> ReadAnswers(
    const std::string& path) {
  absl::StatusOr<std::vector<std::string>> lines = ReadLines(path);
  if (!lines.ok()) return lines.status();
  std::vector<Answer> out;
  for (const std::string& line : *lines) {
    std::vector<std::string_view> f = SplitSpaces(line);
    Answer a;
    bool ok = f.size() == 3 && ParseBlob(f[0], &a.key) &&
              (f[2] == "maybe" || f[2] == "no");
    if (ok && f[1] != "absent") {
      a.value.emplace();
      ok = ParseBlob(f[1], &*a.value);
    }
    if (!ok) {
      return absl::DataLossError(absl::StrCat(path, ": bad line: ", line));
    }
    a.remote_maybe = f[2] == "maybe";
    out.push_back(std::move(a));
  }
  return out;
}

inline absl::StatusOr<std::vector<DumpedKey>> ReadDump(
    const std::string& path) {
  absl::StatusOr<std::vector<std::string>> lines = ReadLines(path);
  if (!lines.ok()) return lines.status();
  std::vector<DumpedKey> out;
  for (const std::string& line : *lines) {
    std::vector<std::string_view> f = SplitSpaces(line);
    DumpedKey d;
    bool ok = f.size() >= 4 && (f[0] == "string" || f[0] == "hash") &&
              ParseInt(f[1], &d.pttl) && ParseBlob(f[2], &d.key);
    d.is_hash = ok && f[0] == "hash";
    if (ok && !d.is_hash) ok = f.size() == 4 && ParseBlob(f[3], &d.value);
    size_t n = 0;
    if (ok && d.is_hash) {
      ok = ParseInt(f[3], &n) && f.size() == 4 + 2 * n;
      for (size_t i = 0; ok && i < n; i++) {
        std::string field, value;
        ok = ParseBlob(f[4 + 2 * i], &field) && ParseBlob(f[5 + 2 * i], &value);
        d.fields.emplace_back(std::move(field), std::move(value));
      }
    }
    if (!ok) {
      return absl::DataLossError(absl::StrCat(path, ": bad line: ", line));
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace siftdb::compat

#endif  // SIFTDB_TESTS_COMPAT_COMPAT_FIXTURES_H_
