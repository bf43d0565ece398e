// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The mirror of a real DB in a real redis-server, read by RemoteFilter:
// mirrors appear after flush and compaction and vanish (after the grace
// period) once their tables are gone; 100,000 keys all answered "maybe" and
// absent keys answered as the local filters answer; a reader running during
// writes, flushes and compactions never says "no" for an acknowledged key;
// the async watermark; a reopened DB republishes under a new generation.

#include <atomic>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "filter/partitioned_filter.h"
#include "gtest/gtest.h"
#include "siftdb/slice_transform.h"
#include "siftdb/write_batch.h"
#include "tests/mirror/mirror_test_util.h"

namespace siftdb::test {
namespace mirror_db_test {

using Mode = RemoteFilterOptions::Mode;

class MirrorDbTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (RedisServer::FindBinary().empty()) GTEST_SKIP() << "no redis-server";
    auto s = RedisServer::Start();
    ASSERT_TRUE(s.ok()) << s.status();
    server_ = std::move(*s);
  }

  std::unique_ptr<DB> OpenDb(const Options& o) {
    auto db = DB::Open(o, dir_.path());
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? std::move(*db) : nullptr;
  }

  std::unique_ptr<RemoteFilter> OpenReader(const std::string& name) {
    auto r = RemoteFilter::Open(server_->endpoint(), name);
    EXPECT_TRUE(r.ok()) << r.status();
    return r.ok() ? std::move(*r) : nullptr;
  }

  // Writes keys [begin, end) in batches of `batch`.
  static void WriteKeys(DB* db, int begin, int end, int batch = 100) {
    for (int i = begin; i < end; i += batch) {
      WriteBatch b;
      for (int j = i; j < std::min(end, i + batch); j++) {
        b.Put(TestKey(j), std::string(40, 'v'));
      }
      ASSERT_TRUE(db->Write(WriteOptions(), &b).ok());
    }
  }

  // After a flush or compaction of `db`: background work done and the
  // mirror `name` settled.
  void WaitForMirror(DB* db, const std::string& name) {
    ASSERT_TRUE(Impl(db)->WaitForBackgroundWork().ok());
    ASSERT_TRUE(WaitMirrorSettled(db, server_.get(), name, dir_.path()))
        << MirrorState(db);
  }

  // Every live table of mirror `keys`: its filter byte for byte, its meta
  // and its manifest entry; the MemTable's live filter is listed with its
  // sub-filter(s). Returns the table numbers and the manifest version.
  void ExpectTablesMirrored(const MirrorKeys& keys, std::set<uint64_t>* before,
                            uint64_t* version_before) {
    std::vector<LocalTable> tables = OpenLocalTables(dir_.path());
    ASSERT_GE(tables.size(), 2u);
    auto m = ReadManifest(server_.get(), keys.name());
    ASSERT_TRUE(m.ok()) << m.status();
    for (const LocalTable& t : tables) {
      before->insert(t.number);
      auto bytes = server_->Call({"GET", keys.immutable(t.number)});
      ASSERT_TRUE(bytes.ok());
      EXPECT_EQ(*bytes, std::string(t.table->filter_data())) << t.number;
      auto level =
          server_->Call({"HGET", keys.immutable_meta(t.number), "level"});
      ASSERT_TRUE(level.ok());
      EXPECT_FALSE(level->empty());
      auto smallest =
          server_->Call({"HGET", keys.immutable_meta(t.number), "smallest"});
      EXPECT_EQ(*smallest, t.smallest);
      for (const auto& e : m->immutables) {
        if (e.id != t.number) continue;
        EXPECT_EQ(e.smallest, t.smallest);
        EXPECT_EQ(e.largest, t.largest);
      }
    }
    // The MemTable's live filter is listed with its sub-filter(s).
    ASSERT_EQ(m->lives.size(), 1u);
    EXPECT_FALSE(m->lives[0].subfilters.empty());
    *version_before = m->version;
  }

