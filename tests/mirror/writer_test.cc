// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RedisMirrorWriter against a real redis-server: what a publication leaves
// in Redis, the commit's refusals (a filter the manifest would list that is
// not there, a manifest changed behind the writer's back, a lease taken, a
// commit delivered after its deadline), the lease TTL, and deletion of
// retired filters only after the grace period.

#include "filter/filter_hash.h"
#include "gtest/gtest.h"
#include "redis/mirror/redis_mirror_writer.h"
#include "siftdb/filter_policy.h"
#include "tests/mirror/mirror_test_util.h"
#include "util/crc32c.h"

namespace siftdb::test {
namespace writer_test {

class MirrorWriterTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::FindBinary().empty()) GTEST_SKIP() << "no redis-server";
    auto s = RedisServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }

  RedisMirrorWriterOptions WriterOptions(int64_t grace_ms = 200) {
    RedisMirrorWriterOptions o;
    o.connect.endpoints = {server_->endpoint()};
    o.connect.client.retry_deadline = absl::ZeroDuration();
    o.name = "w";
    o.mode = "sync";
    o.comparator = "siftdb.BytewiseComparator";
    o.lease_ttl_ms = 2000;
    o.grace_ms = grace_ms;
    return o;
  }

  // A real serialized filter over keys [0, n) and its manifest entry.
  ImmutableUpload Table(uint64_t id, int n) {
    auto policy = NewBloomFilterPolicy(10);
    auto builder = policy->NewBuilder();
    for (int i = 0; i < n; i++) builder->AddKey(TestKey(i));
    ImmutableUpload u;
    builder->Finish(&u.bytes);
    u.num_keys = n;
    u.entry.id = id;
    u.entry.level = 1;
    u.entry.size = u.bytes.size();
    u.entry.crc32c = crc32c::Value(u.bytes.data(), u.bytes.size());
    u.entry.policy = policy->Name();
    u.entry.smallest = TestKey(0);
    u.entry.largest = TestKey(n - 1);
    return u;
  }

  std::string Call(const std::vector<std::string>& argv) {
    auto r = server_->Call(argv);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? *r : "";
  }

  std::unique_ptr<RedisServer> server_;
};

TEST_F(MirrorWriterTest, PublishesFiltersMetaManifestAndLease) {
  RedisMirrorWriter w(WriterOptions());
  ImmutableUpload t = Table(5, 1000);
  ASSERT_TRUE(w.PrepareRepublish({t.entry}, [&](const MirrorImmutableEntry&) {
                 return absl::StatusOr<ImmutableUpload>(t);
               }).ok());
  LiveFilterOptions lo;
  lo.initial_capacity = 100;
  LiveFilter live(lo);
  std::vector<uint64_t> h;
  for (int i = 0; i < 250; i++) h.push_back(FilterKeyHash(AbsentKey(i)));
  live.Add(h.data(), h.size(), nullptr);
  ASSERT_GE(live.num_subfilters(), 2);
  const int64_t base = MirrorSteadyMs();
  absl::Status s = w.FinishRepublish({{9, &live}}, 42, 1234, base);
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_TRUE(w.trusted());
  EXPECT_EQ(w.lease_bound_ms(), base + 2000);

  const MirrorKeys& k = w.keys();
  // Filters byte for byte.
  EXPECT_EQ(Call({"GET", k.immutable(5)}), t.bytes);
  for (int i = 0; i < live.num_subfilters(); i++) {
    EXPECT_EQ(Call({"GET", k.live(w.writer_token(), 9, i)}), live.bytes(i));
  }
  // Meta hashes with the required fields.
  for (const char* f :
       {"capacity", "error_rate", "bitmap_size", "hash_count", "inserted_count",
        "version", "level", "smallest", "largest"}) {
    EXPECT_EQ(Call({"HEXISTS", k.immutable_meta(5), f}), "1") << f;
  }
  EXPECT_EQ(Call({"HGET", k.immutable_meta(5), "capacity"}), "1000");
  EXPECT_EQ(Call({"HGET", k.immutable_meta(5), "hash_count"}), "7");
  EXPECT_EQ(Call({"HGET", k.immutable_meta(5), "level"}), "1");
  EXPECT_EQ(Call({"HGET", k.immutable_meta(5), "largest"}), TestKey(999));
  EXPECT_EQ(Call({"HGET", k.live_meta(w.writer_token(), 9), "inserted_count"}),
            std::to_string(live.total_inserted()));
  EXPECT_EQ(Call({"HGET", k.live_meta(w.writer_token(), 9), "subfilters"}),
            std::to_string(live.num_subfilters()));
  // The manifest decodes to what was published.
  auto fields = Call({"HGETALL", k.manifest()});
  std::vector<std::pair<std::string, std::string>> pairs;
  std::vector<std::string> lines = absl::StrSplit(fields, '\n');
  for (size_t i = 0; i + 1 < lines.size(); i += 2) {
    pairs.emplace_back(lines[i], lines[i + 1]);
  }
  auto m = DecodeManifest(pairs);
  ASSERT_TRUE(m.ok()) << m.status();
  EXPECT_EQ(m->generation, w.published().generation);
  EXPECT_EQ(m->version, w.published().version);
  EXPECT_EQ(m->complete_seq, 42u);
  EXPECT_EQ(m->complete_ms, 1234);
  ASSERT_EQ(m->immutables.size(), 1u);
  EXPECT_EQ(m->immutables[0], t.entry);
  ASSERT_EQ(m->lives.size(), 1u);
  EXPECT_EQ(m->lives[0], live.Entry(9));
  // The lease holds a token with a TTL below lease_ttl_ms.
  EXPECT_FALSE(Call({"GET", k.lease()}).empty());
  const int64_t pttl = std::stoll(Call({"PTTL", k.lease()}));
  EXPECT_GT(pttl, 0);
  EXPECT_LE(pttl, w.lease_px_ms());
  EXPECT_LT(w.lease_px_ms(), 2000);
}

