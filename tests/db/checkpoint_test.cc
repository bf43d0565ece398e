// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Hot copies of a live DB. A checkpoint taken at any moment, while a writer
// writes and the DB flushes and compacts, opens as a DB equal to the model
// (a std::map) after some prefix of the writes that lies between the last
// write acknowledged before the call and the first one started after it.
// GetLiveFiles with file deletions disabled gives a set of files that
// opens as the DB at that moment. Bad calls get clear errors.

#include <sys/stat.h>

#include <atomic>
#include <filesystem>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"
#include "util/mutex.h"
#include "util/random.h"

namespace siftdb {
namespace checkpoint_test {

namespace fs = std::filesystem;

constexpr int kKeySpace = 400;

std::string Key(int k) { return absl::StrFormat("key%05d", k); }

// One write of the history: a Put of `value`, or a Delete when it is
// nullopt.
struct Op {
  int key;
  std::optional<std::string> value;
};

Options SmallOptions() {
  Options o;
  o.create_if_missing = true;
  o.write_buffer_size = 32 << 10;  // frequent flushes
  o.max_file_size = 16 << 10;      // many tables, frequent compactions
  o.max_bytes_for_level_base = 64 << 10;
  o.level0_file_num_compaction_trigger = 2;
  return o;
}

// SmallOptions without compactions: tables stay where the checkpoint saw
// them, so the copy can be compared with the original files.
Options NoCompactionOptions() {
  Options o = SmallOptions();
  o.level0_file_num_compaction_trigger = 100;
  o.level0_slowdown_writes_trigger = 100;
  o.level0_stop_writes_trigger = 100;
  return o;
}

std::map<std::string, std::string> ReadAll(DB* db) {
  std::map<std::string, std::string> all;
  std::unique_ptr<Iterator> it = db->NewIterator(ReadOptions());
  for (it->SeekToFirst(); it->Valid(); it->Next()) {
    all[std::string(it->key())] = std::string(it->value());
  }
  EXPECT_TRUE(it->status().ok()) << it->status();
  return all;
}

std::map<std::string, std::string> OpenAndReadAll(const std::string& dir) {
  Options o;
  auto db = DB::Open(o, dir);
  EXPECT_TRUE(db.ok()) << db.status();
  if (!db.ok()) return {};
  return ReadAll(db->get());
}

void Apply(const Op& op, std::map<std::string, std::string>* model) {
  if (op.value.has_value()) {
    (*model)[Key(op.key)] = *op.value;
  } else {
    model->erase(Key(op.key));
  }
}

// True when `copy` equals the model after ops[0, k) for some k in
// [lo, hi]. Walks k upward keeping the number of differing keys.
bool MatchesSomePrefix(const std::vector<Op>& ops, size_t lo, size_t hi,
                       const std::map<std::string, std::string>& copy,
                       size_t* matched_at) {
  std::map<std::string, std::string> model;
  for (size_t i = 0; i < lo; i++) Apply(ops[i], &model);
  auto differs = [&](const std::string& key) {
    auto m = model.find(key);
    auto c = copy.find(key);
    if (m == model.end() || c == copy.end()) {
      return (m == model.end()) != (c == copy.end());
    }
    return m->second != c->second;
  };
  int64_t diff = 0;
  for (int k = 0; k < kKeySpace; k++) diff += differs(Key(k));
  for (size_t k = lo;; k++) {
    if (diff == 0) {
      *matched_at = k;
      return true;
    }
    if (k == hi) return false;
    const std::string key = Key(ops[k].key);
    diff -= differs(key);
    Apply(ops[k], &model);
    diff += differs(key);
  }
}

TEST(CheckpointTest, QuietDBCopiesExactly) {
  test::TempDir dir;
  auto db = DB::Open(SmallOptions(), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  std::map<std::string, std::string> model;
  Random rnd(7);
  for (int i = 0; i < 3000; i++) {
    const int k = static_cast<int>(rnd.Uniform(kKeySpace));
    if (rnd.OneIn(5)) {
      ASSERT_TRUE((*db)->Delete(WriteOptions(), Key(k)).ok());
      model.erase(Key(k));
    } else {
      const std::string v = absl::StrFormat("v%d-%s", i, std::string(100, 'x'));
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(k), v).ok());
      model[Key(k)] = v;
    }
  }
  // Some writes are still only in the log.
  ASSERT_TRUE((*db)->Put(WriteOptions(), Key(1), "in-the-log").ok());
  model[Key(1)] = "in-the-log";
  ASSERT_TRUE((*db)->CreateCheckpoint(dir.Join("cp")).ok());
  // Later writes do not reach the copy.
  ASSERT_TRUE((*db)->Put(WriteOptions(), Key(2), "after").ok());
  EXPECT_FALSE(fs::exists(dir.Join("cp.tmp")));
  EXPECT_EQ(model, OpenAndReadAll(dir.Join("cp")));
  // The live DB goes on, unaffected.
  model[Key(2)] = "after";
  EXPECT_EQ(model, ReadAll(db->get()));
}

TEST(CheckpointTest, TablesAreHardLinkedOnOneFileSystem) {
  test::TempDir dir;
  auto db = DB::Open(NoCompactionOptions(), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < 500; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), std::string(200, 'v')).ok());
  }
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  ASSERT_TRUE((*db)->CreateCheckpoint(dir.Join("cp")).ok());
  int tables = 0;
  for (const auto& entry : fs::directory_iterator(dir.Join("cp"))) {
    if (entry.path().extension() != ".sst") continue;
    tables++;
    struct stat copy, original;
    ASSERT_EQ(0, stat(entry.path().c_str(), &copy));
    ASSERT_EQ(
        0,
        stat((dir.Join("db") + "/" + entry.path().filename().string()).c_str(),
             &original));
    EXPECT_EQ(copy.st_ino, original.st_ino) << entry.path();
  }
  EXPECT_GT(tables, 0);
}

