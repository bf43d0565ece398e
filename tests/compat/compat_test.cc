// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Today's engine reads the on-disk fixtures of every version
// (tests/testdata/compat/v1/ and v2/, docs/compat.md) exactly as they were
// recorded: every Get against answers.txt, full forward and backward scans,
// seeks and prefix seeks against the model they imply, the same after
// CompactRange and a reopen, and every table file through the table
// reader directly. Engine only: no Redis (the fixtures' mirror stays off).
// A failure here means a format change broke reading existing databases.

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "filter/partitioned_filter.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "siftdb/filter_policy.h"
#include "siftdb/options.h"
#include "siftdb/slice_transform.h"
#include "table/format.h"
#include "table/internal_key.h"
#include "table/table.h"
#include "tests/compat/compat_fixtures.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace siftdb::compat {
namespace compat_test {

namespace fs = std::filesystem;

// One fixture database: its version and variant.
struct Fixture {
  int version;
  std::string variant;
};

std::string FixtureDir(const Fixture& f) {
  return absl::StrFormat("%s/tests/testdata/compat/v%d/%s", test::SourceDir(),
                         f.version, f.variant);
}

// The variant's own filter options: its tables' filters are used.
Options OpenOptions(const Fixture& f) {
  Options o;
  o.paranoid_checks = true;
  SetFilterOptions(f.variant, &o);
  o.write_buffer_size = 8 << 10;
  o.target_file_size_base = 8 << 10;
  return o;  // remote_filter.mode stays kOff
}

// The extractor prefix seeks use: the variant's, or for a variant written
// without one, a capped one its tables know nothing of (never consulted
// for them; tables a compaction rewrites get its prefixes).
std::shared_ptr<const SliceTransform> SeekExtractor(const Fixture& f) {
  Options o = OpenOptions(f);
  return o.prefix_extractor != nullptr ? o.prefix_extractor
                                       : NewCappedPrefixTransform(8);
}

class CompatTest : public ::testing::TestWithParam<Fixture> {
 protected:
  void SetUp() override {
    absl::StatusOr<std::vector<Answer>> a =
        ReadAnswers(FixtureDir(GetParam()) + "/answers.txt");
    ASSERT_TRUE(a.ok()) << a.status();
    answers_ = std::move(*a);
    ASSERT_GT(answers_.size(), 1000u);
    for (const Answer& x : answers_) {
      if (x.value) model_[x.key] = *x.value;
    }
    ASSERT_GT(model_.size(), 1000u);
    // A copy: opening recovers the WAL and writes.
    std::error_code ec;
    fs::copy(FixtureDir(GetParam()) + "/db", dir_.Join("db"), ec);
    ASSERT_FALSE(ec) << ec.message();
  }

  std::unique_ptr<DB> Open(bool seek_extractor = false) {
    Options o = OpenOptions(GetParam());
    if (seek_extractor) o.prefix_extractor = SeekExtractor(GetParam());
    absl::StatusOr<std::unique_ptr<DB>> db = DB::Open(o, dir_.Join("db"));
    EXPECT_TRUE(db.ok()) << db.status();
    return db.ok() ? std::move(*db) : nullptr;
  }

  void CheckGets(DB* db) {
    ReadOptions ro;
    ro.verify_checksums = true;
    int wrong = 0;
    for (const Answer& a : answers_) {
      std::string value;
      absl::Status s = db->Get(ro, a.key, &value);
      const bool ok =
          a.value ? (s.ok() && value == *a.value) : absl::IsNotFound(s);
      if (!ok && ++wrong <= 10) {
        ADD_FAILURE() << "Get(" << Blob(a.key) << "): " << s << " "
                      << Blob(value) << ", recorded "
                      << (a.value ? Blob(*a.value) : "absent");
      }
    }
    EXPECT_EQ(wrong, 0);
  }

