// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// docs/errors.md, "Damaged files": CURRENT, MANIFEST, tables and logs
// damaged on disk (a flipped byte, a truncation, a rewrite, a removal).
// Each case checks what Open / Get / iteration answer (code, and a
// message naming the file and, for data, the offset), that nothing
// crashes, and what the way back (fix the file, or RepairDB) recovers.

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <string>

#include "db/filename.h"
#include "db/version_edit.h"
#include "db/write_batch_internal.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/write_batch.h"
#include "tests/errors/errors_util.h"
#include "tests/support/temp_dir.h"
#include "wal/log_writer.h"

namespace siftdb::test {
namespace damage_errors_test {

constexpr int kEntries = 200;

class ErrorsDamage : public ::testing::Test {
 protected:
  std::string File(const std::string& name) const { return path_ + "/" + name; }
  std::string Only(std::string_view suffix) const {
    const std::vector<std::string> files = FilesOf(path_, suffix);
    EXPECT_EQ(files.size(), 1u) << "files ending " << suffix;
    return files.empty() ? "" : files[0];
  }
  absl::Status OpenStatus(const Options& o = CatalogueOptions(false)) {
    return DB::Open(o, path_).status();
  }

  TempDir dir_;
  const std::string path_ = dir_.Join("db");
};

// --- CURRENT ---

TEST_F(ErrorsDamage, CurrentMissing) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string current = Slurp(File("CURRENT"));
  std::filesystem::remove(File("CURRENT"));
  EXPECT_TRUE(HasError(OpenStatus(), absl::StatusCode::kInvalidArgument,
                       {path_, "no CURRENT file"}));
  Overwrite(File("CURRENT"), current);  // the fix: restore it
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsDamage, CurrentMissingWithCreateIfMissing) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  std::filesystem::remove(File("CURRENT"));
  // A directory with tables and a MANIFEST but no CURRENT is a damaged
  // database, not an empty one: create_if_missing must not start over
  // (and delete the tables as obsolete).
  EXPECT_TRUE(HasError(OpenStatus(CatalogueOptions(true)),
                       absl::StatusCode::kDataLoss,
                       {path_, "CURRENT is missing", "RepairDB"}));
  // Nothing was deleted: RepairDB brings every entry back.
  ASSERT_TRUE(RepairDB(path_, Options()).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsDamage, CrashInsideNewDbIsNotData) {
  // NewDB writes MANIFEST-000001 before CURRENT: a crash between the two
  // leaves only that MANIFEST, and create_if_missing starts over.
  std::filesystem::create_directories(path_);
  Overwrite(path_ + "/MANIFEST-000001", "partial");
  ASSERT_TRUE(OpenStatus(CatalogueOptions(true)).ok());
}

TEST_F(ErrorsDamage, CurrentEmpty) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string current = Slurp(File("CURRENT"));
  Overwrite(File("CURRENT"), "");
  EXPECT_TRUE(HasError(OpenStatus(), absl::StatusCode::kDataLoss,
                       {File("CURRENT"), "does not end with a newline"}));
  Overwrite(File("CURRENT"), current);
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsDamage, CurrentNamesNoManifest) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string current = Slurp(File("CURRENT"));
  Overwrite(File("CURRENT"), "hello\n");
  EXPECT_TRUE(HasError(OpenStatus(), absl::StatusCode::kDataLoss,
                       {File("CURRENT"), "'hello'", "not a MANIFEST"}));
  Overwrite(File("CURRENT"), current);
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsDamage, CurrentNamesMissingManifest) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string current = Slurp(File("CURRENT"));
  Overwrite(File("CURRENT"), "MANIFEST-000099\n");
  EXPECT_TRUE(
      HasError(OpenStatus(), absl::StatusCode::kDataLoss,
               {File("CURRENT"), File("MANIFEST-000099"), "does not exist"}));
  Overwrite(File("CURRENT"), current);
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

// --- MANIFEST ---

TEST_F(ErrorsDamage, ManifestByteFlipped) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string manifest = Only("MANIFEST");
  FlipByte(File(manifest), 10);  // inside the first record's payload
  EXPECT_TRUE(HasError(OpenStatus(), absl::StatusCode::kDataLoss,
                       {File(manifest), "offset 0", "checksum mismatch"}));
  ASSERT_TRUE(RepairDB(path_, Options()).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsDamage, ManifestTruncated) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string manifest = Only("MANIFEST");
  TruncateFile(File(manifest), 5);  // less than one record header
  EXPECT_TRUE(
      HasError(OpenStatus(), absl::StatusCode::kDataLoss, {File(manifest)}));
  ASSERT_TRUE(RepairDB(path_, Options()).ok());
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

