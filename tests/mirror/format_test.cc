// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The mirror's formats and local pieces: cluster key slots (checked against
// a real redis-server's CLUSTER KEYSLOT), redirects, key names, the
// manifest codec (round trips and refusals), and the growing MemTable
// filter (no false negatives at any size, sub-filters larger and tighter,
// deltas that reproduce the bytes).

#include <map>
#include <random>
#include <set>
#include <string>

#include "absl/strings/escaping.h"
#include "absl/time/clock.h"
#include "filter/filter_hash.h"
#include "gtest/gtest.h"
#include "redis/client/redis_cluster_client.h"
#include "redis/mirror/redis_mirror_format.h"
#include "redis/mirror/redis_mirror_live_filter.h"
#include "tests/mirror/mirror_test_util.h"

namespace siftdb::test {
namespace format_test {

TEST(MirrorFormatTest, Crc16AndKeySlot) {
  EXPECT_EQ(RedisCrc16("123456789"), 0x31c3);  // XMODEM check value
  EXPECT_EQ(RedisCrc16(""), 0);
  // Hash tags: only the part inside the first {...} counts, when non-empty.
  EXPECT_EQ(RedisKeySlot("{user1000}.following"), RedisKeySlot("user1000"));
  EXPECT_EQ(RedisKeySlot("siftdb:{orders}:manifest"),
            RedisKeySlot("siftdb:{orders}:sst:12"));
  EXPECT_EQ(RedisKeySlot("foo{}{bar}"), RedisKeySlot("foo{}{bar}"));
  EXPECT_NE(RedisKeySlot("foo{}{bar}"), RedisKeySlot("bar"));
  EXPECT_EQ(RedisKeySlot("foo{{bar}}zap"), RedisKeySlot("{bar"));
  EXPECT_EQ(RedisKeySlot("foo{bar}{zap}"), RedisKeySlot("bar"));
}

TEST(MirrorFormatTest, KeySlotMatchesRedis) {
  SIFTDB_REQUIRE_REDIS();
  RedisServerOptions o;
  o.extra_args = {"--cluster-enabled", "yes", "--cluster-config-file",
                  "nodes.conf"};
  auto server = RedisServer::Start(o);
  ASSERT_TRUE(server.ok()) << server.status();
  std::mt19937 rng(7);
  std::vector<std::string> keys = {"",         "a",         "foo",
                                   "{",        "}",         "{}",
                                   "x{}y",     "{a}{b}",    "siftdb:{db}:lease",
                                   "\xff\x00", "{\xfe}tail"};
  for (int i = 0; i < 200; i++) {
    std::string k(rng() % 24, '\0');
    for (char& c : k) c = "ab{}xyz\x01\xff"[rng() % 9];
    keys.push_back(k);
  }
  for (const std::string& k : keys) {
    auto r = (*server)->Call({"CLUSTER", "KEYSLOT", k});
    ASSERT_TRUE(r.ok()) << r.status();
    EXPECT_EQ(*r, std::to_string(RedisKeySlot(k)))
        << "key \"" << absl::CHexEscape(k) << "\"";
  }
}

TEST(MirrorFormatTest, ParseRedirect) {
  RedisRedirect r;
  ASSERT_TRUE(ParseRedisRedirect("MOVED 3999 127.0.0.1:6381", &r));
  EXPECT_FALSE(r.ask);
  EXPECT_EQ(r.slot, 3999);
  EXPECT_EQ(r.endpoint, "127.0.0.1:6381");
  ASSERT_TRUE(ParseRedisRedirect("ASK 12 [::1]:7000", &r));
  EXPECT_TRUE(r.ask);
  EXPECT_EQ(r.endpoint, "[::1]:7000");
  ASSERT_TRUE(ParseRedisRedirect("MOVED 1 :7001", &r));  // same host
  EXPECT_EQ(r.endpoint, ":7001");
  for (const char* bad :
       {"MOVED", "MOVED 99999 h:1", "MOVED x h:1", "ASK 1", "ERR MOVED 1 h:1",
        "MOVED 1 h:1 extra", "WRONGTYPE Operation"}) {
    EXPECT_FALSE(ParseRedisRedirect(bad, &r)) << bad;
  }
}

TEST(MirrorFormatTest, KeyNamesShareTheHashTag) {
  MirrorKeys k("orders");
  EXPECT_EQ(k.prefix(), "siftdb:{orders}:");
  EXPECT_EQ(k.manifest(), "siftdb:{orders}:manifest");
  EXPECT_EQ(k.lease(), "siftdb:{orders}:lease");
  EXPECT_EQ(k.immutable(42), "siftdb:{orders}:sst:42");
  EXPECT_EQ(k.immutable_meta(42), "siftdb:{orders}:sst:42:meta");
  const std::string w = "1764000000000-0123456789abcdef";
  EXPECT_EQ(k.live(w, 7, 2), "siftdb:{orders}:mem:" + w + ":7:2");
  EXPECT_EQ(k.live_meta(w, 7), "siftdb:{orders}:mem:" + w + ":7:meta");
  const int slot = RedisKeySlot(k.manifest());
  for (const std::string& key : {k.lease(), k.immutable(1), k.live(w, 3, 0),
                                 k.live_meta(w, 3), k.immutable_meta(9)}) {
    EXPECT_EQ(RedisKeySlot(key), slot) << key;
  }
  EXPECT_TRUE(ValidateMirrorName("orders-2024.v1_x").ok());
  for (const char* bad : {"", "a{b", "a}b", "a b", "a:b", "caf\xc3\xa9"}) {
    absl::Status s = ValidateMirrorName(bad);
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << bad;
    EXPECT_NE(s.message().find("remote_filter.name"), absl::string_view::npos);
  }
  EXPECT_FALSE(ValidateMirrorName(std::string(129, 'a')).ok());
}

MirrorManifest SampleManifest() {
  MirrorManifest m;
  m.generation = "00112233aabbccdd";
  m.version = 17;
  m.mode = "async";
  m.comparator = "siftdb.BytewiseComparator";
  m.writer = "1764000000000-0123456789abcdef";
  m.lease_ttl_ms = 10000;
  m.grace_ms = 5000;
  m.complete_seq = 123456;
  m.complete_ms = 1700000000123;
  MirrorImmutableEntry a;
  a.id = 5;
  a.level = 0;
  a.size = 1032;
  a.crc32c = 0xdeadbeef;
  a.policy = "siftdb.BlockedBloom";
  a.smallest = std::string("\x00k\xff", 3);
  a.largest = "zz";
  MirrorImmutableEntry b = a;
  b.id = 9;
  b.level = 3;
  b.smallest = "";  // the empty user key
  b.largest = "";
  b.size = 0;
  b.crc32c = 0;
  b.policy = "my policy with spaces";  // not a token: published as "?"
  m.immutables = {a, b};
  MirrorLiveEntry l;
  l.id = 12;
  l.subfilters = {{100, 7}, {400, 8}};
  m.lives = {l};
  return m;
}

TEST(MirrorFormatTest, ManifestRoundTrip) {
  MirrorManifest m = SampleManifest();
  auto decoded = DecodeManifest(EncodeManifest(m));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  m.immutables[1].policy = "?";
  EXPECT_EQ(decoded->generation, m.generation);
  EXPECT_EQ(decoded->version, m.version);
  EXPECT_EQ(decoded->mode, m.mode);
  EXPECT_EQ(decoded->comparator, m.comparator);
  EXPECT_EQ(decoded->writer, m.writer);
  EXPECT_EQ(decoded->complete_seq, m.complete_seq);
  EXPECT_EQ(decoded->complete_ms, m.complete_ms);
  EXPECT_EQ(decoded->lease_ttl_ms, m.lease_ttl_ms);
  EXPECT_EQ(decoded->grace_ms, m.grace_ms);
  EXPECT_EQ(decoded->immutables, m.immutables);
  EXPECT_EQ(decoded->lives, m.lives);
  MirrorKeys keys("x");
  EXPECT_EQ(
      decoded->FilterKeys(keys),
      (std::vector<std::string>{keys.immutable(5), keys.live(m.writer, 12, 0),
                                keys.live(m.writer, 12, 1)}));
  // Unknown fields (a later format's additions, the writes counter) are
  // skipped.
  auto fields = EncodeManifest(m);
  fields.emplace_back("writes", "99");
  fields.emplace_back("future_field", "whatever");
  EXPECT_TRUE(DecodeManifest(fields).ok());
}

TEST(MirrorFormatTest, ManifestRefusesWhatItDoesNotUnderstand) {
  EXPECT_TRUE(absl::IsNotFound(DecodeManifest({}).status()));
  const auto good = EncodeManifest(SampleManifest());
  auto with = [&](const std::string& field, const std::string& value) {
    auto f = good;
    bool replaced = false;
    for (auto& [k, v] : f) {
      if (k == field) {
        v = value;
        replaced = true;
      }
    }
    if (!replaced) f.emplace_back(field, value);
    return DecodeManifest(f).status();
  };
  auto without = [&](const std::string& field) {
    auto f = good;
    std::erase_if(f, [&](const auto& p) { return p.first == field; });
    return DecodeManifest(f).status();
  };
  for (const char* f : {"format", "generation", "version", "writer"}) {
    absl::Status s = without(f);
    EXPECT_TRUE(absl::IsDataLoss(s)) << f << ": " << s;
    EXPECT_NE(s.message().find(f), absl::string_view::npos) << s;
  }
  const std::pair<const char*, const char*> bad[] = {
      {"format", "3"},
      {"format", "one"},
      {"writer", "1764000000000-0123456789abcde"},   // short
      {"writer", "1764000000000-0123456789abcdeg"},  // not hex
      {"writer", "176400000000x-0123456789abcdef"},
      {"version", "-1"},
      {"version", "12x"},
      {"complete_seq", ""},
      {"sst:5", "0 1032 deadbeef siftdb.BlockedBloom 00"},  // too few fields
      {"sst:5", "0 1032 deadbeeg siftdb.BlockedBloom 00 7a"},
      {"sst:5", "0 1032 deadbeef siftdb.BlockedBloom 0 7a"},  // odd hex
      {"sst:5", "-1 1032 deadbeef siftdb.BlockedBloom 00 7a"},
      {"sst:x", "0 1032 deadbeef siftdb.BlockedBloom 00 7a"},
      {"mem:12", ""},
      {"mem:12", "100:7 400"},
      {"mem:12", "0:7"},
      {"mem:12", "100:31"},
      {"mem:12", "100:0"},
  };
  for (const auto& [field, value] : bad) {
    absl::Status s = with(field, value);
    EXPECT_TRUE(absl::IsDataLoss(s)) << field << "=" << value << ": " << s;
  }
}

// Entry extensions: which filters hold prefixes of which extractor, and
// whether whole keys are in them. Written only when they say something,
// decoded onto their entries, refused when malformed or orphaned.
TEST(MirrorFormatTest, EntryExtensionsRoundTrip) {
  MirrorManifest m = SampleManifest();
  // Without prefixes a manifest is exactly what it was before extensions.
  for (const auto& [f, v] : EncodeManifest(m)) {
    EXPECT_FALSE(f.starts_with("sstx:") || f.starts_with("memx:")) << f;
  }
  m.immutables[0].prefix_extractor = "siftdb.FixedPrefix.4";
  m.immutables[1].whole_keys = false;
  m.immutables[1].prefix_extractor = "my extractor";  // not a token: "?"
  m.immutables[1].policy = "prefixonly.siftdb.BlockedBloom";
  m.lives[0].prefix_extractor = "siftdb.FixedPrefix.4";
  auto fields = EncodeManifest(m);
  std::map<std::string, std::string> by_name(fields.begin(), fields.end());
  EXPECT_EQ(by_name["sstx:5"], "1 siftdb.FixedPrefix.4");
  EXPECT_EQ(by_name["sstx:9"], "0 ?");
  EXPECT_EQ(by_name["memx:12"], "1 siftdb.FixedPrefix.4");
  auto decoded = DecodeManifest(fields);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  m.immutables[1].prefix_extractor = "?";
  EXPECT_EQ(decoded->immutables, m.immutables);
  EXPECT_EQ(decoded->lives, m.lives);
  // Words after the second are a later addition's: ignored.
  for (auto& [f, v] : fields) {
    if (f == "memx:12") v = "1 siftdb.FixedPrefix.4 later words";
  }
  decoded = DecodeManifest(fields);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(decoded->lives, m.lives);
  // "-": prefixes of no extractor.
  bool whole = true;
  std::string name = "x";
  ASSERT_TRUE(DecodeEntryExtension("0 -", &whole, &name).ok());
  EXPECT_FALSE(whole);
  EXPECT_EQ(name, "");
  EXPECT_EQ(EncodeEntryExtension(false, ""), "0 -");

  const auto good = EncodeManifest(m);
  for (const auto& [field, value] :
       std::vector<std::pair<std::string, std::string>>{
           {"sstx:5", ""},
           {"sstx:5", "1"},
           {"sstx:5", "2 siftdb.FixedPrefix.4"},
           {"sstx:5", "yes siftdb.FixedPrefix.4"},
           {"sstx:5", "1 a{b"},
           {"sstx:x", "1 -"},
           {"sstx:6", "1 -"},   // no entry sst:6
           {"memx:13", "1 -"},  // no entry mem:13
           {"sstx:05", "1 -"},  // a second extension of sst:5
       }) {
    auto f = good;
    if (field == "sstx:5") {
      for (auto& [k, v] : f) {
        if (k == field) v = value;
      }
    } else {
      f.emplace_back(field, value);
    }
    absl::Status s = DecodeManifest(f).status();
    EXPECT_TRUE(absl::IsDataLoss(s)) << field << "=" << value << ": " << s;
  }
}

// A reader that predates the extensions skips them as unknown fields: the
// names must never look like entries to it ("sst:" / "mem:" followed by an
// id), and what it decodes is the manifest without them: every entry whole
// keys, no prefixes. Its key answers rest on the policy name, which tags a
// prefix-only filter so that it is never read as holding keys.
TEST(MirrorFormatTest, OlderReadersSkipEntryExtensions) {
  MirrorManifest m = SampleManifest();
  m.immutables[0].whole_keys = false;
  m.immutables[0].policy = "prefixonly.siftdb.BlockedBloom";
  m.immutables[0].prefix_extractor = "siftdb.FixedPrefix.4";
  m.lives[0].prefix_extractor = "siftdb.FixedPrefix.4";
  auto fields = EncodeManifest(m);
  std::vector<std::pair<std::string, std::string>> old_view;
  for (const auto& [f, v] : fields) {
    const bool ext = f.starts_with("sstx:") || f.starts_with("memx:");
    EXPECT_EQ(ext, !f.starts_with("sst:") && !f.starts_with("mem:") &&
                       (f.starts_with("sst") || f.starts_with("mem")))
        << f;
    if (!ext) old_view.emplace_back(f, v);
  }
  auto old = DecodeManifest(old_view);
  ASSERT_TRUE(old.ok()) << old.status();
  ASSERT_EQ(old->immutables.size(), 2u);
  EXPECT_TRUE(old->immutables[0].whole_keys);  // as an older reader sees it
  EXPECT_EQ(old->immutables[0].prefix_extractor, "");
  // ... but its policy is not one an older reader probes keys with.
  EXPECT_FALSE(old->immutables[0].policy.starts_with("siftdb."));
  EXPECT_EQ(old->lives[0].prefix_extractor, "");
}

// Format 1 (before writer fencing and the identity in the lease) is refused
// with a message that says what to do: a new reader answers "maybe".
TEST(MirrorFormatTest, FormatOneIsRefusedByName) {
  auto fields = EncodeManifest(SampleManifest());
  for (auto& [k, v] : fields) {
    if (k == "format") v = "1";
  }
  absl::Status s = DecodeManifest(fields).status();
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find("format 1"), absl::string_view::npos) << s;
  EXPECT_NE(s.message().find("upgrade the engine"), absl::string_view::npos);
}

TEST(MirrorFormatTest, WriterTokensOrderByOpenTime) {
  const std::string a = NewWriterToken();
  EXPECT_TRUE(IsWriterToken(a)) << a;
  absl::SleepFor(absl::Milliseconds(2));
  const std::string b = NewWriterToken();
  EXPECT_LT(a, b);
  EXPECT_NE(a.substr(14), b.substr(14));  // random parts differ
  for (const char* bad :
       {"", "x", "1764000000000_0123456789abcdef",
        "1764000000000-0123456789ABCDEF", "1764000000000-0123456789abcdef0"}) {
    EXPECT_FALSE(IsWriterToken(bad)) << bad;
  }
}

TEST(MirrorFormatTest, LeaseAndIdentity) {
  MirrorLease l{"1764000000000-0123456789abcdef/3",
                "a38bc81027076d96ac885e2183976ebe65973798"};
  MirrorLease d;
  ASSERT_TRUE(DecodeLease(EncodeLease(l), &d));
  EXPECT_EQ(d.token, l.token);
  EXPECT_EQ(d.replid, l.replid);
  for (const char* bad : {"", "token", "token ", " replid", "a b c"}) {
    EXPECT_FALSE(DecodeLease(bad, &d)) << bad;
  }
  RedisIdentity id;
  ASSERT_TRUE(ParseRedisIdentity(
      "# Replication\r\nrole:slave\r\nmaster_host:127.0.0.1\r\n"
      "master_link_status:up\r\nmaster_replid:abc123\r\n"
      "master_replid2:0000\r\n",
      &id));
  EXPECT_EQ(id.role, "slave");
  EXPECT_EQ(id.replid, "abc123");
  EXPECT_EQ(id.link_status, "up");
  EXPECT_FALSE(ParseRedisIdentity("# Replication\r\nrole:master\r\n", &id));
  EXPECT_FALSE(ParseRedisIdentity("", &id));
}

TEST(MirrorFormatTest, SubFilterBytes) {
  MirrorSubFilter s{3, 7};
  std::string e = EmptySubFilter(s);
  EXPECT_EQ(e.size(), 3 * 64 + 8u);
  EXPECT_EQ(e.size(), s.bytes());
  EXPECT_EQ(e.substr(e.size() - 8), SubFilterTrailer(s));
  EXPECT_EQ(SubFilterTrailer(s),
            std::string("\x03\x00\x00\x00\x07\x01\x42\x53", 8));
  FilterBytesInfo info = DescribeFilterBytes(e, 10);
  EXPECT_TRUE(info.valid);
  EXPECT_EQ(info.kind, 'B');
  EXPECT_EQ(info.bitmap_bits, 3 * 512u);
  EXPECT_EQ(info.k, 7);
  EXPECT_FALSE(DescribeFilterBytes("garbage!", 10).valid);
  // A Ribbon table filter: its solution size, r, and the expected rate.
  auto builder = NewRibbonFilterPolicy(10)->NewBuilder();
  for (int i = 0; i < 5000; ++i) builder->AddKey(std::to_string(i));
  std::string ribbon;
  builder->Finish(&ribbon);
  info = DescribeFilterBytes(ribbon, 5000);
  EXPECT_TRUE(info.valid);
  EXPECT_EQ(info.kind, 'R');
  EXPECT_EQ(info.bitmap_bits, (ribbon.size() - 16) * 8);
  EXPECT_EQ(info.k, 6);
  EXPECT_NEAR(info.error_rate, 0.00957, 0.0003);
  EXPECT_FALSE(DescribeFilterBytes("", 10).valid);
}

TEST(MirrorLiveFilterTest, SizingIsMonotonic) {
  MirrorSubFilter prev = SizeSubFilter(10000, 0.02);
  for (double p : {0.01, 0.005, 0.001, 0.0001}) {
    MirrorSubFilter s = SizeSubFilter(10000, p);
    EXPECT_GE(s.num_blocks, prev.num_blocks) << p;
    EXPECT_GE(s.k, prev.k) << p;
    prev = s;
  }
  EXPECT_GE(SizeSubFilter(0, 0.01).num_blocks, 1u);
  EXPECT_GE(SizeSubFilter(100, 0).num_blocks, 1u);  // never crashes
}

// Keys are never lost, at any size, and the chain grows with larger and
// tighter sub-filters.
TEST(MirrorLiveFilterTest, NoFalseNegativesAndGrowth) {
  for (uint64_t n :
       {1ull, 10ull, 999ull, 1000ull, 1001ull, 25000ull, 200000ull}) {
    LiveFilterOptions o;
    o.initial_capacity = 1000;
    o.error_rate = 0.01;
    LiveFilter f(o);
    std::vector<uint64_t> hashes;
    for (uint64_t i = 0; i < n; i++) {
      hashes.push_back(FilterKeyHash(TestKey(static_cast<int>(i))));
    }
    // In pieces, as write groups come.
    for (size_t i = 0; i < hashes.size(); i += 777) {
      f.Add(hashes.data() + i, std::min<size_t>(777, hashes.size() - i),
            nullptr);
    }
    for (uint64_t h : hashes) ASSERT_TRUE(f.HashMayMatch(h)) << n;
    for (int i = 1; i < f.num_subfilters(); i++) {
      EXPECT_GT(f.capacity(i), f.capacity(i - 1));
      EXPECT_LT(f.error_rate(i), f.error_rate(i - 1));
      EXPECT_GT(f.subfilter(i).num_blocks, f.subfilter(i - 1).num_blocks);
      EXPECT_EQ(f.inserted(i - 1), f.capacity(i - 1));  // full before growing
    }
    EXPECT_LE(f.total_inserted(), n);
    EXPECT_GE(f.total_inserted(), n * 95 / 100);  // few FP-suppressed adds
    // The chain stays below its error rate (with slack for chance).
    int fp = 0;
    const int probes = 20000;
    for (int i = 0; i < probes; i++) {
      fp += f.HashMayMatch(FilterKeyHash(AbsentKey(i))) ? 1 : 0;
    }
    EXPECT_LT(fp, probes * 0.02) << n;
    // The entry describes the sub-filters exactly.
    MirrorLiveEntry e = f.Entry(77);
    ASSERT_EQ(e.subfilters.size(), static_cast<size_t>(f.num_subfilters()));
    for (int i = 0; i < f.num_subfilters(); i++) {
      EXPECT_EQ(f.bytes(i).size(), e.subfilters[i].bytes());
      EXPECT_EQ(f.bytes(i).substr(f.bytes(i).size() - 8),
                SubFilterTrailer(e.subfilters[i]));
    }
  }
}

// Replaying deltas onto a copy of the bytes (as Redis sees them)
// reproduces the local bytes exactly.
TEST(MirrorLiveFilterTest, DeltasReproduceTheBytes) {
  LiveFilterOptions o;
  o.initial_capacity = 500;
  LiveFilter f(o);
  LiveFilter::Delta d;  // a new filter: everything is "new"
  std::vector<std::string> remote;
  std::mt19937_64 rng(3);
  int key = 0;
  for (int round = 0; round < 30; round++) {
    std::vector<uint64_t> hashes;
    const int n = static_cast<int>(rng() % 300);
    for (int i = 0; i < n; i++) hashes.push_back(FilterKeyHash(TestKey(key++)));
    f.Add(hashes.data(), hashes.size(), &d);
    // "Send": new sub-filters whole, bits for the others.
    for (int i = 0; i < f.num_subfilters(); i++) {
      if (static_cast<size_t>(i) >= d.first_new) {
        if (remote.size() <= static_cast<size_t>(i)) remote.resize(i + 1);
        remote[i] = f.bytes(i);
      } else {
        for (uint64_t bit : d.bits[i]) {
          remote[i][bit >> 3] |= static_cast<char>(0x80 >> (bit & 7));
        }
      }
    }
    d.Reset(f);
    ASSERT_EQ(remote.size(), static_cast<size_t>(f.num_subfilters()));
    for (int i = 0; i < f.num_subfilters(); i++) {
      ASSERT_EQ(remote[i], f.bytes(i)) << "round " << round << " sub " << i;
    }
  }
  EXPECT_GT(f.num_subfilters(), 2);
}

}  // namespace format_test
}  // namespace siftdb::test
