// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Remote prefix checks (RemoteFilter::MayContainPrefix[Many]) against the
// mirror of a real DB in a real redis-server: 100,000 keys over MemTables
// and tables with no false negative, also while writes and flushes run;
// most absent prefixes rejected; tables without the extractor or with
// another one make the answer "maybe" with a reason; a prefix-only DB
// answers prefixes and leaves keys "maybe"; tables with partitioned filters
// answer prefixes from the right partition; and a reader that predates the
// manifest's entry extensions, reading the same mirror, never says "no"
// wrongly.

#include <atomic>
#include <mutex>
#include <thread>

#include "absl/strings/str_format.h"
#include "filter/partitioned_filter.h"
#include "gtest/gtest.h"
#include "siftdb/slice_transform.h"
#include "siftdb/write_batch.h"
#include "tests/mirror/mirror_test_util.h"

namespace siftdb::test {
namespace mirror_prefix_test {

using Mode = RemoteFilterOptions::Mode;

// Keys "p<5 digits>:<3 digits>"; the prefix is the first 6 bytes.
constexpr size_t kPrefixLen = 6;
std::string Prefix(int p) { return absl::StrFormat("p%05d", p); }
std::string PrefixedKey(int p, int j) {
  return absl::StrFormat("%s:%03d", Prefix(p), j);
}

size_t CountPrefixNo(RemoteFilter* filter,
                     const std::vector<std::string>& prefixes,
                     absl::Status* status = nullptr) {
  std::vector<std::string_view> views(prefixes.begin(), prefixes.end());
  std::vector<bool> answers;
  absl::Status s = filter->MayContainPrefixMany(views, &answers);
  if (status != nullptr) *status = s;
  EXPECT_EQ(answers.size(), prefixes.size());
  size_t no = 0;
  for (bool a : answers) no += a ? 0 : 1;
  return no;
}

class MirrorPrefixTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::FindBinary().empty()) GTEST_SKIP() << "no redis-server";
    auto s = RedisServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }

  Options PrefixOptions(const std::string& name, size_t prefix_len) {
    Options o = MirrorOptions({server_->endpoint()}, name, Mode::kSync);
    if (prefix_len > 0)
      o.prefix_extractor = NewFixedPrefixTransform(prefix_len);
    return o;
  }

  std::unique_ptr<RemoteFilter> OpenReader(const std::string& name,
                                           const std::string& extractor = "") {
    RemoteFilterReaderOptions ro;
    ro.endpoints = {server_->endpoint()};
    ro.prefix_extractor = extractor;
    auto r = RemoteFilter::Open(ro, name);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::move(*r) : nullptr;
  }

  // Writes `per` keys of each prefix in [first, last) stepping by `step`,
  // in batches of about 500 keys.
  static void WritePrefixes(DB* db, int first, int last, int step, int per) {
    WriteBatch b;
    for (int p = first; p < last; p += step) {
      for (int j = 0; j < per; j++) b.Put(PrefixedKey(p, j), "value");
      if (b.Count() >= 500) {
        ASSERT_TRUE(db->Write(WriteOptions(), &b).ok());
        b.Clear();
      }
    }
    if (b.Count() > 0) {
      ASSERT_TRUE(db->Write(WriteOptions(), &b).ok());
    }
  }

  void Settle(DB* db, const std::string& name, const std::string& dir) {
    ASSERT_TRUE(Impl(db)->FlushMemTable().ok());
    ASSERT_TRUE(Impl(db)->WaitForBackgroundWork().ok());
    ASSERT_TRUE(WaitMirrorSettled(db, server_.get(), name, dir))
        << MirrorState(db);
  }

  std::unique_ptr<RedisServer> server_;
};

