// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Opening a database leaves nothing to chance: a new directory's entry is
// made durable in its parent, a second Open of a live database fails
// without rotating the running instance's LOG, and a stray file whose
// number is out of siftdb's range is ignored instead of wrapping the
// file-number counter.

#include <sys/stat.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"
#include "util/mutex.h"

namespace siftdb {
namespace open_hygiene_test {

// Records the directories created and synced, in order.
class DirRecordingEnv final : public test::ForwardingEnv {
 public:
  absl::Status CreateDir(const std::string& d) override {
    Record("create " + d);
    return ForwardingEnv::CreateDir(d);
  }
  absl::Status SyncDir(const std::string& d) override {
    Record("sync " + d);
    return ForwardingEnv::SyncDir(d);
  }
  std::vector<std::string> events() {
    MutexLock l(&mu_);
    return events_;
  }

 private:
  void Record(std::string e) {
    MutexLock l(&mu_);
    events_.push_back(std::move(e));
  }
  Mutex mu_;
  std::vector<std::string> events_ ABSL_GUARDED_BY(mu_);
};

TEST(OpenHygieneTest, ParentDirectory) {
  EXPECT_EQ(".", ParentDirectory("db"));
  EXPECT_EQ("/", ParentDirectory("/db"));
  EXPECT_EQ("a", ParentDirectory("a/db/"));
  EXPECT_EQ("/a/b", ParentDirectory("/a/b/db"));
}

TEST(OpenHygieneTest, NewDirectoryIsSyncedInItsParent) {
  test::TempDir dir;
  DirRecordingEnv env;
  Options o;
  o.env = &env;
  o.create_if_missing = true;
  const std::string path = dir.Join("fresh");
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  const std::vector<std::string> events = env.events();
  auto created = std::find(events.begin(), events.end(), "create " + path);
  ASSERT_NE(created, events.end());
  EXPECT_NE(std::find(created, events.end(), "sync " + dir.path()),
            events.end())
      << "the parent of a new database directory was never synced";
}

TEST(OpenHygieneTest, SecondOpenLeavesTheRunningInstancesLogAlone) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o;
  o.create_if_missing = true;
  auto first = DB::Open(o, path);
  ASSERT_TRUE(first.ok()) << first.status();
  ASSERT_TRUE((*first)->Put(WriteOptions(), "k", "v").ok());
  struct stat before;
  ASSERT_EQ(0, stat(InfoLogFileName(path).c_str(), &before));
  auto old_logs = [&path] {
    int n = 0;
    for (const auto& e : std::filesystem::directory_iterator(path)) {
      n += e.path().filename().string().rfind("LOG.old", 0) == 0;
    }
    return n;
  };
  ASSERT_EQ(old_logs(), 0);

  auto second = DB::Open(o, path);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(old_logs(), 0)
      << "the failed Open rotated the running instance's LOG";
  struct stat after;
  ASSERT_EQ(0, stat(InfoLogFileName(path).c_str(), &after));
  EXPECT_EQ(before.st_ino, after.st_ino)
      << "LOG is no longer the running instance's file";
}

TEST(OpenHygieneTest, StrayFileWithAHugeNumberIsIgnored) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  Options o;
  o.create_if_missing = true;
  {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    ASSERT_TRUE((*db)->Put(WriteOptions(), "k", "v").ok());
  }
  for (const char* stray :
       {"18446744073709551615.log", "18446744073709551615.sst",
        "MANIFEST-18446744073709551615", "4611686018427387905.log"}) {
    std::ofstream(path + "/" + stray) << "";
    uint64_t number;
    FileType type;
    EXPECT_FALSE(ParseFileName(stray, &number, &type)) << stray;
  }
  for (int round = 0; round < 2; round++) {
    auto db = DB::Open(o, path);
    ASSERT_TRUE(db.ok()) << db.status();
    std::string v;
    ASSERT_TRUE((*db)->Get(ReadOptions(), "k", &v).ok());
    EXPECT_EQ("v", v);
    ASSERT_TRUE((*db)->Put(WriteOptions(), "k2", "v2").ok());
  }
  ASSERT_TRUE(RepairDB(path, o).ok());
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  std::string v;
  ASSERT_TRUE((*db)->Get(ReadOptions(), "k2", &v).ok());
  EXPECT_EQ("v2", v);
}

}  // namespace open_hygiene_test
}  // namespace siftdb
