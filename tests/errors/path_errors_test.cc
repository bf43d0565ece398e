// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// docs/errors.md, "Paths and opening": where a database is opened, and by
// whom. Each case checks the status code and that the message names the
// path, and that an existing database is left intact.

#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/errors/errors_util.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace path_errors_test {

constexpr int kEntries = 30;

TEST(ErrorsPaths, EmptyPath) {
  auto db = DB::Open(CatalogueOptions(true), "");
  EXPECT_TRUE(HasError(db.status(), absl::StatusCode::kInvalidArgument,
                       {"DB path is empty"}));
}

TEST(ErrorsPaths, PathIsAFile) {
  TempDir dir;
  const std::string path = dir.Join("plain_file");
  Overwrite(path, "not a database");
  auto db = DB::Open(CatalogueOptions(true), path);
  EXPECT_TRUE(HasError(db.status(), absl::StatusCode::kInvalidArgument,
                       {path, "exists and is not a directory"}));
  EXPECT_EQ(Slurp(path), "not a database");  // left alone
}

TEST(ErrorsPaths, MissingWithoutCreateIfMissing) {
  TempDir dir;
  const std::string path = dir.Join("absent");
  auto db = DB::Open(CatalogueOptions(false), path);
  EXPECT_TRUE(HasError(db.status(), absl::StatusCode::kInvalidArgument,
                       {path, "does not exist", "create_if_missing"}));
  EXPECT_FALSE(std::filesystem::exists(path));  // nothing was created
}

TEST(ErrorsPaths, ParentDirectoryMissing) {
  TempDir dir;
  const std::string path = dir.Join("no/such/parent/db");
  auto db = DB::Open(CatalogueOptions(true), path);
  EXPECT_TRUE(HasError(db.status(), absl::StatusCode::kNotFound, {path}));
}

TEST(ErrorsPaths, EmptyDirectoryWithoutCreateIfMissing) {
  TempDir dir;
  const std::string path = dir.Join("empty");
  std::filesystem::create_directory(path);
  auto db = DB::Open(CatalogueOptions(false), path);
  EXPECT_TRUE(HasError(
      db.status(), absl::StatusCode::kInvalidArgument,
      {path, "not a siftdb database (no CURRENT file)", "create_if_missing"}));
}

TEST(ErrorsPaths, DirectoryThatIsNotADatabase) {
  TempDir dir;
  const std::string path = dir.Join("photos");
  std::filesystem::create_directory(path);
  Overwrite(path + "/holiday.jpg", "jpeg bytes");
  auto db = DB::Open(CatalogueOptions(false), path);
  EXPECT_TRUE(HasError(db.status(), absl::StatusCode::kInvalidArgument,
                       {path, "not a siftdb database (no CURRENT file)"}));
  // With create_if_missing the directory becomes a database too; foreign
  // files are left alone, by Open and by DestroyDB.
  ASSERT_NO_FATAL_FAILURE(MakeDb(path, kEntries, /*flush=*/true));
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path, kEntries));
  EXPECT_TRUE(DestroyDB(path, Options()).ok());
  EXPECT_EQ(Slurp(path + "/holiday.jpg"), "jpeg bytes");
}

TEST(ErrorsPaths, ErrorIfExists) {
  TempDir dir;
  const std::string path = dir.Join("db");
  ASSERT_NO_FATAL_FAILURE(MakeDb(path, kEntries, /*flush=*/false));
  Options o = CatalogueOptions(true);
  o.error_if_exists = true;
  auto db = DB::Open(o, path);
  EXPECT_TRUE(HasError(db.status(), absl::StatusCode::kInvalidArgument,
                       {path, "database exists", "error_if_exists"}));
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path, kEntries));
}

TEST(ErrorsPaths, OpenedTwiceInOneProcess) {
  TempDir dir;
  const std::string path = dir.Join("db");
  ASSERT_NO_FATAL_FAILURE(MakeDb(path, kEntries, /*flush=*/false));
  auto first = DB::Open(CatalogueOptions(false), path);
  ASSERT_TRUE(first.ok()) << first.status();
  auto second = DB::Open(CatalogueOptions(false), path);
  EXPECT_TRUE(HasError(second.status(), absl::StatusCode::kUnavailable,
                       {path + "/LOCK"}));
  // The first handle is unharmed and keeps working.
  WriteOptions sync;
  sync.sync = true;
  ASSERT_TRUE((*first)
                  ->Put(sync, CatalogueKey(kEntries), CatalogueValue(kEntries))
                  .ok());
  first->reset();
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path, kEntries + 1));
}

TEST(ErrorsPaths, OpenedTwiceByTwoProcesses) {
  TempDir dir;
  const std::string path = dir.Join("db");
  ASSERT_NO_FATAL_FAILURE(MakeDb(path, kEntries, /*flush=*/false));
  auto first = DB::Open(CatalogueOptions(false), path);
  ASSERT_TRUE(first.ok()) << first.status();
  int fds[2];
  ASSERT_EQ(pipe(fds), 0);
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    // The child reports the status code of its Open and its message.
    close(fds[0]);
    auto db = DB::Open(CatalogueOptions(false), path);
    const std::string report =
        std::to_string(static_cast<int>(db.status().code())) + " " +
        std::string(db.status().message());
    (void)!write(fds[1], report.data(), report.size());
    _exit(0);
  }
  close(fds[1]);
  std::string report;
  char buf[512];
  for (ssize_t n; (n = read(fds[0], buf, sizeof(buf))) > 0;) {
    report.append(buf, n);
  }
  close(fds[0]);
  int wstatus = 0;
  ASSERT_EQ(waitpid(child, &wstatus, 0), child);
  const size_t space = report.find(' ');
  ASSERT_NE(space, std::string::npos) << report;
  const absl::Status child_status(
      static_cast<absl::StatusCode>(std::stoi(report.substr(0, space))),
      report.substr(space + 1));
  EXPECT_TRUE(
      HasError(child_status, absl::StatusCode::kUnavailable, {path + "/LOCK"}));
  first->reset();
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path, kEntries));
}

TEST(ErrorsPaths, DestroyWhileOpen) {
  TempDir dir;
  const std::string path = dir.Join("db");
  ASSERT_NO_FATAL_FAILURE(MakeDb(path, kEntries, /*flush=*/true));
  {
    auto db = DB::Open(CatalogueOptions(false), path);
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_TRUE(HasError(DestroyDB(path, Options()),
                         absl::StatusCode::kUnavailable, {path + "/LOCK"}));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path, kEntries));
}

TEST(ErrorsPaths, RepairWhileOpen) {
  TempDir dir;
  const std::string path = dir.Join("db");
  ASSERT_NO_FATAL_FAILURE(MakeDb(path, kEntries, /*flush=*/true));
  {
    auto db = DB::Open(CatalogueOptions(false), path);
    ASSERT_TRUE(db.ok()) << db.status();
    EXPECT_TRUE(HasError(RepairDB(path, Options()),
                         absl::StatusCode::kUnavailable, {path + "/LOCK"}));
  }
  ASSERT_NO_FATAL_FAILURE(ExpectDbHolds(path, kEntries));
}

}  // namespace path_errors_test
}  // namespace siftdb::test
