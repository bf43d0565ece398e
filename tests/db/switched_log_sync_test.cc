// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The log a MemTable switch leaves behind is synced off the writer's path
// (DBImpl::SyncSwitchedLog): the switching writer does not wait for it, a
// synced write waits for it before it is acknowledged, and a power loss
// after that synced write keeps every write before it.

#include <chrono>
#include <condition_variable>
#include <future>
#include <mutex>
#include <string>

#include "absl/strings/str_format.h"
#include "db/filename.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/db/db_files.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"
#include "util/testing/fault_injection_env.h"

namespace siftdb {
namespace switched_log_sync_test {

using namespace std::chrono_literals;

// Holds Sync() of one chosen log file, and optionally the creation of
// table files (so a flush cannot finish), until Release(). Counts the
// syncs of log files. Wraps every log file it creates, so the gate can be
// set on a file already open.
class GatedSyncEnv : public test::ForwardingEnv {
 public:
  explicit GatedSyncEnv(Env* base) : ForwardingEnv(base) {}

  void Gate(const std::string& log, bool hold_tables) {
    std::lock_guard<std::mutex> l(mu_);
    gated_ = log;
    hold_tables_ = hold_tables;
  }
  void Release() {
    {
      std::lock_guard<std::mutex> l(mu_);
      gated_.clear();
      hold_tables_ = false;
    }
    released_.notify_all();
  }
  int waiting() {
    std::lock_guard<std::mutex> l(mu_);
    return waiting_;
  }
  int log_syncs() {
    std::lock_guard<std::mutex> l(mu_);
    return log_syncs_;
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    if (f.ends_with(".sst")) {
      std::unique_lock<std::mutex> l(mu_);
      released_.wait(l, [&] { return !hold_tables_; });
    }
    auto file = ForwardingEnv::NewWritableFile(f);
    if (!file.ok() || !f.ends_with(".log")) return file;
    return std::unique_ptr<WritableFile>(
        std::make_unique<GatedFile>(this, f, std::move(*file)));
  }

 private:
  class GatedFile final : public test::ForwardingWritableFile {
   public:
    GatedFile(GatedSyncEnv* env, std::string name,
              std::unique_ptr<WritableFile> base)
        : ForwardingWritableFile(std::move(base)),
          env_(env),
          name_(std::move(name)) {}
    absl::Status Sync() override {
      env_->WaitIfGated(name_);
      return base_file()->Sync();
    }

   private:
    GatedSyncEnv* const env_;
    const std::string name_;
  };

  void WaitIfGated(const std::string& name) {
    std::unique_lock<std::mutex> l(mu_);
    log_syncs_++;
    if (gated_ != name) return;
    waiting_++;
    released_.wait(l, [&] { return gated_ != name; });
    waiting_--;
  }

  std::mutex mu_;
  std::condition_variable released_;
  std::string gated_;         // guarded by mu_
  bool hold_tables_ = false;  // guarded by mu_
  int waiting_ = 0;           // guarded by mu_
  int log_syncs_ = 0;         // guarded by mu_
};

class SwitchedLogSyncTest : public ::testing::Test {
 protected:
  SwitchedLogSyncTest() : fault_env_(Env::Default()), env_(&fault_env_) {
    options_.create_if_missing = true;
    options_.env = &env_;
    options_.write_buffer_size = 64 << 10;
    path_ = dir_.Join("db");
  }
  ~SwitchedLogSyncTest() override { env_.Release(); }

  uint64_t NewestLogNumber() {
    return test::NewestFileNumber(path_, FileType::kLogFile);
  }

  // Unsynced writes "w<n>" until the DB has switched to a newer log.
  absl::Status WriteUntilLogSwitch(uint64_t from_log) {
    while (NewestLogNumber() == from_log) {
      absl::Status s =
          db_->Put(WriteOptions(), absl::StrFormat("w%06d", written_),
                   std::string(200, 'a' + written_ % 26));
      if (!s.ok()) return s;
      written_++;
    }
    return absl::OkStatus();
  }

  // Closes db_ (when open) and opens the DB.
  void Reopen() {
    db_.reset();
    auto db = DB::Open(options_, path_);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
  }

