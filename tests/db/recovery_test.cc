// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Recovery: power loss (unsynced bytes dropped), torn log tails, damaged
// logs with and without paranoid_checks, and I/O errors on the write path.

#include <filesystem>
#include <map>
#include <string>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/db_files.h"
#include "tests/support/temp_dir.h"
#include "util/random.h"
#include "util/testing/fault_injection_env.h"

namespace siftdb {
namespace recovery_test {

class RecoveryTest : public ::testing::Test {
 protected:
  RecoveryTest() : env_(Env::Default()) {
    options_.create_if_missing = true;
    options_.env = &env_;
    path_ = dir_.Join("db");
  }

  absl::Status Open() {
    db_.reset();
    auto db = DB::Open(options_, path_);
    if (!db.ok()) return db.status();
    db_ = std::move(*db);
    return absl::OkStatus();
  }

  void PowerLoss() {
    env_.SetFilesystemActive(false);
    db_.reset();
    ASSERT_TRUE(env_.SimulatePowerLoss().ok());
    env_.SetFilesystemActive(true);
  }

  std::string Get(std::string_view key) {
    std::string value;
    absl::Status s = db_->Get(ReadOptions(), key, &value);
    if (absl::IsNotFound(s)) return "NOT_FOUND";
    if (!s.ok()) return "ERROR: " + s.ToString();
    return value;
  }

  // The newest log file of the DB.
  std::string LastLogFile() {
    return LogFileName(path_,
                       test::NewestFileNumber(path_, FileType::kLogFile));
  }

  test::TempDir dir_;
  FaultInjectionEnv env_;
  Options options_;
  std::string path_;
  std::unique_ptr<DB> db_;
};

// Writes with a mix of sync and plain writes, across MemTable flushes, then
// a power loss: every write acknowledged before the last synced one is
// present with its value; nothing holds a value never written.
TEST_F(RecoveryTest, PowerLossKeepsEverySyncedWrite) {
  options_.write_buffer_size = 32 << 10;  // several flushes
  for (int round = 0; round < 5; round++) {
    ASSERT_TRUE(Open().ok());
    Random rnd(round + 1);
    std::map<std::string, std::string> written;  // all acknowledged
    std::map<std::string, std::string> durable;  // up to the last sync
    std::map<std::string, std::string> all_values_ever;
    const int n = 1500 + rnd.Uniform(1500);
    for (int i = 0; i < n; i++) {
      const std::string key = "k" + std::to_string(rnd.Uniform(800));
      const std::string value = absl::StrFormat(
          "r%d-i%d-%s", round, i, std::string(rnd.Uniform(300), 'v'));
      WriteOptions wo;
      wo.sync = rnd.OneIn(20);
      ASSERT_TRUE(db_->Put(wo, key, value).ok());
      written[key] = value;
      all_values_ever[key + "=" + value] = "";
      if (wo.sync) durable = written;
    }
    PowerLoss();
    ASSERT_TRUE(Open().ok()) << "round " << round;
    for (const auto& [key, value] : durable) {
      const std::string got = Get(key);
      ASSERT_NE("NOT_FOUND", got) << key;
      // The synced value or a later acknowledged one.
      ASSERT_TRUE(all_values_ever.contains(key + "=" + got)) << key;
    }
    std::unique_ptr<Iterator> it = db_->NewIterator(ReadOptions());
    for (it->SeekToFirst(); it->Valid(); it->Next()) {
      ASSERT_TRUE(all_values_ever.contains(std::string(it->key()) + "=" +
                                           std::string(it->value())))
          << "value never written for " << it->key();
    }
    ASSERT_TRUE(it->status().ok());
    it.reset();
    db_.reset();
    ASSERT_TRUE(DestroyDB(path_, options_).ok());
  }
}

TEST_F(RecoveryTest, TornTailAtEveryLengthRecoversAPrefix) {
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < 20; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), "key" + std::to_string(i),
                         std::string(100 + i, 'a' + i % 26))
                    .ok());
  }
  db_.reset();
  const std::string log = LastLogFile();
  auto contents = ReadFileToString(Env::Default(), log);
  ASSERT_TRUE(contents.ok());
  const std::string full = *contents;
  const std::string backup = dir_.Join("backup");
  ASSERT_TRUE(Env::Default()->RenameFile(path_, backup).ok());
  for (size_t len = 0; len <= full.size(); len += 37) {
    // A fresh copy of the DB with the log cut at len.
    std::filesystem::remove_all(path_);
    std::filesystem::copy(backup, path_);
    ASSERT_TRUE(
        WriteStringToFile(Env::Default(), full.substr(0, len), log, false)
            .ok());
    options_.paranoid_checks = true;  // a torn tail is not damage
    ASSERT_TRUE(Open().ok()) << "len " << len;
    int present = 0;
    bool gap = false;
    for (int i = 0; i < 20; i++) {
      const std::string got = Get("key" + std::to_string(i));
      if (got == "NOT_FOUND") {
        gap = true;
      } else {
        ASSERT_FALSE(gap) << "a hole before key" << i << " at len " << len;
        ASSERT_EQ(std::string(100 + i, 'a' + i % 26), got);
        present++;
      }
    }
    if (len == full.size()) {
      EXPECT_EQ(20, present);
    }
    db_.reset();
  }
}

