// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// The write controller (db/write_controller.h): the pressure between soft
// and hard limits, a rate that falls smoothly with it, and a debt that
// holds writers to that rate over time; then the DB: while compaction is
// held up past a soft limit, writes never outrun delayed_write_rate.

#include "db/write_controller.h"

#include <chrono>
#include <string>
#include <vector>

#include "absl/strings/str_format.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "siftdb/env.h"
#include "tests/db/blocking_env.h"
#include "tests/support/temp_dir.h"

namespace siftdb::test {
namespace write_controller_test {

TEST(WriteControllerTest, PressureBetweenSoftAndHardLimits) {
  EXPECT_LT(PressureOf(9, 10, 20, "x").level, 0);
  EXPECT_DOUBLE_EQ(PressureOf(10, 10, 20, "x").level, 0);
  EXPECT_DOUBLE_EQ(PressureOf(15, 10, 20, "x").level, 0.5);
  EXPECT_GE(PressureOf(20, 10, 20, "x").level, 1);
  EXPECT_GE(PressureOf(99, 10, 20, "x").level, 1);
  // A limit of 0 is off.
  EXPECT_LT(PressureOf(1u << 30, 0, 0, "x").level, 0);
  EXPECT_DOUBLE_EQ(PressureOf(50, 10, 0, "x").level, 0);  // no hard: level 0
  EXPECT_GE(PressureOf(50, 0, 20, "x").level, 1);         // hard only
  // Equal limits: nothing between them.
  EXPECT_GE(PressureOf(10, 10, 10, "x").level, 1);
  EXPECT_LT(PressureOf(9, 10, 10, "x").level, 0);

  WritePressure a = PressureOf(15, 10, 20, "a");
  WritePressure b = PressureOf(12, 10, 20, "b");
  EXPECT_STREQ(Stronger(a, b).cause, "a");
  EXPECT_STREQ(Stronger(b, a).cause, "a");
}

TEST(WriteControllerTest, RateFallsSmoothlyFromTheDelayedRate) {
  WriteController c(16 << 20);
  EXPECT_EQ(c.rate(), 0u);  // not delayed
  uint64_t previous = UINT64_MAX;
  for (int step = 0; step < 100; step++) {
    c.SetPressure(PressureOf(100 + step, 100, 200, "x"));
    ASSERT_TRUE(c.delayed());
    const uint64_t rate = c.rate();
    EXPECT_LE(rate, previous) << "step " << step;
    if (previous != UINT64_MAX) {
      // No jumps: one step of debt moves the rate by about 1/100 of its
      // range.
      EXPECT_LT(previous - rate, (16u << 20) / 50) << "step " << step;
    }
    previous = rate;
  }
  c.SetPressure(PressureOf(100, 100, 200, "x"));
  EXPECT_EQ(c.rate(), 16u << 20);
  c.SetPressure(PressureOf(199, 100, 200, "x"));
  EXPECT_GE(c.rate(), (16u << 20) / 16);  // the slowest, near the hard limit
  EXPECT_LT(c.rate(), (16u << 20) / 12);
  c.SetPressure(PressureOf(200, 100, 200, "x"));
  EXPECT_TRUE(c.stopped());
  EXPECT_FALSE(c.delayed());
}

// Writers that sleep exactly what the controller asks write at its rate,
// whatever their group sizes; small groups are not each made to sleep.
TEST(WriteControllerTest, DebtHoldsWritersToTheRate) {
  for (uint64_t rate : {uint64_t{1} << 20, uint64_t{16} << 20}) {
    for (uint64_t group : {uint64_t{100}, uint64_t{4096}, uint64_t{1} << 20}) {
      WriteController c(rate);
      c.SetPressure(PressureOf(10, 10, 0, "x"));
      uint64_t now = 1'000'000;
      const uint64_t start = now;
      uint64_t written = 0;
      int sleeps = 0;
      int groups = 0;
      while (now - start < 10'000'000) {  // ten simulated seconds
        const uint64_t delay = c.DelayMicros(now);
        if (delay > 0) {
          ASSERT_GE(delay, WriteController::kMinDelayMicros);
          ASSERT_LE(delay, WriteController::kMaxDelayMicros);
          now += delay;
          sleeps++;
          continue;
        }
        c.Charge(now, group);
        written += group;
        groups++;
        now += 1;  // the write itself
      }
      const double seconds = (now - start) / 1e6;
      const double achieved = written / seconds;
      SCOPED_TRACE(absl::StrFormat("rate %d group %d", rate, group));
      // One group of slack: the last group is written before it is paid.
      EXPECT_LE(achieved, rate * 1.01 + group / seconds);
      EXPECT_GE(achieved, rate * 0.95);
      if (group * 1e6 / rate < WriteController::kMinDelayMicros) {
        EXPECT_LT(sleeps, groups / 2) << "small groups slept one by one";
      }
    }
  }
}

TEST(WriteControllerTest, LeavingTheDelayForgivesTheDebt) {
  WriteController c(1 << 20);
  c.SetPressure(PressureOf(10, 10, 20, "x"));
  c.Charge(0, 10 << 20);  // ten seconds owed
  EXPECT_GT(c.DelayMicros(0), 0u);
  c.SetPressure(PressureOf(5, 10, 20, "x"));
  EXPECT_EQ(c.DelayMicros(0), 0u);
  c.SetPressure(PressureOf(10, 10, 20, "x"));
  EXPECT_EQ(c.DelayMicros(0), 0u);
  // Not delayed: nothing is owed for writes.
  c.SetPressure(PressureOf(1, 10, 20, "x"));
  c.Charge(0, 10 << 20);
  c.SetPressure(PressureOf(10, 10, 20, "x"));
  EXPECT_EQ(c.DelayMicros(0), 0u);
}

std::string LogOf(const std::string& dir) {
  auto log = ReadFileToString(Env::Default(), dir + "/LOG");
  return log.ok() ? *log : std::string();
}

// A compaction held up at its first output keeps level 0 (or the pending
// compaction bytes) past the soft limit; writes meanwhile go no faster than
// delayed_write_rate. Load can only slow them further, so the bound holds
// on any machine.
class WriteControllerDbTest : public ::testing::TestWithParam<bool> {};

TEST_P(WriteControllerDbTest, DelayedWritesKeepToTheRate) {
  const bool by_pending_bytes = GetParam();
  TempDir dir;
  BlockingTableEnv env;
  Options o;
  o.create_if_missing = true;
  o.env = &env;
  o.write_buffer_size = 256 << 10;
  o.level0_file_num_compaction_trigger = 2;
  if (by_pending_bytes) {
    o.level0_slowdown_writes_trigger = 100;
    o.level0_stop_writes_trigger = 100;
    o.soft_pending_compaction_bytes_limit = 1;
    o.hard_pending_compaction_bytes_limit = 0;
  } else {
    o.level0_slowdown_writes_trigger = 2;
    o.level0_stop_writes_trigger = 4;
    o.soft_pending_compaction_bytes_limit = 0;
    o.hard_pending_compaction_bytes_limit = 0;
  }
  constexpr uint64_t kRate = 256 << 10;
  o.delayed_write_rate = kRate;
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(db.ok()) << db.status();
  // A table in level 1, then two flushed tables over the same keys: the
  // compaction they trigger must merge (the oldest level-0 table cannot
  // simply move down), and waits at its output.
  const std::string value(1000, 'v');
  for (int i = 0; i < 10; i++) {
    ASSERT_TRUE(
        (*db)->Put(WriteOptions(), absl::StrFormat("k%d", i), value).ok());
  }
  ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  std::string files;
  ASSERT_TRUE((*db)->GetProperty("siftdb.num-files-at-level1", &files));
  ASSERT_EQ(files, "1");
  env.BlockTablesAfter(2);
  for (int t = 0; t < 2; t++) {
    for (int i = 0; i < 10; i++) {
      ASSERT_TRUE(
          (*db)
              ->Put(WriteOptions(), absl::StrFormat("k%d-%d", t, i), value)
              .ok());
    }
    ASSERT_TRUE((*db)->Flush(FlushOptions()).ok());
  }
  ASSERT_TRUE((*db)->GetProperty("siftdb.num-files-at-level0", &files));
  ASSERT_EQ(files, "2");

  constexpr int kWrites = 64;  // about 64 KB: a quarter second at kRate
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < kWrites; i++) {
    ASSERT_TRUE(
        (*db)->Put(WriteOptions(), absl::StrFormat("d%04d", i), value).ok());
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
          .count();
  const double bytes = kWrites * (value.size() + 6 + 20);
  // The debt is paid before writing once it passes kMinDelayMicros: allow
  // that much, and one write, as a burst.
  const double allowed_seconds =
      (bytes - value.size()) / kRate - WriteController::kMinDelayMicros / 1e6;
  EXPECT_GE(seconds, allowed_seconds * 0.9)
      << bytes << " bytes in " << seconds << " s; LOG:\n"
      << LogOf(dir.path());
  const std::string cause = by_pending_bytes
                                ? "pending-compaction-bytes-slowdown"
                                : "level0-slowdown";
  EXPECT_NE(LogOf(dir.path()).find("write stall started: " + cause),
            std::string::npos);

  env.Release();
  ASSERT_TRUE((*db)->CompactRange(nullptr, nullptr).ok());
  ASSERT_TRUE((*db)->Put(WriteOptions(), "after", value).ok());
  EXPECT_NE(LogOf(dir.path()).find("write stall ended: " + cause),
            std::string::npos);
  db->reset();
}

INSTANTIATE_TEST_SUITE_P(Causes, WriteControllerDbTest, ::testing::Bool(),
                         [](const auto& info) {
                           return info.param ? "PendingBytes" : "Level0";
                         });

TEST(WriteControllerOptionsTest, SoftAboveHardIsRefused) {
  TempDir dir;
  Options o;
  o.create_if_missing = true;
  o.soft_pending_compaction_bytes_limit = 2 << 20;
  o.hard_pending_compaction_bytes_limit = 1 << 20;
  auto db = DB::Open(o, dir.path());
  ASSERT_TRUE(absl::IsInvalidArgument(db.status())) << db.status();
  EXPECT_NE(db.status().message().find("soft_pending_compaction_bytes_limit"),
            std::string::npos);
  o.hard_pending_compaction_bytes_limit = 0;  // off: any soft limit is fine
  EXPECT_TRUE(DB::Open(o, dir.path()).ok());
}

}  // namespace write_controller_test
}  // namespace siftdb::test