// An Env (or file system) without hard links: tables are copied.
class NoLinkEnv final : public test::ForwardingEnv {
 public:
  absl::Status LinkFile(const std::string& src,
                        const std::string& target) override {
    return absl::UnimplementedError("no hard links here: " + src);
  }
};

TEST(CheckpointTest, TablesAreCopiedWhenLinksAreUnavailable) {
  test::TempDir dir;
  NoLinkEnv env;
  Options o = NoCompactionOptions();
  o.env = &env;
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  std::map<std::string, std::string> model;
  for (int i = 0; i < 2000; i++) {
    const std::string v = absl::StrFormat("v%d", i);
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i % kKeySpace), v).ok());
    model[Key(i % kKeySpace)] = v;
  }
  ASSERT_TRUE((*db)->CreateCheckpoint(dir.Join("cp")).ok());
  int tables = 0;
  for (const auto& entry : fs::directory_iterator(dir.Join("cp"))) {
    if (entry.path().extension() != ".sst") continue;
    tables++;
    struct stat copy, original;
    ASSERT_EQ(0, stat(entry.path().c_str(), &copy));
    ASSERT_EQ(
        0,
        stat((dir.Join("db") + "/" + entry.path().filename().string()).c_str(),
             &original));
    EXPECT_NE(copy.st_ino, original.st_ino) << entry.path();
    EXPECT_EQ(copy.st_size, original.st_size) << entry.path();
  }
  EXPECT_GT(tables, 0);
  EXPECT_EQ(model, OpenAndReadAll(dir.Join("cp")));
}