TEST_F(MirrorWriterTest, RefusesToListAFilterThatIsNotInRedis) {
  RedisMirrorWriter w(WriterOptions());
  ImmutableUpload t = Table(5, 100);
  auto fetch = [&](const MirrorImmutableEntry&) {
    return absl::StatusOr<ImmutableUpload>(t);
  };
  ASSERT_TRUE(w.PrepareRepublish({t.entry}, fetch).ok());
  ASSERT_TRUE(w.FinishRepublish({}, 0, 0, MirrorSteadyMs()).ok());
  const uint64_t version = w.published().version;
  // List table 6 without uploading it: the commit must refuse.
  ImmutableUpload t6 = Table(6, 50);
  w.StageListing({t.entry, t6.entry}, {});
  absl::Status s = w.Flush(false, MirrorSteadyMs());
  EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(s.message().find(w.keys().immutable(6)), absl::string_view::npos)
      << s;
  EXPECT_FALSE(w.trusted());
  EXPECT_EQ(Call({"HGET", w.keys().manifest(), "version"}),
            std::to_string(version));
  EXPECT_EQ(Call({"HEXISTS", w.keys().manifest(), "sst:6"}), "0");
  // Republished with the upload, it is listed.
  ASSERT_TRUE(w.PrepareRepublish({t.entry, t6.entry},
                                 [&](const MirrorImmutableEntry& e) {
                                   return absl::StatusOr<ImmutableUpload>(
                                       e.id == 5 ? t : t6);
                                 })
                  .ok());
  ASSERT_TRUE(w.FinishRepublish({}, 0, 0, MirrorSteadyMs()).ok());
  EXPECT_EQ(Call({"GET", w.keys().immutable(6)}), t6.bytes);
  EXPECT_GT(w.published().version, version);
  // Staged with its upload in the same pipeline, it is listed too.
  ImmutableUpload t7 = Table(7, 10);
  w.StageUpload(t7);
  w.StageListing({t.entry, t6.entry, t7.entry}, {});
  s = w.Flush(false, MirrorSteadyMs());
  ASSERT_TRUE(s.ok()) << s;
  EXPECT_EQ(Call({"HEXISTS", w.keys().manifest(), "sst:7"}), "1");
}

