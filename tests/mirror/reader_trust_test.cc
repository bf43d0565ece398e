// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The reader against mirrors written by hand into a real redis-server:
// whom it trusts (the lease must name this server's replication id; a
// replica only when asked) and what hostile data can make one batch cost
// (the caps of RemoteFilterReaderOptions: above one, "maybe" and a
// ResourceExhausted status naming it; never a crash or an unbounded
// allocation). A well-formed crafted mirror is trusted first, so each
// refusal below is the cap or rule under test, not a broken fixture.

#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "redis/mirror/redis_mirror_format.h"
#include "siftdb/remote_filter.h"
#include "tests/mirror/mirror_test_util.h"
#include "tests/support/redis_server.h"

namespace siftdb::test {
namespace reader_trust_test {

constexpr char kWriter[] = "1764000000000-00000000000000aa";

class ReaderTrustTest : public ::testing::Test {
 protected:
  void SetUp() override {
    SIFTDB_REQUIRE_REDIS();
    auto s = RedisServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
    auto info = server_->Call({"INFO", "replication"});
    ASSERT_TRUE(info.ok()) << info.status();
    RedisIdentity id;
    ASSERT_TRUE(ParseRedisIdentity(*info, &id)) << *info;
    replid_ = id.replid;
  }

  std::string Call(const std::vector<std::string>& argv) {
    auto r = server_->Call(argv);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : "";
  }

  // A format-2 manifest named "crafted" listing `lives` (each sub-filter
  // stored empty, so every probe of an absent key says no), held by a
  // lease that names this server.
  void Publish(const std::vector<MirrorLiveEntry>& lives,
               const std::vector<MirrorImmutableEntry>& tables = {},
               bool store_values = true) {
    MirrorManifest m;
    m.generation = "0123456789abcdef";
    m.version = 1;
    m.mode = "sync";
    m.comparator = "siftdb.BytewiseComparator";
    m.writer = kWriter;
    m.lease_ttl_ms = 10000;
    m.grace_ms = 10000;
    m.lives = lives;
    m.immutables = tables;
    std::vector<std::string> hset = {"HSET", keys_.manifest()};
    for (const auto& [f, v] : EncodeManifest(m)) {
      hset.push_back(f);
      hset.push_back(v);
    }
    Call({"DEL", keys_.manifest()});
    Call(hset);
    if (store_values) {
      for (const MirrorLiveEntry& e : lives) {
        for (size_t i = 0; i < e.subfilters.size(); i++) {
          Call({"SET", keys_.live(kWriter, e.id, static_cast<int>(i)),
                EmptySubFilter(e.subfilters[i])});
        }
      }
    }
    HoldLease(replid_);
  }

  void HoldLease(const std::string& replid) {
    Call({"SET", keys_.lease(), EncodeLease({"tok/1", replid}), "PX", "60000"});
  }

  static std::vector<MirrorLiveEntry> Lives(int entries, int subfilters,
                                            uint32_t blocks, int k) {
    std::vector<MirrorLiveEntry> out;
    for (int e = 0; e < entries; e++) {
      MirrorLiveEntry l;
      l.id = 100 + e;
      for (int i = 0; i < subfilters; i++) l.subfilters.push_back({blocks, k});
      out.push_back(l);
    }
    return out;
  }

  // (number of "no" answers, status) for `n` absent keys.
  std::pair<size_t, absl::Status> Probe(const RemoteFilterReaderOptions& o,
                                        int n) {
    auto reader = RemoteFilter::Open(o, "crafted");
    EXPECT_TRUE(reader.ok()) << reader.status();
    if (!reader.ok()) return {0, reader.status()};
    std::vector<std::string> keys;
    for (int i = 0; i < n; i++) keys.push_back(AbsentKey(i));
    absl::Status s;
    const size_t no = CountNo(reader->get(), keys, &s);
    return {no, s};
  }

  RemoteFilterReaderOptions Options() const {
    RemoteFilterReaderOptions o;
    o.endpoints = {server_->endpoint()};
    return o;
  }

