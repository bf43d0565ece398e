// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Catalogue rows of "Operating a live database" (docs/errors.md): calls a
// read-only or closed DB refuses, read-only opens of what is no database,
// and checkpoints into a directory that cannot take one. Each refusal
// leaves the data as it was.

#include <filesystem>
#include <memory>
#include <string>

#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/errors/errors_util.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace operation_errors_test {

constexpr int kEntries = 100;

class ErrorsOperation : public ::testing::Test {
 protected:
  TempDir dir_;
  const std::string path_ = dir_.Join("db");
};

TEST_F(ErrorsOperation, WriteToReadOnlyDB) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/false));
  auto db = DB::OpenForReadOnly(CatalogueOptions(false), path_);
  ASSERT_TRUE(db.ok()) << db.status();
  EXPECT_TRUE(HasError((*db)->Put(WriteOptions(), "k", "v"),
                       absl::StatusCode::kFailedPrecondition,
                       {path_, "Write refused", "read-only"}));
  EXPECT_TRUE(HasError((*db)->CompactRange(nullptr, nullptr),
                       absl::StatusCode::kFailedPrecondition,
                       {path_, "CompactRange refused", "read-only"}));
  db->reset();
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsOperation, WriteAfterClose) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/false));
  auto db = DB::Open(CatalogueOptions(false), path_);
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Close().ok());
  EXPECT_TRUE(HasError((*db)->Put(WriteOptions(), "k", "v"),
                       absl::StatusCode::kFailedPrecondition,
                       {path_, "Write refused", "closed"}));
  EXPECT_TRUE(HasError((*db)->Flush(FlushOptions()),
                       absl::StatusCode::kFailedPrecondition,
                       {path_, "Flush refused", "closed"}));
  db->reset();
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsOperation, ReadOnlyOpenOfNoDatabase) {
  EXPECT_TRUE(
      HasError(DB::OpenForReadOnly(CatalogueOptions(false), path_).status(),
               absl::StatusCode::kInvalidArgument,
               {path_, "not a directory", "creates nothing"}));
  EXPECT_FALSE(std::filesystem::exists(path_));
  std::filesystem::create_directories(path_);
  EXPECT_TRUE(
      HasError(DB::OpenForReadOnly(CatalogueOptions(false), path_).status(),
               absl::StatusCode::kNotFound,
               {path_, "not a siftdb database", "no CURRENT file"}));
}

TEST_F(ErrorsOperation, CheckpointDirectoryExists) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  auto db = DB::Open(CatalogueOptions(false), path_);
  ASSERT_TRUE(db.ok()) << db.status();
  const std::string taken = dir_.Join("taken");
  std::filesystem::create_directories(taken);
  EXPECT_TRUE(HasError((*db)->CreateCheckpoint(taken),
                       absl::StatusCode::kInvalidArgument,
                       {taken, "already exists", "must not"}));
  db->reset();
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

TEST_F(ErrorsOperation, CheckpointParentMissing) {
  ASSERT_NO_FATAL_FAILURE(MakeDb(path_, kEntries, /*flush=*/true));
  auto db = DB::Open(CatalogueOptions(false), path_);
  ASSERT_TRUE(db.ok()) << db.status();
  const std::string target = dir_.Join("no/such/cp");
  EXPECT_TRUE(HasError((*db)->CreateCheckpoint(target),
                       absl::StatusCode::kNotFound, {target + ".tmp"}));
  EXPECT_FALSE(std::filesystem::exists(dir_.Join("no")));
  // The DB deletes obsolete files again afterwards, and holds everything.
  db->reset();
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path_, kEntries));
}

}  // namespace operation_errors_test
}  // namespace siftdb::test
