// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Pure tests (no Redis): sizing, hashing and the dump header against the
// recorded RedisBloom vectors, the chunk iterator arithmetic, and the small
// codecs the Redis client relies on.

#include <cmath>
#include <set>

#include "gtest/gtest.h"
#include "redis/bloom/murmurhash64a.h"
#include "redis/bloom/redis_bloom_dump.h"
#include "redis/bloom/redis_bloom_layout.h"
#include "redis/client/redis_client.h"
#include "redis/client/redis_reply.h"
#include "tests/redis_bloom/redis_bloom_test_util.h"
#include "tests/support/json_reader.h"

namespace siftdb::redis_bloom {
namespace layout_test {

using test::JsonValue;
using test::LoadVector;

const char* const kFiles[] = {"f1.json", "f2.json", "f3.json", "f4.json"};

TEST(RedisBloomLayout, LinkSizingMatchesRecordedHeaders) {
  for (const char* file : kFiles) {
    SCOPED_TRACE(file);
    JsonValue v = LoadVector(file);
    for (const JsonValue& link : v["header_decoded"]["links"].array()) {
      absl::StatusOr<LinkSpec> spec =
          ComputeGrownLink(static_cast<uint64_t>(link["entries"].integer()),
                           link["error"].number());
      ASSERT_TRUE(spec.ok()) << spec.status();
      // Bit-exact doubles: the header stores them.
      EXPECT_EQ(spec->bpe, link["bpe"].number());
      EXPECT_EQ(spec->hashes, link["hashes"].integer());
      EXPECT_EQ(spec->bits, static_cast<uint64_t>(link["bits"].integer()));
      EXPECT_EQ(spec->bytes, static_cast<uint64_t>(link["bytes"].integer()));
      EXPECT_EQ(spec->n2, link["n2"].integer());
    }
  }
}

TEST(RedisBloomLayout, HeaderEncodesToRecordedBytes) {
  for (const char* file : kFiles) {
    SCOPED_TRACE(file);
    JsonValue v = LoadVector(file);
    const JsonValue& hd = v["header_decoded"];
    ChainHeader h;
    h.items = hd["size"].integer();
    h.options = static_cast<uint32_t>(hd["options"].integer());
    h.growth = static_cast<uint32_t>(hd["growth"].integer());
    for (const JsonValue& link : hd["links"].array()) {
      ChainLink l;
      l.spec.bytes = link["bytes"].integer();
      l.spec.bits = link["bits"].integer();
      l.items = link["size"].integer();
      l.spec.error = link["error"].number();
      l.spec.bpe = link["bpe"].number();
      l.spec.hashes = static_cast<uint32_t>(link["hashes"].integer());
      l.spec.capacity = link["entries"].integer();
      l.spec.n2 = static_cast<uint8_t>(link["n2"].integer());
      h.links.push_back(l);
    }
    const std::string recorded =
        test::HexDecode(v["scandump"][0]["data_hex"].str());
    EXPECT_EQ(EncodeHeader(h), recorded);
    absl::StatusOr<ChainHeader> back = DecodeHeader(recorded);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(EncodeHeader(*back), recorded);
  }
}

// Rebuilds every recorded filter in memory from the items alone: replies,
// bytes and false positives must all match RedisBloom's.
TEST(RedisBloomLayout, InMemoryModelReproducesRecordedFilters) {
  for (const char* file : kFiles) {
    SCOPED_TRACE(file);
    JsonValue v = LoadVector(file);
    const JsonValue& hd = v["header_decoded"];
    const uint32_t options = static_cast<uint32_t>(hd["options"].integer());
    const uint32_t growth = static_cast<uint32_t>(hd["growth"].integer());
    struct Link {
      LinkSpec spec;
      std::string bytes;
      uint64_t items = 0;
    };
    std::vector<Link> chain;
    absl::StatusOr<LinkSpec> first = ComputeGrownLink(
        hd["links"][0]["entries"].integer(), hd["links"][0]["error"].number());
    ASSERT_TRUE(first.ok());
    chain.push_back({*first, std::string(first->bytes, '\0'), 0});
    auto test_bit = [](const Link& l, uint64_t x) {
      return (static_cast<unsigned char>(l.bytes[x >> 3]) >> (x & 7)) & 1;
    };
    auto present = [&](const Link& l, const HashPair& h) {
      for (uint32_t i = 0; i < l.spec.hashes; i++) {
        if (!test_bit(l, ProbeBit(h, i, l.spec.bits))) return false;
      }
      return true;
    };
    std::string replies;
    for (const JsonValue& item : v["items"].array()) {
      HashPair h = HashItem(item.str());
      bool found = false;
      for (const Link& l : chain) found = found || present(l, h);
      if (found) {
        replies += '0';
        continue;
      }
      if (chain.back().items >= chain.back().spec.capacity) {
        ASSERT_EQ(options & kOptNoScaling, 0u);
        absl::StatusOr<LinkSpec> next = ComputeGrownLink(
            chain.back().spec.capacity * growth, chain.back().spec.error / 2);
        ASSERT_TRUE(next.ok());
        chain.push_back({*next, std::string(next->bytes, '\0'), 0});
      }
      Link& cur = chain.back();
      bool changed = false;
      for (uint32_t i = 0; i < cur.spec.hashes; i++) {
        uint64_t x = ProbeBit(h, i, cur.spec.bits);
        if (!test_bit(cur, x)) {
          changed = true;
          cur.bytes[x >> 3] =
              static_cast<char>(cur.bytes[x >> 3] | (1 << (x & 7)));
        }
      }
      if (changed) cur.items++;
      replies += changed ? '1' : '0';
    }
    EXPECT_EQ(replies, v["add_replies"].str());
    std::string all;
    for (const Link& l : chain) all += l.bytes;
    std::string recorded;
    for (size_t i = 1; i < v["scandump"].size(); i++) {
      recorded += test::HexDecode(v["scandump"][i]["data_hex"].str());
    }
    EXPECT_EQ(all, recorded);
    std::string absent;
    for (const JsonValue& item : v["absent_items"].array()) {
      HashPair h = HashItem(item.str());
      bool found = false;
      for (const Link& l : chain) found = found || present(l, h);
      absent += found ? '1' : '0';
    }
    EXPECT_EQ(absent, v["mexists_absent"].str());
  }
}

TEST(RedisBloomLayout, RedisBitOffsetMapsLsbFirstToMsbFirst) {
  EXPECT_EQ(RedisBitOffset(0), 7u);
  EXPECT_EQ(RedisBitOffset(7), 0u);
  EXPECT_EQ(RedisBitOffset(8), 15u);
  EXPECT_EQ(RedisBitOffset(13), 10u);
  for (uint64_t x = 0; x < 1000; x++)
    EXPECT_EQ(RedisBitOffset(RedisBitOffset(x)), x);
}

TEST(RedisBloomLayout, ComputeLinkLimits) {
  EXPECT_FALSE(ComputeLink(0, 0.01).ok());
  EXPECT_FALSE(ComputeLink((uint64_t{1} << 30) + 1, 0.01).ok());
  // 2^30 items fit Redis's 512 MB only at a loose error rate.
  EXPECT_TRUE(ComputeLink(uint64_t{1} << 30, 0.2).ok());
  EXPECT_FALSE(ComputeLink(uint64_t{1} << 30, 0.01).ok());
  EXPECT_FALSE(ComputeLink(100, 0).ok());
  EXPECT_FALSE(ComputeLink(100, 1).ok());
  EXPECT_FALSE(ComputeLink(100, -0.5).ok());
  EXPECT_FALSE(ComputeLink(100, std::nan("")).ok());
  // 2^30 items at 1e-9 need ~5.4 GB: refused before Redis is touched.
  absl::StatusOr<LinkSpec> big = ComputeLink(uint64_t{1} << 30, 1e-9);
  EXPECT_TRUE(absl::IsResourceExhausted(big.status())) << big.status();
  // The largest link that fits is exactly 512 MB.
  absl::StatusOr<LinkSpec> edge = ComputeGrownLink(400000000, 0.01);
  ASSERT_TRUE(edge.ok());
  EXPECT_LE(edge->bytes, kMaxLinkBytes);
  // Default filter: 100 @ 1% scaling -> 144 bytes, 8 hashes.
  absl::StatusOr<LinkSpec> def = ComputeLink(100, 0.005);
  ASSERT_TRUE(def.ok());
  EXPECT_EQ(def->bytes, 144u);
  EXPECT_EQ(def->hashes, 8u);
}

TEST(RedisBloomDump, DecodeRejectsBadHeaders) {
  EXPECT_FALSE(DecodeHeader("").ok());
  EXPECT_FALSE(DecodeHeader("garbage").ok());
  ChainHeader h;
  absl::StatusOr<LinkSpec> spec = ComputeLink(100, 0.005);
  ASSERT_TRUE(spec.ok());
  h.links.push_back({*spec, 3});
  h.items = 3;
  std::string good = EncodeHeader(h);
  ASSERT_TRUE(DecodeHeader(good).ok());
  EXPECT_FALSE(DecodeHeader(good.substr(0, good.size() - 1)).ok());
  EXPECT_FALSE(DecodeHeader(good + "x").ok());
  ChainHeader wrong_items = h;
  wrong_items.items = 4;
  EXPECT_FALSE(DecodeHeader(EncodeHeader(wrong_items)).ok());
  ChainHeader wrong_hashes = h;
  wrong_hashes.links[0].spec.hashes++;
  EXPECT_FALSE(DecodeHeader(EncodeHeader(wrong_hashes)).ok());
  ChainHeader wrong_bits = h;
  wrong_bits.links[0].spec.bits += 8;
  EXPECT_FALSE(DecodeHeader(EncodeHeader(wrong_bits)).ok());
  ChainHeader no_links = h;
  no_links.links.clear();
  no_links.items = 0;
  EXPECT_FALSE(DecodeHeader(EncodeHeader(no_links)).ok());
  ChainHeader hash32 = h;
  hash32.options = kOptNoRound;
  EXPECT_TRUE(
      absl::IsUnimplemented(DecodeHeader(EncodeHeader(hash32)).status()));
}

TEST(RedisBloomDump, ChunkIteratorArithmetic) {
  // f2's links: 200, 432, 936, 2016 bytes -> iterators 1, 201, 633, ...
  std::vector<uint64_t> sizes = {200, 432, 936, 2016};
  int64_t it = 1;
  std::vector<uint64_t> lengths;
  while (true) {
    std::optional<ChunkRef> c = DumpChunkAt(sizes, it);
    if (!c) break;
    lengths.push_back(c->length);
    absl::StatusOr<ChunkRef> back =
        LoadChunkTarget(sizes, c->next_iterator, c->length);
    ASSERT_TRUE(back.ok()) << back.status();
    EXPECT_EQ(back->link, c->link);
    EXPECT_EQ(back->offset, c->offset);
    it = c->next_iterator;
  }
  EXPECT_EQ(lengths, (std::vector<uint64_t>{200, 432, 936, 2016}));
  EXPECT_FALSE(DumpChunkAt(sizes, 100000).has_value());
  EXPECT_FALSE(DumpChunkAt(sizes, -5).has_value());
  // Chunks are capped and never cross a link.
  std::optional<ChunkRef> capped = DumpChunkAt(sizes, 1, 64);
  ASSERT_TRUE(capped);
  EXPECT_EQ(capped->length, 64u);
  std::optional<ChunkRef> tail = DumpChunkAt(sizes, 1 + 192, 64);
  ASSERT_TRUE(tail);
  EXPECT_EQ(tail->length, 8u);
  EXPECT_EQ(LoadChunkTarget(sizes, 100000, 8).status().message(),
            "invalid offset - no link found");
  EXPECT_EQ(LoadChunkTarget(sizes, 1 + 190 + 20, 20).status().message(),
            "invalid chunk - Too big for current filter");
}

TEST(MurmurHash64A, SeedAndTailHandling) {
  // Different seeds and lengths 0..17 give distinct values; the empty string
  // with seed 0 hashes to 0 (no input, no mixing of a zero state).
  EXPECT_EQ(MurmurHash64A("", 0, 0), 0u);
  std::set<uint64_t> seen;
  std::string s;
  for (int len = 0; len < 18; len++) {
    seen.insert(MurmurHash64A(s.data(), s.size(), kMurmurHash64AMultiplier));
    s.push_back(static_cast<char>('a' + len));
  }
  EXPECT_EQ(seen.size(), 18u);
}

TEST(RedisArgs, EncodesBinarySafeResp) {
  RedisArgs a{"SET", std::string_view("k\0y", 3)};
  a.AddInt(-12).AddUint(34);
  EXPECT_EQ(a.size(), 4u);
  EXPECT_EQ(a.name(), "SET");
  const char kWant[] =
      "*4\r\n$3\r\nSET\r\n$3\r\nk\0y\r\n$3\r\n-12\r\n$2\r\n34\r\n";
  EXPECT_EQ(a.Encode(), std::string(kWant, sizeof(kWant) - 1));
  EXPECT_EQ(a.ToVector(), (std::vector<std::string>{
                              "SET", std::string("k\0y", 3), "-12", "34"}));
}

TEST(RedisEndpoint, Parses) {
  auto ep = RedisEndpoint::Parse("127.0.0.1:6390");
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->host, "127.0.0.1");
  EXPECT_EQ(ep->port, 6390);
  ep = RedisEndpoint::Parse("[::1]:7000");
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->host, "::1");
  EXPECT_EQ(ep->port, 7000);
  EXPECT_EQ(ep->ToString(), "[::1]:7000");
  ep = RedisEndpoint::Parse("localhost");
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->port, 6379);
  ep = RedisEndpoint::Parse("unix:/tmp/r.sock");
  ASSERT_TRUE(ep.ok());
  EXPECT_EQ(ep->unix_path, "/tmp/r.sock");
  EXPECT_FALSE(RedisEndpoint::Parse("host:0").ok());
  EXPECT_FALSE(RedisEndpoint::Parse("host:99999").ok());
  EXPECT_FALSE(RedisEndpoint::Parse("host:12x").ok());
  EXPECT_FALSE(RedisEndpoint::Parse(":6379").ok());
  EXPECT_FALSE(RedisEndpoint::Parse("[::1").ok());
}

