// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The byte-level formats of docs/filter_format.md: the frozen test vectors
// (checked against the code AND found verbatim in the doc), Redis bit
// order, one-block locality, and decoding of damaged filters.

#include "filter/filter_format.h"

#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "filter/blocked_bloom.h"
#include "filter/classic_bloom.h"
#include "filter/filter_hash.h"
#include "filter/filter_reader.h"
#include "gtest/gtest.h"
#include "siftdb/filter_policy.h"
#include "tests/filter/filter_test_keys.h"
#include "tests/support/paths.h"

namespace siftdb {
namespace filter_format_test {

using test::BigEndianKey;
using test::RandomKey;
using test::SplitMix64;

// ---------------------------------------------------------------------------
// Frozen test vectors (generated once from this code, then copied into
// docs/filter_format.md). Changing any of them is a format change.

struct ProbeVector {
  const char* key;
  uint64_t xxh3;
  uint32_t block;                 // blocked, 3 blocks
  std::vector<uint64_t> blocked;  // blocked, 3 blocks, k = 7
  std::vector<uint64_t> classic;  // classic, m = 1000, k = 7
};

const std::vector<ProbeVector>& ProbeVectors() {
  static const auto* v = new std::vector<ProbeVector>{
      {"",
       0x2d06800538d394c2ull,
       0,
       {391, 32, 10, 150, 303, 388, 294},
       {274, 983, 692, 401, 110, 819, 528}},
      {"a",
       0xe6c632b61e964e1full,
       2,
       {1056, 1431, 1311, 1442, 1307, 1534, 1342},
       {879, 669, 459, 249, 39, 829, 619}},
      {"siftdb",
       0xb982bc7be93ae287ull,
       2,
       {1211, 1450, 1052, 1427, 1306, 1152, 1421},
       {407, 298, 189, 80, 971, 862, 753}},
      {"hello world",
       0xd447b1ea40e6988bull,
       2,
       {1257, 1493, 1461, 1489, 1112, 1392, 1338},
       {155, 549, 943, 337, 731, 125, 519}},
      {"key-00000042",
       0x2f3994fa016cc14bull,
       0,
       {128, 113, 496, 73, 456, 127, 298},
       {587, 429, 271, 113, 955, 797, 639}},
  };
  return *v;
}

// The keys of the tiny filters below, with their probes in a 1-block, k = 7
// blocked filter and a 64-bit, k = 7 classic one.
struct TinyKeyVector {
  const char* key;
  uint64_t xxh3;
  std::vector<uint64_t> blocked;
  std::vector<uint64_t> classic;
};

const std::vector<TinyKeyVector>& TinyKeyVectors() {
  static const auto* v = new std::vector<TinyKeyVector>{
      {"apple",
       0x517a430dcf1f8a00ull,
       {120, 290, 356, 188, 200, 254, 299},
       {0, 13, 26, 39, 52, 1, 14}},
      {"banana",
       0x669f075767da524cull,
       {423, 129, 335, 321, 301, 16, 373},
       {12, 35, 58, 17, 40, 63, 22}},
      {"cherry",
       0x0c6c9927eea53ebfull,
       {474, 455, 333, 123, 124, 192, 402},
       {63, 38, 13, 52, 27, 2, 41}},
  };
  return *v;
}

// NewBloomFilterPolicy(10) over {"apple", "banana", "cherry"}: 1 block, k=7.
constexpr char kTinyBlockedHex[] =
    "0000800000000000000000000000009840000000000000088080000000000002"
    "0000000020140000400500000800040000002000010000000100002000000000"
    "0100000007014253";
// NewClassicBloomFilterPolicy(10) over the same keys: m = 64, k = 7.
constexpr char kTinyClassicHex[] = "e00e423013c008214000000007014353";

std::string Hex(std::string_view bytes) {
  std::string out;
  for (unsigned char c : bytes) out += absl::StrFormat("%02x", c);
  return out;
}

std::string Unhex(std::string_view hex) {
  std::string out;
  for (size_t i = 0; i + 1 < hex.size(); i += 2) {
    out.push_back(static_cast<char>(
        std::stoi(std::string(hex.substr(i, 2)), nullptr, 16)));
  }
  return out;
}

// How the doc prints one probe vector (one line).
std::string RenderProbeLine(const ProbeVector& v) {
  return absl::StrFormat("| \"%s\" | %016x | %u | %s | %s |", v.key, v.xxh3,
                         v.block, absl::StrJoin(v.blocked, " "),
                         absl::StrJoin(v.classic, " "));
}

// How the doc prints a filter: hexdump lines of 16 bytes.
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

std::string BuildWith(const FilterPolicy& policy,
                      const std::vector<std::string>& keys) {
  auto builder = policy.NewBuilder();
  for (const auto& key : keys) builder->AddKey(key);
  std::string filter;
  builder->Finish(&filter);
  return filter;
}

TEST(FilterFormatTest, ProbeVectorsMatchCode) {
  for (const ProbeVector& v : ProbeVectors()) {
    SCOPED_TRACE(v.key);
    EXPECT_EQ(FilterKeyHash(v.key), v.xxh3);
    EXPECT_EQ(BlockedBloomBlockIndex(v.xxh3, 3), v.block);
    EXPECT_EQ(BlockedBloomProbeBits(v.xxh3, 3, 7), v.blocked);
    EXPECT_EQ(ClassicBloomProbeBits(v.xxh3, 1000, 7), v.classic);
    for (uint64_t bit : v.blocked) EXPECT_EQ(bit / 512, v.block);
  }
}

TEST(FilterFormatTest, TinyFiltersMatchCode) {
  const std::vector<std::string> keys = {"apple", "banana", "cherry"};
  for (const TinyKeyVector& v : TinyKeyVectors()) {
    SCOPED_TRACE(v.key);
    EXPECT_EQ(FilterKeyHash(v.key), v.xxh3);
    EXPECT_EQ(BlockedBloomProbeBits(v.xxh3, 1, 7), v.blocked);
    EXPECT_EQ(ClassicBloomProbeBits(v.xxh3, 64, 7), v.classic);
  }
  EXPECT_EQ(Hex(BuildWith(*NewBloomFilterPolicy(10), keys)), kTinyBlockedHex);
  EXPECT_EQ(Hex(BuildWith(*NewClassicBloomFilterPolicy(10), keys)),
            kTinyClassicHex);
  // And the frozen bytes answer for their keys.
  const std::string blocked = Unhex(kTinyBlockedHex);
  const std::string classic = Unhex(kTinyClassicHex);
  for (const auto& key : keys) {
    EXPECT_TRUE(NewBloomFilterPolicy(10)->KeyMayMatch(key, blocked));
    EXPECT_TRUE(NewClassicBloomFilterPolicy(10)->KeyMayMatch(key, classic));
  }
  EXPECT_EQ(ParsedBlockedBloom(blocked).num_blocks(), 1u);
  EXPECT_EQ(ParsedBlockedBloom(blocked).k(), 7);
  EXPECT_EQ(ParsedClassicBloom(classic).num_bits(), 64u);
  EXPECT_EQ(ParsedClassicBloom(classic).k(), 7);
}

// The doc must carry exactly the vectors the code produces.
TEST(FilterFormatTest, DocCarriesTheSameVectors) {
  auto contents = test::ReadSourceFile("docs/filter_format.md");
  ASSERT_TRUE(contents.ok()) << contents.status();
  const std::string doc = *std::move(contents);
  for (const ProbeVector& v : ProbeVectors()) {
    const std::string line = RenderProbeLine(v);
    EXPECT_NE(doc.find(line), std::string::npos) << "missing: " << line;
  }
  for (const TinyKeyVector& v : TinyKeyVectors()) {
    for (const std::string& line :
         {absl::StrFormat("| \"%s\" | %016x | %s |", v.key, v.xxh3,
                          absl::StrJoin(v.blocked, " ")),
          absl::StrFormat("| \"%s\" | %s |", v.key,
                          absl::StrJoin(v.classic, " "))}) {
      EXPECT_NE(doc.find(line), std::string::npos) << "missing: " << line;
    }
  }
  for (const char* hex : {kTinyBlockedHex, kTinyClassicHex}) {
    for (const std::string& line : RenderHexdump(Unhex(hex))) {
      EXPECT_NE(doc.find(line + "\n"), std::string::npos)
          << "missing: " << line;
    }
  }
}

// ---------------------------------------------------------------------------
// Bit order and layout.

// Every set bit of a filter is a probe of some key and every probe is set:
// the filter is exactly the union of the keys' probe bits, in Redis order
// (bit i <=> byte[i / 8] & (0x80 >> (i % 8))).
TEST(FilterFormatTest, BitsAreExactlyTheProbesInRedisOrder) {
  SplitMix64 rng(17);
  for (int n : {1, 2, 10, 100, 777}) {
    std::vector<std::string> keys;
    for (int i = 0; i < n; ++i) keys.push_back(RandomKey(&rng, 1 + i % 20));
    for (bool blocked : {true, false}) {
      SCOPED_TRACE(absl::StrFormat("n=%d blocked=%d", n, blocked));
      const auto policy =
          blocked ? NewBloomFilterPolicy(10) : NewClassicBloomFilterPolicy(10);
      const std::string filter = BuildWith(*policy, keys);
      const auto* bytes = reinterpret_cast<const uint8_t*>(filter.data());
      const size_t bit_bytes = filter.size() - kFilterTrailerSize;
      std::set<uint64_t> expected;
      ParsedBlockedBloom pb(filter);
      ParsedClassicBloom pc(filter);
      ASSERT_TRUE(blocked ? pb.valid() : pc.valid());
      for (const auto& key : keys) {
        const uint64_t h = FilterKeyHash(key);
        for (uint64_t bit :
             blocked ? BlockedBloomProbeBits(h, pb.num_blocks(), pb.k())
                     : ClassicBloomProbeBits(h, pc.num_bits(), pc.k())) {
          expected.insert(bit);
        }
      }
      for (uint64_t i = 0; i < bit_bytes * 8; ++i) {
        const bool set = (bytes[i / 8] & (0x80 >> (i % 8))) != 0;
        ASSERT_EQ(set, expected.count(i) == 1) << "bit " << i;
        ASSERT_EQ(set, GetFilterBit(bytes, i));
      }
    }
  }
}

TEST(FilterFormatTest, TrailerLayout) {
  std::vector<std::string> keys;
  for (int i = 0; i < 1000; ++i) keys.push_back(BigEndianKey(i));
  const std::string b = BuildWith(*NewBloomFilterPolicy(10), keys);
  // ceil(1000 * 10 / 512) = 20 blocks, k = 7.
  ASSERT_EQ(b.size(), 20u * 64 + 8);
  EXPECT_EQ(Hex(b.substr(b.size() - 8)), "1400000007014253");
  const std::string c = BuildWith(*NewClassicBloomFilterPolicy(10), keys);
  // m = 10000 bits = 1250 bytes, k = 7.
  ASSERT_EQ(c.size(), 1250u + 8);
  EXPECT_EQ(Hex(c.substr(c.size() - 8)), "1027000007014353");
  // Classic: m is rounded up to whole bytes.
  keys.resize(1001);  // 10010 bits -> 10016
  const std::string c2 = BuildWith(*NewClassicBloomFilterPolicy(10), keys);
  ASSERT_EQ(c2.size(), 1252u + 8);
  EXPECT_EQ(ParsedClassicBloom(c2).num_bits(), 10016u);
}

// Any block count works (no power-of-two assumption), blocks are used
// evenly, and a query depends on its own block only.
TEST(FilterFormatTest, BlockSelectionAndLocality) {
  for (uint32_t num_blocks : {1u, 2u, 3u, 7u, 64u, 1000u, 65537u}) {
    std::vector<int> counts(num_blocks);
    SplitMix64 rng(num_blocks);
    const int samples = 20 * static_cast<int>(std::min(num_blocks, 1000u));
    for (int i = 0; i < samples; ++i) {
      const uint32_t b = BlockedBloomBlockIndex(rng.Next(), num_blocks);
      ASSERT_LT(b, num_blocks);
      ++counts[b];
    }
    if (num_blocks <= 1000) {
      for (int c : counts) EXPECT_GT(c, 0) << num_blocks;
    }
    EXPECT_EQ(BlockedBloomBlockIndex(0, num_blocks), 0u);
    EXPECT_EQ(BlockedBloomBlockIndex(~0ull, num_blocks), num_blocks - 1);
  }

  // Locality: filling every OTHER block with ones or zeros changes no
  // answer.
  std::vector<std::string> keys;
  for (int i = 0; i < 2000; ++i) keys.push_back(BigEndianKey(2 * i));
  const auto policy = NewBloomFilterPolicy(10);
  const std::string filter = BuildWith(*policy, keys);
  const ParsedBlockedBloom parsed(filter);
  ASSERT_TRUE(parsed.valid());
  for (int i = 0; i < 4000; ++i) {
    const std::string key = BigEndianKey(i);
    const uint64_t h = FilterKeyHash(key);
    const uint32_t own = BlockedBloomBlockIndex(h, parsed.num_blocks());
    const bool answer = policy->KeyMayMatch(key, filter);
    for (char fill : {'\0', '\xff'}) {
      std::string other(filter.size() - kFilterTrailerSize, fill);
      other.replace(own * 64, 64, filter, own * 64, 64);
      other += filter.substr(filter.size() - kFilterTrailerSize);
      ASSERT_EQ(policy->KeyMayMatch(key, other), answer) << i;
    }
  }
}

// The scalar and AVX2 probe routines agree with the specification's
// sequential probes on random blocks, for every k.
TEST(FilterFormatTest, ProbeImplementationsAgree) {
  std::vector<BlockedProbeFn> impls = {&BlockedBloomProbeScalar};
  if (BlockedBloomProbeAvx2() != nullptr) {
    impls.push_back(BlockedBloomProbeAvx2());
  }
  EXPECT_TRUE(BlockedBloomBestProbe() == impls.back());
  SplitMix64 rng(23);
  alignas(64) uint8_t block[64];
  for (int trial = 0; trial < 20000; ++trial) {
    // Blocks from sparse to dense, so both answers are common.
    const int density = trial % 8;
    for (uint8_t& byte : block) {
      byte = static_cast<uint8_t>(rng.Next());
      for (int d = 0; d < density; ++d)
        byte |= static_cast<uint8_t>(rng.Next());
    }
    const uint64_t hash = rng.Next();
    const int k = 1 + trial % kMaxProbes;
    bool expected = true;
    for (uint64_t bit : BlockedBloomProbeBits(hash, 1, k)) {
      expected = expected && GetFilterBit(block, bit);
    }
    for (BlockedProbeFn probe : impls) {
      ASSERT_EQ(probe(block, static_cast<uint32_t>(hash), k), expected)
          << "trial " << trial << " k " << k;
    }
  }
}

// ---------------------------------------------------------------------------
// Damaged input: always "may match", never a crash.

class DamagedFilterTest : public ::testing::TestWithParam<bool> {
 protected:
  void SetUp() override {
    policy_ =
        GetParam() ? NewBloomFilterPolicy(10) : NewClassicBloomFilterPolicy(10);
    for (int i = 0; i < 300; ++i) keys_.push_back(BigEndianKey(i));
    filter_ = BuildWith(*policy_, keys_);
  }

