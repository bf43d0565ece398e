// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Ribbon encoding of docs/filter_format.md section 6: the frozen
// per-key derivation and a tiny filter, checked against the code and
// against the doc (which must carry the same lines verbatim); and the
// decoder's answer for inconsistent bytes: "may match" for everything.

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "filter/filter_format.h"
#include "filter/filter_hash.h"
#include "filter/filter_reader.h"
#include "filter/ribbon_hash.h"
#include "filter/ribbon_reader.h"
#include "gtest/gtest.h"
#include "siftdb/filter_policy.h"
#include "tests/filter/filter_test_keys.h"
#include "tests/support/paths.h"

namespace siftdb {
namespace ribbon_format_test {

struct RibbonVector {
  const char* key;
  uint64_t xxh3;
  uint64_t a0;      // RibbonStartHash(h, seed 0)
  uint64_t start;   // RibbonStart(a0, 257), i.e. N = 3 blocks
  uint64_t c_hi;    // RibbonCoeff(a0), high word
  uint64_t c_lo;    // low word (bit 0 set)
  uint32_t result;  // RibbonResult(a0)
  uint64_t a1;      // RibbonStartHash(h, seed 1)
};

// Persisted: changing any of these is a format change.
const std::vector<RibbonVector>& Vectors() {
  static const auto* v = new std::vector<RibbonVector>{
      {"", 0x2d06800538d394c2, 0x0e9ebeff1ebd5806, 14, 0xbc23bd12461eab95,
       0x41fce9818950103b, 0x1ebd5806, 0xb6087a25c1a89519},
      {"a", 0xe6c632b61e964e1f, 0x06eac7df0e31bbf5, 6, 0x117f691de796b6fb,
       0xba7955763f584c8f, 0x0e31bbf5, 0xda024c2c8e3f919c},
      {"siftdb", 0xb982bc7be93ae287, 0xcf3c30f82100ae51, 208,
       0x2869bc060bc3b6a6, 0xa70255993ea1b6df, 0x2100ae51, 0x8a5fac4814bf2586},
      {"hello world", 0xd447b1ea40e6988b, 0x4094caa3a3ac8961, 64,
       0xf3ca1996727b634f, 0x2a13d76d633d088b, 0xa3ac8961, 0x76c8ca4cceda8228},
      {"key-00000042", 0x2f3994fa016cc14b, 0xbf142833f758202a, 191,
       0x7b687f3bb49d6559, 0xd936f02e14dbe223, 0xf758202a, 0xf5b94fe610282ccd},
  };
  return *v;
}

std::string RenderVector(const RibbonVector& v) {
  return absl::StrFormat(
      "| \"%s\" | %016x | %016x | %u | %016x%016x | %08x | "
      "%016x |",
      v.key, v.xxh3, v.a0, v.start, v.c_hi, v.c_lo, v.result, v.a1);
}

// NewRibbonFilterPolicy(10) over {"apple", "banana", "cherry"}.
constexpr char kTinyRibbonHex[] =
    "0700000000000000000000000000000003000000000000000000000000000000"
    "0000000000000000000000000000000001000000000000000000000000000000"
    "0100000000000000000000000000000002000000000000000000000000000000"
    "0500000000000000000000000000000000000000008000000100000006015253";

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(
        std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

std::vector<std::string> RenderHexdump(std::string_view bytes) {
  std::vector<std::string> lines;
  for (size_t off = 0; off < bytes.size(); off += 16) {
    std::string line = absl::StrFormat("%04x:", off);
    for (size_t i = off; i < bytes.size() && i < off + 16; ++i) {
      line += absl::StrFormat(" %02x", static_cast<unsigned char>(bytes[i]));
    }
    lines.push_back(line);
  }
  return lines;
}

std::string Build(const FilterPolicy& policy,
                  const std::vector<std::string>& keys) {
  auto builder = policy.NewBuilder();
  for (const auto& key : keys) builder->AddKey(key);
  std::string filter;
  builder->Finish(&filter);
  return filter;
}

TEST(RibbonFormatTest, VectorsMatchCode) {
  for (const RibbonVector& v : Vectors()) {
    SCOPED_TRACE(v.key);
    EXPECT_EQ(FilterKeyHash(v.key), v.xxh3);
    EXPECT_EQ(RibbonStartHash(v.xxh3, 0), v.a0);
    EXPECT_EQ(RibbonStart(v.a0, 257), v.start);
    const RibbonRow c = RibbonCoeff(v.a0);
    EXPECT_EQ(static_cast<uint64_t>(c >> 64), v.c_hi);
    EXPECT_EQ(static_cast<uint64_t>(c), v.c_lo);
    EXPECT_EQ(v.c_lo & 1, 1u);
    EXPECT_EQ(RibbonResult(v.a0), v.result);
    EXPECT_EQ(RibbonStartHash(v.xxh3, 1), v.a1);
  }
}

TEST(RibbonFormatTest, TinyFilterMatchesCode) {
  const std::vector<std::string> keys = {"apple", "banana", "cherry"};
  const std::string tiny = Unhex(kTinyRibbonHex);
  const auto policy = NewRibbonFilterPolicy(10);
  EXPECT_EQ(Build(*policy, keys), tiny);
  for (const auto& key : keys) EXPECT_TRUE(policy->KeyMayMatch(key, tiny));
  const ParsedRibbon parsed(tiny);
  ASSERT_TRUE(parsed.valid());
  EXPECT_EQ(parsed.layout().num_blocks, 1u);
  EXPECT_EQ(parsed.layout().upper_start, 0u);
  EXPECT_EQ(parsed.layout().lower_columns, 6);
  EXPECT_EQ(parsed.layout().seed, 0);
}

TEST(RibbonFormatTest, DocCarriesTheSameVectors) {
  auto contents = test::ReadSourceFile("docs/filter_format.md");
  ASSERT_TRUE(contents.ok()) << contents.status();
  const std::string doc = *std::move(contents);
  for (const RibbonVector& v : Vectors()) {
    const std::string line = RenderVector(v);
    EXPECT_NE(doc.find(line), std::string::npos) << "missing: " << line;
  }
  for (const std::string& line : RenderHexdump(Unhex(kTinyRibbonHex))) {
    EXPECT_NE(doc.find(line + "\n"), std::string::npos) << "missing: " << line;
  }
}

// A small real filter: 300 keys, two blocks of each kind of column count.
std::string SmallFilter(std::vector<std::string>* keys) {
  for (uint64_t i = 0; i < 300; ++i) keys->push_back(test::BigEndianKey(i));
  return Build(*NewRibbonFilterPolicy(10), *keys);
}

bool AlwaysMaybe(const std::string& filter) {
  const ParsedRibbon parsed(filter);
  if (parsed.valid()) return false;
  const auto policy = NewRibbonFilterPolicy(10);
  for (uint64_t i = 0; i < 64; ++i) {
    if (!parsed.HashMayMatch(i * 0x9E3779B97F4A7C15ull)) return false;
    if (!policy->KeyMayMatch(test::BigEndianKey(1000 + i), filter)) {
      return false;
    }
  }
  return true;
}

TEST(RibbonFormatTest, TruncatedOrExtendedIsMayMatch) {
  std::vector<std::string> keys;
  const std::string filter = SmallFilter(&keys);
  ASSERT_TRUE(ParsedRibbon(filter).valid());
  for (size_t len = 0; len < filter.size(); ++len) {
    SCOPED_TRACE(len);
    EXPECT_TRUE(AlwaysMaybe(filter.substr(0, len)));
    // The same tail after a shortened body.
    if (len + 16 == filter.size()) continue;
    EXPECT_TRUE(
        AlwaysMaybe(filter.substr(0, len) + filter.substr(filter.size() - 16)));
  }
  EXPECT_TRUE(AlwaysMaybe(filter + std::string(1, '\0')));
  EXPECT_TRUE(AlwaysMaybe(std::string(16, '\0') + filter));
}

// Every value of every header and trailer byte other than the seed leaves
// the layout inconsistent with the size (or out of range): may match.
TEST(RibbonFormatTest, EveryTailMutationIsMayMatchOrHarmless) {
  std::vector<std::string> keys;
  const std::string filter = SmallFilter(&keys);
  const size_t tail = filter.size() - kRibbonHeaderSize - kFilterTrailerSize;
  const size_t seed_byte = tail + 4;
  for (size_t pos = tail; pos < filter.size(); ++pos) {
    for (int v = 0; v < 256; ++v) {
      if (static_cast<uint8_t>(filter[pos]) == v) continue;
      std::string bad = filter;
      bad[pos] = static_cast<char>(v);
      SCOPED_TRACE(absl::StrFormat("byte %u = %02x", pos, v));
      if (pos == seed_byte) {
        // Undetectable here (the table checksums its blocks); the decoder
        // must still answer without reading out of bounds.
        const ParsedRibbon parsed(bad);
        ASSERT_TRUE(parsed.valid());
        for (const auto& key : keys) parsed.HashMayMatch(FilterKeyHash(key));
      } else {
        EXPECT_TRUE(AlwaysMaybe(bad));
      }
    }
  }
}

// Corrupt solution bytes cannot be detected; the query must stay in
// bounds (ASan builds check) and present keys elsewhere keep answering.
TEST(RibbonFormatTest, BodyMutationsNeverCrash) {
  std::vector<std::string> keys;
  const std::string filter = SmallFilter(&keys);
  const size_t body = filter.size() - kRibbonHeaderSize - kFilterTrailerSize;
  const auto policy = NewRibbonFilterPolicy(10);
  for (size_t pos = 0; pos < body; ++pos) {
    for (uint8_t flip : {0x01, 0x80, 0xff}) {
      std::string bad = filter;
      bad[pos] = static_cast<char>(bad[pos] ^ flip);
      const FilterReader reader(policy.get(), bad);
      size_t hits = 0;
      for (const auto& key : keys) hits += reader.KeyMayMatch(key);
      EXPECT_GT(hits, 0u);
    }
  }
}

// A reader that meets kind 'R' through another policy's decoder (as a
// reader built before Ribbon did) answers "may match".
TEST(RibbonFormatTest, OtherDecodersAnswerMayMatch) {
  std::vector<std::string> keys;
  const std::string filter = SmallFilter(&keys);
  for (const auto& policy :
       {NewBloomFilterPolicy(10), NewClassicBloomFilterPolicy(10)}) {
    for (uint64_t i = 0; i < 1000; ++i) {
      ASSERT_TRUE(policy->KeyMayMatch(test::BigEndianKey(10000 + i), filter));
    }
  }
}

}  // namespace ribbon_format_test
}  // namespace siftdb
