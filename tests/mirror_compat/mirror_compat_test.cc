// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The Redis mirror stays compatible (docs/compat.md):
//   * the v1 mirror dumps (tests/testdata/compat/v1/<variant>/mirror.txt),
//     loaded into a fresh redis-server with the lease a live writer would
//     hold, get "maybe" for every key from today's RemoteFilter (format 1
//     cannot show which Redis history it belongs to), and never a "no";
//   * the frozen v1 reader (v1_reader.h) reads those dumps as recorded, and
//     reads a mirror written live by today's engine with only "maybe" (it
//     does not know format 2) -- future writers must keep passing this;
//   * the v2 mirror dumps (format 2, prefix entries, partitioned filters),
//     loaded with the writer's lease re-created on the new server, get
//     exactly the recorded answers for keys and prefixes from today's
//     RemoteFilter, and "maybe" for all from the v1 reader.
// Needs a real redis-server (skipped, with the reason, when none exists);
// loopback only, every wait bounded.

#include <algorithm>
#include <cstring>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "gtest/gtest.h"
#include "redis/client/redis_client.h"
#include "siftdb/db.h"
#include "siftdb/filter_policy.h"
#include "siftdb/options.h"
#include "siftdb/remote_filter.h"
#include "siftdb/slice_transform.h"
#include "tests/compat/compat_fixtures.h"
#include "tests/mirror_compat/v1_reader.h"
#include "tests/support/paths.h"
#include "tests/support/redis_server.h"
#include "tests/support/temp_dir.h"

namespace siftdb::compat {
namespace mirror_compat_test {

std::string FixtureDir(int version, const std::string& variant) {
  return absl::StrFormat("%s/tests/testdata/compat/v%d/%s", test::SourceDir(),
                         version, variant);
}

std::string Prefix(const std::string& name) { return "siftdb:{" + name + "}:"; }

// The v1 fixtures' tests; MirrorCompatV2Test reuses its loading for v2.
class MirrorCompatTest : public ::testing::TestWithParam<std::string> {
 protected:
  explicit MirrorCompatTest(int version = 1) : version_(version) {}

  std::string Name() const { return MirrorName(GetParam(), version_); }

  void SetUp() override {
    SIFTDB_REQUIRE_REDIS();
    auto server = test::RedisServer::Start();
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = std::move(*server);
    RedisClientOptions ro;
    ro.endpoint = server_->endpoint();
    ro.retry_deadline = absl::Seconds(2);
    auto redis = RedisClient::Connect(ro);
    ASSERT_TRUE(redis.ok()) << redis.status();
    redis_ = std::move(*redis);
  }

  // Loads the dump of this variant: every key with its exact bytes,
  // except the lease (see HoldLease). Reads the answers too.
  void LoadDump() {
    const std::string dir = FixtureDir(version_, GetParam());
    auto answers = ReadAnswers(dir + "/answers.txt");
    ASSERT_TRUE(answers.ok()) << answers.status();
    answers_ = std::move(*answers);
    keys_.clear();
    manifest_.clear();
    for (const Answer& a : answers_) keys_.push_back(a.key);
    auto dump = ReadDump(dir + "/mirror.txt");
    ASSERT_TRUE(dump.ok()) << dump.status();
    const std::string prefix = Prefix(Name());
    std::vector<RedisArgs> cmds;
    for (const DumpedKey& d : *dump) {
      ASSERT_TRUE(absl::StartsWith(d.key, prefix)) << d.key;
      if (d.key == prefix + "lease") {
        lease_token_ = d.value;
        continue;
      }
      // Nothing but the lease carries a TTL in a settled mirror.
      EXPECT_EQ(d.pttl, -1) << d.key;
      if (!d.is_hash) {
        cmds.push_back(RedisArgs{"SET", d.key, d.value});
        continue;
      }
      RedisArgs hset{"HSET", d.key};
      for (const auto& [f, v] : d.fields) hset.Add(f).Add(v);
      cmds.push_back(std::move(hset));
      if (d.key == prefix + "manifest") {
        for (const auto& [f, v] : d.fields) manifest_[f] = v;
      }
    }
    auto r = redis_->Pipeline(cmds);
    ASSERT_TRUE(r.ok()) << r.status();
    for (const RedisReply& x : *r) ASSERT_FALSE(x.is_error()) << x.str();
    ASSERT_FALSE(lease_token_.empty()) << "the dump holds no lease";
    ASSERT_TRUE(manifest_.count("lease_ttl_ms"));
  }