// --- Tables ---

TEST_F(ErrorsDamage, TableDataBlockByteFlipped) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string table = Only(".sst");
  FlipByte(File(table), 20);  // in the first data block
  auto db = DB::Open(CatalogueOptions(false), path_);
  ASSERT_TRUE(db.ok()) << db.status();  // tables are read lazily
  ReadOptions verify;
  verify.verify_checksums = true;
  std::string value;
  EXPECT_TRUE(HasError((*db)->Get(verify, CatalogueKey(0), &value),
                       absl::StatusCode::kDataLoss,
                       {table, "block at offset 0", "checksum mismatch"}));
  // Keys in other blocks still read.
  EXPECT_TRUE((*db)->Get(verify, CatalogueKey(kEntries - 1), &value).ok());
  std::unique_ptr<Iterator> it = (*db)->NewIterator(verify);
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
  }
  EXPECT_TRUE(
      HasError(it->status(), absl::StatusCode::kDataLoss, {table, "offset 0"}));
  it.reset();
  db->reset();
  // RepairDB keeps every entry of the undamaged blocks.
  ASSERT_TRUE(RepairDB(path_, Options()).ok());
  auto repaired = DB::Open(CatalogueOptions(false), path_);
  ASSERT_TRUE(repaired.ok()) << repaired.status();
  EXPECT_TRUE(
      (*repaired)->Get(verify, CatalogueKey(kEntries - 1), &value).ok());
}

TEST_F(ErrorsDamage, TableDataBlockByteFlippedParanoid) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string table = Only(".sst");
  FlipByte(File(table), 20);
  Options o = CatalogueOptions(false);
  o.paranoid_checks = true;  // every block read is verified
  auto db = DB::Open(o, path_);
  ASSERT_TRUE(db.ok()) << db.status();
  std::string value;
  EXPECT_TRUE(HasError((*db)->Get(ReadOptions(), CatalogueKey(0), &value),
                       absl::StatusCode::kDataLoss,
                       {table, "block at offset 0", "checksum mismatch"}));
}

TEST_F(ErrorsDamage, TableFooterDamaged) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string table = Only(".sst");
  FlipByte(File(table), SizeOf(File(table)) - 1);  // the magic number
  auto db = DB::Open(CatalogueOptions(false), path_);
  ASSERT_TRUE(db.ok()) << db.status();
  std::string value;
  EXPECT_TRUE(HasError((*db)->Get(ReadOptions(), CatalogueKey(0), &value),
                       absl::StatusCode::kDataLoss, {table, "magic"}));
  db->reset();
  ASSERT_TRUE(RepairDB(path_, Options()).ok());
  EXPECT_TRUE(std::filesystem::exists(path_ + "/lost/" + table));
}

TEST_F(ErrorsDamage, TableTruncated) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string table = Only(".sst");
  TruncateFile(File(table), SizeOf(File(table)) / 2);
  auto db = DB::Open(CatalogueOptions(false), path_);
  ASSERT_TRUE(db.ok()) << db.status();
  std::string value;
  EXPECT_TRUE(HasError((*db)->Get(ReadOptions(), CatalogueKey(0), &value),
                       absl::StatusCode::kDataLoss, {table}));
}