  std::unique_ptr<RedisServer> server_;
  MirrorKeys keys_{"crafted"};
  std::string replid_;
};

TEST_F(ReaderTrustTest, CraftedMirrorIsTrusted) {
  Publish(Lives(1, 2, 16, 7));
  auto [no, s] = Probe(Options(), 100);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(no, 100u);
}

TEST_F(ReaderTrustTest, LeaseOfAnotherServerHistoryIsNotTrusted) {
  Publish(Lives(1, 2, 16, 7));
  // What a restart from persistence or a promoted replica looks like: the
  // lease names the replication id the commit ran under, not this one's.
  HoldLease("f00dfeedf00dfeedf00dfeedf00dfeedf00dfeed");
  auto [no, s] = Probe(Options(), 100);
  EXPECT_EQ(no, 0u);
  EXPECT_NE(s.message().find("replication id"), absl::string_view::npos) << s;
  // A format-1 lease (a bare token) is not understood: maybe.
  Call({"SET", keys_.lease(), "0123456789abcdef-1", "PX", "60000"});
  std::tie(no, s) = Probe(Options(), 100);
  EXPECT_EQ(no, 0u);
  EXPECT_FALSE(s.ok());
}

TEST_F(ReaderTrustTest, TooManyLiveSubFiltersAnswerMaybe) {
  Publish(Lives(5, 60, 1, 7), {}, /*store_values=*/false);  // 300 > 256
  auto [no, s] = Probe(Options(), 100);
  EXPECT_EQ(no, 0u);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(s.message().find("max_live_subfilters"), absl::string_view::npos);
  RemoteFilterReaderOptions o = Options();
  o.max_live_subfilters = 300;
  Publish(Lives(5, 60, 1, 7));
  std::tie(no, s) = Probe(o, 100);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(no, 100u);
}

TEST_F(ReaderTrustTest, BitReadsPerBatchAreCapped) {
  // 4 sub-filters of 30 probes, large enough to be probed bit by bit: 100
  // keys cost 12,000 bit reads.
  Publish(Lives(1, 4, 20000, 30));
  RemoteFilterReaderOptions o = Options();
  o.max_probe_ops_per_batch = 1000;
  auto [no, s] = Probe(o, 100);
  EXPECT_EQ(no, 0u);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(s.message().find("max_probe_ops_per_batch"),
            absl::string_view::npos);
  o.max_probe_ops_per_batch = 12000;
  std::tie(no, s) = Probe(o, 100);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_EQ(no, 100u);
}

TEST_F(ReaderTrustTest, HugeTableFiltersAreNotFetched) {
  MirrorImmutableEntry t;
  t.id = 5;
  t.level = 1;
  t.size = uint64_t{3} << 30;  // claims 3 GiB
  t.crc32c = 1;
  t.policy = "siftdb.BlockedBloom";
  t.smallest = "a";
  t.largest = "z";
  Publish({}, {t});
  auto [no, s] = Probe(Options(), 100);  // "absent..." is in [a, z]
  EXPECT_EQ(no, 0u);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(s.message().find("max_cached_filter_bytes"),
            absl::string_view::npos);
}

TEST_F(ReaderTrustTest, ManifestFieldsAreCappedBeforeFetching) {
  Publish(Lives(1, 2, 16, 7));
  RemoteFilterReaderOptions o = Options();
  o.max_manifest_fields = 5;
  auto [no, s] = Probe(o, 100);
  EXPECT_EQ(no, 0u);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
  EXPECT_NE(s.message().find("max_manifest_fields"), absl::string_view::npos);
}

// The hostile manifest: a few KB listing thousands of sub-filters
// of 2^32-1 blocks and 30 probes, read with a 10,000-key batch. Before the
// caps this allocated without bound (std::bad_alloc in sift_probe).
TEST_F(ReaderTrustTest, HostileManifestStaysBounded) {
  Publish(Lives(64, 64, 0xffffffffu, 30), {}, /*store_values=*/false);
  RemoteFilterReaderOptions o = Options();
  o.max_live_subfilters = 1 << 20;  // let it through to the per-batch caps
  auto [no, s] = Probe(o, 10000);
  EXPECT_EQ(no, 0u);
  EXPECT_TRUE(absl::IsResourceExhausted(s)) << s;
}

}  // namespace reader_trust_test
}  // namespace siftdb::test