  // Re-creates the lease exactly as a live writer holds it (docs/
  // redis_mirror.md §3.5): the dumped token (the writer's acquisition,
  // "<16 hex>-<n>") with a TTL of 3/4 of the manifest's lease_ttl_ms,
  // renewed (here: before each probe) as the writer renews it every
  // lease_ttl_ms / 4. The dump's own TTL has long run out: without a lease
  // every reader rightly fails open ("maybe" for all; see
  // WithoutLeaseEveryAnswerIsMaybe), so the recorded "no" answers are only
  // reproducible with the writer's state restored.
  void HoldLease() { SetLease(lease_token_); }

  void SetLease(const std::string& value) {
    const int64_t px = std::stoll(manifest_["lease_ttl_ms"]) * 3 / 4;
    auto r = redis_->Command(
        {"SET", Prefix(Name()) + "lease", value, "PX", std::to_string(px)});
    ASSERT_TRUE(r.ok()) << r.status();
    ASSERT_TRUE(r->is_status()) << r->DebugString();
  }

  std::vector<bool> TodayAnswers(absl::Status* status) {
    auto filter = RemoteFilter::Open(server_->endpoint(), Name());
    EXPECT_TRUE(filter.ok()) << filter.status();
    std::vector<std::string_view> views(keys_.begin(), keys_.end());
    std::vector<bool> maybe;
    if (filter.ok()) *status = (*filter)->MayContainMany(views, &maybe);
    return maybe;
  }

  std::vector<bool> V1Answers(absl::Status* status) {
    auto reader = V1Reader::Connect(server_->endpoint(), Name());
    EXPECT_TRUE(reader.ok()) << reader.status();
    std::vector<bool> maybe;
    if (reader.ok()) *status = (*reader)->MayContain(keys_, &maybe);
    return maybe;
  }

  // Every answer equals the recorded one (so never "no" for a held key),
  // and more than min_no are "no".
  void ExpectRecorded(const std::vector<bool>& maybe, int min_no = 500) {
    ASSERT_EQ(maybe.size(), answers_.size());
    int wrong = 0, no = 0;
    for (size_t i = 0; i < maybe.size(); i++) {
      const Answer& a = answers_[i];
      if (a.value) {
        EXPECT_TRUE(maybe[i]) << "\"no\" for held " << Blob(a.key);
      }
      no += maybe[i] ? 0 : 1;
      if (maybe[i] != a.remote_maybe && ++wrong <= 10) {
        ADD_FAILURE() << Blob(a.key) << ": " << (maybe[i] ? "maybe" : "no")
                      << ", recorded " << (a.remote_maybe ? "maybe" : "no");
      }
    }
    EXPECT_EQ(wrong, 0);
    EXPECT_GT(no, min_no);  // the v1 fixtures record ~1050 "no"
  }

  const int version_;

