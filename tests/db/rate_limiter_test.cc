// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Options::rate_limiter: every byte a flush or a compaction (split into
// parts or not) appends to a table file goes through the limiter, the WAL
// and the MANIFEST do not; the background writes keep to the rate (checked
// only as a lower bound on elapsed time); one limiter serves two DBs; a
// rate changed at run time applies; bad limiters are refused at Open.

#include "siftdb/rate_limiter.h"

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/forwarding_env.h"
#include "tests/support/temp_dir.h"

namespace siftdb {
namespace rate_limiter_test {

// Counts the bytes appended to files, by kind: "sst", "log", "MANIFEST".
class CountingEnv final : public test::ForwardingEnv {
 public:
  absl::StatusOr<std::unique_ptr<WritableFile>> NewWritableFile(
      const std::string& f) override {
    return Wrap(f, test::ForwardingEnv::NewWritableFile(f));
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> NewAppendableFile(
      const std::string& f) override {
    return Wrap(f, test::ForwardingEnv::NewAppendableFile(f));
  }
  int64_t Bytes(const std::string& kind) {
    std::lock_guard<std::mutex> l(mu_);
    return bytes_[kind];
  }

 private:
  class File final : public test::ForwardingWritableFile {
   public:
    File(CountingEnv* env, std::string kind, std::unique_ptr<WritableFile> b)
        : ForwardingWritableFile(std::move(b)),
          env_(env),
          kind_(std::move(kind)) {}
    absl::Status Append(std::string_view data) override {
      {
        std::lock_guard<std::mutex> l(env_->mu_);
        env_->bytes_[kind_] += static_cast<int64_t>(data.size());
      }
      return base_file()->Append(data);
    }

   private:
    CountingEnv* const env_;
    const std::string kind_;
  };

  static std::string Kind(const std::string& f) {
    auto ends = [&](std::string_view s) {
      return f.size() >= s.size() &&
             f.compare(f.size() - s.size(), s.size(), s.data(), s.size()) == 0;
    };
    if (ends(".sst")) return "sst";
    if (ends(".log")) return "log";
    if (f.find("MANIFEST") != std::string::npos) return "MANIFEST";
    return "other";
  }
  absl::StatusOr<std::unique_ptr<WritableFile>> Wrap(
      const std::string& f, absl::StatusOr<std::unique_ptr<WritableFile>> r) {
    if (!r.ok()) return r;
    return std::unique_ptr<WritableFile>(
        std::make_unique<File>(this, Kind(f), std::move(*r)));
  }

  std::mutex mu_;
  std::map<std::string, int64_t> bytes_;
};

Options SmallTables(Env* env, std::shared_ptr<RateLimiter> limiter) {
  Options o;
  o.create_if_missing = true;
  o.env = env;
  o.compression = kNoCompression;
  o.write_buffer_size = 256 << 10;
  o.target_file_size_base = 64 << 10;
  o.max_bytes_for_level_base = 256 << 10;
  o.level0_file_num_compaction_trigger = 2;
  o.rate_limiter = std::move(limiter);
  return o;
}

// `bytes` of values under keys in a scattered order (so compactions
// rewrite tables), then everything flushed and compacted.
void Fill(DB* db, int64_t bytes, int seed) {
  const std::string value(1000, static_cast<char>('a' + seed));
  const int n = static_cast<int>(bytes / 1000);
  for (int i = 0; i < n; i++) {
    const int k = (i * 7919) % n;
    ASSERT_TRUE(
        db->Put(WriteOptions(), absl::StrFormat("key%08d", k), value).ok());
  }
  ASSERT_TRUE(db->CompactRange(nullptr, nullptr).ok());
  // An automatic compaction may still be writing a table when CompactRange
  // returns (a CI run under ASan read the limiter's total 5 bytes, one
  // block trailer, apart from the property read just before it).
  ASSERT_TRUE(static_cast<DBImpl*>(db)->WaitForBackgroundWork().ok());
}

double SecondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

int64_t PropertyBytes(DB* db) {
  std::string v;
  EXPECT_TRUE(db->GetProperty("siftdb.rate-limiter-bytes", &v));
  return std::stoll(v);
}

class RateLimiterTablesTest : public testing::TestWithParam<int> {};

TEST_P(RateLimiterTablesTest, EveryTableByteAndNoLogByteGoesThrough) {
  test::TempDir dir;
  CountingEnv env;
  auto limiter = NewGenericRateLimiter(int64_t{1} << 30);  // not in the way
  Options o = SmallTables(&env, limiter);
  o.max_subcompactions = GetParam();
  {
    auto db = DB::Open(o, dir.Join("db"));
    ASSERT_TRUE(db.ok()) << db.status();
    Fill(db->get(), 3 << 20, 0);
    EXPECT_EQ(PropertyBytes(db->get()), limiter->GetTotalBytesThrough());
    std::string stats;
    ASSERT_TRUE((*db)->GetProperty("siftdb.stats", &stats));
    EXPECT_NE(stats.find("rate limiter: 1073741824 bytes/s"), std::string::npos)
        << stats;
  }
  EXPECT_GT(env.Bytes("sst"), 3 << 20);
  EXPECT_GT(env.Bytes("log"), 3 << 20);
  EXPECT_GT(env.Bytes("MANIFEST"), 0);
  EXPECT_EQ(limiter->GetTotalBytesThrough(), env.Bytes("sst"));
}

INSTANTIATE_TEST_SUITE_P(Subcompactions, RateLimiterTablesTest,
                         testing::Values(1, 2));

TEST(RateLimiterDBTest, LogWritesAreNotLimited) {
  test::TempDir dir;
  CountingEnv env;
  auto limiter = NewGenericRateLimiter(1024);  // 1 KiB/s: would take hours
  Options o = SmallTables(&env, limiter);
  o.write_buffer_size = 8 << 20;
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  const auto start = std::chrono::steady_clock::now();
  const std::string value(1000, 'v');
  for (int i = 0; i < 2000; i++) {
    ASSERT_TRUE(
        (*db)->Put(WriteOptions(), absl::StrFormat("k%06d", i), value).ok());
  }
  EXPECT_LT(SecondsSince(start), 60.0);
  EXPECT_GT(env.Bytes("log"), 2000 * 1000);
  EXPECT_EQ(limiter->GetTotalBytesThrough(), 0);
  EXPECT_EQ(PropertyBytes(db->get()), 0);
  // Close flushes the MemTable through the limiter; make that quick.
  ASSERT_TRUE(limiter->SetBytesPerSecond(int64_t{1} << 30).ok());
}

TEST(RateLimiterDBTest, FlushAndCompactionKeepTheRate) {
  test::TempDir dir;
  CountingEnv env;
  constexpr int64_t kRate = 2 << 20;
  constexpr int64_t kPeriodUs = 10 * 1000;
  auto limiter = NewGenericRateLimiter(kRate, kPeriodUs);
  const auto start = std::chrono::steady_clock::now();
  {
    auto db = DB::Open(SmallTables(&env, limiter), dir.Join("db"));
    ASSERT_TRUE(db.ok()) << db.status();
    Fill(db->get(), 1 << 20, 0);
  }
  const double elapsed = SecondsSince(start);
  const int64_t through = limiter->GetTotalBytesThrough();
  EXPECT_EQ(through, env.Bytes("sst"));
  EXPECT_GT(through, 1 << 20);
  // At most one refill beyond the rate.
  EXPECT_GE(elapsed, static_cast<double>(through) / kRate - kPeriodUs / 1e6)
      << through << " bytes";
}

TEST(RateLimiterDBTest, OneLimiterForTwoDBs) {
  test::TempDir dir;
  CountingEnv env;
  constexpr int64_t kRate = 2 << 20;
  constexpr int64_t kPeriodUs = 10 * 1000;
  auto limiter = NewGenericRateLimiter(kRate, kPeriodUs);
  const auto start = std::chrono::steady_clock::now();
  {
    auto a = DB::Open(SmallTables(&env, limiter), dir.Join("a"));
    auto b = DB::Open(SmallTables(&env, limiter), dir.Join("b"));
    ASSERT_TRUE(a.ok() && b.ok());
    std::thread other([&] { Fill(b->get(), 512 << 10, 1); });
    Fill(a->get(), 512 << 10, 0);
    other.join();
    // Either DB reports the shared limiter's total.
    EXPECT_EQ(PropertyBytes(a->get()), PropertyBytes(b->get()));
  }
  const double elapsed = SecondsSince(start);
  const int64_t through = limiter->GetTotalBytesThrough();
  EXPECT_EQ(through, env.Bytes("sst"));
  EXPECT_GT(through, 1 << 20);
  EXPECT_GE(elapsed, static_cast<double>(through) / kRate - kPeriodUs / 1e6)
      << through << " bytes";
}

TEST(RateLimiterDBTest, RateChangedAtRunTimeApplies) {
  test::TempDir dir;
  CountingEnv env;
  constexpr int64_t kPeriodUs = 10 * 1000;
  auto limiter = NewGenericRateLimiter(int64_t{1} << 30, kPeriodUs);
  Options o = SmallTables(&env, limiter);
  o.write_buffer_size = 8 << 20;  // nothing flushed while writing
  auto db = DB::Open(o, dir.Join("db"));
  ASSERT_TRUE(db.ok()) << db.status();
  const std::string value(1000, 'v');
  for (int i = 0; i < 1024; i++) {
    ASSERT_TRUE(
        (*db)->Put(WriteOptions(), absl::StrFormat("k%06d", i), value).ok());
  }
  constexpr int64_t kSlow = 1 << 20;
  ASSERT_TRUE(limiter->SetBytesPerSecond(kSlow).ok());
  const int64_t before = limiter->GetTotalBytesThrough();
  const auto start = std::chrono::steady_clock::now();
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  const double elapsed = SecondsSince(start);
  const int64_t flushed = limiter->GetTotalBytesThrough() - before;
  EXPECT_GT(flushed, 1000 * 1000);
  EXPECT_GE(elapsed, static_cast<double>(flushed) / kSlow - kPeriodUs / 1e6)
      << flushed << " bytes";
  EXPECT_TRUE(absl::IsInvalidArgument(limiter->SetBytesPerSecond(0)));
  EXPECT_EQ(limiter->GetBytesPerSecond(), kSlow);
}

TEST(RateLimiterDBTest, BadLimitersAreRefusedAtOpen) {
  test::TempDir dir;
  for (auto [rate, period] : {std::pair<int64_t, int64_t>{0, 100000},
                              {-1, 100000},
                              {1 << 20, 0},
                              {1 << 20, -5}}) {
    Options o;
    o.create_if_missing = true;
    o.rate_limiter = NewGenericRateLimiter(rate, period);
    auto db = DB::Open(o, dir.Join("db"));
    ASSERT_FALSE(db.ok());
    EXPECT_TRUE(absl::IsInvalidArgument(db.status())) << db.status();
    EXPECT_NE(db.status().message().find("rate_limiter"), std::string::npos)
        << db.status();
  }
}

}  // namespace rate_limiter_test
}  // namespace siftdb