TEST_F(MirrorWriterTest, NoticesAChangedManifestAndALostLease) {
  RedisMirrorWriter w(WriterOptions());
  ASSERT_TRUE(w.PrepareRepublish({}, [](const MirrorImmutableEntry&) {
                 return absl::StatusOr<ImmutableUpload>(
                     absl::InternalError("unused"));
               }).ok());
  ASSERT_TRUE(w.FinishRepublish({}, 0, 0, MirrorSteadyMs()).ok());
  ASSERT_TRUE(w.Flush(true, MirrorSteadyMs()).ok());  // a renewal
  // Another generation (e.g. Redis failed over to a stale replica).
  Call({"HSET", w.keys().manifest(), "generation", "someone-else"});
  absl::Status s = w.Flush(true, MirrorSteadyMs());
  EXPECT_TRUE(absl::IsAborted(s)) << s;
  EXPECT_FALSE(w.trusted());

  ASSERT_TRUE(w.PrepareRepublish({}, [](const MirrorImmutableEntry&) {
                 return absl::StatusOr<ImmutableUpload>(
                     absl::InternalError("unused"));
               }).ok());
  ASSERT_TRUE(w.FinishRepublish({}, 0, 0, MirrorSteadyMs()).ok());
  // The lease taken by someone else.
  Call({"SET", w.keys().lease(), "intruder"});
  s = w.Flush(true, MirrorSteadyMs());
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("intruder"), absl::string_view::npos) << s;

  // A write pipeline notices a flushed Redis by the lease (and the writes
  // counter).
  ASSERT_TRUE(w.PrepareRepublish({}, [](const MirrorImmutableEntry&) {
                 return absl::StatusOr<ImmutableUpload>(
                     absl::InternalError("unused"));
               }).ok());
  LiveFilter live(LiveFilterOptions{});
  ASSERT_TRUE(w.FinishRepublish({{3, &live}}, 0, 0, MirrorSteadyMs()).ok());
  ASSERT_TRUE(server_->FlushAll().ok());
  LiveFilter::Delta d;
  d.Reset(live);
  uint64_t h = FilterKeyHash("k");
  live.Add(&h, 1, &d);
  w.StageLive(3, live, d);
  s = w.Flush(false, MirrorSteadyMs());
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(w.trusted());
}

// A commit delivered after its deadline is refused: a late renewal can
// never stretch the lease past send time + lease_ttl_ms.
TEST_F(MirrorWriterTest, LateCommitIsRefused) {
  RedisMirrorWriter w(WriterOptions());
  ASSERT_TRUE(w.PrepareRepublish({}, [](const MirrorImmutableEntry&) {
                 return absl::StatusOr<ImmutableUpload>(
                     absl::InternalError("unused"));
               }).ok());
  // "Sent" long ago: its deadline (send + slack on the server's clock) has
  // passed.
  absl::Status s = w.FinishRepublish({}, 0, 0, MirrorSteadyMs() - 60000);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_FALSE(w.trusted());
  EXPECT_EQ(Call({"EXISTS", w.keys().lease()}), "0");
  ASSERT_TRUE(w.PrepareRepublish({}, [](const MirrorImmutableEntry&) {
                 return absl::StatusOr<ImmutableUpload>(
                     absl::InternalError("unused"));
               }).ok());
  ASSERT_TRUE(w.FinishRepublish({}, 0, 0, MirrorSteadyMs()).ok());
  s = w.Flush(true, MirrorSteadyMs() - 60000);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
}

// The watermark moves only inside the commit that checks everything: a
// refused commit (here: delivered after its deadline) leaves both the
// listing and complete_seq / complete_ms as they were. (Format 1 wrote the
// watermark with a plain HSET before the commit, so a refused commit left a
// watermark covering keys no listed filter held.)
TEST_F(MirrorWriterTest, RefusedCommitMovesNoWatermark) {
  RedisMirrorWriter w(WriterOptions());
  ASSERT_TRUE(w.PrepareRepublish({}, [](const MirrorImmutableEntry&) {
                 return absl::StatusOr<ImmutableUpload>(
                     absl::InternalError("unused"));
               }).ok());
  ASSERT_TRUE(w.FinishRepublish({}, 42, 1000, MirrorSteadyMs()).ok());
  LiveFilterOptions lo;
  lo.initial_capacity = 100;
  LiveFilter live(lo);
  LiveFilter::Delta delta;
  std::vector<uint64_t> h = {FilterKeyHash("k1"), FilterKeyHash("k2")};
  live.Add(h.data(), h.size(), &delta);
  w.StageLive(10, live, delta);
  w.StageListing({}, {live.Entry(10)});
  w.StageWatermark(999, 5000);
  absl::Status s = w.Flush(/*renew=*/true, MirrorSteadyMs() - 60000);
  EXPECT_TRUE(absl::IsDeadlineExceeded(s)) << s;
  EXPECT_EQ(Call({"HGET", w.keys().manifest(), "complete_seq"}), "42");
  EXPECT_EQ(Call({"HGET", w.keys().manifest(), "complete_ms"}), "1000");
  EXPECT_EQ(Call({"HEXISTS", w.keys().manifest(), "mem:10"}), "0");
}

