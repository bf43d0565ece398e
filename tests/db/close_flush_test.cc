// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// DB::Flush and DB::Close, and two background-work rules:
//  - Close returns the status of its final steps, syncs the log (writes
//    made without sync survive a power loss after Close), refuses later
//    writes, and reports a compaction that failed while the DB was closing
//    (it used to be dropped because the DB was shutting down).
//  - A read that releases a stale Version never lists the directory or
//    deletes files itself: the background thread does it.

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <set>
#include <string>
#include <thread>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"
#include "util/mutex.h"
#include "util/testing/fault_injection_env.h"

namespace siftdb {
namespace close_flush_test {

namespace fs = std::filesystem;

std::string Key(int k) { return absl::StrFormat("key%06d", k); }

Options NewDBOptions() {
  Options o;
  o.create_if_missing = true;
  return o;
}

int TablesAtLevel0(DB* db) {
  std::string v;
  EXPECT_TRUE(db->GetProperty("siftdb.num-files-at-level0", &v));
  return std::stoi(v);
}

std::set<std::string> TableFiles(const std::string& dir) {
  std::set<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() == ".sst") out.insert(e.path().filename());
  }
  return out;
}

FlushOptions NoWait() {
  FlushOptions f;
  f.wait = false;
  return f;
}

TEST(FlushTest, FlushWritesTheMemTableToATable) {
  test::TempDir dir;
  auto db = DB::Open(NewDBOptions(), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Put(WriteOptions(), "a", "1").ok());
  ASSERT_EQ(0, TablesAtLevel0(db->get()));
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  EXPECT_EQ(1, TablesAtLevel0(db->get()));
  ASSERT_TRUE((*db)->Put(WriteOptions(), "b", "2").ok());
  ASSERT_TRUE((*db)->Flush(NoWait()).ok());
  for (int i = 0; i < 500 && TablesAtLevel0(db->get()) < 2; i++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_EQ(2, TablesAtLevel0(db->get()));
  std::string v;
  ASSERT_TRUE((*db)->Get(ReadOptions(), "b", &v).ok());
  EXPECT_EQ("2", v);
}

TEST(CloseTest, CloseRefusesWritesAndReturnsTheSameStatusTwice) {
  test::TempDir dir;
  auto db = DB::Open(NewDBOptions(), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  ASSERT_TRUE((*db)->Put(WriteOptions(), "a", "1").ok());
  ASSERT_TRUE((*db)->Close().ok());
  absl::Status s = (*db)->Put(WriteOptions(), "b", "2");
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
  EXPECT_NE(s.message().find("closed"), std::string::npos) << s;
  EXPECT_TRUE(absl::IsFailedPrecondition((*db)->Flush(FlushOptions())));
  EXPECT_TRUE(
      absl::IsFailedPrecondition((*db)->CompactRange(nullptr, nullptr)));
  std::string v;
  ASSERT_TRUE((*db)->Get(ReadOptions(), "a", &v).ok());
  EXPECT_EQ("1", v);
  EXPECT_TRUE((*db)->Close().ok());
}

// Without Close's final sync, writes made without sync are lost by a power
// loss after the DB was closed cleanly.
TEST(CloseTest, CloseSyncsTheLog) {
  test::TempDir dir;
  FaultInjectionEnv env(Env::Default());
  Options o;
  o.create_if_missing = true;
  o.env = &env;
  {
    auto db = DB::Open(o, dir.Join("db"));
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 100; i++) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "v").ok());
    }
    ASSERT_TRUE((*db)->Close().ok());
  }
  ASSERT_TRUE(env.SimulatePowerLoss().ok());
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  std::string v;
  for (int i = 0; i < 100; i++) {
    EXPECT_TRUE((*db)->Get(ReadOptions(), Key(i), &v).ok()) << Key(i);
  }
}

// Blocks the Append calls on the n-th table file created after Arm()
// until Release(), then fails them (and every later one) with EIO.
class BlockingTableEnv final : public test::ForwardingEnv {
 public:
  void Arm(int skip_tables) {
    MutexLock l(&mu_);
    skip_ = skip_tables;
    armed_ = true;
  }
  void WaitUntilBlocked() {
    MutexLock l(&mu_);
    while (!blocked_) cv_.Wait(&mu_);
  }
  void Release() {
    MutexLock l(&mu_);
    released_ = true;
    cv_.SignalAll();
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    auto file = ForwardingEnv::NewWritableFile(f);
    if (!file.ok() || f.find(".sst") == std::string::npos) return file;
    MutexLock l(&mu_);
    if (!armed_ || skip_-- > 0) return file;
    armed_ = false;
    return std::unique_ptr<WritableFile>(
        new BlockingFile(std::move(*file), this));
  }

