// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Flush and compaction check each table they write before the MANIFEST
// names it: always its data blocks' CRCs and entry count, and with
// Options::paranoid_file_checks every entry too. A byte damaged on its way
// to the disk (after the builder computed its checksum) makes the flush or
// compaction fail with DataLoss naming the table, the table is never
// installed, and nothing is lost: the log (for a flush) or the input
// tables (for a compaction) still hold the data, so a reopen with a sound
// disk has every key. Both modes are swept.

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace output_check_test {

std::string Key(int k) { return absl::StrFormat("key%06d", k); }
std::string Value(int k) { return absl::StrFormat("value-%06d-payload", k); }

// Flips one byte at kOffset of the next table file created after Arm().
class FlippingEnv final : public test::ForwardingEnv {
 public:
  static constexpr uint64_t kOffset = 100;  // inside the first data block

  void Arm() { armed_ = true; }
  bool flipped() const { return flipped_; }

  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    auto file = ForwardingEnv::NewWritableFile(f);
    if (!file.ok() || f.find(".sst") == std::string::npos) return file;
    if (!armed_.exchange(false)) return file;
    return std::unique_ptr<WritableFile>(
        new FlippingFile(std::move(*file), &flipped_));
  }

 private:
  class FlippingFile final : public test::ForwardingWritableFile {
   public:
    FlippingFile(std::unique_ptr<WritableFile> base, std::atomic<bool>* done)
        : ForwardingWritableFile(std::move(base)), done_(done) {}
    absl::Status Append(std::string_view data) override {
      const uint64_t start = written_;
      written_ += data.size();
      if (start <= kOffset && kOffset < written_) {
        std::string copy(data);
        copy[kOffset - start] ^= 0x20;
        *done_ = true;
        return base_file()->Append(copy);
      }
      return base_file()->Append(data);
    }

   private:
    std::atomic<bool>* done_;
    uint64_t written_ = 0;
  };

  std::atomic<bool> armed_{false};
  std::atomic<bool> flipped_{false};
};

Options TestOptions(Env* env, bool paranoid = false) {
  Options o;
  o.paranoid_file_checks = paranoid;
  o.create_if_missing = true;
  o.env = env;
  o.compression = kNoCompression;
  // Compactions only by hand.
  o.level0_file_num_compaction_trigger = 100;
  o.level0_slowdown_writes_trigger = 100;
  o.level0_stop_writes_trigger = 100;
  return o;
}

void ExpectEveryKey(const std::string& path, int n) {
  auto db = DB::Open(TestOptions(Env::Default()), path);
  ASSERT_TRUE(db.ok()) << db.status();
  std::string v;
  for (int i = 0; i < n; i++) {
    absl::Status s = (*db)->Get(ReadOptions(), Key(i), &v);
    ASSERT_TRUE(s.ok()) << Key(i) << ": " << s;
    ASSERT_EQ(Value(i), v);
  }
}

class OutputCheckTest : public ::testing::TestWithParam<bool> {};

TEST_P(OutputCheckTest, DamagedFlushOutputIsNeverInstalled) {
  test::TempDir dir;
  FlippingEnv env;
  const std::string path = dir.Join("db");
  {
    auto db = DB::Open(TestOptions(&env, GetParam()), path);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 1000; i++) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), Value(i)).ok());
    }
    env.Arm();
    absl::Status s = (*db)->Flush(FlushOptions());
    ASSERT_TRUE(env.flipped());
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
    EXPECT_NE(s.message().find(".sst"), std::string::npos) << s;
    std::string tables;
    ASSERT_TRUE((*db)->GetProperty("siftdb.num-files-at-level0", &tables));
    EXPECT_EQ("0", tables);
  }
  // The log was kept: every key comes back.
  ExpectEveryKey(path, 1000);
}

TEST_P(OutputCheckTest, DamagedCompactionOutputIsNeverInstalled) {
  test::TempDir dir;
  FlippingEnv env;
  const std::string path = dir.Join("db");
  {
    auto db = DB::Open(TestOptions(&env, GetParam()), path);
    ASSERT_TRUE(db.ok()) << db.status();
    for (int i = 0; i < 1000; i++) {
      ASSERT_TRUE((*db)->Put(WriteOptions(), Key(i), Value(i)).ok());
      if (i == 500) {
        ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
      }
    }
    ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
    env.Arm();
    absl::Status s = (*db)->CompactRange(nullptr, nullptr);
    ASSERT_TRUE(env.flipped());
    EXPECT_TRUE(absl::IsDataLoss(s)) << s;
  }
  // The inputs were kept: every key comes back.
  ExpectEveryKey(path, 1000);
}

INSTANTIATE_TEST_SUITE_P(ParanoidFileChecks, OutputCheckTest,
                         ::testing::Bool());

}  // namespace output_check_test
}  // namespace siftdb
