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
//   prefix_answers.txt  (v2 on) one line per probed prefix, sorted:
//                   x<prefix> maybe|no
//                 RemoteFilter::MayContainPrefixMany's answer, with the
//                 reader's prefix_extractor set to the variant's, while
//                 the writer was open with its mirror settled.
//
// Thread safety: plain functions over caller-owned values.

#ifndef SIFTDB_TESTS_COMPAT_COMPAT_FIXTURES_H_
#define SIFTDB_TESTS_COMPAT_COMPAT_FIXTURES_H_

#include <algorithm>
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
#include "absl/strings/str_format.h"
#include "siftdb/filter_policy.h"
#include "siftdb/options.h"
#include "siftdb/slice_transform.h"

namespace siftdb::compat {

// The fixture databases of each version: directory names under vN/ (the
// mirror name is MirrorName(variant, N)). v1: the blocked and the classic
// Bloom policy. v2 (2026-12): zstd tables with dictionaries (table format
// version 2) and LZ4 tables, partitioned Bloom filters holding whole keys
// and the prefixes of a capped extractor ("zstd_dict"); prefix-only Ribbon
// filters, LZ4 and zstd tables without dictionaries ("prefix_only").
inline constexpr const char* kV1Variants[] = {"blocked", "classic"};
inline constexpr const char* kV2Variants[] = {"zstd_dict", "prefix_only"};
inline std::string MirrorName(std::string_view variant, int version = 1) {
  return absl::StrCat("compat_v", version, "_", std::string(variant));
}

// The filter options a variant's tables were written with; a reader given
// them uses the tables' filters (and their prefix entries).
inline void SetFilterOptions(std::string_view variant, Options* o) {
  o->filter_bits_per_key = 10;
  if (variant == "classic") {
    o->filter_policy = NewClassicBloomFilterPolicy(10);
  } else if (variant == "prefix_only") {
    o->filter_policy = NewRibbonFilterPolicy(10);
    o->prefix_extractor = NewFixedPrefixTransform(7);
    o->whole_key_filtering = false;
  } else {
    o->filter_policy = NewBloomFilterPolicy(10);
  }
  if (variant == "zstd_dict") {
    o->prefix_extractor = NewCappedPrefixTransform(8);
    o->partition_filters = true;
    o->filter_partition_size = 128;
  }
}

// The prefixes probed for a variant with extractor `x`, sorted and
// distinct: the prefix of every one of `keys` in x's domain, and 400 that
// no key has (x's prefix of "kex<i>00-long" and of "key9<i>00-long",
// i = 000..199; distinct for prefix lengths of 6 to 10).
inline std::vector<std::string> ProbedPrefixes(
    const SliceTransform& x, const std::vector<std::string>& keys) {
  std::vector<std::string> out;
  for (const std::string& k : keys) {
    if (x.InDomain(k)) out.emplace_back(x.Transform(k));
  }
  for (int i = 0; i < 200; i++) {
    for (const char* stem : {"kex", "key9"}) {
      const std::string long_key = absl::StrFormat("%s%03d00-long", stem, i);
      if (x.InDomain(long_key)) out.emplace_back(x.Transform(long_key));
    }
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

// The compressions of a variant's two writing phases (the first one's
// tables end up on levels 0-2, the second's on level 0 and 1).
struct PhaseCompression {
  CompressionType type;
  size_t max_dict_bytes;
};
inline PhaseCompression Phase1Compression(std::string_view variant) {
  if (variant == "zstd_dict") return {kZstdCompression, 1024};
  if (variant == "prefix_only") return {kLZ4Compression, 0};
  return {kSnappyCompression, 0};
}
inline PhaseCompression Phase2Compression(std::string_view variant) {
  if (variant == "zstd_dict") return {kLZ4Compression, 0};
  if (variant == "prefix_only") return {kZstdCompression, 0};
  return {kNoCompression, 0};
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

struct PrefixAnswer {
  std::string prefix;
  bool remote_maybe = true;
};

inline std::string FormatPrefixAnswer(const PrefixAnswer& a) {
  return absl::StrCat(Blob(a.prefix), " ", a.remote_maybe ? "maybe" : "no");
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

inline absl::StatusOr<std::vector<PrefixAnswer>> ReadPrefixAnswers(
    const std::string& path) {
  absl::StatusOr<std::vector<std::string>> lines = ReadLines(path);
  if (!lines.ok()) return lines.status();
  std::vector<PrefixAnswer> out;
  for (const std::string& line : *lines) {
    std::vector<std::string_view> f = SplitSpaces(line);
    PrefixAnswer a;
    if (f.size() != 2 || !ParseBlob(f[0], &a.prefix) ||
        (f[1] != "maybe" && f[1] != "no")) {
      return absl::DataLossError(absl::StrCat(path, ": bad line: ", line));
    }
    a.remote_maybe = f[1] == "maybe";
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
