// Copyright (c) siftdb authors.
// SPDX-License-Identifier: Apache-2.0
//
// Injected I/O faults at every step of a flush, a compaction and a reopen
// (which writes a new MANIFEST and switches CURRENT to it).
//
// For each phase, each operation class (append, sync, rename, read,
// directory sync, create) and each error (ENOSPC, EIO) the sweep fails the
// n-th matching operation and every one after it, for n = 0, 1, 2, ...
// until the phase completes without meeting the fault: so every step of
// the phase is the first to fail once. Each case checks that
//   - the phase reports the failure (its status or the DB's background
//     error, visible in GetProperty("siftdb.background-error"));
//   - once a background error is set, writes are refused;
//   - reads of acknowledged keys give the acknowledged value or an error,
//     never NotFound and never another value;
//   - after the fault is removed, a reopen recovers every acknowledged
//     write (and every acknowledged delete), and the DB takes writes again.

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>

#include "absl/strings/str_format.h"
#include "db/db_impl.h"
#include "gtest/gtest.h"
#include "siftdb/db.h"
#include "tests/support/temp_dir.h"
#include "util/testing/fault_injection_env.h"

namespace siftdb {
namespace fault_sweep_test {

enum class Phase { kFlush, kCompaction, kReopen };

const char* PhaseName(Phase p) {
  switch (p) {
    case Phase::kFlush:
      return "flush";
    case Phase::kCompaction:
      return "compaction";
    case Phase::kReopen:
      return "reopen";
  }
  return "?";
}

// Upper bound on the steps of one phase; a phase that keeps meeting the
// fault past it fails the test (it would mean the sweep does not end).
constexpr int kMaxSteps = 400;

class FaultSweepTest
    : public ::testing::TestWithParam<std::tuple<Phase, FaultOp>> {
 protected:
  FaultSweepTest() : env_(Env::Default()) {}

  Options MakeOptions() {
    Options o;
    o.create_if_missing = true;
    o.env = &env_;
    o.write_buffer_size = 1 << 20;  // flushes only when asked
    return o;
  }

  static std::string Key(int i) { return absl::StrFormat("key%05d", i); }

  absl::Status Put(DB* db, const std::string& k, const std::string& v,
                   bool sync) {
    WriteOptions w;
    w.sync = sync;
    absl::Status s = db->Put(w, k, v);
    if (s.ok()) model_[k] = v;
    return s;
  }
  absl::Status Delete(DB* db, const std::string& k) {
    absl::Status s = db->Delete(WriteOptions(), k);
    if (s.ok()) model_[k] = std::nullopt;
    return s;
  }

  // Builds the state the phase starts from, without faults. The DB is
  // left open in db_ (closed for kReopen).
  void Prepare(Phase phase, const std::string& path) {
    model_.clear();
    auto db = DB::Open(MakeOptions(), path);
    ASSERT_TRUE(db.ok()) << db.status();
    db_ = std::move(*db);
    auto* impl = static_cast<DBImpl*>(db_.get());
    switch (phase) {
      case Phase::kFlush:
        for (int i = 0; i < 200; i++) {
          ASSERT_TRUE(Put(db_.get(), Key(i), "v" + Key(i), i % 50 == 0).ok());
        }
        break;
      case Phase::kCompaction:
        // Three overlapping level-0 tables with overwrites and deletes.
        for (int round = 0; round < 3; round++) {
          for (int i = round * 50; i < 200 + round * 50; i++) {
            ASSERT_TRUE(Put(db_.get(), Key(i),
                            absl::StrFormat("r%d-%s", round, Key(i)), false)
                            .ok());
          }
          for (int i = round; i < 300; i += 7) {
            ASSERT_TRUE(Delete(db_.get(), Key(i)).ok());
          }
          ASSERT_TRUE(impl->FlushMemTable().ok());
        }
        break;
      case Phase::kReopen:
        for (int i = 0; i < 150; i++) {
          ASSERT_TRUE(Put(db_.get(), Key(i), "t" + Key(i), false).ok());
        }
        ASSERT_TRUE(impl->FlushMemTable().ok());
        for (int i = 100; i < 250; i++) {  // these stay in the log
          ASSERT_TRUE(Put(db_.get(), Key(i), "l" + Key(i), i == 249).ok());
        }
        db_.reset();
        break;
    }
  }

  // Runs the phase with the fault armed; returns its status.
  absl::Status RunPhase(Phase phase, const std::string& path) {
    switch (phase) {
      case Phase::kFlush:
        return static_cast<DBImpl*>(db_.get())->FlushMemTable();
      case Phase::kCompaction:
        return db_->CompactRange(nullptr, nullptr);
      case Phase::kReopen: {
        auto db = DB::Open(MakeOptions(), path);
        if (!db.ok()) return db.status();
        db_ = std::move(*db);
        return absl::OkStatus();
      }
    }
    return absl::InternalError("unknown phase");
  }

  std::string BackgroundError() {
    std::string err;
    EXPECT_TRUE(db_->GetProperty("siftdb.background-error", &err));
    return err;
  }

  // Every acknowledged key reads as acknowledged. With `allow_errors`, a
  // read may fail with an error (the fault is still armed) but never say
  // NotFound for a live key or give another value.
  void CheckReads(bool allow_errors, const std::string& where) {
    for (const auto& [key, value] : model_) {
      std::string got;
      absl::Status s = db_->Get(ReadOptions(), key, &got);
      if (value.has_value()) {
        if (allow_errors && !s.ok() && !absl::IsNotFound(s)) continue;
        ASSERT_TRUE(s.ok()) << where << ": " << key << ": " << s;
        ASSERT_EQ(*value, got) << where << ": " << key;
      } else {
        if (allow_errors && !s.ok() && !absl::IsNotFound(s)) continue;
        ASSERT_TRUE(absl::IsNotFound(s))
            << where << ": deleted " << key << " reads " << s << " " << got;
      }
    }
  }

  // One case: the fault fires at the `skip`-th matching operation and
  // after. Sets *fired to whether the phase met it.
  void RunCase(Phase phase, FaultOp op, absl::StatusCode code, int skip,
               bool* fired) {
    const std::string where =
        absl::StrFormat("%s, %s fails from match %d on (%s)", PhaseName(phase),
                        FaultOpName(op), skip, absl::StatusCodeToString(code));
    const std::string path = dir_.Join(absl::StrFormat("db%d", case_++));
    ASSERT_NO_FATAL_FAILURE(Prepare(phase, path));
    const uint64_t before = env_.InjectedErrorCount();
    env_.InjectError(op, "", code, skip, -1);
    absl::Status s = RunPhase(phase, path);
    *fired = env_.InjectedErrorCount() > before;

    if (!*fired) {
      env_.ClearErrors();
      ASSERT_TRUE(s.ok()) << where << ": " << s;
    } else if (db_ != nullptr && !(phase == Phase::kReopen && !s.ok())) {
      // The DB is open and met the fault.
      const std::string err = BackgroundError();
      ASSERT_TRUE(!s.ok() || err != "OK")
          << where << ": the fault fired but nobody reported it";
      if (err != "OK") {
        EXPECT_FALSE(db_->Put(WriteOptions(), "after", "x").ok())
            << where << ": a write was accepted after a background error";
      }
      ASSERT_NO_FATAL_FAILURE(CheckReads(/*allow_errors=*/true, where));
    } else {
      ASSERT_FALSE(s.ok()) << where;
    }

    // Remove the fault; a reopen has every acknowledged write.
    env_.ClearErrors();
    db_.reset();
    auto db = DB::Open(MakeOptions(), path);
    ASSERT_TRUE(db.ok()) << where << ": reopen: " << db.status();
    db_ = std::move(*db);
    ASSERT_NO_FATAL_FAILURE(CheckReads(/*allow_errors=*/false, where));
    ASSERT_TRUE(Put(db_.get(), "after", "y", true).ok()) << where;
    db_.reset();
  }

  test::TempDir dir_;
  FaultInjectionEnv env_;
  std::unique_ptr<DB> db_;
  std::map<std::string, std::optional<std::string>> model_;
  int case_ = 0;
};

TEST_P(FaultSweepTest, EveryStepFailsCleanlyAndLosesNothing) {
  const auto [phase, op] = GetParam();
  for (absl::StatusCode code :
       {absl::StatusCode::kResourceExhausted, absl::StatusCode::kInternal}) {
    int steps = 0;
    for (int skip = 0; skip < kMaxSteps; skip++) {
      bool fired = false;
      ASSERT_NO_FATAL_FAILURE(RunCase(phase, op, code, skip, &fired));
      if (!fired) break;
      steps++;
    }
    ASSERT_LT(steps, kMaxSteps) << "the sweep did not end";
    // Every phase uses every class, except that only a reopen renames (it
    // switches CURRENT to a new MANIFEST): otherwise the sweep tested
    // nothing.
    const bool uses = op != FaultOp::kRename || phase == Phase::kReopen;
    EXPECT_EQ(uses, steps > 0) << PhaseName(phase) << " " << FaultOpName(op);
    RecordProperty(
        absl::StrFormat("%s_%s_%s_steps", PhaseName(phase), FaultOpName(op),
                        absl::StatusCodeToString(code)),
        steps);
  }
}

INSTANTIATE_TEST_SUITE_P(
    AllPhases, FaultSweepTest,
    ::testing::Combine(
        ::testing::Values(Phase::kFlush, Phase::kCompaction, Phase::kReopen),
        ::testing::Values(FaultOp::kAppend, FaultOp::kSync, FaultOp::kRename,
                          FaultOp::kRead, FaultOp::kSyncDir, FaultOp::kCreate)),
    [](const auto& info) {
      return absl::StrFormat("%s_%s", PhaseName(std::get<0>(info.param)),
                             FaultOpName(std::get<1>(info.param)));
    });

}  // namespace fault_sweep_test
}  // namespace siftdb