 private:
  class BlockingFile final : public WritableFile {
   public:
    BlockingFile(std::unique_ptr<WritableFile> base, BlockingTableEnv* env)
        : base_(std::move(base)), env_(env) {}
    absl::Status Append(std::string_view) override { return env_->Block(); }
    absl::Status Flush() override { return env_->Block(); }
    absl::Status Sync() override { return env_->Block(); }
    absl::Status Close() override { return base_->Close(); }

   private:
    std::unique_ptr<WritableFile> base_;
    BlockingTableEnv* env_;
  };

  absl::Status Block() {
    MutexLock l(&mu_);
    blocked_ = true;
    cv_.SignalAll();
    while (!released_) cv_.Wait(&mu_);
    return absl::InternalError("injected EIO: compaction output");
  }

  Mutex mu_;
  CondVar cv_;
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  int skip_ ABSL_GUARDED_BY(mu_) = 0;
  bool blocked_ ABSL_GUARDED_BY(mu_) = false;
  bool released_ ABSL_GUARDED_BY(mu_) = false;
};

TEST(CloseTest, ACompactionFailingWhileClosingIsReported) {
  test::TempDir dir;
  BlockingTableEnv env;
  Options o;
  o.create_if_missing = true;
  o.env = &env;
  o.level0_file_num_compaction_trigger = 2;
  o.max_subcompactions = 1;
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < 2000; i += 2) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), std::string(50, 'a')).ok());
  }
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  // The second flush passes; the compaction it triggers blocks on its
  // output table.
  env.Arm(/*skip_tables=*/1);
  for (int i = 1; i < 2000; i += 2) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), std::string(50, 'b')).ok());
  }
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  env.WaitUntilBlocked();
  absl::Status closed;
  std::thread closer([&] { closed = (*db)->Close(); });
  // Close has begun once writes are refused; give it time to reach the
  // wait for the background thread.
  while ((*db)->Put(WriteOptions(), "x", "y").ok()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  env.Release();
  closer.join();
  EXPECT_FALSE(closed.ok()) << "a compaction failed while closing and Close "
                               "said OK";
  EXPECT_NE(closed.message().find("injected EIO"), std::string::npos) << closed;
}

// Counts GetChildren calls made on one thread.
class ListingEnv final : public test::ForwardingEnv {
 public:
  void Watch(std::thread::id id) {
    MutexLock l(&mu_);
    watched_ = id;
    calls_ = 0;
  }
  int calls() {
    MutexLock l(&mu_);
    return calls_;
  }
  absl::StatusOr<std::vector<std::string>> GetChildren(
      const std::string& d) override {
    {
      MutexLock l(&mu_);
      if (std::this_thread::get_id() == watched_) calls_++;
    }
    return ForwardingEnv::GetChildren(d);
  }

 private:
  Mutex mu_;
  std::thread::id watched_ ABSL_GUARDED_BY(mu_);
  int calls_ ABSL_GUARDED_BY(mu_) = 0;
};

TEST(ObsoleteFilesTest, ReadsNeverListTheDirectory) {
  test::TempDir dir;
  ListingEnv env;
  Options o;
  o.create_if_missing = true;
  o.env = &env;
  const std::string path = dir.Join("db");
  auto db = DB::Open(o, path);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < 1000; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "first").ok());
  }
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  const std::set<std::string> pinned = TableFiles(path);
  // The iterator pins the Version holding the first table.
  std::unique_ptr<Iterator> it = (*db)->NewIterator(ReadOptions());
  for (int i = 0; i < 1000; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "second").ok());
  }
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  for (const std::string& f : pinned) {
    ASSERT_TRUE(fs::exists(path + "/" + f)) << f << " deleted while pinned";
  }
  env.Watch(std::this_thread::get_id());
  it.reset();  // releases the stale Version
  EXPECT_EQ(0, env.calls()) << "the reader listed the directory";
  // The background thread deletes the tables the iterator kept.
  bool gone = false;
  for (int i = 0; i < 500 && !gone; i++) {
    gone = true;
    for (const std::string& f : pinned) gone &= !fs::exists(path + "/" + f);
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  EXPECT_TRUE(gone) << "obsolete tables were never deleted";
}

}  // namespace close_flush_test
}  // namespace siftdb
