// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// RepairDB on a crash image taken while a flush was writing its table:
// the MemTable was switched (a new log numbered) while a compaction was
// finishing, the compaction then installed its outputs, and the flush of
// the switched MemTable got the very file number that last MANIFEST record
// gives as the next one. The crash image holds that table complete but not
// in the MANIFEST, and its log. A reopen replays the log; repair must keep
// the same newest values.
//
// Found by `db_crashtest --repair_every=1` (seed 20261125, cycle 95):
// repair took the recorded next-file number one too high, set the flush's
// table aside as obsolete, and, since that table named the log as its
// input, did not replay the log either, so the values written before the
// compaction won over the newer ones in the log.

#include <atomic>
#include <condition_variable>
#include <filesystem>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "db/filename.h"
#include "db/repair_plan.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace repair_uninstalled_flush_test {

constexpr int kKeys = 100;

std::string Key(int i) { return absl::StrFormat("key%04d", i); }

std::string Get(DB* db, const std::string& key) {
  std::string value;
  absl::Status s = db->Get(ReadOptions(), key, &value);
  if (absl::IsNotFound(s)) return "NOT_FOUND";
  if (!s.ok()) return "ERROR: " + s.ToString();
  return value;
}

bool EndsWith(const std::string& s, const std::string& suffix) {
  return s.size() >= suffix.size() &&
         s.compare(s.size() - suffix.size(), suffix.size(), suffix) == 0;
}

// Once armed, stops the first two syncs of table files (the compaction's
// output, then the flush's table) after their bytes reached the OS, until
// the test lets each go on; once asked to, notes when a log is created.
class GateEnv final : public test::ForwardingEnv {
 public:
  void Arm() {
    std::lock_guard<std::mutex> l(mu_);
    armed_ = true;
  }
  // Waits until table sync number n (1 or 2) is stopped; its table's name.
  std::string WaitStopped(int n) {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return stopped_ >= n; });
    return stopped_names_[n - 1];
  }
  void Release(int n) {
    std::lock_guard<std::mutex> l(mu_);
    released_ = n;
    cv_.notify_all();
  }
  void WatchLogs() {
    std::lock_guard<std::mutex> l(mu_);
    watch_logs_ = true;
  }
  void WaitLogCreated() {
    std::unique_lock<std::mutex> l(mu_);
    cv_.wait(l, [&] { return log_created_; });
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    auto file = base()->NewWritableFile(f);
    if (!file.ok()) return file;
    std::lock_guard<std::mutex> l(mu_);
    if (watch_logs_ && EndsWith(f, ".log")) {
      log_created_ = true;
      cv_.notify_all();
    }
    if (!EndsWith(f, ".sst")) return file;
    return std::unique_ptr<WritableFile>(
        std::make_unique<GatedFile>(this, f, std::move(*file)));
  }

 private:
  class GatedFile final : public test::ForwardingWritableFile {
   public:
    GatedFile(GateEnv* env, std::string name,
              std::unique_ptr<WritableFile> base)
        : ForwardingWritableFile(std::move(base)),
          env_(env),
          name_(std::move(name)) {}
    absl::Status Sync() override {
      absl::Status s = base_file()->Flush();  // the crash image sees the bytes
      if (!s.ok()) return s;
      env_->MaybeStop(name_);
      return base_file()->Sync();
    }

   private:
    GateEnv* const env_;
    const std::string name_;
  };

  void MaybeStop(const std::string& name) {
    std::unique_lock<std::mutex> l(mu_);
    if (!armed_ || stopped_ >= 2) return;
    const int n = ++stopped_;
    stopped_names_.push_back(name);
    cv_.notify_all();
    cv_.wait(l, [&] { return released_ >= n; });
  }

  std::mutex mu_;
  std::condition_variable cv_;
  bool armed_ = false;
  bool watch_logs_ = false;
  bool log_created_ = false;
  int stopped_ = 0;
  int released_ = 0;
  std::vector<std::string> stopped_names_;
};