  // Every write WriteUntilLogSwitch made is there, with its value.
  void ExpectEveryWrite() {
    std::string value;
    for (int i = 0; i < written_; i++) {
      ASSERT_TRUE(
          db_->Get(ReadOptions(), absl::StrFormat("w%06d", i), &value).ok())
          << "write " << i << " of " << written_ << " lost";
      ASSERT_EQ(std::string(200, 'a' + i % 26), value);
    }
  }

  test::TempDir dir_;
  FaultInjectionEnv fault_env_;
  GatedSyncEnv env_;
  Options options_;
  std::string path_;
  std::unique_ptr<DB> db_;
  int written_ = 0;
};

TEST_F(SwitchedLogSyncTest, SyncedWriteWaitsForTheSwitchedLog) {
  ASSERT_NO_FATAL_FAILURE(Reopen());
  const uint64_t first_log = NewestLogNumber();
  // The old log's flush cannot finish, and its sync is held.
  env_.Gate(LogFileName(path_, first_log), /*hold_tables=*/true);

  // The writer that switches does not wait for the old log's sync.
  auto switching = std::async(std::launch::async,
                              [&] { return WriteUntilLogSwitch(first_log); });
  ASSERT_EQ(std::future_status::ready, switching.wait_for(20s))
      << "a MemTable switch waited for the old log's sync";
  ASSERT_TRUE(switching.get().ok());

  // A synced write is not acknowledged while the old log is unsynced.
  auto synced = std::async(std::launch::async, [&] {
    WriteOptions wo;
    wo.sync = true;
    return db_->Put(wo, "synced", "value");
  });
  EXPECT_EQ(std::future_status::timeout, synced.wait_for(300ms))
      << "a synced write was acknowledged before earlier writes were durable";
  EXPECT_GE(env_.waiting(), 1);
  env_.Release();
  ASSERT_EQ(std::future_status::ready, synced.wait_for(20s));
  ASSERT_TRUE(synced.get().ok());

  // A power loss now keeps every write before the synced one.
  fault_env_.SetFilesystemActive(false);
  db_.reset();
  ASSERT_TRUE(fault_env_.SimulatePowerLoss().ok());
  fault_env_.SetFilesystemActive(true);
  ASSERT_NO_FATAL_FAILURE(Reopen());
  std::string value;
  ASSERT_TRUE(db_->Get(ReadOptions(), "synced", &value).ok());
  ExpectEveryWrite();
}

// Without synced writes no log is ever synced: a switched log is closed
// unsynced once its MemTable's flush is installed (its entries are in a
// synced table by then), and a reopen finds every write.
TEST_F(SwitchedLogSyncTest, UnsyncedWritesNeverSyncALog) {
  ASSERT_NO_FATAL_FAILURE(Reopen());
  for (int i = 0; i < 4; i++) {
    ASSERT_TRUE(WriteUntilLogSwitch(NewestLogNumber()).ok());
  }
  ASSERT_TRUE(db_->Flush(FlushOptions()).ok());
  EXPECT_EQ(0, env_.log_syncs());
  ASSERT_TRUE(db_->Close().ok());
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ExpectEveryWrite();
}

// A failed sync of the switched log is a background error: the synced
// write that needed it fails, later writes are refused, and a reopen
// recovers every write acknowledged before.
TEST_F(SwitchedLogSyncTest, FailedSyncOfTheSwitchedLogStopsWrites) {
  ASSERT_NO_FATAL_FAILURE(Reopen());
  const uint64_t first_log = NewestLogNumber();
  fault_env_.InjectIoError(FaultOp::kSync, LogFileName(path_, first_log));
  ASSERT_TRUE(WriteUntilLogSwitch(first_log).ok());
  WriteOptions wo;
  wo.sync = true;
  absl::Status s = db_->Put(wo, "synced", "value");
  ASSERT_FALSE(s.ok());
  EXPECT_FALSE(db_->Put(WriteOptions(), "later", "value").ok());
  db_.reset();
  fault_env_.ClearErrors();
  ASSERT_NO_FATAL_FAILURE(Reopen());
  ExpectEveryWrite();
}

}  // namespace switched_log_sync_test
}  // namespace siftdb
