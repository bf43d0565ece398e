// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RepairDB never brings back a value the database no longer returned: an
// obsolete table that survived on disk (here pinned by an iterator when
// the crash image was taken) holds an older value of a key, or a key since
// deleted, while bottom-level compaction rewrote the newest entry with
// sequence 0. Checked with the MANIFEST intact (it says what is live) and
// destroyed (the tables' recorded inputs say what is superseded). Before
// the fix, repair merged every table and kept the highest sequence: the
// overwritten value and the deleted key came back.

#include <algorithm>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "table/table.h"
#include "table/table_options.h"
#include "table/table_properties.h"
#include "tests/db/parallel_compaction_test_util.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace repair_obsolete_test {

enum class Change { kOverwrite, kDelete };
enum class Manifest { kIntact, kDestroyed };

constexpr int kKeys = 200;

std::string Key(int i) { return absl::StrFormat("key%04d", i); }

Options RepairOptions() {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 1 << 20;  // flushes only when asked
  return o;
}

std::string Get(DB* db, const std::string& key) {
  std::string value;
  absl::Status s = db->Get(ReadOptions(), key, &value);
  if (absl::IsNotFound(s)) return "NOT_FOUND";
  if (!s.ok()) return "ERROR: " + s.ToString();
  return value;
}

// Writes version 1 of every key and flushes it; an iterator then pins that
// table; every even key is overwritten (or deleted), flushed and compacted
// to the bottom, where the newest entries get sequence 0. The crash image
// is copied while the iterator still pins the old table.
void MakeCrashImage(const std::string& path, const std::string& image,
                    Change change) {
  auto db = DB::Open(RepairOptions(), path);
  ASSERT_TRUE(db.ok()) << db.status();
  DBImpl* impl = static_cast<DBImpl*>(db->get());
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "v1").ok());
  }
  ASSERT_TRUE(impl->FlushMemTable().ok());
  std::unique_ptr<Iterator> pin = (*db)->NewIterator(ReadOptions());
  for (int i = 0; i < kKeys; i += 2) {
    absl::Status s = change == Change::kOverwrite
                         ? (*db)->Put(WriteOptions(), Key(i), "v2")
                         : (*db)->Delete(WriteOptions(), Key(i));
    ASSERT_TRUE(s.ok()) << s;
  }
  ASSERT_TRUE(impl->FlushMemTable().ok());
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE(impl->WaitForBackgroundWork().ok());
  std::filesystem::copy(path, image, std::filesystem::copy_options::recursive);
  std::filesystem::remove(image + "/LOCK");
}

// The tables in dir, ascending (test::TableFilesOnDisk keeps them sorted).
std::vector<uint64_t> TableNumbers(const std::string& dir) {
  const std::set<uint64_t> on_disk = test::TableFilesOnDisk(dir);
  return std::vector<uint64_t>(on_disk.begin(), on_disk.end());
}

TableProperties PropertiesOf(const std::string& dir, uint64_t number) {
  const std::string name = TableFileName(dir, number);
  auto size = Env::Default()->GetFileSize(name);
  auto file = Env::Default()->NewRandomAccessFile(name);
  EXPECT_TRUE(size.ok() && file.ok()) << name;
  if (!size.ok() || !file.ok()) return {};
  auto table = Table::Open(TableOptions(), name, std::move(*file), *size);
  EXPECT_TRUE(table.ok()) << table.status();
  return table.ok() ? (*table)->properties() : TableProperties();
}

void DestroyManifest(const std::string& image) {
  for (const auto& e : std::filesystem::directory_iterator(image)) {
    uint64_t number;
    FileType type;
    if (ParseFileName(e.path().filename().string(), &number, &type) &&
        (type == FileType::kDescriptorFile || type == FileType::kCurrentFile)) {
      std::filesystem::remove(e.path());
    }
  }
}

class RepairObsoleteTest
    : public ::testing::TestWithParam<std::tuple<Change, Manifest>> {};

TEST_P(RepairObsoleteTest, RepairNeverBringsBackOldValues) {
  const auto [change, manifest] = GetParam();
  test::TempDir dir;
  const std::string path = dir.Join("db");
  const std::string image = dir.Join("image");
  ASSERT_NO_FATAL_FAILURE(MakeCrashImage(path, image, change));
  // The pinned table (version 1 of every key) and the compacted one.
  ASSERT_GE(TableNumbers(image).size(), 2u);
  if (manifest == Manifest::kDestroyed) DestroyManifest(image);

  ASSERT_TRUE(RepairDB(image, RepairOptions()).ok());
  auto db = DB::Open(RepairOptions(), image);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < kKeys; i++) {
    const std::string want = i % 2 == 1                     ? "v1"
                             : change == Change::kOverwrite ? "v2"
                                                            : "NOT_FOUND";
    ASSERT_EQ(want, Get(db->get(), Key(i))) << Key(i);
  }
  // The superseded table was set aside for inspection, not deleted.
  EXPECT_TRUE(std::filesystem::exists(image + "/lost"));
}

INSTANTIATE_TEST_SUITE_P(
    ChangesAndManifests, RepairObsoleteTest,
    ::testing::Combine(::testing::Values(Change::kOverwrite, Change::kDelete),
                       ::testing::Values(Manifest::kIntact,
                                         Manifest::kDestroyed)),
    [](const auto& info) {
      return std::string(std::get<0>(info.param) == Change::kOverwrite
                             ? "Overwrite"
                             : "Delete") +
             (std::get<1>(info.param) == Manifest::kIntact ? "ManifestIntact"
                                                           : "ManifestLost");
    });

// The property repair relies on when the MANIFEST is gone: a flush names
// the log it emptied, a compaction output the tables it merged.
TEST(RepairInputsTest, FlushAndCompactionRecordTheirInputs) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  auto db = DB::Open(RepairOptions(), path);
  ASSERT_TRUE(db.ok()) << db.status();
  DBImpl* impl = static_cast<DBImpl*>(db->get());
  std::vector<uint64_t> flushed;
  for (int round = 0; round < 2; round++) {
    for (int i = 0; i < kKeys; i++) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "v").ok());
    }
    ASSERT_TRUE(impl->FlushMemTable().ok());
    std::vector<uint64_t> tables = TableNumbers(path);
    ASSERT_EQ(static_cast<size_t>(round + 1), tables.size());
    const uint64_t table = tables.back();
    const TableProperties props = PropertiesOf(path, table);
    ASSERT_TRUE(props.has_input_files);
    ASSERT_EQ(1u, props.input_files.size());
    EXPECT_LT(props.input_files[0], table) << "the log it emptied";
    flushed.push_back(table);
  }
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  std::vector<uint64_t> tables = TableNumbers(path);
  ASSERT_EQ(1u, tables.size());
  const TableProperties props = PropertiesOf(path, tables[0]);
  ASSERT_TRUE(props.has_input_files);
  EXPECT_EQ(flushed, props.input_files);
}

}  // namespace repair_obsolete_test
}  // namespace siftdb