  std::unique_ptr<test::RedisServer> server_;
  std::unique_ptr<RedisClient> redis_;
  std::vector<Answer> answers_;
  std::vector<std::string> keys_;
  std::string lease_token_;
  std::map<std::string, std::string> manifest_;
};

// Format 1 lacks the writer fence and the server identity in the lease,
// so today's reader cannot tell whether a v1 mirror is current: "maybe"
// for every key, with a status that names the format (docs/redis_mirror.md
// §7, the upgrade order).
TEST_P(MirrorCompatTest, TodayReaderAnswersMaybeForV1Dump) {
  ASSERT_NO_FATAL_FAILURE(LoadDump());
  ASSERT_NO_FATAL_FAILURE(HoldLease());
  absl::Status s;
  std::vector<bool> maybe = TodayAnswers(&s);
  EXPECT_NE(s.message().find("format 1"), absl::string_view::npos) << s;
  ASSERT_EQ(maybe.size(), keys_.size());
  EXPECT_EQ(std::count(maybe.begin(), maybe.end(), true),
            static_cast<long>(keys_.size()));
}

TEST_P(MirrorCompatTest, V1ReaderReadsV1DumpAsRecorded) {
  ASSERT_NO_FATAL_FAILURE(LoadDump());
  ASSERT_NO_FATAL_FAILURE(HoldLease());
  absl::Status s;
  std::vector<bool> maybe = V1Answers(&s);
  EXPECT_TRUE(s.ok()) << s;
  ExpectRecorded(maybe);
}

// The dump as it is (its lease expired): both readers fail open.
TEST_P(MirrorCompatTest, WithoutLeaseEveryAnswerIsMaybe) {
  ASSERT_NO_FATAL_FAILURE(LoadDump());
  for (bool today : {true, false}) {
    absl::Status s;
    std::vector<bool> maybe = today ? TodayAnswers(&s) : V1Answers(&s);
    EXPECT_FALSE(s.ok()) << (today ? "today" : "v1");
    EXPECT_EQ(std::count(maybe.begin(), maybe.end(), true),
              static_cast<long>(keys_.size()))
        << (today ? "today" : "v1");
  }
}

// The v1 reader fails open on what it does not understand: an unknown
// manifest format, a malformed entry, a table filter whose bytes do not
// match the manifest, a live sub-filter of the wrong size. Each damage is
// applied to a freshly loaded dump.
TEST_P(MirrorCompatTest, V1ReaderFailsOpenOnDamage) {
  const std::string prefix = Prefix(Name());
  const std::string manifest = prefix + "manifest";
  struct Damage {
    const char* what;
    bool all_maybe;  // else: more "maybe" than recorded
    // The command, given the first listed "sst:<id>" and "mem:<id>:0" keys
    // and their values.
    std::function<std::vector<std::string>(
        const std::string& sst, const std::string& sst_value,
        const std::string& mem, const std::string& mem_value)>
        command;
  };
  const std::vector<Damage> damages = {
      {"format 2", true,
       [&](auto&, auto&, auto&, auto&) -> std::vector<std::string> {
         return {"HSET", manifest, "format", "2"};
       }},
      {"malformed entry", true,
       [&](const std::string& sst, auto&, auto&,
           auto&) -> std::vector<std::string> {
         return {"HSET", manifest, sst.substr(prefix.size()), "0 1 x"};
       }},
      {"garbage table filter of the right size", false,
       [&](const std::string& sst, const std::string& v, auto&,
           auto&) -> std::vector<std::string> {
         std::string garbage = v;
         for (char& c : garbage) c = static_cast<char>(~c);
         return {"SET", sst, garbage};
       }},
      {"live sub-filter one block short", true,
       [&](auto&, auto&, const std::string& mem,
           const std::string& v) -> std::vector<std::string> {
         return {"SET", mem, v.substr(64)};
       }},
  };
  for (const Damage& d : damages) {
    SCOPED_TRACE(d.what);
    ASSERT_TRUE(server_->FlushAll().ok());
    ASSERT_NO_FATAL_FAILURE(LoadDump());
    std::string sst, mem;
    for (const auto& [f, v] : manifest_) {
      if (sst.empty() && absl::StartsWith(f, "sst:")) sst = prefix + f;
      if (mem.empty() && absl::StartsWith(f, "mem:")) mem = prefix + f + ":0";
    }
    ASSERT_FALSE(sst.empty());
    ASSERT_FALSE(mem.empty());
    auto sst_value = server_->Call({"GET", sst});
    auto mem_value = server_->Call({"GET", mem});
    ASSERT_TRUE(sst_value.ok() && mem_value.ok());
    ASSERT_TRUE(
        server_->Call(d.command(sst, *sst_value, mem, *mem_value)).ok());
    ASSERT_NO_FATAL_FAILURE(HoldLease());
    absl::Status s;
    std::vector<bool> maybe = V1Answers(&s);
    EXPECT_FALSE(s.ok());
    ASSERT_EQ(maybe.size(), answers_.size());
    long n = 0, recorded = 0;
    for (size_t i = 0; i < maybe.size(); i++) {
      n += maybe[i];
      recorded += answers_[i].remote_maybe;
      if (answers_[i].value) {
        EXPECT_TRUE(maybe[i]) << Blob(answers_[i].key);
      }
    }
    if (d.all_maybe) {
      EXPECT_EQ(n, static_cast<long>(maybe.size()));
    } else {
      EXPECT_GT(n, recorded);
    }
  }
}

// A mirror written live by today's engine: the frozen v1 reader answers
// "maybe" or a correct "no", at checkpoints right after writes (sync mode:
// acknowledged keys are in Redis) and once the mirror has settled.
TEST_P(MirrorCompatTest, V1ReaderReadsLiveMirrorSafely) {
  const std::string name = "compat_live_" + GetParam();
  test::TempDir dir;
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 16 << 10;
  o.max_file_size = 16 << 10;
  o.max_bytes_for_level_base = 64 << 10;
  if (GetParam() == "classic")
    o.filter_policy = NewClassicBloomFilterPolicy(10);
  o.remote_filter.mode = RemoteFilterOptions::Mode::kSync;
  o.remote_filter.endpoints = {server_->endpoint()};
  o.remote_filter.name = name;
  o.remote_filter.lease_ttl_ms = 2000;
  o.remote_filter.delete_grace_ms = 300;
  auto opened = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(opened.ok()) << opened.status();
  std::unique_ptr<DB> db = std::move(*opened);

  std::set<std::string> probe;      // written keys and never-written ones
  for (int i = 0; i < 1000; i++) {  // half inside the tables' ranges
    probe.insert(i % 2 ? absl::StrFormat("nope%05d", i)
                       : absl::StrFormat("live%06d~", i));
  }
  auto reader = V1Reader::Connect(server_->endpoint(), name);
  ASSERT_TRUE(reader.ok()) << reader.status();
  // Returns the "no" answers for never-written keys.
  auto check = [&](const char* when) {
    std::vector<std::string> keys(probe.begin(), probe.end());
    std::vector<bool> maybe;
    absl::Status s = (*reader)->MayContain(keys, &maybe);
    int held = 0, no_absent = 0;
    for (size_t i = 0; i < keys.size(); i++) {
      std::string v;
      const bool present = db->Get(ReadOptions(), keys[i], &v).ok();
      held += present;
      if (present) {
        EXPECT_TRUE(maybe[i]) << when << ": \"no\" for held " << keys[i];
      } else if (!maybe[i] && (absl::StartsWith(keys[i], "nope") ||
                               absl::EndsWith(keys[i], "~"))) {
        no_absent++;
      }
    }
    std::printf("%s: %d held, %d never-written answered no; status %s\n", when,
                held, no_absent, s.ToString().c_str());
    return no_absent;
  };
  const WriteOptions wo;
  auto key = [](int i) { return absl::StrFormat("live%06d", i); };
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(db->Put(wo, key(i), absl::StrFormat("a%d", i)).ok());
    probe.insert(key(i));
  }
  check("after puts");
  for (int i = 0; i < 2000; i += 3) {
    ASSERT_TRUE(db->Put(wo, key(i), absl::StrFormat("b%d", i)).ok());
  }
  for (int i = 0; i < 2000; i += 5) ASSERT_TRUE(db->Delete(wo, key(i)).ok());
  check("after overwrites and deletes");
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  check("after a full compaction");
  for (int i = 2000; i < 2600; i++) {
    ASSERT_TRUE(db->Put(wo, key(i), "c").ok());
    probe.insert(key(i));
  }
  check("after more puts");