TEST_F(RecoveryTest, DamagedLogIsDataLossWhenParanoid) {
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < 300; i++) {
    ASSERT_TRUE(db_->Put(WriteOptions(), "key" + std::to_string(i),
                         std::string(200, 'x'))
                    .ok());
  }
  db_.reset();
  const std::string log = LastLogFile();
  auto contents = ReadFileToString(Env::Default(), log);
  ASSERT_TRUE(contents.ok());
  std::string damaged = *contents;
  damaged[damaged.size() / 2] ^= 0x40;  // a flipped bit mid-log
  ASSERT_TRUE(WriteStringToFile(Env::Default(), damaged, log, false).ok());

  options_.paranoid_checks = true;
  absl::Status s = Open();
  ASSERT_TRUE(absl::IsDataLoss(s)) << s;
  EXPECT_NE(std::string::npos, s.message().find(".log")) << s;
  EXPECT_NE(std::string::npos, s.message().find("offset")) << s;

  // Without paranoid checks the damaged record is skipped, the rest kept.
  options_.paranoid_checks = false;
  ASSERT_TRUE(Open().ok());
  int present = 0;
  for (int i = 0; i < 300; i++) {
    if (Get("key" + std::to_string(i)) != "NOT_FOUND") present++;
  }
  // A bad checksum drops the rest of its 32 KiB block (lengths there cannot
  // be trusted); records before it and in later blocks survive.
  EXPECT_GT(present, 100);
  EXPECT_LT(present, 300);
  EXPECT_EQ(std::string(200, 'x'), Get("key0"));
  EXPECT_EQ(std::string(200, 'x'), Get("key299"));
}

TEST_F(RecoveryTest, LogWriteErrorStopsWritesAndLosesNothingAcknowledged) {
  ASSERT_TRUE(Open().ok());
  WriteOptions sync;
  sync.sync = true;
  ASSERT_TRUE(db_->Put(sync, "before", "1").ok());
  env_.InjectNoSpace(FaultOp::kAppend, ".log");
  absl::Status s = db_->Put(sync, "during", "2");
  EXPECT_FALSE(s.ok());
  EXPECT_NE(std::string::npos, s.message().find("ENOSPC")) << s;
  std::string err;
  ASSERT_TRUE(db_->GetProperty("siftdb.background-error", &err));
  EXPECT_NE("OK", err);
  // Writes stay refused; reads still work.
  EXPECT_FALSE(db_->Put(WriteOptions(), "after", "3").ok());
  EXPECT_EQ("1", Get("before"));
  env_.ClearErrors();
  ASSERT_TRUE(Open().ok());
  EXPECT_EQ("1", Get("before"));
  EXPECT_EQ("NOT_FOUND", Get("after"));
  ASSERT_TRUE(db_->Put(WriteOptions(), "after", "3").ok());
}

TEST_F(RecoveryTest, FlushErrorIsABackgroundErrorAndReopenRecovers) {
  options_.write_buffer_size = 16 << 10;
  ASSERT_TRUE(Open().ok());
  env_.InjectIoError(FaultOp::kSync, ".sst");
  absl::Status s;
  int acknowledged = 0;
  for (int i = 0; i < 2000 && s.ok(); i++) {
    s = db_->Put(WriteOptions(), "key" + std::to_string(i),
                 std::string(100, 'z'));
    if (s.ok()) acknowledged++;
  }
  static_cast<DBImpl*>(db_.get())->WaitForBackgroundWork().IgnoreError();
  std::string err;
  ASSERT_TRUE(db_->GetProperty("siftdb.background-error", &err));
  EXPECT_NE("OK", err);
  EXPECT_NE(std::string::npos, err.find("injected")) << err;
  env_.ClearErrors();
  ASSERT_TRUE(Open().ok());
  for (int i = 0; i < acknowledged; i++) {
    ASSERT_EQ(std::string(100, 'z'), Get("key" + std::to_string(i))) << i;
  }
}

}  // namespace recovery_test
}  // namespace siftdb