TEST(JsonReader, ParsesValuesAndEscapes) {
  absl::StatusOr<test::JsonValue> v = test::ParseJson(
      R"({"a": [1, -2.5e3, true, false, null], "s": "x\u0000y\n\u00e9\ud83d\ude00", "n": {"k": 9007199254740993}})");
  ASSERT_TRUE(v.ok()) << v.status();
  EXPECT_EQ((*v)["a"].size(), 5u);
  EXPECT_EQ((*v)["a"][1].number(), -2500);
  EXPECT_TRUE((*v)["a"][2].boolean());
  EXPECT_TRUE((*v)["a"][4].is_null());
  EXPECT_EQ((*v)["s"].str(), std::string("x\0y\n\xc3\xa9\xf0\x9f\x98\x80", 10));
  EXPECT_EQ((*v)["n"]["k"].integer(), 9007199254740993LL);
  EXPECT_TRUE((*v)["missing"].is_null());
  EXPECT_FALSE(test::ParseJson("{").ok());
  EXPECT_FALSE(test::ParseJson("[1,]").ok());
  EXPECT_FALSE(test::ParseJson("\"abc").ok());
  EXPECT_FALSE(test::ParseJson("1 2").ok());
}

}  // namespace layout_test
}  // namespace siftdb::redis_bloom