  // Settled: trusted with nothing queued; a v1-format manifest must then be
  // readable by the v1 reader (some "no" answers), and still safe.
  std::string state;
  const absl::Time deadline = absl::Now() + absl::Seconds(20);
  while (absl::Now() < deadline) {
    db->GetProperty("siftdb.remote-filter", &state);
    if (absl::StrContains(state, "state=trusted") &&
        absl::StrContains(state, "queued=0 ")) {
      break;
    }
    absl::SleepFor(absl::Milliseconds(10));
  }
  ASSERT_TRUE(absl::StrContains(state, "state=trusted")) << state;
  const int no = check("settled");
  auto format = server_->Call({"HGET", Prefix(name) + "manifest", "format"});
  ASSERT_TRUE(format.ok()) << format.status();
  if (*format == "1") {
    EXPECT_EQ((*reader)->watermark().mode, "sync");
    EXPECT_GT((*reader)->watermark().complete_seq, 0u);
    EXPECT_GT(no, 500) << "a v1 mirror, yet few \"no\"";
  } else {
    // Today's engine writes format 2, whose trust rules a v1 reader does
    // not know: it must answer "maybe" for everything (it does: an unknown
    // format).
    EXPECT_EQ(no, 0) << "a v1 reader said \"no\" to a format " << *format
                     << " mirror";
  }
}

INSTANTIATE_TEST_SUITE_P(V1, MirrorCompatTest,
                         ::testing::Values("blocked", "classic"));

// The v2 fixtures (mirror format 2): today's reader answers every key and
// every probed prefix as recorded once the writer's lease stands on the
// server that now holds the dump; the frozen v1 reader answers "maybe".
class MirrorCompatV2Test : public MirrorCompatTest {
 protected:
  MirrorCompatV2Test() : MirrorCompatTest(2) {}