TEST(CheckpointTest, BadCallsGetClearErrors) {
  test::TempDir dir;
  auto db = DB::Open(SmallOptions(), dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  absl::Status s = (*db)->CreateCheckpoint(dir.path());
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  EXPECT_NE(s.message().find("already exists"), std::string::npos) << s;
  s = (*db)->CreateCheckpoint("");
  EXPECT_TRUE(absl::IsInvalidArgument(s)) << s;
  s = (*db)->CreateCheckpoint(dir.Join("no/such/parent/cp"));
  EXPECT_FALSE(s.ok());
  EXPECT_FALSE(fs::exists(dir.Join("no/such/parent/cp")));
  ASSERT_TRUE((*db)->Close().ok());
  s = (*db)->CreateCheckpoint(dir.Join("cp"));
  EXPECT_TRUE(absl::IsFailedPrecondition(s)) << s;
}

// The model test: a writer thread writes while the test thread takes
// checkpoints at random moments; flushes and compactions run throughout.
TEST(CheckpointTest, CheckpointsAtRandomMomentsMatchTheModel) {
  test::TempDir dir;
  auto opened = DB::Open(SmallOptions(), dir.Join("db"));
  ASSERT_TRUE(opened.ok()) << opened.status();
  DB* db = opened->get();

  constexpr size_t kOps = 20000;
  std::vector<Op> ops(kOps);
  Random rnd(301);
  for (size_t i = 0; i < kOps; i++) {
    ops[i].key = static_cast<int>(rnd.Uniform(kKeySpace));
    if (!rnd.OneIn(6)) {
      ops[i].value = absl::StrFormat("v%d-%s", i, std::string(60, 'p'));
    }
  }
  // acked: ops[0, acked) are acknowledged; started: ops[0, started) have
  // been handed to the DB.
  std::atomic<size_t> acked{0}, started{0};
  std::atomic<bool> failed{false};
  std::thread writer([&] {
    for (size_t i = 0; i < kOps; i++) {
      started.store(i + 1);
      absl::Status s =
          ops[i].value.has_value()
              ? db->Put(WriteOptions(), Key(ops[i].key), *ops[i].value)
              : db->Delete(WriteOptions(), Key(ops[i].key));
      if (!s.ok()) {
        failed = true;
        return;
      }
      acked.store(i + 1);
    }
  });
  struct Taken {
    std::string dir;
    size_t lo, hi;
  };
  std::vector<Taken> taken;
  Random pause(5);
  for (int c = 0; c < 12 && acked.load() < kOps; c++) {
    std::this_thread::sleep_for(std::chrono::milliseconds(pause.Uniform(40)));
    Taken t;
    t.dir = dir.Join(absl::StrFormat("cp%02d", c));
    t.lo = acked.load();
    absl::Status s = db->CreateCheckpoint(t.dir);
    t.hi = started.load();
    EXPECT_TRUE(s.ok()) << s;
    if (!s.ok()) break;
    taken.push_back(t);
  }
  writer.join();
  ASSERT_FALSE(failed.load());
  ASSERT_GE(taken.size(), 3u);
  for (const Taken& t : taken) {
    SCOPED_TRACE(t.dir);
    const std::map<std::string, std::string> copy = OpenAndReadAll(t.dir);
    size_t at = 0;
    EXPECT_TRUE(MatchesSomePrefix(ops, t.lo, t.hi, copy, &at))
        << "no prefix of the writes in [" << t.lo << ", " << t.hi
        << "] gives the checkpoint's contents";
  }
}

TEST(CheckpointTest, LiveFilesWithDeletionsDisabledOpenAsTheDB) {
  test::TempDir dir;
  const std::string db_dir = dir.Join("db");
  auto db = DB::Open(SmallOptions(), db_dir);
  ASSERT_TRUE(db.ok()) << db.status();
  std::map<std::string, std::string> model;
  for (int i = 0; i < 2000; i++) {
    const std::string v = absl::StrFormat("first-%d", i);
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i % kKeySpace), v).ok());
    model[Key(i % kKeySpace)] = v;
  }
  ASSERT_TRUE((*db)->DisableFileDeletions().ok());
  std::vector<std::string> files;
  uint64_t manifest_size = 0;
  ASSERT_TRUE((*db)->GetLiveFiles(&files, &manifest_size, true).ok());
  ASSERT_GT(manifest_size, 0u);
  // Rewrite everything and compact: the listed tables become obsolete but
  // must stay on disk while deletions are disabled.
  for (int i = 0; i < kKeySpace; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "second").ok());
  }
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  const std::string copy = dir.Join("copy");
  fs::create_directory(copy);
  for (const std::string& f : files) {
    ASSERT_TRUE(fs::exists(db_dir + f)) << f;
    if (f.find("MANIFEST") != std::string::npos) {
      fs::copy_file(db_dir + f, copy + f);
      fs::resize_file(copy + f, manifest_size);
    } else {
      fs::copy_file(db_dir + f, copy + f);
    }
  }
  ASSERT_TRUE((*db)->EnableFileDeletions(false).ok());
  // Now the obsolete tables go.
  int gone = 0;
  for (const std::string& f : files) gone += !fs::exists(db_dir + f);
  EXPECT_GT(gone, 0);
  EXPECT_EQ(model, OpenAndReadAll(copy));
}

TEST(CheckpointTest, FileDeletionsNest) {
  test::TempDir dir;
  const std::string db_dir = dir.Join("db");
  auto db = DB::Open(SmallOptions(), db_dir);
  ASSERT_TRUE(db.ok()) << db.status();
  for (int i = 0; i < kKeySpace; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "a").ok());
  }
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  std::vector<std::string> files;
  uint64_t size;
  ASSERT_TRUE((*db)->GetLiveFiles(&files, &size, false).ok());
  ASSERT_TRUE((*db)->DisableFileDeletions().ok());
  ASSERT_TRUE((*db)->DisableFileDeletions().ok());
  for (int i = 0; i < kKeySpace; i++) {
    ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), "b").ok());
  }
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  auto all_present = [&] {
    for (const std::string& f : files) {
      if (!fs::exists(db_dir + f)) return false;
    }
    return true;
  };
  EXPECT_TRUE(all_present());
  ASSERT_TRUE((*db)->EnableFileDeletions(false).ok());
  EXPECT_TRUE(all_present()) << "one Disable is still in force";
  ASSERT_TRUE((*db)->EnableFileDeletions(false).ok());
  EXPECT_FALSE(all_present());
}

}  // namespace checkpoint_test
}  // namespace siftdb
