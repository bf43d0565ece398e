// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// A flushed table stays protected from obsolete-file cleanup until the
// MANIFEST record naming it is applied. LogAndApply releases the DB mutex
// while it syncs the MANIFEST; a read that ends in that window holding an
// outdated Version runs RemoveObsoleteFiles, which must not delete the
// table (it did before session 4: acknowledged writes were lost). The test
// holds the flush inside that window with an Env that blocks MANIFEST
// syncs on demand, so the interleaving is forced, not hoped for.

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "siftdb/iterator.h"
#include "siftdb/options.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"
#include "util/mutex.h"

namespace siftdb {
namespace flush_pending_test {

// Forwards to Env::Default(); once Arm()ed, the next Sync of a MANIFEST
// blocks until Release().
class BlockingManifestEnv final : public test::ForwardingEnv {
 public:
  void Arm() {
    MutexLock l(&mu_);
    armed_ = true;
  }
  // Waits until a MANIFEST sync is blocked.
  void WaitUntilBlocked() {
    MutexLock l(&mu_);
    while (!blocked_) cv_.Wait(&mu_);
  }
  void Release() {
    MutexLock l(&mu_);
    armed_ = false;
    cv_.SignalAll();
  }
  // Called by a MANIFEST's Sync.
  void MaybeBlock() {
    MutexLock l(&mu_);
    if (!armed_) return;
    blocked_ = true;
    cv_.SignalAll();
    while (armed_) cv_.Wait(&mu_);
  }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    auto file = base()->NewWritableFile(f);
    if (!file.ok() || f.find("MANIFEST-") == std::string::npos) return file;
    return std::unique_ptr<WritableFile>(
        std::make_unique<ManifestFile>(this, std::move(*file)));
  }

 private:
  class ManifestFile final : public test::ForwardingWritableFile {
   public:
    ManifestFile(BlockingManifestEnv* env, std::unique_ptr<WritableFile> base)
        : ForwardingWritableFile(std::move(base)), env_(env) {}
    absl::Status Sync() override {
      env_->MaybeBlock();
      return base_file()->Sync();
    }

   private:
    BlockingManifestEnv* const env_;
  };

  Mutex mu_;
  CondVar cv_;
  bool armed_ ABSL_GUARDED_BY(mu_) = false;
  bool blocked_ ABSL_GUARDED_BY(mu_) = false;
};

int CountTables(Env* env, const std::string& dir) {
  auto children = env->GetChildren(dir);
  EXPECT_TRUE(children.ok()) << children.status();
  int n = 0;
  if (!children.ok()) return n;
  for (const std::string& name : *children) {
    if (name.size() > 4 && name.substr(name.size() - 4) == ".sst") n++;
  }
  return n;
}

std::string Key(char prefix, int i) {
  return absl::StrFormat("%c%06d", prefix, i);
}

TEST(FlushPendingTest, ReadEndingDuringTheManifestSyncKeepsTheFlushedTable) {
  test::TempDir dir;
  BlockingManifestEnv env;
  Options options;
  options.env = &env;
  options.create_if_missing = true;
  const std::string path = dir.Join("db");
  auto db = DB::Open(options, path);
  ASSERT_TRUE(db.ok()) << db.status();
  auto* impl = static_cast<DBImpl*>(db->get());
  constexpr int kKeys = 200;

  // A read holding Version 1.
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key('a', i), "first").ok());
  }
  std::unique_ptr<Iterator> old_read = (*db)->NewIterator(ReadOptions());
  // Version 2: Version 1 is now outdated.
  ASSERT_TRUE(impl->FlushMemTable().ok());
  ASSERT_EQ(CountTables(&env, path), 1);

  // The second flush writes its table, then blocks syncing the MANIFEST
  // record that names it (with the DB mutex released).
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key('b', i), "second").ok());
  }
  env.Arm();
  std::thread flusher([&] { EXPECT_TRUE(impl->FlushMemTable().ok()); });
  env.WaitUntilBlocked();
  ASSERT_EQ(CountTables(&env, path), 2);

  // The outdated read ends now and cleans up obsolete files.
  old_read.reset();
  EXPECT_EQ(CountTables(&env, path), 2)
      << "the table being installed was deleted as obsolete";

  env.Release();
  flusher.join();
  std::string value;
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE((*db)->Get(ReadOptions(), Key('b', i), &value).ok())
        << Key('b', i);
    EXPECT_EQ(value, "second");
  }

  // And across a reopen, with the MemTable empty: all from tables.
  db->reset();
  db = DB::Open(options, path);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < kKeys; i++) {
    ASSERT_TRUE((*db)->Get(ReadOptions(), Key('a', i), &value).ok());
    ASSERT_TRUE((*db)->Get(ReadOptions(), Key('b', i), &value).ok());
  }
}

}  // namespace flush_pending_test
}  // namespace siftdb