  // After compacting everything: a newer manifest lists the new tables
  // (present, meta levels as listed) and not some of `before`, returned in
  // `gone`.
  void ExpectManifestAfterCompaction(const MirrorKeys& keys,
                                     const std::set<uint64_t>& before,
                                     uint64_t version_before,
                                     std::vector<uint64_t>* gone) {
    auto m = ReadManifest(server_.get(), keys.name());
    ASSERT_TRUE(m.ok());
    EXPECT_GT(m->version, version_before);
    std::set<uint64_t> after;
    for (const auto& e : m->immutables) after.insert(e.id);
    for (uint64_t n : before) {
      if (!after.contains(n)) gone->push_back(n);
    }
    ASSERT_FALSE(gone->empty());
    for (uint64_t n : after) {
      EXPECT_EQ(*server_->Call({"EXISTS", keys.immutable(n)}), "1") << n;
    }
    // Meta levels follow the manifest (trivial moves included).
    for (const auto& e : m->immutables) {
      EXPECT_EQ(*server_->Call({"HGET", keys.immutable_meta(e.id), "level"}),
                std::to_string(e.level))
          << e.id;
    }
  }

  // The `gone` tables' filters and metas stay for the grace period (1000 ms
  // of it checked) after `unlisted_at`, then are deleted.
  void ExpectRetiredTablesDeletedAfterGrace(const MirrorKeys& keys,
                                            const std::vector<uint64_t>& gone,
                                            int64_t unlisted_at) {
    if (MirrorSteadyMs() < unlisted_at + 1000) {
      for (uint64_t n : gone) {
        EXPECT_EQ(*server_->Call({"EXISTS", keys.immutable(n)}), "1")
            << "table " << n << " deleted within the grace period";
      }
    }
    EXPECT_TRUE(WaitUntil([&] {
      for (uint64_t n : gone) {
        if (*server_->Call({"EXISTS", keys.immutable(n)}) != "0") return false;
        if (*server_->Call({"EXISTS", keys.immutable_meta(n)}) != "0") {
          return false;
        }
      }
      return true;
    })) << "retired table filters were not deleted";
    EXPECT_GE(MirrorSteadyMs(), unlisted_at + 1000);
  }

  // Flushed MemTables' filters go too: only listed ones remain.
  void ExpectOnlyListedMemTableFilters(const MirrorKeys& keys) {
    EXPECT_TRUE(WaitUntil([&] {
      auto now = ReadManifest(server_.get(), keys.name());
      if (!now.ok()) return false;
      std::set<std::string> listed;
      for (const auto& e : now->lives) {
        listed.insert(absl::StrCat("mem:", now->writer, ":", e.id));
      }
      for (const std::string& k :
           RedisKeys(server_.get(), keys.prefix() + "mem:*")) {
        // siftdb:{follow}:mem:<writer>:<id>:<i|meta>
        std::string rest = k.substr(keys.prefix().size());
        std::string field = rest.substr(0, rest.rfind(':'));
        if (!listed.contains(field)) return false;
      }
      return true;
    })) << "retired MemTable filters were not deleted";
  }

  std::unique_ptr<RedisServer> server_;
  TempDir dir_;
};