  // Every key, stored or not, must be "may match" in `bad`.
  void ExpectAllMayMatch(std::string_view bad, const std::string& what) {
    const FilterReader reader(policy_.get(), bad);
    for (int i = 0; i < 1000; ++i) {
      const std::string key = BigEndianKey(i);
      ASSERT_TRUE(policy_->KeyMayMatch(key, bad)) << what << " key " << i;
      ASSERT_TRUE(reader.KeyMayMatch(key)) << what << " key " << i;
    }
  }

  std::string WithTrailerByte(size_t index, uint8_t value) const {
    std::string bad = filter_;
    bad[bad.size() - kFilterTrailerSize + index] = static_cast<char>(value);
    return bad;
  }

  std::shared_ptr<const FilterPolicy> policy_;
  std::vector<std::string> keys_;
  std::string filter_;
};

TEST_P(DamagedFilterTest, EmptyAndTruncated) {
  ExpectAllMayMatch("", "empty");
  ExpectAllMayMatch(std::string_view(), "null view");
  // Every proper prefix, and every suffix (lost head).
  for (size_t len = 0; len < filter_.size(); ++len) {
    ExpectAllMayMatch(std::string_view(filter_).substr(0, len),
                      "prefix " + std::to_string(len));
    ExpectAllMayMatch(std::string_view(filter_).substr(filter_.size() - len),
                      "suffix " + std::to_string(len));
  }
  // Extra bytes at the end or the start.
  ExpectAllMayMatch(filter_ + "x", "appended byte");
  ExpectAllMayMatch("x" + filter_, "prepended byte");
}

TEST_P(DamagedFilterTest, BadTrailerFields) {
  const FilterTrailer good = [&] {
    FilterTrailer t;
    EXPECT_TRUE(DecodeFilterTrailer(filter_, &t));
    return t;
  }();
  for (uint32_t delta : {1u, 2u, 8u, 0xffffffffu, 0xfffffff8u}) {
    std::string bad = filter_;
    EncodeFixed32(bad.data() + bad.size() - kFilterTrailerSize,
                  good.param + delta);
    ExpectAllMayMatch(bad, "param +" + std::to_string(delta));
  }
  for (uint32_t param : {0u, 0xffffffffu}) {
    std::string bad = filter_;
    EncodeFixed32(bad.data() + bad.size() - kFilterTrailerSize, param);
    ExpectAllMayMatch(bad, "param " + std::to_string(param));
  }
  for (int k : {0, 31, 64, 255}) {
    ExpectAllMayMatch(WithTrailerByte(4, k), "k " + std::to_string(k));
  }
  for (int version : {0, 2, 255}) {
    ExpectAllMayMatch(WithTrailerByte(5, version),
                      "version " + std::to_string(version));
  }
  for (int kind :
       {int{0}, int{'A'}, int{'D'}, int{'b'}, int{GetParam() ? 'C' : 'B'}}) {
    ExpectAllMayMatch(WithTrailerByte(6, kind), "kind " + std::to_string(kind));
  }
  for (int magic : {int{0}, int{'T'}, 0xff}) {
    ExpectAllMayMatch(WithTrailerByte(7, magic),
                      "magic " + std::to_string(magic));
  }
  // k in range but different: still a valid filter (k is data), and the
  // policy follows it rather than its own configuration.
  const std::string k1 = WithTrailerByte(4, 1);
  for (const auto& key : keys_) EXPECT_TRUE(policy_->KeyMayMatch(key, k1));
}

TEST_P(DamagedFilterTest, Garbage) {
  SplitMix64 rng(GetParam() ? 1 : 2);
  for (int i = 0; i < 2000; ++i) {
    const std::string garbage = RandomKey(&rng, rng.Uniform(300));
    ExpectAllMayMatch(garbage, "garbage " + std::to_string(i));
  }
  // Garbage bit arrays behind a valid trailer are a valid (if odd) filter;
  // flipping bits to one never loses a key.
  std::string ones = filter_;
  for (size_t i = 0; i + kFilterTrailerSize < ones.size(); ++i) {
    ones[i] = static_cast<char>(0xff);
  }
  ExpectAllMayMatch(ones, "all ones");
}

INSTANTIATE_TEST_SUITE_P(Modes, DamagedFilterTest, ::testing::Bool(),
                         [](const ::testing::TestParamInfo<bool>& info) {
                           return info.param ? "Blocked" : "Classic";
                         });

}  // namespace filter_format_test
}  // namespace siftdb