TEST(RepairUninstalledFlushTest, RepairKeepsTheLogOfAFlushCutShort) {
  test::TempDir dir;
  const std::string path = dir.Join("db");
  const std::string image = dir.Join("image");
  const std::string reopened = dir.Join("reopened");
  GateEnv env;
  Options options;
  options.create_if_missing = true;
  options.env = &env;
  options.write_buffer_size = 1 << 20;  // flushes only when asked
  uint64_t flush_table = 0;
  {
    auto db = DB::Open(options, path);
    ASSERT_TRUE(db.ok()) << db.status();
    DBImpl* impl = static_cast<DBImpl*>(db->get());
    // Two overlapping level-0 tables: compacting them writes an output.
    for (const char* value : {"v1", "v2"}) {
      for (int i = 0; i < kKeys; i++) {
        ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), value).ok());
      }
      ASSERT_TRUE(impl->FlushMemTable().ok());
    }
    env.Arm();
    // The compaction stops at its output's sync, past its last key.
    std::thread compact(
        [&] { EXPECT_TRUE((*db)->CompactRange(nullptr, nullptr).ok()); });
    env.WaitStopped(1);
    // Meanwhile v3 is written and its MemTable switched: a new log is
    // numbered before the compaction's MANIFEST record.
    for (int i = 0; i < kKeys; i++) {
      EXPECT_TRUE((*db)->Put(WriteOptions(), Key(i), "v3").ok());
    }
    env.WatchLogs();
    std::thread flush([&] { EXPECT_TRUE(impl->FlushMemTable().ok()); });
    env.WaitLogCreated();
    env.Release(1);
    // The compaction installs; the flush writes its table and stops at its
    // sync, before its own MANIFEST record: the crash image.
    const std::string name = env.WaitStopped(2);
    FileType type;
    EXPECT_TRUE(ParseFileName(std::filesystem::path(name).filename().string(),
                              &flush_table, &type));
    std::filesystem::copy(path, image);  // the directory holds files only
    std::filesystem::copy(path, reopened);
    env.Release(2);
    flush.join();
    compact.join();
  }
  std::filesystem::remove(image + "/LOCK");
  std::filesystem::remove(reopened + "/LOCK");

  // The flush's table is the first file numbered after the MANIFEST's last
  // record: the case repair got wrong.
  Options plain;
  auto sanitized = SanitizeOptions(plain);
  ASSERT_TRUE(sanitized.ok()) << sanitized.status();
  const RepairManifest manifest =
      ReadRepairManifest(image, *sanitized, /*descriptors=*/{});
  ASSERT_TRUE(manifest.readable) << manifest.error;
  EXPECT_EQ(flush_table, manifest.next_file_number);
  EXPECT_EQ(0u, manifest.live_tables.count(flush_table));

  ASSERT_TRUE(RepairDB(image, plain).ok());
  auto repaired = DB::Open(plain, image);
  ASSERT_TRUE(repaired.ok()) << repaired.status();
  auto reopen = DB::Open(plain, reopened);
  ASSERT_TRUE(reopen.ok()) << reopen.status();
  for (int i = 0; i < kKeys; i++) {
    ASSERT_EQ("v3", Get(reopen->get(), Key(i))) << Key(i);
    ASSERT_EQ("v3", Get(repaired->get(), Key(i))) << Key(i);
  }
  // Nothing was set aside: the flush's table is no obsolete table.
  EXPECT_FALSE(std::filesystem::exists(image + "/lost"));
}

// The second half of the fix, on the plan alone: a table set aside as
// obsolete supersedes nothing, so a log a reopen would replay (at or above
// the MANIFEST's log number) is replayed even when such a table names it.
TEST(RepairUninstalledFlushTest, TableSetAsideNeverSupersedesALogInUse) {
  RepairManifest manifest;
  manifest.readable = true;
  manifest.next_file_number = 10;
  manifest.log_number = 8;
  manifest.live_tables = {{5, 1}};
  const std::vector<uint64_t> logs = {3, 8};
  // Table 9 is older than the last record and not live; it names log 8
  // (in use) and log 3 (below the log number).
  const std::vector<RepairTableFacts> tables = {{5, true, {}},
                                                {9, true, {3, 8}}};
  const RepairPlan plan = PlanRepair(manifest, logs, tables);
  EXPECT_EQ(1u, plan.obsolete_tables.count(9));
  EXPECT_EQ(0u, plan.table_rank.count(9));
  EXPECT_EQ(0u, plan.superseded_logs.count(8));
  EXPECT_EQ(1u, plan.superseded_logs.count(3));
  // A table from the next file number on is written after the last record:
  // a flush naming its log ranks first and supersedes the log.
  const RepairPlan flush =
      PlanRepair(manifest, logs, {{5, true, {}}, {10, true, {8}}});
  EXPECT_EQ(0, flush.table_rank.at(10));
  EXPECT_EQ(1u, flush.superseded_logs.count(8));
}

}  // namespace repair_uninstalled_flush_test
}  // namespace siftdb