TEST_F(MirrorDbTest, MirrorsFollowFlushesAndCompactions) {
  Options o = MirrorOptions({server_->endpoint()}, "follow", Mode::kSync);
  o.remote_filter.delete_grace_ms = 1500;
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  WriteKeys(db.get(), 0, 4000);
  ASSERT_TRUE(Impl(db.get())->FlushMemTable().ok());
  ASSERT_NO_FATAL_FAILURE(WaitForMirror(db.get(), "follow"));

  // Every live table: its filter byte for byte, and its meta.
  MirrorKeys keys("follow");
  std::set<uint64_t> before;
  uint64_t version_before = 0;
  ASSERT_NO_FATAL_FAILURE(ExpectTablesMirrored(keys, &before, &version_before));

  // Compact everything: new tables are listed, the old ones unlisted at
  // once but deleted only after the grace period.
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  ASSERT_NO_FATAL_FAILURE(WaitForMirror(db.get(), "follow"));
  const int64_t unlisted_at = MirrorSteadyMs();
  std::vector<uint64_t> gone;
  ASSERT_NO_FATAL_FAILURE(
      ExpectManifestAfterCompaction(keys, before, version_before, &gone));
  ExpectRetiredTablesDeletedAfterGrace(keys, gone, unlisted_at);
  ExpectOnlyListedMemTableFilters(keys);

  auto reader = OpenReader("follow");
  ASSERT_NE(reader, nullptr);
  std::vector<std::string> present;
  for (int i = 0; i < 4000; i++) present.push_back(TestKey(i));
  absl::Status s;
  EXPECT_EQ(CountNo(reader.get(), present, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
}

TEST_F(MirrorDbTest, HundredThousandKeysMaybeAndAbsentKeysAsLocalFilters) {
  Options o = MirrorOptions({server_->endpoint()}, "big", Mode::kSync);
  o.write_buffer_size = 1 << 20;
  o.max_file_size = 512 << 10;
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  auto reader = OpenReader("big");
  ASSERT_NE(reader, nullptr);
  constexpr int kKeys = 100000;
  WriteKeys(db.get(), 0, kKeys, 500);
  std::vector<std::string> present, absent;
  for (int i = 0; i < kKeys; i++) {
    present.push_back(TestKey(i));
    absent.push_back(AbsentKey(i));
  }
  // Right after the writes (some keys in MemTables, some in tables).
  absl::Status s;
  EXPECT_EQ(CountNo(reader.get(), present, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;

  // Once everything is in tables, absent keys get exactly the local answer.
  ASSERT_TRUE(Impl(db.get())->FlushMemTable().ok());
  ASSERT_TRUE(Impl(db.get())->WaitForBackgroundWork().ok());
  ASSERT_TRUE(WaitMirrorSettled(db.get(), server_.get(), "big", dir_.path()))
      << MirrorState(db.get());
  EXPECT_EQ(CountNo(reader.get(), present, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  std::vector<LocalTable> tables = OpenLocalTables(dir_.path());
  ASSERT_FALSE(tables.empty());
  std::vector<std::string_view> views(absent.begin(), absent.end());
  std::vector<bool> answers;
  s = reader->MayContainMany(views, &answers);
  ASSERT_TRUE(s.ok()) << s;
  size_t no = 0, disagree = 0;
  for (int i = 0; i < kKeys; i++) {
    const bool local = LocalMayContain(tables, absent[i]);
    if (answers[i] != local) disagree++;
    no += answers[i] ? 0 : 1;
  }
  EXPECT_EQ(disagree, 0u);
  EXPECT_GT(no, kKeys * 9 / 10u);  // "absent" keys sort before every table
  // And keys inside the tables' range, absent, agree too.
  std::vector<std::string> inside;
  for (int i = 0; i < 20000; i++) inside.push_back(TestKey(i) + "x");
  views.assign(inside.begin(), inside.end());
  s = reader->MayContainMany(views, &answers);
  ASSERT_TRUE(s.ok()) << s;
  size_t inside_no = 0;
  for (size_t i = 0; i < inside.size(); i++) {
    EXPECT_EQ(answers[i], LocalMayContain(tables, inside[i])) << inside[i];
    inside_no += answers[i] ? 0 : 1;
  }
  EXPECT_GT(inside_no, inside.size() * 95 / 100);  // ~1% false positives
  RemoteFilterStats st = reader->stats();
  EXPECT_GE(st.filter_fetches, tables.size());
}

// Tables whose filters also hold prefixes are mirrored as they are: whole
// keys still answered exactly. Prefix-only filters (whole_key_filtering
// false) carry a policy name the reader does not know: every key they
// cover is "maybe", never a false "no".
TEST_F(MirrorDbTest, PrefixFiltersAnswerKeysOrMaybe) {
  for (bool whole_keys : {true, false}) {
    SCOPED_TRACE(whole_keys ? "whole keys and prefixes" : "prefixes only");
    const std::string name = whole_keys ? "pfx-whole" : "pfx-only";
    TempDir dir;
    Options o = MirrorOptions({server_->endpoint()}, name, Mode::kSync);
    o.prefix_extractor = NewFixedPrefixTransform(7);  // "key0001" per 10^4
    o.whole_key_filtering = whole_keys;
    auto db = DB::Open(o, dir.path());
    ASSERT_TRUE(db.ok()) << db.status();
    auto reader = OpenReader(name);
    ASSERT_NE(reader, nullptr);
    WriteKeys(db->get(), 0, 20000, 500);
    ASSERT_TRUE(Impl(db->get())->FlushMemTable().ok());
    ASSERT_TRUE(Impl(db->get())->WaitForBackgroundWork().ok());
    ASSERT_TRUE(WaitMirrorSettled(db->get(), server_.get(), name, dir.path()))
        << MirrorState(db->get());
    std::vector<std::string> present, inside;
    for (int i = 0; i < 20000; i++) {
      present.push_back(TestKey(i));
      inside.push_back(TestKey(i) + "x");
    }
    absl::Status s;
    EXPECT_EQ(CountNo(reader.get(), present, &s), 0u);
    EXPECT_TRUE(s.ok()) << s;
    const size_t inside_no = CountNo(reader.get(), inside, &s);
    if (whole_keys) {
      EXPECT_GT(inside_no, inside.size() * 95 / 100);
    } else {
      // Only keys in the gaps between tables' ranges (one per table) are
      // still "no": the filters themselves answer "maybe".
      EXPECT_LT(inside_no, inside.size() / 100);
    }
  }
}

// Sync mode: a reader that runs during writes, MemTable switches, flushes
// and compactions never answers "no" for a key whose write was
// acknowledged before the probe began.
TEST_F(MirrorDbTest, ConcurrentReaderNeverSaysNoForAcknowledgedKeys) {
  Options o = MirrorOptions({server_->endpoint()}, "race", Mode::kSync);
  o.write_buffer_size = 32 << 10;
  o.max_file_size = 32 << 10;
  o.max_bytes_for_level_base = 128 << 10;
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  constexpr int kWriters = 2;
  std::atomic<int> acked[kWriters];
  for (auto& a : acked) a.store(0);
  std::atomic<bool> stop{false};
  std::vector<std::thread> threads;
  for (int w = 0; w < kWriters; w++) {
    threads.emplace_back([&, w] {
      int i = 0;
      while (!stop.load()) {
        WriteBatch b;
        for (int j = 0; j < 10; j++) {
          b.Put(absl::StrFormat("w%d-%08d", w, i + j), std::string(30, 'x'));
        }
        if (!db->Write(WriteOptions(), &b).ok()) return;
        i += 10;
        acked[w].store(i, std::memory_order_release);
      }
    });
  }
  threads.emplace_back([&] {
    int round = 0;
    while (!stop.load()) {
      absl::SleepFor(absl::Milliseconds(30));
      if (++round % 5 == 0) {
        db->CompactRange(nullptr, nullptr).IgnoreError();
      } else {
        Impl(db.get())->FlushMemTable().IgnoreError();
      }
    }
  });
  auto reader = OpenReader("race");
  ASSERT_NE(reader, nullptr);
  std::mt19937 rng(11);
  int trusted_batches = 0, batches = 0;
  size_t false_no = 0;
  const absl::Time end = absl::Now() + absl::Seconds(4);
  while (absl::Now() < end) {
    // Keys acknowledged before this probe starts.
    std::vector<std::string> keys;
    for (int w = 0; w < kWriters; w++) {
      const int n = acked[w].load(std::memory_order_acquire);
      for (int j = std::max(0, n - 200); j < n; j++) {
        keys.push_back(absl::StrFormat("w%d-%08d", w, j));
      }
      for (int j = 0; n > 0 && j < 300; j++) {
        keys.push_back(absl::StrFormat("w%d-%08d", w, rng() % n));
      }
    }
    absl::Status s;
    false_no += CountNo(reader.get(), keys, &s);
    batches++;
    if (s.ok()) trusted_batches++;
  }
  stop.store(true);
  for (auto& t : threads) t.join();
  EXPECT_EQ(false_no, 0u);
  EXPECT_GT(batches, 10);
  EXPECT_GT(trusted_batches, batches / 2) << MirrorState(db.get());
  EXPECT_GT(acked[0].load() + acked[1].load(), 1000);
}

TEST_F(MirrorDbTest, AsyncWatermarkCoversAcknowledgedWrites) {
  Options o = MirrorOptions({server_->endpoint()}, "async", Mode::kAsync);
  o.remote_filter.async_max_lag_ms = 50;
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  auto reader = OpenReader("async");
  ASSERT_NE(reader, nullptr);
  WriteKeys(db.get(), 0, 5000, 50);
  const int64_t acked_at = MirrorUnixMs();
  std::vector<std::string> keys;
  for (int i = 0; i < 5000; i++) keys.push_back(TestKey(i));
  // The watermark reaches the last write; then every key is "maybe".
  ASSERT_TRUE(WaitUntil([&] {
    CountNo(reader.get(), {TestKey(0)});
    return reader->watermark().complete_seq >= 5000;
  })) << MirrorState(db.get());
  RemoteFilterWatermark w = reader->watermark();
  EXPECT_EQ(w.mode, "async");
  EXPECT_GE(w.complete_unix_ms, acked_at - 60000);
  absl::Status s;
  EXPECT_EQ(CountNo(reader.get(), keys, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  // Writes older than the watermark are always covered: check while more
  // writes stream in.
  std::atomic<bool> stop{false};
  std::atomic<int> written{5000};
  std::thread writer([&] {
    for (int i = 5000; !stop.load() && i < 200000; i += 50) {
      WriteKeys(db.get(), i, i + 50, 50);
      written.store(i + 50);
    }
  });
  for (int round = 0; round < 50; round++) {
    CountNo(reader.get(), {TestKey(0)});
    const uint64_t covered = reader->watermark().complete_seq;
    std::vector<std::string> sample;
    for (uint64_t i = covered > 500 ? covered - 500 : 0; i < covered; i++) {
      sample.push_back(TestKey(static_cast<int>(i)));
    }
    EXPECT_EQ(CountNo(reader.get(), sample, &s), 0u) << "round " << round;
  }
  stop.store(true);
  writer.join();
}

TEST_F(MirrorDbTest, ReopenedDbRepublishesUnderANewGeneration) {
  Options o = MirrorOptions({server_->endpoint()}, "reopen", Mode::kSync);
  std::string generation;
  {
    auto db = OpenDb(o);
    ASSERT_NE(db, nullptr);
    WriteKeys(db.get(), 0, 3000);
    ASSERT_TRUE(
        WaitMirrorSettled(db.get(), server_.get(), "reopen", dir_.path()));
    generation = ReadManifest(server_.get(), "reopen")->generation;
  }
  auto db = OpenDb(o);
  ASSERT_NE(db, nullptr);
  WriteKeys(db.get(), 3000, 4000);
  ASSERT_TRUE(
      WaitMirrorSettled(db.get(), server_.get(), "reopen", dir_.path()));
  auto m = ReadManifest(server_.get(), "reopen");
  ASSERT_TRUE(m.ok());
  EXPECT_NE(m->generation, generation);
  auto reader = OpenReader("reopen");
  std::vector<std::string> keys;
  for (int i = 0; i < 4000; i++) keys.push_back(TestKey(i));
  absl::Status s;
  EXPECT_EQ(CountNo(reader.get(), keys, &s), 0u);
  EXPECT_TRUE(s.ok()) << s;
  // The first process's MemTable filters are not listed and get deleted.
  EXPECT_TRUE(WaitUntil([&] {
    size_t mem_keys = RedisKeys(server_.get(), "siftdb:{reopen}:mem:*").size();
    size_t listed = 0;
    auto now = ReadManifest(server_.get(), "reopen");
    if (!now.ok()) return false;
    for (const auto& e : now->lives) listed += e.subfilters.size() + 1;
    return mem_keys == listed;
  }));
}

// Tables written under the blocked Bloom, Ribbon, no and classic Bloom
// policies, and partitioned Bloom and Ribbon filters (the DB reopened with
// each): the mirror serves them all; the remote reader decodes the Ribbon
// and partitioned filters it fetches and answers exactly as the local
// tables do, never "no" for a present key.
TEST_F(MirrorDbTest, TablesOfEveryFilterKindAnswerAsLocally) {
  struct Phase {
    std::shared_ptr<const FilterPolicy> policy;
    bool partitioned;
  };
  const std::vector<Phase> phases = {{NewBloomFilterPolicy(10), false},
                                     {NewRibbonFilterPolicy(10), false},
                                     {nullptr, false},
                                     {NewClassicBloomFilterPolicy(10), false},
                                     {NewBloomFilterPolicy(10), true},
                                     {NewRibbonFilterPolicy(10), true}};
  const std::vector<Phase>& policies = phases;
  constexpr int kPerPhase = 3000;
  for (size_t phase = 0; phase < policies.size(); ++phase) {
    Options o = MirrorOptions({server_->endpoint()}, "kinds", Mode::kSync);
    o.filter_policy = policies[phase].policy;
    if (policies[phase].policy == nullptr) o.filter_bits_per_key = 0;
    o.partition_filters = policies[phase].partitioned;
    o.filter_partition_size = 256;
    auto db = OpenDb(o);
    ASSERT_NE(db, nullptr);
    WriteKeys(db.get(), static_cast<int>(phase) * kPerPhase,
              static_cast<int>(phase + 1) * kPerPhase);
    ASSERT_TRUE(Impl(db.get())->FlushMemTable().ok());
    ASSERT_TRUE(Impl(db.get())->WaitForBackgroundWork().ok());
    ASSERT_TRUE(
        WaitMirrorSettled(db.get(), server_.get(), "kinds", dir_.path()))
        << MirrorState(db.get());
    if (phase + 1 < policies.size()) continue;
    auto reader = OpenReader("kinds");
    ASSERT_NE(reader, nullptr);
    const int total = static_cast<int>(policies.size()) * kPerPhase;
    std::vector<std::string> present, inside;
    for (int i = 0; i < total; i++) {
      present.push_back(TestKey(i));
      inside.push_back(TestKey(i) + "x");
    }
    absl::Status s;
    EXPECT_EQ(CountNo(reader.get(), present, &s), 0u);
    EXPECT_TRUE(s.ok()) << s;
    std::vector<LocalTable> tables = OpenLocalTables(dir_.path());
    ASSERT_FALSE(tables.empty());
    std::set<std::string> names;
    for (const LocalTable& t : tables) {
      names.insert(std::string(t.table->filter_policy_name()));
    }
    EXPECT_TRUE(names.count("siftdb.Ribbon")) << names.size();
    size_t partitioned = 0;
    for (const LocalTable& t : tables) {
      std::string bytes;
      ASSERT_TRUE(t.table->CopyFilter(&bytes).ok());
      partitioned += IsPartitionedFilter(bytes) ? 1 : 0;
    }
    EXPECT_GE(partitioned, 2u);
    std::vector<std::string_view> views(inside.begin(), inside.end());
    std::vector<bool> answers;
    ASSERT_TRUE(reader->MayContainMany(views, &answers).ok());
    size_t no = 0;
    for (size_t i = 0; i < inside.size(); i++) {
      EXPECT_EQ(answers[i], LocalMayContain(tables, inside[i])) << inside[i];
      no += answers[i] ? 0 : 1;
    }
    // The no-filter phase's keys are all "maybe"; the other five phases
    // turn ~99% away.
    EXPECT_GT(no, inside.size() * 7 / 10);
  }
}

}  // namespace mirror_db_test
}  // namespace siftdb::test