  // The dumped lease is "<token> <replid of the writer's server>". A writer
  // holding the lease on this server would pair its token with this
  // server's replid (docs/redis_mirror.md §3.5).
  void HoldLeaseHere() {
    const size_t space = lease_token_.rfind(' ');
    ASSERT_NE(space, std::string::npos) << "not a format-2 lease";
    auto info = server_->Call({"INFO", "replication"});
    ASSERT_TRUE(info.ok()) << info.status();
    const size_t at = info->find("master_replid:");
    ASSERT_NE(at, std::string::npos) << *info;
    const size_t begin = at + std::strlen("master_replid:");
    const std::string replid =
        info->substr(begin, info->find_first_of("\r\n", begin) - begin);
    ASSERT_FALSE(replid.empty());
    ASSERT_NE(replid, lease_token_.substr(space + 1)) << "same server?";
    SetLease(lease_token_.substr(0, space + 1) + replid);
  }

  // The variant's extractor and the recorded prefix answers (empty for a
  // variant without an extractor).
  void LoadPrefixAnswers() {
    Options o;
    SetFilterOptions(GetParam(), &o);
    ASSERT_NE(o.prefix_extractor, nullptr);
    extractor_ = o.prefix_extractor->Name();
    auto a =
        ReadPrefixAnswers(FixtureDir(2, GetParam()) + "/prefix_answers.txt");
    ASSERT_TRUE(a.ok()) << a.status();
    prefix_answers_ = std::move(*a);
    ASSERT_GT(prefix_answers_.size(), 400u);
  }

  std::vector<bool> TodayPrefixAnswers(absl::Status* status) {
    RemoteFilterReaderOptions ro;
    ro.endpoints = {server_->endpoint()};
    ro.prefix_extractor = extractor_;
    auto filter = RemoteFilter::Open(ro, Name());
    EXPECT_TRUE(filter.ok()) << filter.status();
    std::vector<std::string_view> views;
    for (const PrefixAnswer& a : prefix_answers_) views.push_back(a.prefix);
    std::vector<bool> maybe;
    if (filter.ok()) *status = (*filter)->MayContainPrefixMany(views, &maybe);
    return maybe;
  }

