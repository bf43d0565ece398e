// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// WriteOptions::disable_wal: writes that skip the log.
//  - They never reach the log, and sync together with them is refused.
//  - A clean Close flushes a MemTable that holds them, so nothing is lost
//    (without that flush they vanished at every clean close).
//  - A crash loses only them: a logged write is never put in a group that
//    skips the log, even when both kinds come from many threads at once.

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"
#include "util/testing/fault_injection_env.h"

namespace siftdb {
namespace disable_wal_test {

namespace fs = std::filesystem;

WriteOptions Unlogged() {
  WriteOptions w;
  w.disable_wal = true;
  return w;
}

class DisableWalTest : public ::testing::Test {
 protected:
  DisableWalTest() : env_(Env::Default()) {
    options_.create_if_missing = true;
    options_.env = &env_;
    path_ = dir_.Join("db");
  }

  void Open() {
    db_.reset();
    auto db = DB::Open(options_, path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }

  // A process crash: nothing more reaches the files (so Close cannot
  // flush), but what was appended stays, synced or not.
  void Crash() {
    env_.SetFilesystemActive(false);
    db_.reset();
    env_.SetFilesystemActive(true);
  }

  void PowerLoss() { ASSERT_TRUE(env_.SimulatePowerLoss().ok()); }

  std::string Get(std::string_view key) {
    std::string value;
    absl::Status s = db_->Get(ReadOptions(), key, &value);
    if (absl::IsNotFound(s)) return "NOT_FOUND";
    if (!s.ok()) return "ERROR: " + s.ToString();
    return value;
  }

  // Bytes in every log file, and the number of table files.
  uint64_t LogBytes() const { return BytesWithExtension(".log"); }
  int Tables() const {
    int n = 0;
    for (const auto& e : fs::directory_iterator(path_)) {
      n += e.path().extension() == ".sst";
    }
    return n;
  }
  uint64_t BytesWithExtension(const std::string& ext) const {
    uint64_t bytes = 0;
    for (const auto& e : fs::directory_iterator(path_)) {
      if (e.path().extension() == ext) bytes += e.file_size();
    }
    return bytes;
  }

  test::TempDir dir_;
  FaultInjectionEnv env_;
  Options options_;
  std::string path_;
  std::unique_ptr<DB> db_;
};

TEST_F(DisableWalTest, SyncTogetherWithDisableWalIsRefused) {
  Open();
  WriteOptions w = Unlogged();
  w.sync = true;
  absl::Status s = db_->Put(w, "k", "v");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("disable_wal"), std::string::npos) << s;
  EXPECT_EQ("NOT_FOUND", Get("k"));
}

TEST_F(DisableWalTest, UnloggedWritesNeverReachTheLog) {
  Open();
  const uint64_t before = LogBytes();
  for (int i = 0; i < 1000; i++) {
    ASSERT_TRUE(db_->Put(Unlogged(), absl::StrFormat("k%04d", i), "v").ok());
  }
  EXPECT_EQ(before, LogBytes());
  EXPECT_EQ("v", Get("k0999"));
  ASSERT_TRUE(db_->Put(WriteOptions(), "logged", "v").ok());
  EXPECT_GT(LogBytes(), before);
}

// The bug this pins: with no log behind them, unlogged writes vanished at
// a clean close. Close now flushes them into a table, which survives even
// a power loss right after.
TEST_F(DisableWalTest, CloseFlushesUnloggedWrites) {
  Open();
  for (int i = 0; i < 500; i++) {
    ASSERT_TRUE(db_->Put(Unlogged(), absl::StrFormat("k%04d", i),
                         absl::StrFormat("v%d", i))
                    .ok());
  }
  ASSERT_TRUE(db_->Delete(Unlogged(), "k0007").ok());
  EXPECT_EQ(0, Tables());
  ASSERT_TRUE(db_->Close().ok());
  EXPECT_EQ(1, Tables());
  db_.reset();
  PowerLoss();
  Open();
  for (int i = 0; i < 500; i++) {
    EXPECT_EQ(i == 7 ? "NOT_FOUND" : absl::StrFormat("v%d", i),
              Get(absl::StrFormat("k%04d", i)));
  }
}

TEST_F(DisableWalTest, CloseWithOnlyLoggedWritesWritesNoTable) {
  Open();
  ASSERT_TRUE(db_->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE(db_->Close().ok());
  EXPECT_EQ(0, Tables());
}

// Unlogged writes followed by logged ones and a MemTable switch: the
// switch already took them to a table, so Close has nothing to flush.
TEST_F(DisableWalTest, AFlushedMemTableNeedsNoFlushAtClose) {
  Open();
  ASSERT_TRUE(db_->Put(Unlogged(), "a", "1").ok());
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  ASSERT_TRUE(db_->Put(WriteOptions(), "b", "2").ok());
  ASSERT_TRUE(db_->Close().ok());
  EXPECT_EQ(1, Tables());
  Open();
  EXPECT_EQ("1", Get("a"));
  EXPECT_EQ("2", Get("b"));
}

TEST_F(DisableWalTest, ACrashLosesOnlyUnloggedWrites) {
  Open();
  for (int i = 0; i < 200; i++) {
    const std::string key = absl::StrFormat("k%04d", i);
    const bool logged = i % 3 != 0;
    ASSERT_TRUE(db_->Put(logged ? WriteOptions() : Unlogged(), key,
                         absl::StrFormat("v%d", i))
                    .ok());
  }
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());  // all 200 are in a table
  std::map<std::string, std::string> logged;
  for (int i = 0; i < 200; i++) {
    const std::string key = absl::StrFormat("k%04d", i);
    if (i % 2 == 0) {
      ASSERT_TRUE(db_->Put(WriteOptions(), key, "new").ok());
      logged[key] = "new";
    } else {
      ASSERT_TRUE(db_->Put(Unlogged(), key, "lost").ok());
      logged[key] = absl::StrFormat("v%d", i);  // the flushed value
    }
  }
  Crash();
  Open();
  for (const auto& [key, value] : logged) EXPECT_EQ(value, Get(key)) << key;
  // Sequence numbers of the lost writes are handed out again: new writes
  // win over every older value.
  ASSERT_TRUE(db_->Put(WriteOptions(), "k0001", "after").ok());
  EXPECT_EQ("after", Get("k0001"));
  Open();
  EXPECT_EQ("after", Get("k0001"));
}

// Threads writing logged and unlogged batches at once. Had a logged write
// joined a group led by an unlogged one, it would be missing after the
// crash.
TEST_F(DisableWalTest, ConcurrentLoggedWritesSurviveACrash) {
  Open();
  constexpr int kThreads = 4;
  constexpr int kPerThread = 1500;
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int t = 0; t < kThreads; t++) {
    threads.emplace_back([&, t] {
      const bool logged = t % 2 == 0;
      for (int i = 0; i < kPerThread; i++) {
        const std::string key = absl::StrFormat("t%d-%05d", t, i);
        if (!db_->Put(logged ? WriteOptions() : Unlogged(), key, key).ok()) {
          failures++;
        }
      }
    });
  }
  for (std::thread& t : threads) t.join();
  ASSERT_EQ(0, failures.load());
  Crash();
  Open();
  int unlogged_found = 0;
  for (int t = 0; t < kThreads; t++) {
    for (int i = 0; i < kPerThread; i++) {
      const std::string key = absl::StrFormat("t%d-%05d", t, i);
      const std::string got = Get(key);
      if (t % 2 == 0) {
        ASSERT_EQ(key, got) << "a logged write was lost";
      } else if (got != "NOT_FOUND") {
        ASSERT_EQ(key, got);
        unlogged_found++;
      }
    }
  }
  // The default write buffer holds everything: no MemTable was flushed.
  EXPECT_EQ(0, unlogged_found);
}

}  // namespace disable_wal_test
}  // namespace siftdb