// 100,000 keys (20,000 prefixes of 5 keys, even numbers) spread over
// MemTables and tables, then all in tables: every present prefix "maybe",
// most odd (absent) prefixes "no"; then a reader running while writes and
// flushes go on never misses an acknowledged prefix.
TEST_F(MirrorPrefixTest, NoFalseNegativesOverMemTablesAndTables) {
  TempDir dir;
  Options o = PrefixOptions("pfx", kPrefixLen);
  o.write_buffer_size = 512 << 10;
  o.max_file_size = 256 << 10;
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  auto reader = OpenReader("pfx", "siftdb.FixedPrefix.6");
  ASSERT_NE(reader, nullptr);
  WritePrefixes(db->get(), 0, 40000, 2, 5);

  std::vector<std::string> present, absent;
  for (int p = 0; p < 40000; p += 2) {
    present.push_back(Prefix(p));
    absent.push_back(Prefix(p + 1));
  }
  // Right after the writes: the newest keys are only in MemTables.
  absl::Status s;
  EXPECT_EQ(CountPrefixNo(reader.get(), present, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  size_t no = CountPrefixNo(reader.get(), absent, &s);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_GT(no, absent.size() * 9 / 10) << "absent prefixes rejected";
  // One at a time, too.
  EXPECT_TRUE(reader->MayContainPrefix(Prefix(39998), &s));
  EXPECT_TRUE(s.ok()) << s;

  Settle(db->get(), "pfx", dir.path());
  EXPECT_EQ(CountPrefixNo(reader.get(), present, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  no = CountPrefixNo(reader.get(), absent, &s);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_GT(no, absent.size() * 95 / 100);
  // Prefixes outside every table's range: no table is asked.
  std::vector<std::string> beyond = {"p99999", "a00000", "q00000"};
  EXPECT_EQ(CountPrefixNo(reader.get(), beyond, &s), beyond.size());
  // Whole keys are still answered.
  std::vector<std::string> keys;
  for (int p = 0; p < 40000; p += 2) keys.push_back(PrefixedKey(p, 4));
  EXPECT_EQ(CountNo(reader.get(), keys, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;

  // Writes (new prefixes), flushes and compactions while a reader checks
  // every prefix acknowledged before its probe began.
  std::atomic<int> acked{40000};
  std::atomic<bool> stop{false};
  std::mutex mu;
  std::vector<std::string> missed;
  std::thread checker([&] {
    auto r = OpenReader("pfx");  // the extractor the filters agree on
    ASSERT_NE(r, nullptr);
    while (!stop.load()) {
      const int upto = acked.load();
      std::vector<std::string> probe;
      for (int p = 40000; p < upto; p++) probe.push_back(Prefix(p));
      if (probe.empty()) continue;
      std::vector<std::string_view> views(probe.begin(), probe.end());
      std::vector<bool> answers;
      r->MayContainPrefixMany(views, &answers).IgnoreError();
      std::lock_guard<std::mutex> l(mu);
      for (size_t i = 0; i < probe.size(); i++) {
        if (!answers[i]) missed.push_back(probe[i]);
      }
    }
  });
  for (int p = 40000; p < 46000; p += 200) {
    WritePrefixes(db->get(), p, p + 200, 1, 2);
    acked.store(p + 200);
    if (p % 1000 == 0) {
      ASSERT_TRUE(Impl(db->get())->FlushMemTable().ok());
    }
  }
  stop.store(true);
  checker.join();
  EXPECT_TRUE(missed.empty())
      << missed.size() << " prefixes missed, first " << missed.front();
}

// Tables written without an extractor, or under another one, cannot reject
// a prefix: the answer is "maybe" and the status names the table. Tables
// whose range cannot hold the prefix are not asked.
TEST_F(MirrorPrefixTest, TablesWithoutOrWithAnotherExtractorAnswerMaybe) {
  TempDir dir;
  {
    Options o = PrefixOptions("mixed", 0);  // no extractor
    o.disable_auto_compactions = true;
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    WritePrefixes(db->get(), 0, 2000, 2, 2);  // p00000..p01998
    Settle(db->get(), "mixed", dir.path());
  }
  {
    Options o = PrefixOptions("mixed", kPrefixLen);
    o.disable_auto_compactions = true;
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    WritePrefixes(db->get(), 5000, 7000, 2, 2);  // p05000..p06998
    Settle(db->get(), "mixed", dir.path());
    auto reader = OpenReader("mixed");
    ASSERT_NE(reader, nullptr);
    absl::Status s;
    // In the old table's range: maybe, and why.
    EXPECT_TRUE(reader->MayContainPrefix(Prefix(1001), &s));
    EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
    EXPECT_NE(s.message().find("holds no prefixes"), absl::string_view::npos)
        << s;
    // Only in the new table's range: answered by its filter.
    std::vector<std::string> absent, present;
    for (int p = 5001; p < 7000; p += 2) absent.push_back(Prefix(p));
    for (int p = 5000; p < 7000; p += 2) present.push_back(Prefix(p));
    EXPECT_GT(CountPrefixNo(reader.get(), absent, &s), absent.size() * 9 / 10);
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_EQ(CountPrefixNo(reader.get(), present, &s), 0u);
    // A prefix of a length the extractor never produces.
    EXPECT_TRUE(reader->MayContainPrefix("p0500", &s));
    EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
    // A reader expecting another extractor: maybe for everything.
    auto other = OpenReader("mixed", "siftdb.FixedPrefix.7");
    ASSERT_NE(other, nullptr);
    EXPECT_EQ(CountPrefixNo(other.get(), absent, &s), 0u);
    EXPECT_NE(s.message().find("not of siftdb.FixedPrefix.7"),
              absl::string_view::npos)
        << s;
  }
  {
    // Reopened under another extractor: the live filter holds its
    // prefixes, the tables another's; none may answer for the other.
    Options o = PrefixOptions("mixed", 5);
    o.disable_auto_compactions = true;
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    WritePrefixes(db->get(), 9000, 9010, 2, 2);
    ASSERT_TRUE(WaitUntil([&] { return MirrorTrusted(db->get()); }));
    auto reader = OpenReader("mixed");
    ASSERT_NE(reader, nullptr);
    absl::Status s;
    EXPECT_TRUE(reader->MayContainPrefix(Prefix(5001), &s));
    EXPECT_NE(s.message().find("siftdb.FixedPrefix.6, not of "
                               "siftdb.FixedPrefix.5"),
              absl::string_view::npos)
        << s;
    // Beyond every table: only the live filter, of the new extractor.
    EXPECT_FALSE(reader->MayContainPrefix("p9999", &s)) << s;
    EXPECT_TRUE(reader->MayContainPrefix("p0900", &s)) << s;  // in MemTable
  }
}

// A capped extractor: a key shorter than the cap is its own prefix; a
// prefix longer than the cap cannot come from it and is "maybe".
TEST_F(MirrorPrefixTest, CappedPrefixes) {
  TempDir dir;
  Options o = PrefixOptions("capped", 0);
  o.prefix_extractor = NewCappedPrefixTransform(4);
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  WriteBatch b;
  for (const char* k : {"ab", "abcdef", "abcdxy", "wxyz0", "wxyz1"}) {
    b.Put(k, "v");
  }
  ASSERT_TRUE((*db)->Write(WriteOptions(), &b).ok());
  auto reader = OpenReader("capped", "siftdb.CappedPrefix.4");
  ASSERT_NE(reader, nullptr);
  absl::Status s;
  for (const char* p : {"ab", "abcd", "wxyz"}) {
    EXPECT_TRUE(reader->MayContainPrefix(p, &s)) << p;
    EXPECT_TRUE(s.ok()) << s;
  }
  EXPECT_TRUE(reader->MayContainPrefix("abcde", &s));
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  Settle(db->get(), "capped", dir.path());
  for (const char* p : {"ab", "abcd", "wxyz"}) {
    EXPECT_TRUE(reader->MayContainPrefix(p, &s)) << p;
    EXPECT_TRUE(s.ok()) << s;
  }
  // Absent prefixes inside the table's range: mostly rejected.
  std::vector<std::string> absent;
  for (int i = 0; i < 1000; i++) absent.push_back(absl::StrFormat("m%03d", i));
  EXPECT_GT(CountPrefixNo(reader.get(), absent, &s), 950u);
  EXPECT_TRUE(s.ok()) << s;
}

// Tables with partitioned filters (partition_filters, small partitions),
// keeping whole keys and prefixes or prefixes only: the remote reader finds
// each prefix in its partition: no present prefix "no", most absent ones
// (inside the tables' ranges) "no"; keys too when the filters hold them,
// and exactly as the local tables answer.
TEST_F(MirrorPrefixTest, PartitionedTablesAnswerPrefixes) {
  for (bool whole : {true, false}) {
    SCOPED_TRACE(whole ? "keys and prefixes" : "prefixes only");
    TempDir dir;
    const std::string name = whole ? "ppw" : "ppo";
    Options o = PrefixOptions(name, kPrefixLen);
    o.partition_filters = true;
    o.filter_partition_size = 256;
    o.whole_key_filtering = whole;
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    WritePrefixes(db->get(), 0, 20000, 2, 5);
    Settle(db->get(), name, dir.path());
    std::vector<LocalTable> tables = OpenLocalTables(dir.path());
    ASSERT_FALSE(tables.empty());
    // (A small table's filter may fit one partition: an ordinary one.)
    size_t partitioned = 0;
    for (const LocalTable& t : tables) {
      std::string bytes;
      ASSERT_TRUE(t.table->CopyFilter(&bytes).ok());
      partitioned += IsPartitionedFilter(bytes) ? 1 : 0;
    }
    EXPECT_GT(partitioned, tables.size() / 2);
    auto reader = OpenReader(name, "siftdb.FixedPrefix.6");
    ASSERT_NE(reader, nullptr);
    std::vector<std::string> present, absent;
    for (int p = 0; p < 20000; p += 2) {
      present.push_back(Prefix(p));
      absent.push_back(Prefix(p + 1));
    }
    absl::Status s;
    EXPECT_EQ(CountPrefixNo(reader.get(), present, &s), 0u);
    EXPECT_TRUE(s.ok()) << s;
    EXPECT_GT(CountPrefixNo(reader.get(), absent, &s),
              absent.size() * 95 / 100);
    std::vector<std::string> keys, inside;
    for (int p = 0; p < 20000; p += 2) {
      keys.push_back(PrefixedKey(p, 3));
      inside.push_back(PrefixedKey(p, 7));  // absent, its prefix present
    }
    EXPECT_EQ(CountNo(reader.get(), keys, &s), 0u);
    std::vector<std::string_view> views(inside.begin(), inside.end());
    std::vector<bool> answers;
    s = reader->MayContainMany(views, &answers);
    EXPECT_TRUE(s.ok() || !whole) << s;
    ASSERT_EQ(answers.size(), inside.size());
    size_t no = 0;
    // Prefix-only filters reject no key: only keys between the tables'
    // ranges are "no", locally and remotely alike.
    for (size_t i = 0; i < inside.size(); i++) {
      EXPECT_EQ(answers[i], LocalMayContain(tables, inside[i])) << inside[i];
      no += answers[i] ? 0 : 1;
    }
    if (whole) {
      EXPECT_GT(no, inside.size() * 9 / 10);
    } else {
      EXPECT_LT(no, inside.size() / 20);
    }
  }
}

// whole_key_filtering = false: the tables' filters hold prefixes only.
// Keys they cover are "maybe" (never a false "no"); prefixes are answered
// by the filters. Then a reader that predates the manifest's extensions
// (the same manifest without them, as it decodes it) reads the same
// filters: keys as before, prefixes all "maybe".
TEST_F(MirrorPrefixTest, PrefixOnlyTablesAndOlderReaders) {
  TempDir dir;
  Options o = PrefixOptions("ponly", kPrefixLen);
  o.whole_key_filtering = false;
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  WritePrefixes(db->get(), 0, 20000, 2, 2);
  Settle(db->get(), "ponly", dir.path());
  WritePrefixes(db->get(), 20000, 20100, 2, 2);  // some in the MemTable
  ASSERT_TRUE(WaitUntil([&] {
    return MirrorState(db->get()).find("queued=0 ") != std::string::npos;
  }));
  auto reader = OpenReader("ponly", "siftdb.FixedPrefix.6");
  ASSERT_NE(reader, nullptr);
  std::vector<std::string> present, absent, keys, absent_keys;
  for (int p = 0; p < 20100; p += 2) {
    present.push_back(Prefix(p));
    absent.push_back(Prefix(p + 1));
    keys.push_back(PrefixedKey(p, 1));
    absent_keys.push_back(PrefixedKey(p, 7));
  }
  absl::Status s;
  EXPECT_EQ(CountPrefixNo(reader.get(), present, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_GT(CountPrefixNo(reader.get(), absent, &s), absent.size() * 95 / 100);
  EXPECT_EQ(CountNo(reader.get(), keys, &s), 0u);
  // Absent keys inside the tables: the prefix-only filters cannot say no.
  EXPECT_LT(CountNo(reader.get(), absent_keys, &s), absent_keys.size() / 50);

  auto m = ReadManifest(server_.get(), "ponly");
  ASSERT_TRUE(m.ok()) << m.status();
  ASSERT_FALSE(m->immutables.empty());
  for (const auto& e : m->immutables) {
    EXPECT_FALSE(e.whole_keys) << e.id;
    EXPECT_EQ(e.prefix_extractor, "siftdb.FixedPrefix.6") << e.id;
    EXPECT_TRUE(e.policy.starts_with("prefixonly.")) << e.policy;
  }
  ASSERT_FALSE(m->lives.empty());
  for (const auto& e : m->lives) {
    EXPECT_TRUE(e.whole_keys);
    EXPECT_EQ(e.prefix_extractor, "siftdb.FixedPrefix.6");
  }

  // The older reader: copy the mirror under another name, its manifest
  // without the extension fields (what a reader that skips them decodes),
  // the filters byte for byte, and a lease naming this server.
  MirrorKeys src("ponly"), dst("ponly-old");
  auto all = server_->Call({"HGETALL", src.manifest()});
  ASSERT_TRUE(all.ok());
  std::vector<std::string> lines = absl::StrSplit(*all, '\n');
  std::vector<std::string> hset = {"HSET", dst.manifest()};
  size_t extensions = 0;
  for (size_t i = 0; i + 1 < lines.size(); i += 2) {
    if (lines[i].starts_with("sstx:") || lines[i].starts_with("memx:")) {
      extensions++;
      continue;
    }
    hset.push_back(lines[i]);
    hset.push_back(lines[i + 1]);
  }
  EXPECT_EQ(extensions, m->immutables.size() + m->lives.size());
  for (const auto& e : m->immutables) {
    auto v = server_->Call({"GET", src.immutable(e.id)});
    ASSERT_TRUE(v.ok());
    ASSERT_TRUE(server_->Call({"SET", dst.immutable(e.id), *v}).ok());
  }
  for (const auto& e : m->lives) {
    for (size_t i = 0; i < e.subfilters.size(); i++) {
      auto v = server_->Call(
          {"GET", src.live(m->writer, e.id, static_cast<int>(i))});
      ASSERT_TRUE(v.ok());
      ASSERT_TRUE(
          server_
              ->Call(
                  {"SET", dst.live(m->writer, e.id, static_cast<int>(i)), *v})
              .ok());
    }
  }
  ASSERT_TRUE(server_->Call(hset).ok());
  auto info = server_->Call({"INFO", "replication"});
  ASSERT_TRUE(info.ok());
  RedisIdentity id;
  ASSERT_TRUE(ParseRedisIdentity(*info, &id));
  ASSERT_TRUE(server_
                  ->Call({"SET", dst.lease(), EncodeLease({"old/1", id.replid}),
                          "PX", "60000"})
                  .ok());
  auto old = OpenReader("ponly-old");
  ASSERT_NE(old, nullptr);
  EXPECT_EQ(CountNo(old.get(), keys, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  EXPECT_LT(CountNo(old.get(), absent_keys, &s), absent_keys.size() / 50);
  EXPECT_EQ(CountPrefixNo(old.get(), present, &s), 0u);
  EXPECT_EQ(CountPrefixNo(old.get(), absent, &s), 0u);  // no extensions
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
}

}  // namespace mirror_prefix_test
}  // namespace siftdb::test
