// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Today's engine reads the v1 on-disk fixtures (tests/testdata/compat/v1/,
// docs/compat.md) exactly as they were recorded: every Get against
// answers.txt, full forward and backward scans and seeks against the model
// they imply, the same after CompactRange and a reopen, and every table
// file through the table reader directly. Engine only: no Redis (the
// fixtures' mirror stays off). A failure here means a format change broke
// reading existing databases.

#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "siftdb/filter_policy.h"
#include "siftdb/options.h"
#include "table/internal_key.h"
#include "table/table.h"
#include "tests/compat/compat_fixtures.h"
#include "tests/support/paths.h"
#include "tests/support/temp_dir.h"

namespace siftdb::compat {
namespace compat_test {

namespace fs = std::filesystem;

std::string FixtureDir(const std::string& variant) {
  return test::SourceDir() + "/tests/testdata/compat/v1/" + variant;
}

std::shared_ptr<const FilterPolicy> PolicyOf(const std::string& variant) {
  return variant == "classic" ? NewClassicBloomFilterPolicy(10)
                              : NewBloomFilterPolicy(10);
}

Options OpenOptions(const std::string& variant) {
  Options o;
  o.paranoid_checks = true;
  o.filter_policy = PolicyOf(variant);
  o.write_buffer_size = 8 << 10;
  o.max_file_size = 8 << 10;
  return o;  // remote_filter.mode stays kOff
}

class CompatV1Test : public ::testing::TestWithParam<std::string> {
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

  std::unique_ptr<DB> Open() {
    absl::StatusOr<std::unique_ptr<DB>> db =
        DB::Open(OpenOptions(GetParam()), dir_.Join("db"));
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

  test::TempDir dir_;
  std::vector<Answer> answers_;
  std::map<std::string, std::string> model_;
};

TEST_P(CompatV1Test, FixtureHasWalAndSeveralTables) {
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

TEST_P(CompatV1Test, ReadsAsRecorded) {
  std::unique_ptr<DB> db = Open();
  ASSERT_NE(db, nullptr);
  CheckGets(db.get());
  CheckScans(db.get());
}

TEST_P(CompatV1Test, CompactThenReopen) {
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
// user key it stores. Together the fixtures hold Snappy and uncompressed
// tables.
TEST_P(CompatV1Test, TablesReadDirectly) {
  TableOptions to;
  to.filter_policy = PolicyOf(GetParam());
  to.paranoid_checks = true;
  std::set<std::string> compressions;
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
    EXPECT_EQ(p.filter_policy_name, to.filter_policy->Name());
    EXPECT_EQ(p.comparator_name, "siftdb.BytewiseComparator");
    compressions.insert(p.compression_name);
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
    }
    ASSERT_TRUE(it->status().ok()) << it->status();
    EXPECT_EQ(entries, p.num_entries);
    EXPECT_EQ(deletions, p.num_deletions);
  }
  EXPECT_TRUE(compressions.count("snappy")) << "no Snappy table";
  EXPECT_TRUE(compressions.count("none")) << "no uncompressed table";
}

INSTANTIATE_TEST_SUITE_P(V1, CompatV1Test,
                         ::testing::Values("blocked", "classic"));

}  // namespace compat_test
}  // namespace siftdb::compat