TEST_F(ErrorsDamage, TableMissing) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string table = Only(".sst");
  const std::string bytes = Slurp(File(table));
  std::filesystem::remove(File(table));
  EXPECT_TRUE(HasError(OpenStatus(), absl::StatusCode::kDataLoss,
                       {path_, "missing", table}));
  Overwrite(File(table), bytes);  // the fix: put it back
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsDamage, TableMissingAfterOpen) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string table = Only(".sst");
  const std::string bytes = Slurp(File(table));
  {
    auto db = DB::Open(CatalogueOptions(false), path_);
    ASSERT_TRUE(db.ok()) << db.status();
    std::filesystem::remove(File(table));  // under the open DB
    std::string value;
    // Never NotFound: that would say the key does not exist.
    EXPECT_TRUE(HasError((*db)->Get(ReadOptions(), CatalogueKey(0), &value),
                         absl::StatusCode::kDataLoss,
                         {"table", File(table), "missing"}));
  }
  Overwrite(File(table), bytes);  // the fix: put it back
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsDamage, ManifestNumberOutOfRange) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  const std::string manifest = Only("MANIFEST");
  const std::string good = Slurp(File(manifest));
  // A record claiming a next file number above 2^62 (which would wrap the
  // counter), appended as a well-formed log record.
  VersionEdit bad;
  bad.SetNextFile(kMaxFileNumber + 1);
  std::string record;
  bad.EncodeTo(&record);
  {
    auto file = Env::Default()->NewAppendableFile(File(manifest));
    ASSERT_TRUE(file.ok());
    log::Writer writer(file->get(), good.size());
    ASSERT_TRUE(writer.AddRecord(record).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }
  EXPECT_TRUE(HasError(OpenStatus(), absl::StatusCode::kDataLoss,
                       {File(manifest), "bad next file number"}));
  Overwrite(File(manifest), good);  // the fix: restore it
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

// --- Logs ---

TEST_F(ErrorsDamage, LogSequenceOutOfRange) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/false));
  const std::string log = Only(".log");
  const std::string good = Slurp(File(log));
  WriteBatch batch;
  batch.Put("x", "y");
  batch.Put("z", "w");
  WriteBatchInternal::SetSequence(&batch, kMaxSequenceNumber);
  {
    auto file = Env::Default()->NewAppendableFile(File(log));
    ASSERT_TRUE(file.ok());
    log::Writer writer(file->get(), good.size());
    ASSERT_TRUE(writer.AddRecord(WriteBatchInternal::Contents(&batch)).ok());
    ASSERT_TRUE((*file)->Close().ok());
  }
  Options paranoid = CatalogueOptions(false);
  paranoid.paranoid_checks = true;
  EXPECT_TRUE(HasError(OpenStatus(paranoid), absl::StatusCode::kDataLoss,
                       {File(log), "exceeds the largest sequence number"}));
  // Default options drop the record (and log it); everything else is there.
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsDamage, LogByteFlipped) {
  // Enough entries for the log to span several 32 KiB blocks.
  constexpr int kMany = 2000;
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kMany, /*flush=*/false));
  const std::string log = Only(".log");
  ASSERT_GT(SizeOf(File(log)), 3u * 32768);
  FlipByte(File(log), 12);  // in the first record: entry 0
  // Default: after a checksum mismatch the rest of that 32 KiB block is
  // dropped (a damaged length cannot be trusted) and logged to LOG; reading
  // resumes at the next block. Entries there are recovered.
  {
    auto db = DB::Open(CatalogueOptions(false), path_);
    ASSERT_TRUE(db.ok()) << db.status();
    std::string value;
    EXPECT_TRUE(
        absl::IsNotFound((*db)->Get(ReadOptions(), CatalogueKey(0), &value)));
    EXPECT_TRUE(
        (*db)->Get(ReadOptions(), CatalogueKey(kMany - 1), &value).ok());
    EXPECT_EQ(value, CatalogueValue(kMany - 1));
  }
  const std::string info_log = Slurp(File("LOG"));
  EXPECT_NE(info_log.find(log + ": log record at offset 0: checksum mismatch"),
            std::string::npos)
      << info_log;
}

TEST_F(ErrorsDamage, LogByteFlippedParanoid) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/false));
  const std::string log = Only(".log");
  const std::string bytes = Slurp(File(log));
  FlipByte(File(log), 12);
  Options o = CatalogueOptions(false);
  o.paranoid_checks = true;
  EXPECT_TRUE(HasError(OpenStatus(o), absl::StatusCode::kDataLoss,
                       {log, "offset 0", "checksum mismatch"}));
  Overwrite(File(log), bytes);  // undo the damage: everything is back
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries, o));
}

TEST_F(ErrorsDamage, LogTruncated) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/false));
  const std::string log = Only(".log");
  TruncateFile(File(log), SizeOf(File(log)) - 3);
  // A torn tail, as a crash leaves it: the last record is dropped
  // silently, even with paranoid_checks.
  Options o = CatalogueOptions(false);
  o.paranoid_checks = true;
  auto db = DB::Open(o, path_);
  ASSERT_TRUE(db.ok()) << db.status();
  std::string value;
  EXPECT_TRUE(absl::IsNotFound(
      (*db)->Get(ReadOptions(), CatalogueKey(kEntries - 1), &value)));
  EXPECT_TRUE(
      (*db)->Get(ReadOptions(), CatalogueKey(kEntries - 2), &value).ok());
}

}  // namespace damage_errors_test
}  // namespace siftdb::test
