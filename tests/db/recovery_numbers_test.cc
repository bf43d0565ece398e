// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Numbers read back from the MANIFEST and the logs are checked before use:
//  - a MANIFEST whose next-file number lies at or below a number it names
//    (a buggy or foreign writer) must not make new files replace live
//    tables;
//  - a log record whose sequence numbers run past kMaxSequenceNumber is
//    damage (DataLoss when paranoid, dropped otherwise), never a wrapped
//    sequence.

#include <algorithm>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "db/version_edit.h"
#include "db/write_batch_internal.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/write_batch.h"
#include "tests/db/db_files.h"
#include "tests/support/temp_dir.h"
#include "wal/log_writer.h"

namespace siftdb {
namespace recovery_numbers_test {

std::string Key(int k) { return absl::StrFormat("key%06d", k); }

// The newest file of `type` in dir.
std::string Newest(const std::string& dir, FileType want) {
  const uint64_t best = test::NewestFileNumber(dir, want);
  return want == FileType::kLogFile ? LogFileName(dir, best)
                                    : DescriptorFileName(dir, best);
}

// Appends one record to the log-format file fname.
void AppendRecord(const std::string& fname, std::string_view record) {
  Env* env = Env::Default();
  auto size = env->GetFileSize(fname);
  ASSERT_TRUE(size.ok()) << size.status();
  auto file = env->NewAppendableFile(fname);
  ASSERT_TRUE(file.ok()) << file.status();
  log::Writer writer(file->get(), *size);
  ASSERT_TRUE(writer.AddRecord(record).ok());
  ASSERT_TRUE((*file)->Sync().ok());
  ASSERT_TRUE((*file)->Close().ok());
}

Options NewDBOptions() {
  Options o;
  o.create_if_missing = true;
  return o;
}

TEST(RecoveryNumbersTest, LowNextFileNumberNeverReplacesALiveTable) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  {
    auto db = DB::Open(NewDBOptions(), path);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 100; i++) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "original").ok());
    }
    ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
    ASSERT_TRUE((*db)->Close().ok());
  }
  // The flush emptied the logs; remove them, so that no log number read
  // back at recovery lifts the counter by chance.
  auto children = Env::Default()->GetChildren(path);
  ASSERT_TRUE(children.ok());
  for (const std::string& name : *children) {
    uint64_t number;
    FileType type;
    if (ParseFileName(name, &number, &type) && type == FileType::kLogFile) {
      ASSERT_TRUE(Env::Default()->RemoveFile(path + "/" + name).ok());
    }
  }
  // A later record of the MANIFEST claims the next file number is 2.
  VersionEdit low;
  low.SetNextFile(2);
  std::string record;
  low.EncodeTo(&record);
  AppendRecord(Newest(path, FileType::kDescriptorFile), record);

  auto db = DB::Open(NewDBOptions(), path);
  ASSERT_TRUE(db.ok()) << db.status();
  // New tables and logs: with the low number taken at its word, one of
  // them would be written over the live table.
  for (int round = 0; round < 6; round++) {
    ASSERT_TRUE(
        (*db)->Put(WriteOptions(), absl::StrFormat("new%d", round), "v").ok());
    ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  }
  std::string v;
  for (int i = 0; i < 100; i++) {
    absl::Status s = (*db)->Get(ReadOptions(), Key(i), &v);
    ASSERT_TRUE(s.ok()) << Key(i) << ": " << s;
    EXPECT_EQ("original", v);
  }
}

class SequenceOverflowTest : public ::testing::TestWithParam<bool> {};

TEST_P(SequenceOverflowTest, RecordPastTheLargestSequenceIsDamage) {
  const bool paranoid = GetParam();
  test::TempDir dir;
  const std::string path = dir.Join("db");
  {
    auto db = DB::Open(NewDBOptions(), path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Put(WriteOptions(), "good", "1").ok());
    ASSERT_TRUE((*db)->Close().ok());
  }
  WriteBatch batch;
  batch.Put("bad1", "x");
  batch.Put("bad2", "y");
  WriteBatchInternal::SetSequence(&batch, kMaxSequenceNumber);
  AppendRecord(Newest(path, FileType::kLogFile),
               WriteBatchInternal::Contents(&batch));

  Options o;
  o.paranoid_checks = paranoid;
  auto db = DB::Open(o, path);
  if (paranoid) {
    ASSERT_FALSE(db.ok());
    EXPECT_TRUE(absl::IsDataLoss(db.status())) << db.status();
    EXPECT_NE(db.status().message().find("largest sequence number"),
              std::string::npos)
        << db.status();
    return;
  }
  ASSERT_TRUE(db.ok()) << db.status();
  std::string v;
  EXPECT_TRUE((*db)->Get(ReadOptions(), "good", &v).ok());
  EXPECT_TRUE(absl::IsNotFound((*db)->Get(ReadOptions(), "bad1", &v)));
  // Writes go on with sequences that did not wrap: a new value wins.
  ASSERT_TRUE((*db)->Put(WriteOptions(), "good", "2").ok());
  ASSERT_TRUE((*db)->Get(ReadOptions(), "good", &v).ok());
  EXPECT_EQ("2", v);
}

INSTANTIATE_TEST_SUITE_P(Paranoid, SequenceOverflowTest, ::testing::Bool());

}  // namespace recovery_numbers_test
}  // namespace siftdb