  // Recorded: every answer as recorded (held prefixes were checked "maybe"
  // when writing). Otherwise: "maybe" for all.
  void ExpectPrefixAnswers(const std::vector<bool>& maybe, bool recorded) {
    ASSERT_EQ(maybe.size(), prefix_answers_.size());
    int wrong = 0, no = 0;
    for (size_t i = 0; i < maybe.size(); i++) {
      const bool want = recorded ? prefix_answers_[i].remote_maybe : true;
      no += maybe[i] ? 0 : 1;
      if (maybe[i] != want && ++wrong <= 10) {
        ADD_FAILURE() << Blob(prefix_answers_[i].prefix) << ": "
                      << (maybe[i] ? "maybe" : "no") << ", want "
                      << (want ? "maybe" : "no");
      }
    }
    EXPECT_EQ(wrong, 0);
    if (recorded) EXPECT_GT(no, 300);  // 900 and 392 recorded
  }

  std::string extractor_;
  std::vector<PrefixAnswer> prefix_answers_;
};

TEST_P(MirrorCompatV2Test, TodayReaderReadsV2DumpAsRecorded) {
  ASSERT_NO_FATAL_FAILURE(LoadDump());
  ASSERT_NO_FATAL_FAILURE(LoadPrefixAnswers());
  ASSERT_NO_FATAL_FAILURE(HoldLeaseHere());
  absl::Status s;
  std::vector<bool> maybe = TodayAnswers(&s);
  EXPECT_TRUE(s.ok()) << s;
  // prefix_only's filters hold no whole keys: all "maybe", as recorded.
  ExpectRecorded(maybe, GetParam() == "prefix_only" ? -1 : 500);
  s = absl::OkStatus();
  std::vector<bool> prefix_maybe = TodayPrefixAnswers(&s);
  EXPECT_TRUE(s.ok()) << s;
  ExpectPrefixAnswers(prefix_maybe, /*recorded=*/true);
}

// The lease as dumped names the writer's server, not this one: another
// Redis history, so every key and prefix is "maybe" (and says why).
TEST_P(MirrorCompatV2Test, ALeaseOfAnotherServerIsMaybeForAll) {
  ASSERT_NO_FATAL_FAILURE(LoadDump());
  ASSERT_NO_FATAL_FAILURE(LoadPrefixAnswers());
  ASSERT_NO_FATAL_FAILURE(HoldLease());
  absl::Status s;
  std::vector<bool> maybe = TodayAnswers(&s);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(std::count(maybe.begin(), maybe.end(), true),
            static_cast<long>(keys_.size()));
  s = absl::OkStatus();
  std::vector<bool> prefix_maybe = TodayPrefixAnswers(&s);
  EXPECT_FALSE(s.ok());
  ExpectPrefixAnswers(prefix_maybe, /*recorded=*/false);
}

// The frozen v1 reader does not know format 2: "maybe" for every key.
TEST_P(MirrorCompatV2Test, V1ReaderAnswersMaybeForV2Dump) {
  ASSERT_NO_FATAL_FAILURE(LoadDump());
  ASSERT_NO_FATAL_FAILURE(HoldLeaseHere());
  absl::Status s;
  std::vector<bool> maybe = V1Answers(&s);
  EXPECT_FALSE(s.ok());
  EXPECT_EQ(std::count(maybe.begin(), maybe.end(), true),
            static_cast<long>(keys_.size()));
}

INSTANTIATE_TEST_SUITE_P(V2, MirrorCompatV2Test,
                         ::testing::Values("zstd_dict", "prefix_only"));

}  // namespace mirror_compat_test
}  // namespace siftdb::compat