// A writer whose manifest a later engine open took over is fenced for
// good: its commits are refused (and say by whom), it never republishes,
// and its raw filter writes land under its own key names only.
TEST_F(MirrorWriterTest, LaterWriterFencesTheEarlierOne) {
  RedisMirrorWriterOptions early = WriterOptions();
  early.writer_token = "1764000000000-00000000000000aa";
  RedisMirrorWriterOptions late = WriterOptions();
  late.writer_token = "1764000000001-00000000000000bb";
  RedisMirrorWriter a(early), b(late);
  auto none = [](const MirrorImmutableEntry&) {
    return absl::StatusOr<ImmutableUpload>(absl::InternalError("unused"));
  };
  ASSERT_TRUE(a.PrepareRepublish({}, none).ok());
  ASSERT_TRUE(a.FinishRepublish({}, 1, 1, MirrorSteadyMs()).ok());
  ASSERT_TRUE(b.PrepareRepublish({}, none).ok());
  ASSERT_TRUE(b.FinishRepublish({}, 2, 2, MirrorSteadyMs()).ok());
  EXPECT_EQ(Call({"HGET", b.keys().manifest(), "writer"}), late.writer_token);
  a.StageWatermark(7, 7);
  absl::Status s = a.Flush(true, MirrorSteadyMs());
  EXPECT_TRUE(a.fenced()) << s;
  EXPECT_NE(s.message().find(late.writer_token), absl::string_view::npos) << s;
  s = a.PrepareRepublish({}, none);
  EXPECT_FALSE(s.ok());
  EXPECT_TRUE(a.fenced());
  EXPECT_EQ(Call({"HGET", b.keys().manifest(), "complete_seq"}), "2");
  // The earlier writer may not take the mirror back, not even by a full
  // publication; the later one keeps it.
  EXPECT_TRUE(b.trusted());
  EXPECT_TRUE(b.Flush(true, MirrorSteadyMs()).ok());
}

TEST_F(MirrorWriterTest, RetiredFiltersAreDeletedAfterTheGracePeriod) {
  RedisMirrorWriter w(WriterOptions(/*grace_ms=*/400));
  ImmutableUpload a = Table(5, 100), b = Table(6, 100);
  ASSERT_TRUE(w.PrepareRepublish({a.entry, b.entry},
                                 [&](const MirrorImmutableEntry& e) {
                                   return absl::StatusOr<ImmutableUpload>(
                                       e.id == 5 ? a : b);
                                 })
                  .ok());
  ASSERT_TRUE(w.FinishRepublish({}, 0, 0, MirrorSteadyMs()).ok());
  // Table 5 is compacted away.
  w.StageListing({b.entry}, {});
  const int64_t unlisted = MirrorSteadyMs();
  ASSERT_TRUE(w.Flush(false, MirrorSteadyMs()).ok());
  EXPECT_EQ(Call({"HEXISTS", w.keys().manifest(), "sst:5"}), "0");
  ASSERT_TRUE(w.DeleteRetired().ok());
  if (MirrorSteadyMs() < unlisted + 400) {
    // Within the grace period: still there for readers of the old version.
    EXPECT_EQ(Call({"EXISTS", w.keys().immutable(5)}), "1");
  }
  EXPECT_GE(w.next_deletion_ms(), unlisted + 400);
  absl::SleepFor(absl::Milliseconds(450));
  ASSERT_TRUE(w.DeleteRetired().ok());
  EXPECT_EQ(Call({"EXISTS", w.keys().immutable(5)}), "0");
  EXPECT_EQ(Call({"EXISTS", w.keys().immutable_meta(5)}), "0");
  EXPECT_EQ(Call({"EXISTS", w.keys().immutable(6)}), "1");
  EXPECT_EQ(w.next_deletion_ms(), INT64_MAX);
}

}  // namespace writer_test
}  // namespace siftdb::test