  void CheckScans(DB* db) {
    ReadOptions ro;
    ro.verify_checksums = true;
    std::unique_ptr<Iterator> it = db->NewIterator(ro);
    auto m = model_.begin();
    for (it->SeekToFirst(); it->Valid(); it->Next(), ++m) {
      ASSERT_NE(m, model_.end()) << "extra key " << Blob(it->key());
      ASSERT_EQ(Blob(it->key()), Blob(m->first));
      ASSERT_EQ(Blob(it->value()), Blob(m->second));
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
    ASSERT_EQ(m, model_.end()) << "missing key " << Blob(m->first);
    auto r = model_.rbegin();
    for (it->SeekToLast(); it->Valid(); it->Prev(), ++r) {
      ASSERT_NE(r, model_.rend()) << "extra key " << Blob(it->key());
      ASSERT_EQ(Blob(it->key()), Blob(r->first));
      ASSERT_EQ(Blob(it->value()), Blob(r->second));
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
    ASSERT_EQ(r, model_.rend()) << "missing key " << Blob(r->first);
    // Seek to every probed key (present, deleted and never written).
    for (const Answer& a : answers_) {
      it->Seek(a.key);
      auto want = model_.lower_bound(a.key);
      if (want == model_.end()) {
        ASSERT_FALSE(it->Valid()) << Blob(a.key);
      } else {
        ASSERT_TRUE(it->Valid()) << Blob(a.key);
        ASSERT_EQ(Blob(it->key()), Blob(want->first));
      }
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
  }

  static uint64_t PrefixNegatives(DB* db) {
    std::string v;
    uint64_t n = 0;
    EXPECT_TRUE(db->GetProperty("siftdb.counter.prefix_filter.negatives", &v));
    EXPECT_TRUE(absl::SimpleAtoi(v, &n)) << v;
    return n;
  }

  // Seek(prefix) with prefix_same_as_start, for every probed prefix of the
  // seek extractor: exactly the model's keys with that prefix. Returns how
  // many tables the prefix filters skipped meanwhile.
  uint64_t CheckPrefixSeeks(DB* db) {
    const uint64_t negatives_before = PrefixNegatives(db);
    const std::shared_ptr<const SliceTransform> x = SeekExtractor(GetParam());
    std::vector<std::string> keys;
    for (const Answer& a : answers_) keys.push_back(a.key);
    const std::vector<std::string> prefixes = ProbedPrefixes(*x, keys);
    EXPECT_GT(prefixes.size(), 400u);
    ReadOptions ro;
    ro.verify_checksums = true;
    ro.prefix_same_as_start = true;
    std::unique_ptr<Iterator> it = db->NewIterator(ro);
    int wrong = 0;
    size_t found = 0;
    for (const std::string& p : prefixes) {
      std::vector<std::string> want, got;
      for (auto m = model_.lower_bound(p);
           m != model_.end() && m->first.starts_with(p); ++m) {
        if (x->InDomain(m->first) && x->Transform(m->first) == p) {
          want.push_back(m->first);
        }
      }
      for (it->Seek(p); it->Valid(); it->Next()) got.emplace_back(it->key());
      EXPECT_TRUE(it->status().ok()) << it->status();
      found += got.size();
      if (got != want && ++wrong <= 10) {
        ADD_FAILURE() << "prefix " << Blob(p) << ": " << got.size()
                      << " keys, want " << want.size();
      }
    }
    EXPECT_EQ(wrong, 0);
    EXPECT_GT(found, 1000u);
    return PrefixNegatives(db) - negatives_before;
  }

  test::TempDir dir_;
  std::vector<Answer> answers_;
  std::map<std::string, std::string> model_;
};

TEST_P(CompatTest, FixtureHasWalAndSeveralTables) {
  int tables = 0, nonempty_logs = 0;
  for (const auto& f : fs::directory_iterator(FixtureDir(GetParam()) + "/db")) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(f.path().filename().string(), &number, &type)) continue;
    tables += type == FileType::kTableFile;
    nonempty_logs += type == FileType::kLogFile && f.file_size() > 0;
  }
  EXPECT_GE(tables, 4);
  EXPECT_GE(nonempty_logs, 1);
}

TEST_P(CompatTest, ReadsAsRecorded) {
  std::unique_ptr<DB> db = Open();
  ASSERT_NE(db, nullptr);
  CheckGets(db.get());
  CheckScans(db.get());
}

TEST_P(CompatTest, PrefixSeeksAsTheModel) {
  {
    std::unique_ptr<DB> db = Open(/*seek_extractor=*/true);
    ASSERT_NE(db, nullptr);
    // (The v1 tables hold no prefixes: TablesReadDirectly checks they are
    // never consulted; the table the open flushes the WAL into is.)
    const uint64_t skipped = CheckPrefixSeeks(db.get());
    if (GetParam().version >= 2) EXPECT_GT(skipped, 100u);
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    EXPECT_GT(CheckPrefixSeeks(db.get()), 100u) << "rewritten with prefixes";
  }
  std::unique_ptr<DB> db = Open(/*seek_extractor=*/true);
  ASSERT_NE(db, nullptr);
  EXPECT_GT(CheckPrefixSeeks(db.get()), 100u);
}

TEST_P(CompatTest, CompactThenReopen) {
  {
    std::unique_ptr<DB> db = Open();
    ASSERT_NE(db, nullptr);
    ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
    CheckGets(db.get());
    CheckScans(db.get());
  }
  std::unique_ptr<DB> db = Open();
  ASSERT_NE(db, nullptr);
  CheckGets(db.get());
  CheckScans(db.get());
}

// Every table file opens with the table reader; its entries iterate in
// order with no error, match its properties, and its filter holds every
// user key (and, with an extractor, every prefix) it stores. Together the
// v1 fixtures hold Snappy and uncompressed tables; the v2 ones zstd tables
// with dictionaries (table format 2), LZ4 tables, and partitioned filters.
TEST_P(CompatTest, TablesReadDirectly) {
  const Options o = OpenOptions(GetParam());
  TableOptions to;
  to.filter_policy = o.filter_policy;
  // v1: an extractor its tables do not name, so they must answer "maybe"
  // for every prefix.
  to.prefix_extractor = SeekExtractor(GetParam());
  std::vector<std::string> probe_keys;
  for (const Answer& a : answers_) probe_keys.push_back(a.key);
  const std::vector<std::string> prefixes =
      ProbedPrefixes(*to.prefix_extractor, probe_keys);
  to.whole_key_filtering = o.whole_key_filtering;
  to.paranoid_checks = true;
  const std::string policy_name =
      (o.whole_key_filtering ? "" : kPrefixOnlyFilterTag) +
      std::string(o.filter_policy->Name());
  std::set<std::string> compressions;
  std::set<uint32_t> format_versions;
  int with_dictionary = 0, partitioned = 0;
  Env* env = Env::Default();
  for (const auto& f : fs::directory_iterator(FixtureDir(GetParam()) + "/db")) {
    uint64_t number;
    FileType type;
    if (!ParseFileName(f.path().filename().string(), &number, &type) ||
        type != FileType::kTableFile) {
      continue;
    }
    const std::string path = f.path().string();
    SCOPED_TRACE(path);
    auto file = env->NewRandomAccessFile(path);
    ASSERT_TRUE(file.ok()) << file.status();
    auto table = Table::Open(to, path, std::move(*file), f.file_size());
    ASSERT_TRUE(table.ok()) << table.status();
    const TableProperties& p = (*table)->properties();
    EXPECT_EQ(p.filter_policy_name, policy_name);
    EXPECT_EQ(p.filter_prefix_extractor,
              o.prefix_extractor ? o.prefix_extractor->Name() : "");
    EXPECT_EQ(p.comparator_name, "siftdb.BytewiseComparator");
    compressions.insert(p.compression_name);
    format_versions.insert(p.format_version);
    with_dictionary += p.compression_dict_size > 0;
    std::string filter;
    ASSERT_TRUE((*table)->CopyFilter(&filter).ok());
    partitioned += IsPartitionedFilter(filter);
    if (p.filter_prefix_extractor.empty()) {
      for (const std::string& prefix : prefixes) {
        ASSERT_TRUE((*table)->PrefixMayMatch(prefix)) << Blob(prefix);
      }
    }
    ReadOptions ro;
    ro.verify_checksums = true;
    std::unique_ptr<Iterator> it = (*table)->NewIterator(ro);
    uint64_t entries = 0, deletions = 0;
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ParsedInternalKey k;
      ASSERT_TRUE(ParseInternalKey(it->key(), &k)) << Blob(it->key());
      entries++;
      deletions += k.type == kTypeDeletion;
      EXPECT_TRUE((*table)->UserKeyMayMatch(k.user_key, nullptr))
          << Blob(k.user_key);
      if (o.prefix_extractor && o.prefix_extractor->InDomain(k.user_key)) {
        EXPECT_TRUE(
            (*table)->PrefixMayMatch(o.prefix_extractor->Transform(k.user_key)))
            << Blob(k.user_key);
      }
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
    EXPECT_EQ(entries, p.num_entries);
    EXPECT_EQ(deletions, p.num_deletions);
  }
  if (GetParam().version == 1) {
    EXPECT_EQ(compressions, std::set<std::string>({"snappy", "none"}));
    EXPECT_EQ(format_versions, std::set<uint32_t>({1}));
    return;
  }
  EXPECT_EQ(compressions, std::set<std::string>({"zstd", "lz4"}));
  if (GetParam().variant == "zstd_dict") {
    EXPECT_EQ(format_versions, std::set<uint32_t>({1, 2}));
    EXPECT_GT(with_dictionary, 0);
    EXPECT_GT(partitioned, 0);
  }
}

std::vector<Fixture> AllFixtures() {
  std::vector<Fixture> out;
  for (const char* v : kV1Variants) out.push_back({1, v});
  for (const char* v : kV2Variants) out.push_back({2, v});
  return out;
}

INSTANTIATE_TEST_SUITE_P(AllVersions, CompatTest,
                         ::testing::ValuesIn(AllFixtures()),
                         [](const ::testing::TestParamInfo<Fixture>& info) {
                           return absl::StrCat("v", info.param.version, "_",
                                               info.param.variant);
                         });

}  // namespace compat_test
}  // namespace siftdb::compat
